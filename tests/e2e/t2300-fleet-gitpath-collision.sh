#!/bin/bash
# Review finding: two clusters whose git.path expands to the same folder
# (git.path: "${region}/${package}") while their renders differ (the package
# uses ${cluster} in a rewrite).  plan.c's linked_seen dedupes pushes by
# folder, assuming one folder means one render (true only for _shared/):
# cluster b's render is silently dropped, b's Application would deploy a's
# objects, and every up pushes a new commit.  Expected: the distro is
# refused (exit 2, at git.path) or each folder holds its own cluster's render.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF2
idpmake: 1
name: collide
git: {remote: "$bare", path: "\${region}/\${package}"}
clusters:
  a: {server: "https://a.example:6443", vars: {region: eu}}
  b: {server: "https://b.example:6443", vars: {region: eu}}
packages:
  web:
    type: manifests
    path: packages/web
    rewrite: [{match: CLUSTERNAME, replace: "\${cluster}"}]
EOF2
mkdir -p d/packages/web
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {who: CLUSTERNAME}\n' >d/packages/web/cm.yaml

"$IDPMAKE" -C d up >"$T/up1.txt" 2>&1
rc=$?
if [ "$rc" = 2 ]; then
	t_grep "refused at git.path, naming the folder" 'distro.yaml:[0-9]+:[0-9]+: error: .*eu/web' "$T/up1.txt"
	t_done
fi
t_eq "two clusters whose renders differ were not given one folder (exit 2)" 2 "$rc"
git --git-dir="$bare" show main:eu/web/configmap.web.yaml >"$T/show1" 2>&1
t_ok "second up" "$IDPMAKE" -C d up
t_grep "a no-op up pushes nothing (today: a commit each time, alternating a's and b's render)" 'nothing pushed' "$OUTPUT"
git --git-dir="$bare" show main:eu/web/configmap.web.yaml >"$T/show2" 2>&1
t_ok "the folder's content is stable across ups" cmp -s "$T/show1" "$T/show2"
t_done
