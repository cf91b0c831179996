#!/bin/bash
# Renders once, stored once (fleet.md): a package that goes to several
# clusters with the same inputs is rendered once a run (counted with a
# kubectl wrapper that logs its calls) and, on linked clusters, written once
# to _shared/PACKAGE; `plan` says "render PKG (for N clusters)", and a package
# that uses a per-cluster variable renders once per distinct value, in a
# folder per cluster; changing one cluster's value re-renders only that
# cluster. An Application of each cluster points at the shared folder.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v kubectl >/dev/null || t_bail "kubectl missing: run ./configure --install-deps"

# a kubectl that logs each call, then runs the real one
real=$(command -v kubectl)
mkdir -p bin
cat >bin/kubectl <<EOF
#!/bin/sh
echo "\$*" >>"$T/kubectl.calls"
exec "$real" "\$@"
EOF
chmod +x bin/kubectl
export PATH=$T/bin:$PATH
calls() { if [ -f "$T/kubectl.calls" ]; then grep -c '^kustomize' "$T/kubectl.calls"; else echo 0; fi; }

mkdir -p d/packages/web d/packages/regional
cd d || exit 1
cat >distro.yaml <<'EOF'
idpmake: 1
name: once
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
  us-2: {server: "https://us-2.example:6443", vars: {region: us}}
packages:
  web:
    type: kustomize
    path: packages/web
  regional:
    type: manifests
    path: packages/regional
    rewrite: [{match: REGION, replace: "${region}"}]
EOF
cat >packages/web/kustomization.yaml <<'EOF'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [cm.yaml]
EOF
mkmanifest packages/web/cm.yaml ConfigMap web
cat >packages/regional/cm.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: regional}
data: {region: REGION}
EOF

t_ok "plan" idpmake plan
t_grep "plan: one line for web on 4 clusters" '^render +web \(for 4 clusters\): never rendered' "$OUTPUT"
t_grep "plan: one line per distinct value of the variable" '^render +regional \(for 2 clusters\)' "$OUTPUT"
t_eq "plan: two groups for regional (eu, us)" 2 "$(grep -c 'regional (for 2 clusters)' "$OUTPUT")"
t_nogrep "plan: no per-cluster render lines left" '^render +[a-z0-9-]+/' "$OUTPUT"

t_ok "cold up" idpmake up
t_eq "kubectl kustomize ran once for 4 clusters" 1 "$(calls)"
t_grep "summary counts 3 distinct renders" 'idpmake: 3 rendered' "$OUTPUT"
t_eq "three steps took another's render" 5 "$(grep -c 'the same render as' "$OUTPUT")"

git clone -q .idpmake/gitops.git "$T/co" || t_bail "clone of the GitOps repository failed"
# linked clusters (the default) share one folder for web, which renders alike on all
[ -f "$T/co/_shared/web/configmap.web.yaml" ]
t_report $? "web is one folder, _shared/web"
for c in eu-1 eu-2 us-1 us-2; do
	[ ! -e "$T/co/$c/web" ]
	t_report $? "no copy of web under $c/"
done
t_eq "the push changed 5 folders, web once" 1 "$(git -C "$T/co" show --stat --format= HEAD | grep -c '_shared/web/')"
t_ok "eu clusters: same objects" cmp "$T/co/eu-1/regional/configmap.regional.yaml" "$T/co/eu-2/regional/configmap.regional.yaml"
t_grep "eu render has the eu value" 'region: eu' "$T/co/eu-1/regional/configmap.regional.yaml"
t_grep "us render has the us value" 'region: us' "$T/co/us-2/regional/configmap.regional.yaml"

t_ok "no-op" idpmake up
t_eq "no-op: kubectl not run again" 1 "$(calls)"
t_grep "no-op: nothing rendered" 'idpmake: 0 rendered' "$OUTPUT"

# one cluster's variable changes: only that cluster's regional renders
sed -i 's/us-2: {server: "https:\/\/us-2.example:6443", vars: {region: us}}/us-2: {server: "https:\/\/us-2.example:6443", vars: {region: ap}}/' distro.yaml
t_ok "plan after us-2's region changed" idpmake plan
t_grep "plan: us-2/regional re-renders" '^render +us-2/regional:render' "$OUTPUT"
t_nogrep "plan: web does not re-render" 'web' "$OUTPUT"
t_nogrep "plan: other clusters' regional do not re-render" '(eu-1|eu-2|us-1)/regional:render' "$OUTPUT"
t_ok "up after the change" idpmake up
t_grep "one render" 'idpmake: 1 rendered' "$OUTPUT"
t_eq "kubectl still ran once in all" 1 "$(calls)"

# a shared render that fails fails every cluster that takes it, once
echo 'resources: [missing.yaml]' >>packages/web/kustomization.yaml
t_exit 1 "a broken shared render fails the run" idpmake -k 0 up
t_eq "the broken render ran kubectl once more" 2 "$(calls)"
t_eq "every cluster's web render is reported failed" 4 "$(grep -c '^FAILED: [a-z0-9-]*/web:render' "$OUTPUT")"
t_eq "three of them name the render they took" 3 "$(grep -c 'the same render on [a-z0-9-]*/web:render failed' "$OUTPUT")"
t_done
