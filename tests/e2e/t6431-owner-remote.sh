#!/bin/bash
# shellcheck disable=SC2317,SC2016 # functions run through t_ok and friends; ${cluster} is git.path's, not the shell's
# Ownership is the distro's name with the GitOps remote and path it pushes
# to (issue 19 §1): two distros both named `platform`, pushing to different
# remotes or to different paths of one remote, do not take over each
# other's Applications.  What idpmake makes carries the annotations
# idpmake.io/gitops-remote (credentials stripped, normalized) and
# idpmake.io/gitops-path; a collision is refused before the push, naming
# the object, the owner (distro, remote, path) and the ways out.  An
# Application made before the annotations existed is the same-named
# distro's, and gets them on its next sync.  --prune leaves what a
# same-named distro elsewhere owns.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

git init -q --bare -b main "$T/b.git" || t_bail "git init failed"
start_gitops_argocd --repo-map "$T/b.git=$T/b.git" --repo-map "file://$T/b.git=$T/b.git"
api=http://$ARGOCD_SERVER/api/v1
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
# app NAME EXPR: EXPR over the Application `a` as Argo CD has it ("gone" when it has none)
app() {
	curl -s -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/$1" | python3 -c '
import json, sys
a = json.load(sys.stdin)
print(eval(sys.argv[1]) if "metadata" in a else "gone")' "$2"
}
ann='a["metadata"].get("annotations", {})'

# distro DIR REMOTE [PATH]
distro() {
	local path=""
	[ -z "${3:-}" ] || path=", path: \"$3\""
	mkdistro "$1" <<EOF
idpmake: 1
name: platform
git: {remote: "$2"$path}
argocd: {repo-url: "file://$2"}
packages:
  web: {type: manifests, path: packages/web}
  api: {type: manifests, path: packages/api}
EOF
	mkmanifest "$1/packages/web/cm.yaml" ConfigMap web default
	mkmanifest "$1/packages/api/cm.yaml" ConfigMap api default
}
distro a "$bare"
distro b "$T/b.git"

t_ok "the first platform's up" idpmake -C a up
t_eq "its Application names the remote it pushes to, normalized" "file://$T/gitops" \
	"$(app in-cluster-web "${ann}['idpmake.io/gitops-remote']")"
t_eq "and its path" '${cluster}/${package}' "$(app in-cluster-web "${ann}['idpmake.io/gitops-path']")"

emu_reset
t_exit 1 "a second distro named platform, pushing to another remote, is refused" idpmake -C b up
t_grep "naming the object, the owner's remote and path, and this distro's" \
	"in-cluster/web:sync: Application 'in-cluster-web' in Argo CD belongs to distro 'platform' pushing to file://$T/gitops at path \\\$\{cluster\}/\\\$\{package\}, not to distro 'platform' pushing to file://$T/b at path" "$STDERR"
t_grep "every one" "Application 'in-cluster-api' in Argo CD belongs to distro 'platform' pushing to file://$T/gitops" "$STDERR"
t_grep "before the push" "refused before the push: 2 objects" "$STDERR"
t_grep "with the ways out" 'argocd.app-name, e.g. "platform-\$\{cluster\}-\$\{package\}".*idpmake up --adopt' "$STDERR"
t_grep "and why one name is two distros" "another distro named 'platform' pushes elsewhere" "$STDERR"
t_eq "nothing was pushed" "" "$(git --git-dir="$T/b.git" for-each-ref)"
t_eq "no Application was created or updated" 0 "$(count POST '^/api/v1/applications')"
t_eq "the first one's Application still points at its remote" "file://$bare" "$(app in-cluster-web 'a["spec"]["source"]["repoURL"]')"

# one remote, another path: another distro too
distro c "$bare" 'c/${cluster}/${package}'
t_exit 1 "a platform pushing to another path of the same remote is refused" idpmake -C c up
t_grep "naming the paths" "belongs to distro 'platform' pushing to file://$T/gitops at path \\\$\{cluster\}/\\\$\{package\}, not to distro 'platform' pushing to file://$T/gitops at path c/" "$STDERR"

# the same remote written another way is the same distro
distro a2 "$bare//"
t_ok "the first platform, its remote written with a trailing '/', is the same owner" idpmake -C a2 up in-cluster/web

# made before the annotations: the same-named distro's, annotated on its next sync
curl -s -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/in-cluster-api" | python3 -c '
import json, sys
a = json.load(sys.stdin)
for k in ("idpmake.io/gitops-remote", "idpmake.io/gitops-path"):
    a["metadata"]["annotations"].pop(k)
a.pop("status", None)
print(json.dumps(a))' >"$T/old.json"
t_ok "setup: an Application as the previous version made it" curl -fsS -X PUT -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications/in-cluster-api" -d @"$T/old.json"
t_eq "(it has no remote annotation)" None "$(app in-cluster-api "$ann.get('idpmake.io/gitops-remote')")"
mkmanifest a/packages/api/cm2.yaml ConfigMap api2 default
t_ok "its distro's up syncs it" idpmake -C a up
t_eq "and adds the annotation" "file://$T/gitops" "$(app in-cluster-api "${ann}['idpmake.io/gitops-remote']")"

# --adopt, then the first one's --prune leaves what is now the second one's
t_ok "the second platform takes web over on purpose" idpmake -C b up --adopt in-cluster/web
t_grep "saying so" "adopting Application 'in-cluster-web', which belongs to distro 'platform' pushing to file://$T/gitops" "$OUTPUT"
t_eq "now it points at the second remote" "file://$T/b" "$(app in-cluster-web "${ann}['idpmake.io/gitops-remote']")"
sed -i '/^  web:/d' a/distro.yaml
t_ok "the first platform drops web: up --prune" idpmake -C a up --prune
t_eq "the second one's Application is left alone" "file://$T/b.git" "$(app in-cluster-web 'a["spec"]["source"]["repoURL"]')"

t_done
