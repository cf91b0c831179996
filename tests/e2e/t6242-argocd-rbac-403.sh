#!/bin/bash
# A 403 is not "gone" (server/application getAppEnforceRBAC): idpmake names
# the project in its queries, so Argo CD answers 404 for an Application that
# does not exist, a bare 403 "permission denied" when the token's account may
# not get it, and "permission denied: applications, delete, OBJECT, sub: ..."
# when it may see it but not delete it. up --prune and up --refresh take
# neither 403 as an Application that is gone: they fail (or warn) naming the
# permission and the way out, the account's RBAC policy; the Application,
# idpmake's record of it and its folder in the GitOps repository stay.
# shellcheck disable=SC2317 # functions run through t_ok and friends
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --delete-ms 30
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
# has NAME: Argo CD (the emulator's store, no RBAC) has the Application NAME
has() {
	curl -fsS "$emu/apps" | python3 -c '
import json, sys
sys.exit(not any(a["metadata"]["name"] == sys.argv[1] for a in json.load(sys.stdin)))' "$1"
}
mkdistro d <<EOF
idpmake: 1
name: rbac
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  a: {type: manifests, path: packages/a}
  b: {type: manifests, path: packages/b}
EOF
for p in a b; do mkmanifest "d/packages/$p/cm.yaml" ConfigMap "$p" "$p"; done
cd d || exit 1
t_ok "first up syncs both" idpmake up
sed -i '/^  b: /d' distro.yaml

# may see it, may not delete it: the 403 names the permission
emu_post config '{"rbac_deny": ["applications, delete, default/in-cluster-b"]}'
t_exit 1 "up --prune fails when Argo CD refuses the delete" idpmake --prune up
t_grep "naming the refused permission" "Argo CD denied 'delete' on applications 'default/in-cluster-b' \(403\)" "$OUTPUT"
t_grep "and the RBAC policy" "RBAC policy" "$OUTPUT"
t_nogrep "not reported deleted" "deleted Application 'in-cluster-b'" "$OUTPUT"
t_ok "the Application is still there" has in-cluster-b
# in_branch FOLDER: the GitOps branch still has it
in_branch() { git -C "$bare" cat-file -e "main:$1" 2>/dev/null; }
t_ok "and so is its folder: the push keeps what a left Application names" in_branch in-cluster/b

# may not even get it: the bare 403
emu_post config '{"rbac_deny": ["applications, get, default/in-cluster-b"]}'
t_exit 1 "up --prune fails on the bare 403" idpmake --prune up
t_grep "naming get and delete" "needs 'applications, get, default/in-cluster-b' and 'applications, delete, default/in-cluster-b' in its RBAC policy" "$OUTPUT"
t_nogrep "not reported deleted" "deleted Application 'in-cluster-b'" "$OUTPUT"
t_ok "the Application is still there" has in-cluster-b

# --refresh: a refused read is no "missing Application" to create again
emu_post config '{"rbac_deny": ["applications, get, default/in-cluster-a"]}'
t_ok "up --refresh when reading a is refused (a warning)" idpmake -v --refresh up
t_nogrep "a is not called missing" "in-cluster/a:sync: drift: the Application is missing" "$OUTPUT"
t_grep "the refusal is warned of, with the permission" "warning: --refresh: .*may not get application 'in-cluster-a'.*'applications, get, default/in-cluster-a'" "$OUTPUT"

# allowed again: the prune that was refused happens now
emu_post config '{"rbac_deny": []}'
t_ok "up --prune once Argo CD allows it" idpmake --prune up
t_grep "b deleted" "deleted Application 'in-cluster-b'" "$OUTPUT"
t_ok "and gone from Argo CD" t_wait_for 20 eval '! has in-cluster-b'
t_fail "then its folder is removed" in_branch in-cluster/b
t_done
