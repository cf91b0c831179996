#!/bin/bash
# Rendering `kustomize` packages with the real `kubectl kustomize`: resources,
# a configMapGenerator and a namespace transformer; every file under the
# folder is an input; a broken kustomization fails that package's render with
# kustomize's error shown (exit 1) while, with -k 0, the other packages render.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v kubectl >/dev/null || t_bail "kubectl missing: run ./configure --install-deps"

mkdir -p d/packages/web d/packages/broken
cd d || exit 1
cat >distro.yaml <<'EOF'
idpmake: 1
name: kust
vars: {domain: prod.example}
packages:
  web:
    type: kustomize
    path: packages/web
    rewrite:
      - {match: 'web\.example\.com', replace: 'web.${domain}'}
  plain:
    type: manifests
    path: packages/plain
EOF
cat >packages/web/kustomization.yaml <<'EOF'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: team-a
labels:
  - pairs: {app.kubernetes.io/part-of: web}
resources:
  - deploy.yaml
  - service.yaml
configMapGenerator:
  - name: settings
    literals: [color=blue]
    envs: [settings.env]
EOF
cat >packages/web/deploy.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: "busybox:1.36"
          envFrom: [{configMapRef: {name: settings}}]
          env: [{name: URL, value: "https://web.example.com/"}]
EOF
mkmanifest packages/web/service.yaml Service web
echo 'size=large' >packages/web/settings.env
echo 'notes, not referenced by the kustomization' >packages/web/NOTES.txt
mkmanifest packages/plain/cm.yaml ConfigMap plain

# ---- the real kustomize ----------------------------------------------------------
t_ok "validate" idpmake validate
t_ok "render -o out" idpmake render -o out
t_ok "the Deployment is there" test -f out/in-cluster/web/deployment.web.yaml
t_ok "the Service is there" test -f out/in-cluster/web/service.web.yaml
gen=$(cd out/in-cluster/web 2>/dev/null && ls configmap.settings-*.yaml 2>/dev/null)
t_ok "the generated ConfigMap has kustomize's hash suffix (configmap.settings-HASH.yaml)" \
	test -n "$gen" -a -f "out/in-cluster/web/$gen"
t_grep "the namespace transformer ran (Deployment in team-a)" '^  namespace: team-a$' out/in-cluster/web/deployment.web.yaml
t_grep "the Service in team-a too" '^  namespace: team-a$' out/in-cluster/web/service.web.yaml
t_grep "the generator's literal" 'color: blue' "out/in-cluster/web/$gen"
t_grep "the generator's env file" 'size: large' "out/in-cluster/web/$gen"
t_grep "the Deployment refers to the hashed name" 'name: settings-[a-z0-9]+' out/in-cluster/web/deployment.web.yaml
t_grep "the label transformer ran" 'app.kubernetes.io/part-of: web' out/in-cluster/web/service.web.yaml
t_grep "rewrite applies to kustomize output" 'https://web\.prod\.example/' out/in-cluster/web/deployment.web.yaml
t_ok "the manifests package renders too" test -f out/in-cluster/plain/configmap.plain.yaml

# The same objects as kubectl kustomize itself prints (after the rewrite).
kubectl kustomize packages/web >kubectl.out 2>kubectl.err
t_ok "kubectl kustomize agrees (objects and content)" python3 - kubectl.out out/in-cluster/web <<'EOF'
import os, sys, yaml
want = {}
for o in yaml.safe_load_all(open(sys.argv[1])):
    if o:
        want[(o["kind"], o["metadata"]["name"])] = o
got = {}
for f in os.listdir(sys.argv[2]):
    o = yaml.safe_load(open(os.path.join(sys.argv[2], f)))
    got[(o["kind"], o["metadata"]["name"])] = o
env = want[("Deployment", "web")]["spec"]["template"]["spec"]["containers"][0]["env"]
env[0]["value"] = env[0]["value"].replace("web.example.com", "web.prod.example")
assert sorted(want) == sorted(got), (sorted(want), sorted(got))
for k in want:
    assert want[k] == got[k], (k, want[k], got[k])
EOF

# ---- stable ----------------------------------------------------------------------------
t_ok "render -o out2" idpmake render -o out2
t_ok "a second render gives identical bytes" diff -r out out2

# ---- every file under the folder is an input ------------------------------------------
t_ok "up" idpmake up
t_ok "up made a commit" git --git-dir=.idpmake/gitops.git rev-parse --verify -q main
git --git-dir=.idpmake/gitops.git ls-tree -r --name-only main >tree.txt 2>&1
t_grep "the generated ConfigMap is in the commit" "^in-cluster/web/$gen\$" tree.txt
t_ok "plan after up: nothing to do" idpmake plan --exit-code
echo 'size=small' >packages/web/settings.env
t_exit 1 "a change in the generator's env file: plan --exit-code exits 1" idpmake plan --exit-code
t_grep "web's render would run" 'in-cluster/web:render' "$STDOUT"
t_grep "the reason names the file" 'settings\.env' "$OUTPUT"
t_nogrep "plain's render would not" 'in-cluster/plain:render' "$STDOUT"
head1=$(git --git-dir=.idpmake/gitops.git rev-parse main)
t_ok "up re-renders web" idpmake up
t_ok "and pushes a new commit" test "$head1" != "$(git --git-dir=.idpmake/gitops.git rev-parse main)"
git --git-dir=.idpmake/gitops.git grep -h size main -- in-cluster/web >grep.txt 2>&1
t_grep "holding the new value" 'size: small' grep.txt
echo 'more notes' >>packages/web/NOTES.txt
t_exit 1 "a file the kustomization does not name is an input too (plan exits 1)" idpmake plan --exit-code
t_grep "web's render would run" 'in-cluster/web:render' "$STDOUT"
head2=$(git --git-dir=.idpmake/gitops.git rev-parse main)
t_ok "up" idpmake up
t_eq "its output did not change: no commit (early cutoff)" "$head2" "$(git --git-dir=.idpmake/gitops.git rev-parse main)"
t_ok "then plan: nothing to do" idpmake plan --exit-code

# ---- a broken kustomization --------------------------------------------------------------
cat >packages/broken/kustomization.yaml <<'EOF'
resources: [missing.yaml]
EOF
cat >>distro.yaml <<'EOF'
  broken:
    type: kustomize
    path: packages/broken
EOF
t_ok "validate does not run kustomize remotely: the distro is valid" idpmake validate
t_exit 1 "render -k 0 -o out3: exit 1" idpmake render -k 0 -o out3
t_grep "kustomize's error is shown" 'missing\.yaml' "$STDERR"
t_grep "naming the package's step" 'in-cluster/broken:render' "$STDERR"
t_ok "web still renders" test -f out3/in-cluster/web/deployment.web.yaml
t_ok "plain still renders" test -f out3/in-cluster/plain/configmap.plain.yaml
t_ok "broken renders nothing" test ! -e out3/in-cluster/broken/kustomization.yaml
t_exit 1 "render to stdout: exit 1" idpmake render -k 0
t_grep "the other packages are on stdout" '^# in-cluster/plain/configmap\.plain\.yaml$' "$STDOUT"
t_grep "kustomize's error on stderr" 'missing\.yaml' "$STDERR"

touch packages/plain/cm.yaml
echo '  extra: "1"' >>packages/plain/cm.yaml
t_exit 1 "up -k 0 with a broken package: exit 1" idpmake up -k 0
t_grep "the failed step is named" 'in-cluster/broken:render' "$OUTPUT"
t_grep "its log is printed (kustomize's error)" 'missing\.yaml' "$OUTPUT"
t_grep "plain was rendered anyway" 'in-cluster/plain:render' "$OUTPUT"
t_exit 1 "up -k 0 --json, the package still broken: exit 1" idpmake up -k 0 --json
t_nogrep "a retry does not re-render what succeeded (plain)" '"event": *"start".*"in-cluster/plain:render"' "$STDOUT"
t_grep "it retries the failed render" '"in-cluster/broken:render"' "$STDOUT"

mkmanifest packages/broken/missing.yaml ConfigMap found
t_ok "with the file added, up succeeds" idpmake up
git --git-dir=.idpmake/gitops.git ls-tree -r --name-only main >tree.txt 2>&1
t_grep "the fixed package is in the commit" '^in-cluster/broken/configmap\.found\.yaml$' tree.txt

# ---- kubectl missing: a clear error for that package alone --------------------------------
echo '  more: "1"' >>packages/plain/cm.yaml
echo 'size=medium' >packages/web/settings.env
t_exit 1 "render -k 0 without kubectl on PATH: exit 1" env PATH=/nonexistent "$IDPMAKE" render -k 0 -o out4
t_grep "the error says kubectl is missing" 'kubectl' "$STDERR"
t_ok "the manifests package still renders" test -f out4/in-cluster/plain/configmap.plain.yaml

t_done
