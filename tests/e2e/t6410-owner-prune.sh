#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# up --prune deletes only what this distro's labels prove is the removed
# package's (issue 19 §1): with app-name "${package}" and cluster `old`
# renamed to `new`, the removed old/web's Application name is new/web's
# now, and it is not deleted; a removed package whose Application another
# distro took over is not deleted either; a removed package's own
# Application still is.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster old=https://old.example:6443 --cluster new=https://new.example:6443
api=http://$ARGOCD_SERVER/api/v1
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
# names: the Applications Argo CD has
names() {
	curl -s -f -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/applications" | python3 -c '
import json, sys
print(" ".join(a["metadata"]["name"] for a in json.load(sys.stdin)["items"]))'
}

distro() {
	mkdistro d <<EOF
idpmake: 1
name: fleet
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", app-name: "\${package}"}
clusters:
  $1: {server: "https://$1.example:6443"}
packages:
  web: {type: manifests, path: packages/web}
$2
EOF
}
mkmanifest d/packages/web/cm.yaml ConfigMap web default
mkmanifest d/packages/db/cm.yaml ConfigMap db default
distro old "  db: {type: manifests, path: packages/db}"
t_ok "the first up, on cluster old" idpmake -C d up
t_eq "Argo CD has web and db" "db web" "$(names)"

# the cluster renamed: old/web is gone, new/web has its Application name
distro new ""
t_ok "plan --prune" idpmake -C d plan --prune
t_grep "plan keeps web" "^keep +web \\(Application name of removed old/web, now new/web's: not deleted\\)" "$OUTPUT"
t_grep "plan deletes db" "^delete +db " "$OUTPUT"
emu_reset
t_ok "up --prune after old was renamed new and db removed" idpmake -C d up --prune
t_grep "web is not deleted: it is new/web's now" "Application 'web' of removed package old/web is now new/web's: not deleted" "$OUTPUT"
t_eq "no DELETE of web was sent" 0 "$(count DELETE '^/api/v1/applications/web')"
t_grep "the removed package's own Application is deleted" "deleted Application 'db' of removed package old/db" "$OUTPUT"
t_eq "Argo CD keeps web, not db" "web" "$(names)"
t_ok "web points at new" test "$(curl -s -f -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/applications/web" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["destination"]["server"])')" = https://new.example:6443
emu_reset
t_ok "the next up" idpmake -C d up --prune
t_eq "deletes nothing" 0 "$(count DELETE '^/api/v1/')"

# a removed package whose Application another distro took over: not deleted
mkmanifest d/packages/api/cm.yaml ConfigMap api default
distro new "  api: {type: manifests, path: packages/api}"
t_ok "setup: api is added" idpmake -C d up
t_ok "setup: another distro takes over api's Application" curl -fsS -X POST -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications?upsert=true" -d "{\"metadata\": {\"name\": \"api\",
	\"labels\": {\"idpmake.io/distro\": \"other\", \"idpmake.io/cluster\": \"new\", \"idpmake.io/package\": \"api\"}},
	\"spec\": {\"project\": \"default\", \"source\": {\"repoURL\": \"$bare\", \"path\": \"new/api\", \"targetRevision\": \"main\"},
	\"destination\": {\"server\": \"https://new.example:6443\", \"namespace\": \"default\"}}}"
distro new ""
emu_reset
t_ok "up --prune after api was removed" idpmake -C d up --prune
t_eq "no DELETE of the other distro's api" 0 "$(count DELETE '^/api/v1/applications/api')"
t_grep "it says there was nothing of this distro's to delete" "removed package new/api has no Application of this distro" "$OUTPUT"
t_eq "Argo CD keeps it" "api web" "$(names)"

t_done
