#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A cached bundle that is truncated or corrupt (a crash before its data
# reached the disk, a full disk) is rendered again, never pushed: the file's
# name is the hash of its bytes, and the planner checks it before a push reads
# it (issue 12 #6). A no-op run still reads no bundle.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: corrupt
git:
  branch: one
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web-config
mkmanifest d/packages/web/svc.yaml Service web
mkmanifest d/packages/db/cm.yaml ConfigMap db-config

bare=$T/d/.idpmake/gitops.git
t_ok "up pushes to branch one" idpmake -C d up
web=$(idpmake -C d --json status | python3 -c '
import json, sys
for s in json.load(sys.stdin)["steps"]:
    if s["id"] == "in-cluster/web:render":
        print(s["output"])')
[ -n "$web" ] || t_bail "no output hash for in-cluster/web:render"
bundle=$(find d/.idpmake/cache/rendered -type f -path "*/${web:0:2}/${web:2}*" | head -1)
[ -f "$bundle" ] || t_bail "no cached bundle for $web"

t_ok "a no-op run" idpmake -C d up
t_grep "renders nothing" ' 0 rendered' "$OUTPUT"

# switch branch: everything is pushed again, from the cache (renders are up to date)
setbranch() { sed -i "s/branch: .*/branch: $1/" d/distro.yaml; }

# 1. the same length, one object's bytes changed: a valid bundle that is not what was rendered
sed -i 's/name: web-config/name: XXX-config/' "$bundle"
grep -q XXX-config "$bundle" || t_bail "could not corrupt $bundle"
setbranch two
t_ok "plan on branch two" idpmake -C d --json plan
t_grep "web renders again, as its cached output is corrupt" '"reason": *"rendered output in the cache is corrupt"' "$OUTPUT"
t_nogrep "db, intact, does not" '"in-cluster/db:render"' "$OUTPUT"
t_ok "up to branch two" idpmake -C d --json up
t_grep "web is rendered again" '"event": *"done".*"in-cluster/web:render"' "$OUTPUT"
t_nogrep "db is not" '"event": *"start".*"in-cluster/db:render"' "$OUTPUT"
git -C "$bare" show two:in-cluster/web/configmap.web-config.yaml >pushed.yaml 2>&1
t_grep "branch two holds the rendered object" 'name: web-config' pushed.yaml
t_nogrep "not the corrupt bytes" 'XXX' pushed.yaml
t_ok "the cache holds good bytes again" grep -q 'name: web-config' "$bundle"

# 2. truncated in the middle of a header: the last line is "NAME LEN" with no content after it
head -c "$(grep -b -o '^service.web.yaml [0-9]*' "$bundle" | cut -d: -f1)" "$bundle" >cut
echo "service.web.yaml 200" >>cut
cp cut "$bundle"
setbranch three
t_ok "up to branch three with a truncated cached bundle" idpmake -C d up
t_grep "web is rendered again" 'render.*in-cluster/web' "$OUTPUT"
t_eq "branch three holds both web objects" \
	"configmap.web-config.yaml service.web.yaml" \
	"$(git -C "$bare" ls-tree --name-only three in-cluster/web/ | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"

# 3. a corrupt bundle that no push needs is left alone, and not read, by a no-op run
sed -i 's/name: web-config/name: YYY-config/' "$bundle"
t_ok "a no-op run on branch three" idpmake -C d up
t_grep "renders nothing" ' 0 rendered' "$OUTPUT"
t_ok "the file is untouched (not read)" grep -q YYY-config "$bundle"
t_done
