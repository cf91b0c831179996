#!/bin/bash
# Linked and cloned clusters (fleet.md): a cloned cluster keeps the render
# it was built with when the distro changes; plan lists it as behind, by
# package; status CLUSTER/ names the render, commit and time its clone was
# taken from; diff CLUSTER/ shows the clone against the current render;
# idpmake promote CLUSTER [PACKAGE...] brings it to the current render.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF
idpmake: 1
name: clones
git: {remote: "$bare"}
clusters:
  live: {server: "https://live:6443"}
  snap: {server: "https://snap:6443", mode: cloned}
packages:
  web: {type: manifests, path: packages/web}
  db: {type: manifests, path: packages/db}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkmanifest d/packages/db/cm.yaml ConfigMap db
cd d || exit 1
# show PATH: the file in the GitOps repository's main, into $T/show (a file t_grep can read)
show() { git --git-dir="$bare" show "main:$1" >"$T/show" 2>&1; echo "$T/show"; }

t_ok "first up builds both clusters" idpmake up
t_grep "snap's web is built" 'name: web' "$(show snap/web/configmap.web.yaml)"
first=$(git --git-dir="$bare" rev-parse main)

echo '  version: "2"' >>packages/web/cm.yaml
t_ok "plan after a change" idpmake plan
t_grep "plan: the linked cluster re-renders" '^render +live/web:render' "$STDOUT"
t_nogrep "plan: the cloned cluster does not" 'snap/web:render' "$STDOUT"
t_grep "plan lists the cloned cluster as behind, by package" '^behind cloned cluster snap: web \(idpmake promote snap\)$' "$STDOUT"
t_ok "up" idpmake up
t_grep "the linked cluster got the change" 'version: .2.' "$(show live/web/configmap.web.yaml)"
t_nogrep "the cloned cluster kept its copy" 'version' "$(show snap/web/configmap.web.yaml)"
t_ok "up again is a no-op" idpmake up
t_grep "nothing rendered" 'idpmake: 0 rendered, nothing pushed' "$OUTPUT"

t_ok "status snap/" idpmake status --json snap/
cp "$STDOUT" "$T/status.json"
t_ok "status: the clone's render, commit and time" python3 -c '
import json, sys
st = {s["id"]: s for s in json.load(open(sys.argv[1]))["steps"]}
r = st["snap/web:render"]
assert r["result"] == "ok" and r["commit"] == sys.argv[2] and r["at"] and r["output"], r' "$T/status.json" "$first"

t_exit 1 "diff --exit-code snap/: the clone differs from the current render" idpmake diff --exit-code snap/
t_grep "diff shows the change" '^\+  version: .2.' "$STDOUT"
t_exit 0 "diff --exit-code snap/db: no difference" idpmake diff --exit-code snap/db

t_exit 2 "promote needs a cluster" idpmake promote
t_exit 2 "promote of a linked cluster is an error (issue 37 #4)" idpmake promote live
t_grep "naming mode: cloned" "promote: cluster 'live' is linked: .*mode: cloned" "$STDERR"
t_ok "promote snap web" idpmake promote snap web
t_grep "the cloned cluster got the change" 'version: .2.' "$(show snap/web/configmap.web.yaml)"
t_ok "plan after promote" idpmake plan
t_nogrep "nothing behind" '^behind' "$STDOUT"
sed -i 's/version: "2"/version: "3"/' packages/web/cm.yaml
echo '  version: "3"' >>packages/db/cm.yaml
t_ok "up after two changes" idpmake up
t_ok "plan" idpmake plan
t_grep "behind by both packages" '^behind cloned cluster snap: (web, db|db, web) \(idpmake promote snap\)$' "$STDOUT"
t_ok "promote snap (every package)" idpmake promote snap
t_grep "web moved" 'version: .3.' "$(show snap/web/configmap.web.yaml)"
t_grep "db moved" 'version: .3.' "$(show snap/db/configmap.db.yaml)"
t_done
