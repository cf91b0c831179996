#!/bin/bash
# status with an argocd-app package's name as target (its group: one
# package per Application) lists its Applications' steps, as the selection
# takes it; with globs over the group too (review of t8403's named(): it
# matched package names alone, so 'status stack' listed nothing).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p d/apps
for a in one two; do
	cat >d/apps/$a.yaml <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: $a, namespace: argocd}
spec:
  project: default
  source: {repoURL: "cnoe://$a", path: "."}
  destination: {server: "https://kubernetes.default.svc", namespace: $a}
EOF
	mkmanifest d/apps/$a/cm.yaml ConfigMap "$a" "$a"
done
mkdistro d <<'EOF'
idpmake: 1
name: groups
argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git"}
packages:
  stack: {type: argocd-app, path: apps}
  other: {type: manifests, path: packages/other}
EOF
mkmanifest d/packages/other/cm.yaml ConfigMap other other
cd d || exit 1

steps() { awk 'NR > 1 {print $2}' "$STDOUT" | sort | tr '\n' ' ' | sed 's/ $//'; }
want="in-cluster/stack-one:render in-cluster/stack-one:sync in-cluster/stack-two:render in-cluster/stack-two:sync"
t_ok "status stack (the argocd-app package)" idpmake status stack
t_eq "its Applications' steps" "$want" "$(steps)"
t_ok "status 'sta?k' (a glob over the group)" idpmake status 'sta?k'
t_eq "the same" "$want" "$(steps)"
t_ok "status in-cluster/stack" idpmake status in-cluster/stack
t_eq "the same" "$want" "$(steps)"
t_ok "status stack-one (one Application's package)" idpmake status stack-one
t_eq "that one's" "in-cluster/stack-one:render in-cluster/stack-one:sync" "$(steps)"
t_done
