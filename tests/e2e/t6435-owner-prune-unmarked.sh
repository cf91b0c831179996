#!/bin/bash
# shellcheck disable=SC2317,SC2016 # functions run through t_ok and friends; ${cluster} is the template's, not the shell's
# --prune deletes only what it proves is this distro's (issue 19 §1).  An
# Application made before idpmake marked the GitOps remote and path (no
# idpmake.io/gitops-remote annotation) is its name's distro's; but a
# same-named distro pushing elsewhere, which took another app-name to stay
# clear of it, must not delete it when it drops the package: the
# Application pulls from the other remote, so it is not this one's.
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

# distro DIR REMOTE APP-NAME PACKAGES...
distro() {
	local dir=$1 remote=$2 name=$3 p
	shift 3
	{
		printf 'idpmake: 1\nname: platform\ngit: {remote: "%s"}\n' "$remote"
		printf 'argocd: {repo-url: "file://%s", app-name: "%s"}\npackages:\n' "$remote" "$name"
		for p in "$@"; do
			printf '  %s: {type: manifests, path: packages/%s}\n' "$p" "$p"
		done
	} | mkdistro "$dir"
	for p in "$@"; do
		mkmanifest "$dir/packages/$p/cm.yaml" ConfigMap "$p" default
	done
}

distro a "$bare" '${cluster}-${package}' web api
t_ok "the first platform's up" idpmake -C a up
# as the previous idpmake made it: no remote or path annotations
curl -s -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/in-cluster-api" | python3 -c '
import json, sys
a = json.load(sys.stdin)
for k in ("idpmake.io/gitops-remote", "idpmake.io/gitops-path"):
    a["metadata"]["annotations"].pop(k)
a.pop("status", None)
print(json.dumps(a))' >"$T/old.json"
t_ok "setup: the first one's Application as the previous version made it" curl -fsS -X PUT \
	-H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
	"$api/applications/in-cluster-api" -d @"$T/old.json"
t_eq "(no remote annotation)" None "$(app in-cluster-api 'a["metadata"]["annotations"].get("idpmake.io/gitops-remote")')"

distro b "$T/b.git" 'b-${cluster}-${package}' api other
t_ok "a second platform elsewhere, with its own Application names, syncs api" idpmake -C b up
t_eq "its own Application" "file://$T/b.git" "$(app b-in-cluster-api 'a["spec"]["source"]["repoURL"]')"

distro b "$T/b.git" 'b-${cluster}-${package}' other
t_ok "the second platform drops api: up --prune" idpmake -C b up --prune
t_eq "its own Application is deleted" gone "$(app b-in-cluster-api 'a["metadata"]["name"]')"
t_eq "the first platform's Application, which pulls from the other remote, is left" "file://$bare" \
	"$(app in-cluster-api 'a["spec"]["source"]["repoURL"]')"
t_nogrep "and not said to be deleted" "deleted Application 'in-cluster-api'" "$OUTPUT"
t_done
