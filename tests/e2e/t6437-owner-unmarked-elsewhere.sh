#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# An Application made before idpmake marked the GitOps remote (labels, no
# idpmake.io/gitops-remote annotation) is its name's distro's only when it
# pulls from that distro's remote: a same-named distro pushing elsewhere,
# with the same Application names, is refused before the push instead of
# re-pointing the other one's Application (issue 19 §1), and can take it
# over with --adopt.  Its own distro still syncs it and marks it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

git init -q --bare -b main "$T/b.git" || t_bail "git init failed"
start_gitops_argocd --repo-map "$T/b.git=$T/b.git" --repo-map "file://$T/b.git=$T/b.git"
api=http://$ARGOCD_SERVER/api/v1
app() {
	curl -s -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/$1" | python3 -c '
import json, sys
a = json.load(sys.stdin)
print(eval(sys.argv[1]) if "metadata" in a else "gone")' "$2"
}
distro() {
	mkdistro "$1" <<EOF
idpmake: 1
name: platform
git: {remote: "$2"}
argocd: {repo-url: "file://$2"}
packages:
  web: {type: manifests, path: packages/web}
EOF
	mkmanifest "$1/packages/web/cm.yaml" ConfigMap web default
}
unmark() {
	curl -s -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/in-cluster-web" | python3 -c '
import json, sys
a = json.load(sys.stdin)
for k in ("idpmake.io/gitops-remote", "idpmake.io/gitops-path"):
    a["metadata"]["annotations"].pop(k)
a.pop("status", None)
print(json.dumps(a))' >"$T/old.json"
	curl -fsS -X PUT -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
		"$api/applications/in-cluster-web" -d @"$T/old.json"
}
distro a "$bare"
distro b "$T/b.git"
t_ok "the first platform's up" idpmake -C a up
t_ok "setup: its Application as the previous version made it (no remote annotation)" unmark

t_exit 1 "a second platform elsewhere, same Application name, is refused" idpmake -C b up
t_grep "naming where the Application pulls from" \
	"in-cluster/web:sync: Application 'in-cluster-web' in Argo CD belongs to distro 'platform' pulling from file://$T/gitops.git \(made before idpmake marked the remote\)" "$STDERR"
t_grep "before the push, with --adopt as the way out" "refused before the push.*" "$STDERR"
t_grep "and --adopt" "idpmake up --adopt" "$STDERR"
t_eq "nothing was pushed" "" "$(git --git-dir="$T/b.git" for-each-ref)"
t_eq "the Application still points at the first remote" "file://$bare" "$(app in-cluster-web 'a["spec"]["source"]["repoURL"]')"

mkmanifest a/packages/web/cm2.yaml ConfigMap web2 default
t_ok "its own distro still syncs it" idpmake -C a up
t_eq "and marks it" "file://$T/gitops" "$(app in-cluster-web 'a["metadata"]["annotations"]["idpmake.io/gitops-remote"]')"
t_ok "setup: unmarked again" unmark
mkmanifest b/packages/web/cm2.yaml ConfigMap web2 default
t_ok "--adopt takes it on purpose" idpmake -C b up --adopt
t_eq "now it points at the second remote" "file://$T/b.git" "$(app in-cluster-web 'a["spec"]["source"]["repoURL"]')"
t_done
