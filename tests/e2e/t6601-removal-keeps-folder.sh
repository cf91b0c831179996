#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A package removed from the distro (issue 33 #5): up without --prune keeps
# its folder in the GitOps repository while its Application is left in Argo
# CD, so that Application never names a path the branch lacks (Argo CD's
# ComparisonError "app path does not exist"); plan says so.  up --prune
# deletes the Application (cascade, waited for) first, then the same run's
# push removes the folder.  A folder that linked clusters share
# (_shared/PACKAGE) is kept the same way.  The emulator compares every
# Application every 50 ms, and a watcher records any ComparisonError.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster c1=https://c1.example:6443 --cluster c2=https://c2.example:6443
emu_post config '{"resync_ms": 50}'

# the Applications Argo CD holds, one line
apps() {
	curl -fsS "$emu/apps" | python3 -c '
import json, sys
print(" ".join(sorted(a["metadata"]["name"] for a in json.load(sys.stdin))))'
}
# the folders of the branch under DIR, one line
folders() { git -C "$bare" ls-tree -d --name-only main:"$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'; }
# app_state NAME: its sync status and ComparisonError messages
app_state() {
	curl -fsS "$emu/apps" | python3 -c '
import json, sys
for a in json.load(sys.stdin):
    if a["metadata"]["name"] == sys.argv[1]:
        st = a["status"]
        print(st["sync"]["status"], *[c["message"] for c in st.get("conditions", []) if c["type"] == "ComparisonError"])' "$1"
}
# the watcher: every ComparisonError any Application has, as NAME: MESSAGE, in $T/errors
watch_errors() {
	while :; do
		curl -fsS "$emu/apps" 2>/dev/null | python3 -c '
import json, sys
for a in json.load(sys.stdin):
    for c in a["status"].get("conditions", []):
        if c["type"] == "ComparisonError":
            print(a["metadata"]["name"] + ": " + c["message"])' >>"$T/errors" 2>/dev/null
		sleep 0.02
	done
}
: >"$T/errors"
watch_errors &
watcher=$!
t_pids="$t_pids $watcher"

# distro PACKAGES: c1 and c2 with those packages: `share` on both, alike (one folder they share,
# _shared/share), the others on c1 (c1/PACKAGE)
distro() {
	local p core="" one=""
	{
		printf 'idpmake: 1\nname: keep\ngit: {remote: "%s"}\nargocd: {repo-url: "file://%s"}\n' "$bare" "$bare"
		for p in $1; do
			case $p in share) core="$core, $p" ;; *) one="$one, $p" ;; esac
		done
		printf 'clusters:\n  c1: {server: "https://c1.example:6443", profiles: [core, one]}\n'
		printf '  c2: {server: "https://c2.example:6443", profiles: [core]}\n'
		printf 'profiles:\n  core: [%s]\n  one: [%s]\n' "${core#, }" "${one#, }"
		printf 'packages:\n'
		for p in $1; do printf '  %s: {type: manifests, path: packages/%s}\n' "$p" "$p"; done
	} >distro.yaml
}
mkdir d && cd d || exit 1
for p in a b share; do mkmanifest "packages/$p/cm.yaml" ConfigMap "$p" "$p"; done
distro "a b share"

t_ok "first up: a, b on c1; share on both" idpmake up
t_eq "four Applications" "c1-a c1-b c1-share c2-share" "$(apps)"
t_eq "c1's folders" "a b" "$(folders c1)"
shared=$(git -C "$bare" ls-tree -d --name-only main:_shared 2>/dev/null)
t_ok "share's folder is one, under _shared/" test -n "$shared"

# ---- b and share gone: plan -----------------------------------------------
distro "a"
t_ok "plan after b and share left" idpmake plan
t_grep "b's folder is kept while its Application names it" \
	'^keep +c1/b/ [(]package no longer in the distro; Application c1-b still names it: up --prune deletes it, then the folder[)]$' "$STDOUT"
t_grep "the shared folder too" "^keep +_shared/$shared/ [(].*Application c[12]-share still names it" "$STDOUT"
t_nogrep "nothing is removed" '^remove ' "$STDOUT"
t_grep "the summary counts them" '; 2 folders kept until up --prune, 3 Applications left behind$' "$STDOUT"
t_ok "plan --prune" idpmake --prune plan
t_grep "--prune: b's folder goes once c1-b is deleted" \
	'^remove c1/b/ [(]package no longer in the distro; once Application c1-b is deleted[)]$' "$STDOUT"
t_grep "--prune: and the shared one" "^remove _shared/$shared/ " "$STDOUT"
t_grep "--prune: the summary" '; 2 folders to remove, 3 Applications to delete$' "$STDOUT"
t_ok "plan --json" idpmake --json plan
cp "$STDOUT" "$T/plan.json"
t_ok "--json: the folders kept, naming their Application" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["folder"]: x for x in d["removals"]}
assert r["c1/b"] == {"folder": "c1/b", "target": "c1/b", "action": "keep",
                              "reason": "package no longer in the distro", "application": "c1-b"}, r
assert [x["action"] for x in d["removals"]] == ["keep", "keep"], r' "$T/plan.json"

# ---- up without --prune: the folders stay, the Applications stay Synced ------------------
t_ok "up without --prune" idpmake up
t_grep "up says the folder stays" "Application 'c1-b' remains [(]--prune deletes it[)], and so does the folder it names" "$OUTPUT"
t_eq "b's folder is still in the branch" "a b" "$(folders c1)"
t_eq "and the shared one" "$shared" "$(git -C "$bare" ls-tree -d --name-only main:_shared 2>/dev/null)"
t_eq "the Applications are left" "c1-a c1-b c1-share c2-share" "$(apps)"
# compared again since the push (every 50 ms): still Synced, no ComparisonError
sleep 0.5
t_eq "c1-b stays Synced, no ComparisonError" "Synced" "$(app_state c1-b)"
t_eq "c2-share too" "Synced" "$(app_state c2-share)"
t_ok "plan after up" idpmake plan
t_grep "still kept" '^keep +c1/b/ ' "$STDOUT"

# ---- up --prune: the Applications go, then the folders ----------------------------------
t_ok "up --prune" idpmake --prune up
t_grep "c1-b is deleted" "deleted Application 'c1-b'" "$OUTPUT"
t_eq "only a's Application is left" "c1-a" "$(apps)"
t_eq "b's folder is gone, in the same run" "a" "$(folders c1)"
t_eq "and the shared one" "" "$(git -C "$bare" ls-tree -d --name-only main:_shared 2>/dev/null)"
sleep 0.3
kill $watcher 2>/dev/null
wait $watcher 2>/dev/null
t_eq "no Application ever named a missing path (ComparisonError)" "" "$(sort -u "$T/errors")"
t_ok "plan --prune after" idpmake --prune plan
t_nogrep "lists nothing" '^(remove|keep|leave|delete) ' "$STDOUT"
t_done
