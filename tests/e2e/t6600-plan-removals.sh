#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# plan lists what a run removes of packages and clusters gone from the
# distro: each folder of theirs, which the push keeps while their
# Application is left in Argo CD (it names the folder) and removes once
# up --prune deleted it, and each Application that up --prune deletes, or
# that up without it leaves in Argo CD, and each cluster idpmake
# registered that --prune unregisters; text, --json, plan -o and the
# summary.  A selection lists the folders but no Application (up touches
# none then).  up then does exactly that, and the next plan lists nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd \
	--cluster c1=https://c1.example:6443
C2_TOKEN=c2-$(random_string)
export C2_TOKEN

# the Applications Argo CD holds, one name a line, sorted
apps() {
	curl -fsS "$emu/apps" | python3 -c '
import json, sys
for n in sorted(a["metadata"]["name"] for a in json.load(sys.stdin)):
    print(n)'
}
# the clusters Argo CD holds, by name
clusters() {
	curl -fsS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters" | python3 -c '
import json, sys
print(" ".join(sorted(c["name"] for c in json.load(sys.stdin)["items"])))'
}
# the folders of the repository's branch, one a line
folders() { git -C "$bare" ls-tree -d --name-only main:clusters/"$1" 2>/dev/null | tr '\n' ' '; }
# distro CLUSTERS PACKAGES: the distro with those clusters and packages
distro() {
	{
		# shellcheck disable=SC2016 # ${cluster} is idpmake's, not the shell's
		printf 'idpmake: 1\nname: removals\ngit: {remote: "%s", path: "clusters/${cluster}/${package}"}\n' "$bare"
		printf 'argocd: {repo-url: "file://%s"}\nclusters:\n' "$bare"
		for c in $1; do
			printf '  %s: {server: "https://%s.example:6443"' "$c" "$c"
			# idpmake registers c2 in Argo CD
			[ "$c" = c2 ] && printf ', register: {token-env: C2_TOKEN}'
			printf '}\n'
		done
		printf 'packages:\n'
		for p in $2; do printf '  %s: {type: manifests, path: packages/%s}\n' "$p" "$p"; done
	} >distro.yaml
}
mkdir d && cd d || exit 1
for p in a b; do mkmanifest "packages/$p/cm.yaml" ConfigMap "$p" "$p"; done
distro "c1 c2" "a b"

t_ok "first up: a and b on c1 and c2" idpmake up
t_eq "four Applications" "c1-a c1-b c2-a c2-b" "$(apps | tr '\n' ' ' | sed 's/ $//')"
t_eq "c1's folders" "a b " "$(folders c1)"
t_ok "setup: c2 is registered" eval 'clusters | grep -qw c2'
t_ok "plan with nothing gone" idpmake plan
t_nogrep "lists no removal" '^(remove|leave|delete) ' "$STDOUT"

# ---- b gone from the distro ------------------------------------------------
distro "c1 c2" "a"
t_ok "plan after b left the distro" idpmake plan
t_grep "c1's folder of b is kept while c1-b names it" \
	'^keep +clusters/c1/b/ [(]package no longer in the distro; Application c1-b still names it: up --prune deletes it, then the folder[)]$' "$STDOUT"
t_grep "c2's too, for c2-b" '^keep +clusters/c2/b/ [(]package no longer in the distro; Application c2-b still names it: ' "$STDOUT"
t_nogrep "no folder of a" '^(remove|keep) +clusters/c./a/' "$STDOUT"
t_nogrep "nothing is removed while the Applications stay" '^remove ' "$STDOUT"
t_grep "c1-b is left behind" '^leave +c1-b [(]Application of c1/b, left in Argo CD; up --prune deletes it[)]$' "$STDOUT"
t_grep "c2-b too" '^leave +c2-b ' "$STDOUT"
t_nogrep "nothing is deleted without --prune" '^delete ' "$STDOUT"
t_grep "the summary counts them" '^idpmake: .*; 2 folders kept until up --prune, 2 Applications left behind$' "$STDOUT"

t_exit 1 "plan --prune --exit-code: work to do" idpmake --prune plan --exit-code
t_grep "--prune: c1-b is deleted" '^delete c1-b [(]Application of c1/b: package no longer in the distro[)]$' "$STDOUT"
t_grep "--prune: then its folder removed" \
	'^remove clusters/c1/b/ [(]package no longer in the distro; once Application c1-b is deleted[)]$' "$STDOUT"
t_grep "--prune: c2-b too" '^delete c2-b ' "$STDOUT"
t_nogrep "--prune: nothing left behind" '^leave ' "$STDOUT"
t_grep "--prune: the summary counts the deletions" '; 2 folders to remove, 2 Applications to delete$' "$STDOUT"

# check_json FILE PRUNE: the removals and applications arrays
check_json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = "delete" if sys.argv[2] == "1" else "leave"
folder = "remove" if sys.argv[2] == "1" else "keep"
assert d["removals"] == [
    {"folder": "clusters/c1/b", "target": "c1/b", "action": folder, "reason": "package no longer in the distro",
     "application": "c1-b"},
    {"folder": "clusters/c2/b", "target": "c2/b", "action": folder, "reason": "package no longer in the distro",
     "application": "c2-b"}], d["removals"]
assert [(a["name"], a["cluster"], a["package"], a["action"]) for a in d["applications"]] == [
    ("c1-b", "c1", "b", want), ("c2-b", "c2", "b", want)], d["applications"]
assert "steps" in d and d["version"] == 1
EOF
}
t_ok "plan --json" idpmake --json plan
cp "$STDOUT" "$T/plan.json"
t_ok "--json carries the removals and the Applications left" check_json "$T/plan.json" 0
t_ok "plan --json --prune" idpmake --json --prune plan
cp "$STDOUT" "$T/plan.json"
t_ok "--json --prune: the Applications are deleted" check_json "$T/plan.json" 1

# a selection: the folders are listed, kept; Applications are not touched
t_ok "plan c1/a" idpmake plan c1/a
t_grep "a target still lists the folders the push keeps" '^keep +clusters/c1/b/ ' "$STDOUT"
t_nogrep "but no Application (up leaves them to a full run)" '^(leave|delete) ' "$STDOUT"
t_exit 2 "plan -l with a label nothing has, --prune: refused (select.c)" idpmake --prune -l nosuch=label plan
t_nogrep "-l: no Application either" '^(leave|delete) ' "$STDOUT"

# the saved plan lists them too
t_ok "plan -o" idpmake plan -o "$T/saved.json"
t_grep "plan -o lists the folders" '^keep +clusters/c1/b/ ' "$STDOUT"
t_grep "and the Applications" '^leave +c1-b ' "$STDOUT"
t_ok "the saved plan records them" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["folder"] for r in d["removals"]] == ["clusters/c1/b", "clusters/c2/b"], d["removals"]
assert [a["name"] for a in d["applications"]] == ["c1-b", "c2-b"], d["applications"]' "$T/saved.json"

# ---- up does what plan said ---------------------------------------------------
t_ok "up without --prune" idpmake up
t_eq "c1/b's folder stays: c1-b names it" "a b " "$(folders c1)"
t_eq "c2/b's folder stays" "a b " "$(folders c2)"
t_eq "the Applications of b are left" "c1-a c1-b c2-a c2-b" "$(apps | tr '\n' ' ' | sed 's/ $//')"
t_ok "plan after up" idpmake plan
t_nogrep "no folder to remove" '^remove ' "$STDOUT"
t_grep "the folders still kept" '^keep +clusters/c1/b/ ' "$STDOUT"
t_grep "c1-b still left behind" '^leave +c1-b ' "$STDOUT"
t_ok "up --prune" idpmake --prune up
t_eq "b's Applications are deleted" "c1-a c2-a" "$(apps | tr '\n' ' ' | sed 's/ $//')"
t_eq "then c1/b's folder is removed, in the same run" "a " "$(folders c1)"
t_eq "and c2/b's" "a " "$(folders c2)"
t_ok "plan after up --prune" idpmake --prune plan
t_nogrep "lists nothing" '^(remove|leave|delete) ' "$STDOUT"
t_nogrep "the summary says nothing of removals" 'to remove|to delete|left behind' "$STDOUT"

# ---- a cluster gone ----------------------------------------------------------
distro "c1" "a"
t_ok "plan after c2 left the distro" idpmake plan
t_grep "c2's folder is kept while c2-a names it" \
	'^keep +clusters/c2/a/ [(]cluster no longer in the distro; Application c2-a still names it: up --prune deletes it, then the folder[)]$' "$STDOUT"
t_nogrep "c1's is not listed" '^(remove|keep) +clusters/c1/' "$STDOUT"
t_grep "c2-a is left behind" '^leave +c2-a [(]Application of c2/a, ' "$STDOUT"
t_grep "c2's registration is left" '^leave +c2 [(]cluster idpmake registered, left in Argo CD; up --prune unregisters it[)]$' "$STDOUT"
t_grep "the summary counts the three" '; 1 folder kept until up --prune, 1 Application left behind, 1 cluster left registered$' "$STDOUT"
t_ok "plan --prune" idpmake --prune plan
t_grep "--prune: c2 is unregistered" '^unregister c2 [(]cluster idpmake registered in Argo CD, gone from the distro[)]$' "$STDOUT"
t_grep "--prune: the summary" '; 1 folder to remove, 1 Application to delete, 1 cluster to unregister$' "$STDOUT"
t_ok "plan --prune --json" idpmake --json --prune plan
cp "$STDOUT" "$T/plan.json"
t_ok "--json: the cluster's folder and Application" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["removals"] == [{"folder": "clusters/c2/a", "target": "c2/a", "action": "remove",
                          "reason": "cluster no longer in the distro", "application": "c2-a"}], d
assert [(a["name"], a["action"], a["reason"]) for a in d["applications"]] == [
    ("c2-a", "delete", "cluster no longer in the distro")], d
assert d["clusters"] == [{"name": "c2", "action": "unregister", "reason": "cluster no longer in the distro"}], d' "$T/plan.json"
t_ok "up --prune" idpmake --prune up
t_eq "c2's folders are gone" "" "$(folders c2)"
t_eq "c2-a is deleted" "c1-a" "$(apps | tr '\n' ' ' | sed 's/ $//')"
t_ok "c2 is unregistered" eval '! clusters | grep -qw c2'
t_ok "plan --prune after" idpmake --prune plan
t_nogrep "lists nothing" '^(remove|leave|delete) ' "$STDOUT"
t_done
