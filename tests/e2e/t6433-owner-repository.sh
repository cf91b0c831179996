#!/bin/bash
# shellcheck disable=SC2317,SC2016 # functions run through t_ok and friends; ${cluster} is the distro's
# Repository ownership (issue 19 §1): a repository in Argo CD has no labels
# or annotations (v1alpha1.Repository), so repository:register names the one
# it registers "idpmake/DISTRO".  Before the push, a repository Argo CD
# holds credentials for that someone gave by hand (no such name) or that
# another distro registered is not registered over: exit 1, nothing pushed,
# the ways out named (argocd.repository: registered, no IDPMAKE_GIT_TOKEN,
# --adopt).  One without the name that this distro's state says it
# registered (an older idpmake's) is its own, and gets the name.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN IDPMAKE_GIT_ALLOW_HTTP=1
api=http://$ARGOCD_SERVER/api/v1
argo() { curl -sS -f -X "$1" -H "Content-Type: application/json" -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/$2" ${3:+-d "$3"}; }
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
# repo FIELD: the field of the repository Argo CD has for $url
repo() { argo GET repositories | python3 -c '
import json, sys
r = [r for r in json.load(sys.stdin)["items"] if r["repo"] == sys.argv[1]]
print(r[0].get(sys.argv[2], "") if r else "none")' "$url" "$1"; }
hand='{"repo": "'"$url"'", "type": "git", "username": "someone", "password": "hand-'"$(random_string)"'"}'

# distro DIR NAME [ARGOCD-EXTRA]
distro() {
	mkdistro "$1" <<EOF
idpmake: 1
name: $2
git: {remote: "$(authurl "$url")"}
argocd: {namespace: argocd$3}
packages:
  web: {type: manifests, path: packages/web}
EOF
	mkmanifest "$1/packages/web/cm.yaml" ConfigMap web default
}
distro d1 first
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=first

# ---- credentials given by hand -------------------------------------------------
t_ok "setup: someone registers the repository by hand" argo POST repositories "$hand"
emu_reset
t_exit 1 "up would register over them: refused" idpmake -C d1 up
t_grep "naming the repository and its owner" \
	"repository:register: repository $url in Argo CD belongs to someone outside idpmake \(its credentials were given by hand" "$STDERR"
t_grep "before the push" "refused before the push: 1 object" "$STDERR"
t_grep "with the ways out" "argocd: \{repository: registered\}.*without IDPMAKE_GIT_TOKEN.*idpmake up --adopt" "$STDERR"
t_eq "nothing was registered" 0 "$(count POST '^/api/v1/repositories')"
t_eq "nothing was pushed" "" "$(git ls-remote "$(authurl "$url")" 2>&1)"
t_eq "the hand-given credentials stay" someone "$(repo username)"

t_ok "up --adopt registers over them on purpose" idpmake -C d1 up --adopt
t_grep "saying so" "adopting repository $url, which belongs to someone outside idpmake" "$OUTPUT"
t_eq "the repository is named as this distro's" "idpmake/first first" "$(repo name) $(repo username)"

# ---- another distro, same remote -------------------------------------------------
distro d2 second ', app-name: "second-${cluster}-${package}"'
t_exit 1 "a second distro's repository:register is refused" idpmake -C d2 up
t_grep "naming the distro that registered it" "repository $url in Argo CD belongs to distro 'first', not to distro 'second'" "$STDERR"

# ---- registered by an older idpmake (no name), as this distro's state records ----
older='{"repo": "'"$url"'", "type": "git", "username": "first", "password": "'"$GIT_PASS"'"}'
t_ok "setup: the repository as an older idpmake registered it" argo POST "repositories?upsert=true" "$older"
t_eq "(no name)" "" "$(repo name)"
export IDPMAKE_GIT_USERNAME=first2	# for whom the credential is: repository:register runs again
t_ok "this distro's up registers it again" idpmake -C d1 up
t_eq "and names it" "idpmake/first first2" "$(repo name) $(repo username)"
t_ok "setup: again as an older idpmake registered it" argo POST "repositories?upsert=true" "$older"
t_ok "forget repository:register" idpmake -C d1 forget repository:register
t_exit 1 "once the state does not say so, it is someone else's" idpmake -C d1 up
t_grep "said as such" "repository $url in Argo CD belongs to someone outside idpmake" "$STDERR"

t_done
