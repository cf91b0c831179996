#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# --refresh: drift reported by Argo CD (OutOfSync, a deleted Application) is
# synced again though no key changed; without it, drift is not looked for.
# --prune: the Application of a package removed from the distro is deleted,
# then its folder; without it, both are reported and kept.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu
# count METHOD PATH-REGEX: requests so far that match
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
log = json.load(sys.stdin)
print(sum(1 for e in log if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}

mkdistro d <<EOF
idpmake: 1
name: drift
git: {remote: "$url"}
argocd: {}
packages:
  a: {type: manifests, path: packages/a}
  b: {type: manifests, path: packages/b}
  c: {type: manifests, path: packages/c}
EOF
for p in a b c; do mkmanifest "d/packages/$p/cm.yaml" ConfigMap "$p" "$p"; done
cd d || exit 1

t_ok "first up syncs the three" idpmake up
t_grep "three synced" ' 3 synced' "$OUTPUT"

# ---- --refresh ----------------------------------------------------------
emu_post reset '{}'
emu_post fault '{"app": "in-cluster-b", "out_of_sync": true}'
t_ok "a plain up after drift" idpmake up
t_grep "does not look for drift: nothing synced" ' 0 synced' "$OUTPUT"
t_eq "and asks Argo CD nothing" 0 "$(count GET /api/v1/applications)"

t_ok "up --refresh" idpmake --refresh up
t_grep "syncs exactly the drifted application" ' 1 synced' "$OUTPUT"
t_eq "one sync request, for b" 1 "$(count POST /api/v1/applications/in-cluster-b/sync)"
t_eq "no sync for a" 0 "$(count POST /api/v1/applications/in-cluster-a/sync)"
t_ok "up --refresh again" idpmake --refresh up
t_grep "no drift left: nothing synced" ' 0 synced' "$OUTPUT"

# a deleted Application is drift too
t_ok "setup: c's Application is deleted behind idpmake's back" curl -fsS -X DELETE -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/in-cluster-c?cascade=false"
# app_gone: the emulator's list of Applications has no in-cluster-c
app_gone() {
	curl -fsS "$emu/apps" | python3 -c '
import json, sys
sys.exit(any(a["metadata"]["name"] == "in-cluster-c" for a in json.load(sys.stdin)))'
}
t_ok "setup: Argo CD no longer has it" t_wait_for 10 app_gone
t_ok "up --refresh after an Application was deleted" idpmake -v --refresh up
t_grep "it is named as missing" 'in-cluster/c:sync: drift: the Application is missing' "$OUTPUT"
t_grep "and created and synced again" ' 1 synced' "$OUTPUT"

# ---- --prune --------------------------------------------------------------
mkdistro . <<EOF
idpmake: 1
name: drift
git: {remote: "$url"}
argocd: {}
packages:
  a: {type: manifests, path: packages/a}
  b: {type: manifests, path: packages/b}
EOF
emu_post reset '{}'
t_ok "up without c" idpmake up
t_grep "c's Application is reported" "Application 'in-cluster-c' remains [(]--prune deletes it[)]" "$OUTPUT"
t_eq "and not deleted" 0 "$(count DELETE /api/v1/applications/in-cluster-c)"
git -C "$T/git-srv/repos/gitops.git" ls-tree -r --name-only main >"$T/tree.txt"
t_grep "its folder stays in the repository: the Application names it" '^in-cluster/c/' "$T/tree.txt"
t_ok "up --prune" idpmake --prune up
t_grep "it is deleted" "deleted Application 'in-cluster-c'" "$OUTPUT"
t_nogrep "then its folder is removed" '^in-cluster/c/' <(git -C "$T/git-srv/repos/gitops.git" ls-tree -r --name-only main)
t_eq "one DELETE request" 1 "$(count DELETE /api/v1/applications/in-cluster-c)"
t_ok "up --prune again" idpmake --prune up
t_nogrep "nothing left to prune" "Application 'in-cluster-c'" "$OUTPUT"
t_eq "no second DELETE" 1 "$(count DELETE /api/v1/applications/in-cluster-c)"
t_ok "status no longer lists c" idpmake status
t_nogrep "c's steps forgotten" 'in-cluster/c:' "$OUTPUT"

# ---- --prune needs Argo CD -----------------------------------------------------
# a valid distro that configures no argocd: --prune has nothing to delete
# with, a usage error (exit 2) before anything runs or the state is made
mkdistro "$T/noargo" <<'EOF'
idpmake: 1
name: noargo
packages:
  a: {type: manifests, path: packages/a}
EOF
mkmanifest "$T/noargo/packages/a/cm.yaml" ConfigMap a a
t_ok "setup: plan works on the distro without argocd" env -u ARGOCD_SERVER "$IDPMAKE" -C "$T/noargo" plan
t_exit 2 "--prune without argocd is a usage error (exit 2)" env -u ARGOCD_SERVER "$IDPMAKE" -C "$T/noargo" --prune up
t_grep "saying --prune needs argocd" 'prune deletes Argo CD Applications, and no argocd is configured' "$STDERR"
t_ok "exit 2: nothing ran, no state folder was made" test ! -e "$T/noargo/.idpmake"
t_ok "the same distro without --prune runs" env -u ARGOCD_SERVER "$IDPMAKE" -C "$T/noargo" render
t_done
