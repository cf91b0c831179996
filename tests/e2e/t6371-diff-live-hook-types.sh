#!/bin/bash
# A hook's types are read as gitops-engine reads them (GetAnnotationCSVs):
# comma-separated, white space trimmed, duplicates dropped.  So
# "Skip, Skip" is Skip only: an ordinary object Argo CD lists and compares,
# while "PreSync,\tSync" is a hook, left out.  diff --live and the emulator
# counted "Skip, Skip" as two types and left a Skip-only object out.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
mkdistro d <<EOF
idpmake: 1
name: hooktypes
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
# hooked NAME ANNOTATION: a ConfigMap NAME with that hook annotation
hooked() {
	cat >"d/packages/web/$1.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1
  annotations: {"argocd.argoproj.io/hook": "$2"}
data: {k: v}
EOF
}
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
hooked skiptwice 'Skip, Skip'
hooked tabbed 'PreSync,\tSync'
cd d || exit 1

t_ok "setup: up" idpmake up
t_exit 0 "diff --live --exit-code right after up: nothing differs" idpmake diff --live --exit-code
t_nogrep "the tabbed hook is not to create" 'tabbed' "$OUTPUT"
sed -i 's/{k: v}/{k: w}/' packages/web/skiptwice.yaml packages/web/tabbed.yaml
t_exit 1 "a change to the 'Skip, Skip' object counts" idpmake --color=never diff --live --exit-code
t_grep "skiptwice is listed" 'ConfigMap web/skiptwice' "$OUTPUT"
t_nogrep "the changed hook is not" 'tabbed' "$OUTPUT"
t_done
