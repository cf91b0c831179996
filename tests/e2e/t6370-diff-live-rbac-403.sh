#!/bin/bash
# diff --live: a 403 is not a missing Application.  idpmake names the project
# in its queries, so Argo CD answers 404 for an Application that does not
# exist and a bare 403 "permission denied" only when RBAC refuses the read
# (server/application getAppEnforceRBAC).  diff --live took that 403 as "no
# Application yet" and listed every rendered object as to create, exit 0 (1 with --exit-code);
# now it is an error (exit 2) naming the refused read and the RBAC policy.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
mkdistro d <<EOF
idpmake: 1
name: rbacdiff
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  a: {type: manifests, path: packages/a}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap cfg
cd d || exit 1
t_ok "setup: up" idpmake up
t_exit 0 "diff --live --exit-code: nothing differs" idpmake diff --live --exit-code

emu_post config '{"rbac_deny": ["applications, get, default/in-cluster-a"]}'
t_exit 2 "diff --live fails (exit 2, an error) when Argo CD refuses the read" idpmake --color=never diff --live
t_grep "naming the refusal and the RBAC policy" "in-cluster-a.*403 permission denied.*RBAC policy" "$OUTPUT"
t_nogrep "the objects are not called to create" "to create|\+ ConfigMap" "$OUTPUT"

emu_post config '{"rbac_deny": []}'
t_exit 0 "allowed again: nothing differs" idpmake diff --live --exit-code
t_done
