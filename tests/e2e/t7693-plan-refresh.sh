#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# --refresh looks for drift in the GitOps repository as well as in Argo CD
# (issue 8 §6), for plan as for up: `plan --refresh` fetches the GitOps
# repository and shows a folder changed outside idpmake (folder, commit,
# author), and asks Argo CD how each Application stands, listing the syncs
# up --refresh would run (an Application OutOfSync); plain plan asks Argo CD
# nothing.  An Application OutOfSync because its folder was edited by hand
# is not synced again (that would deploy the edit, then wait five minutes
# for a Synced that never comes): both name it with the two ways out.  Then
# up --refresh runs exactly the syncs plan --refresh listed, and
# up --overwrite --refresh replaces the edit and syncs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: refresh
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
  db: {type: manifests, path: packages/db}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkmanifest d/packages/db/cm.yaml ConfigMap db
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
t_ok "setup: up" idpmake up
# requests to Argo CD's API since the last emu_reset, one "METHOD PATH" a line
argo_requests() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["path"].startswith("/api/v1/applications"):
        print(e["method"], e["path"])'
}

# another controller changes db live: Argo CD reports it OutOfSync
emu_post live '{"app": "in-cluster-db", "kind": "ConfigMap", "name": "db", "set": {"data.name": "other"}}'
# a hand edit of web's folder in the GitOps repository
rm -rf "$T/hand" && git clone -q "$bare" "$T/hand" && echo '  edited: by-hand' >>"$T/hand/in-cluster/web/configmap.web.yaml" &&
	GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com git -C "$T/hand" commit -qam "web by hand" &&
	git -C "$T/hand" push -q origin main || t_bail "the hand edit failed"
edit=$(git -C "$T/hand" rev-parse --short=7 HEAD)

emu_reset
t_ok "plan without --refresh" idpmake plan
t_eq "asks Argo CD nothing" "" "$(argo_requests)"
t_nogrep "lists no sync" '^sync ' "$STDOUT"

t_ok "plan --refresh" idpmake --refresh plan
t_grep "shows the hand edit from the GitOps repository" \
	"^drift  in-cluster/web: changed outside idpmake by $edit Alice <alice@example.com> \"web by hand\"" "$STDOUT"
t_grep "and the Application Argo CD reports OutOfSync" '^sync +in-cluster/db:sync: drift: Argo CD reports OutOfSync$' "$STDOUT"
t_nogrep "but not the one whose folder was edited: that is the edit" '^sync +in-cluster/web:sync' "$STDOUT"
t_grep "which is said, with the two ways out" \
	'in-cluster/web:sync: not synced again: in-cluster/web was changed outside idpmake \(revert the change in the GitOps repository, or idpmake up --overwrite in-cluster/web\)' "$STDERR"
argo_requests >"$T/requests"
t_grep "asked Argo CD about db" '^GET /api/v1/applications/in-cluster-db' "$T/requests"
t_nogrep "changing nothing there" '^(POST|PUT|DELETE|PATCH) ' "$T/requests"
t_exit 1 "plan --refresh --exit-code: work to do" idpmake --refresh plan --exit-code

emu_reset
t_ok "up --refresh" timeout 60 "$IDPMAKE" --refresh up
t_grep "syncs db again, as plan --refresh listed" 'sync +in-cluster/db:sync' "$OUTPUT"
t_nogrep "and not web" 'sync +in-cluster/web:sync' "$OUTPUT"
t_grep "saying why" 'in-cluster/web:sync: not synced again' "$OUTPUT"
t_ok "plan --refresh afterwards" idpmake --refresh plan
t_nogrep "db is synced: no sync listed for it" '^sync +in-cluster/db:sync' "$STDOUT"
t_ok "up --overwrite web --refresh" timeout 60 "$IDPMAKE" --refresh up --overwrite web
t_grep "web synced with the render" 'sync +in-cluster/web:sync' "$OUTPUT"
git --git-dir="$bare" show main:in-cluster/web/configmap.web.yaml >"$T/web.yaml" || t_bail "cannot read web's folder"
t_nogrep "the edit is gone" 'by-hand' "$T/web.yaml"
t_exit 0 "plan --refresh --exit-code: nothing to do, no drift" idpmake --refresh plan --exit-code
t_nogrep "no drift left" 'drift|outside idpmake' "$OUTPUT"
t_done
