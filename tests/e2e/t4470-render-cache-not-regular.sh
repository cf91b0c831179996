#!/bin/bash
# A cache bundle replaced by a FIFO (or a device) is not read: opening a
# FIFO for reading waits for a writer, so plan (which checks a bundle a
# push will read) and up hung forever.  It is now a corrupt cache file:
# removed, rendered again, pushed.  A directory in its place is an error
# that names it, not a hang.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: notreg
git:
  branch: one
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web-config
mkmanifest d/packages/web/svc.yaml Service web
bare=$T/d/.idpmake/gitops.git
t_ok "up pushes to branch one" idpmake -C d up
bundle=$(find d/.idpmake/cache/rendered -type f | head -1)
[ -f "$bundle" ] || t_bail "no cached bundle"
setbranch() { sed -i "s/branch: .*/branch: $1/" d/distro.yaml; }

{ rm "$bundle" && mkfifo "$bundle"; } || t_bail "mkfifo failed"
setbranch two
t_exit 0 "plan with a FIFO in the cache ends" timeout 20 "$IDPMAKE" -C d --json plan
t_grep "... and renders again" '"reason": *"rendered output in the cache is corrupt"' "$OUTPUT"
t_exit 0 "up with a FIFO in the cache ends" timeout 20 "$IDPMAKE" -C d up
t_grep "... and pushes" '1 commit pushed' "$OUTPUT"
t_ok "... the cache holds a regular file again" test -f "$bundle"
git -C "$bare" show two:in-cluster/web/configmap.web-config.yaml >pushed.yaml 2>&1
t_grep "branch two holds the rendered object" 'name: web-config' pushed.yaml

{ rm "$bundle" && mkfifo "$bundle"; } || t_bail "mkfifo failed"
t_exit 0 "render -o with a FIFO in the cache ends" timeout 20 "$IDPMAKE" -C d render -o "$T/out" web
t_eq "... and writes both objects" 2 "$(find "$T/out" -name '*.yaml' | wc -l)"

{ rm "$bundle" && mkdir "$bundle"; } || t_bail "mkdir failed"
setbranch three
t_exit 1 "up with a directory in the cache ends" timeout 20 "$IDPMAKE" -C d up
t_grep "... naming it" "cannot write .*${bundle##*/}: Is a directory" "$OUTPUT"
t_done
