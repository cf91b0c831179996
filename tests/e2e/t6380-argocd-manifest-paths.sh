#!/bin/bash
# Argo CD's side of a commit (issue 26 §1, §3): every Application idpmake
# creates carries argocd.argoproj.io/manifest-generate-paths naming its own
# folder (a linked fleet's _shared one, and the new one when a cluster moves
# to another group), so the emulator's repo-server model (Argo CD's
# UpdateRevisionForPaths: a commit that changed none of an Application's
# paths moves its cached manifests) generates manifests only for the
# Applications whose folders changed: 4 for a one-package change over 4
# clusters, where Argo CD without the annotation generates 12.  An
# argocd-app package's Application is relayed without it, and plan says so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --resync-ms 100
mkdir -p d/pkg/manifests
mkmanifest d/pkg/manifests/cm.yaml ConfigMap relayed relayed
cat >d/pkg/app.yaml <<'EOF2'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: relayed, namespace: argocd}
spec:
  destination: {namespace: relayed, server: "https://kubernetes.default.svc"}
  source: {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
  project: default
EOF2
mkdistro d <<EOF2
idpmake: 1
name: paths
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  c1: {server: https://kubernetes.default.svc, vars: {tier: gold}}
  c2: {server: https://kubernetes.default.svc, vars: {tier: gold}}
  c3: {server: https://kubernetes.default.svc, vars: {tier: gold}}
  c4: {server: https://kubernetes.default.svc, vars: {tier: silver}}
packages:
  a: {type: manifests, path: packages/a, namespace: a}
  b: {type: manifests, path: packages/b, namespace: b}
  t: {type: manifests, path: packages/t, namespace: t}
EOF2
mkmanifest d/packages/a/cm.yaml ConfigMap a a
mkmanifest d/packages/b/cm.yaml ConfigMap b b
mkdir -p d/packages/t
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, namespace: t}\ndata:\n  tier: ${tier}\n' >d/packages/t/cm.yaml
cd d || exit 1

apps() { curl -sS -f "$emu/apps" >apps.json; }
t_ok "up" idpmake up
t_ok "the Applications" apps
t_ok "each names its own folder in manifest-generate-paths" python3 -c '
import json, sys
apps = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))}
assert len(apps) == 12, sorted(apps)
for name, a in apps.items():
    ann = (a["metadata"].get("annotations") or {}).get("argocd.argoproj.io/manifest-generate-paths")
    assert ann == "/" + a["spec"]["source"]["path"], (name, ann, a["spec"]["source"])
    assert ann.startswith("/_shared/"), (name, ann)
' apps.json

# a one-package change: only its 4 Applications generate, once Argo CD has seen the commit everywhere
settled() { # every Application compared at the branch's tip
	curl -sS -f "$emu/apps" | python3 -c '
import json, sys
tip = sys.argv[1]
apps = json.load(sys.stdin)
sys.exit(0 if apps and all((a["status"].get("sync") or {}).get("revision") == tip for a in apps) else 1)
' "$(git --git-dir="$bare" rev-parse main)"
}
generations() { curl -sS -f "$emu/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest_generations"])'; }
one_change() { # VALUE: change package a, up, wait until every Application compared the new commit
	emu_reset
	sed -i "s/^  key: .*/  key: $1/" packages/a/cm.yaml
	grep -q "key: $1" packages/a/cm.yaml || echo "  key: $1" >>packages/a/cm.yaml
	t_ok "up of a change to package a ($1)" idpmake up
	t_ok "every Application has compared the new commit" t_wait_for 30 settled
}
one_change v1
t_eq "4 manifest generations: the changed package's Applications" 4 "$(generations)"

t_ok "the emulator without the annotation (an Argo CD ignoring it)" emu_post config '{"manifest_generate_paths": false}'
one_change v2
t_eq "12 generations without it: every Application on the repository" 12 "$(generations)"
emu_post config '{"manifest_generate_paths": true}'

# c4 moves to c1's group: its Application's annotation follows its new folder
sed -i 's/tier: silver/tier: gold/' distro.yaml
t_ok "up after c4 joins the gold group" idpmake up
t_ok "the Applications" apps
t_ok "c4's t names the gold folder, as its source does" python3 -c '
import json, sys
apps = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))}
c4, c1 = apps["c4-t"], apps["c1-t"]
ann = c4["metadata"]["annotations"]["argocd.argoproj.io/manifest-generate-paths"]
assert c4["spec"]["source"]["path"] == c1["spec"]["source"]["path"], (c4["spec"], c1["spec"])
assert ann == "/" + c4["spec"]["source"]["path"], ann
' apps.json

# an argocd-app package: its Application is relayed as written
cat >>distro.yaml <<'EOF2'
  relayed: {type: argocd-app, path: pkg}
EOF2
t_ok "plan with an argocd-app package" idpmake plan
t_grep "says its Application goes without the annotation" \
	"relayed: .*without argocd.argoproj.io/manifest-generate-paths" "$OUTPUT"
t_ok "up" idpmake up
t_ok "the Applications" apps
t_ok "the relayed Application has no manifest-generate-paths" python3 -c '
import json, sys
apps = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))}
a = apps["c1-relayed-relayed"]
assert "argocd.argoproj.io/manifest-generate-paths" not in (a["metadata"].get("annotations") or {}), a["metadata"]
' apps.json
t_done
