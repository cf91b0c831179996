#!/bin/bash
# A run killed while it wrote a rendered bundle into the cache (a second
# Ctrl-C, the OOM killer: the bundle may be 100 MB) left its temporary
# file cache/rendered/render.tmpPID.N there for good; no later run removed
# it.  Every writer of the cache holds the state lock, so the next render
# removes the temporary files of other processes, saying so, and leaves
# the bundles alone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: killed
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web-config
t_ok "up" idpmake -C d up
cache=d/.idpmake/cache/rendered
bundles=$(find "$cache" -mindepth 2 -type f | wc -l)
[ "$bundles" -ge 1 ] || t_bail "no bundle in the cache"
# what a killed run leaves: a bundle cut short, under a pid no longer running
head -c 100000 /dev/zero >"$cache/render.tmp4194305.1"
head -c 100000 /dev/zero >"$cache/render.tmp4194305.2"
: >"$cache/render.tmpx"	# not one of ours: left alone

t_ok "a no-op up" idpmake -C d up
t_ok "... renders nothing and leaves them" test -f "$cache/render.tmp4194305.1"
mkmanifest d/packages/web/svc.yaml Service web
t_ok "up with a change renders" idpmake -C d up
t_grep "... and says it removes the killed run's files" "removed .*render.tmp4194305.1, left by an interrupted run" "$OUTPUT"
t_eq "... both gone" "" "$(cd "$cache" && ls -d render.tmp[0-9]* 2>/dev/null)"
t_ok "... the other file is left" test -f "$cache/render.tmpx"
t_eq "... the bundles are kept, the new one added" $((bundles + 1)) "$(find "$cache" -mindepth 2 -type f | wc -l)"
t_ok "plan has nothing to do" idpmake -C d plan --exit-code
t_done
