#!/bin/bash
# Hooks are not managed resources (gitops-engine hook.IsHook; Argo CD's
# managed-resources leaves them out): an object annotated
# argocd.argoproj.io/hook (unless its only type is Skip), or helm.sh/hook
# other than crd-install, is run by a sync and never compared, so diff --live
# does not list it as "to create" on every run; a Skip-only or crd-install
# object is an ordinary one.
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
name: hooks
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
# hooked NAME ANNOTATION: a ConfigMap NAME with that annotation
hooked() {
	cat >"d/packages/web/$1.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1
  annotations: {$2}
data: {k: v}
EOF
}
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
hooked presync '"argocd.argoproj.io/hook": PreSync, "argocd.argoproj.io/hook-delete-policy": HookSucceeded'
hooked helmhook '"helm.sh/hook": "pre-install,pre-upgrade"'
hooked skipped '"argocd.argoproj.io/hook": Skip'
hooked crdinstall '"helm.sh/hook": crd-install'
cd d || exit 1

t_ok "setup: up" idpmake up
t_exit 0 "diff --live --exit-code right after up: nothing differs" idpmake diff --live --exit-code
t_grep "the summary says so" '0 objects differ from what Argo CD reports live' "$STDERR"
t_nogrep "the PreSync hook is not to create" 'presync' "$OUTPUT"
t_nogrep "nor the Helm hook" 'helmhook' "$OUTPUT"
t_ok "--json" idpmake diff --live --json
t_nogrep "the hooks are not in the document" 'presync|helmhook' "$STDOUT"
# the Skip-only and crd-install objects are ordinary ones: a change to them counts
sed -i 's/{k: v}/{k: w}/' packages/web/skipped.yaml packages/web/crdinstall.yaml packages/web/presync.yaml
t_exit 1 "a change to a Skip-only or crd-install object counts" idpmake --color=never diff --live --exit-code
t_grep "skipped is listed" 'ConfigMap web/skipped' "$OUTPUT"
t_grep "crdinstall is listed" 'ConfigMap web/crdinstall' "$OUTPUT"
t_nogrep "the changed hook is not" 'presync' "$OUTPUT"
t_done
