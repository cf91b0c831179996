#!/bin/bash
# A run that died after the remote took its push, before the state recorded
# it (state.c invariant 3), then a change back to what the state records:
# the next up must still write the folder, or the remote keeps the dead
# run's content for good while every later run calls it up to date (t5300's
# kill loop found this under ASan).  The death is made exactly: the state
# from before the push is put back, and the clone's pending ref (the push a
# run had in flight, gitops.c) is left as a run dying there leaves it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

init_gitops
mkdistro d <<EOF
idpmake: 1
name: died
git: {remote: "$bare"}
packages:
  p: {type: manifests, path: packages/p}
  q: {type: manifests, path: packages/q}
EOF
mkmanifest d/packages/p/cm.yaml ConfigMap p
mkmanifest d/packages/q/cm.yaml ConfigMap q
t_ok "first up" idpmake -C d up
cp d/.idpmake/state.db "$T/state-before.db"
mkmanifest d/packages/p/extra.yaml ConfigMap extra
t_ok "up with an extra object" idpmake -C d up
t_ok "the remote holds it" git --git-dir="$bare" cat-file -e main:in-cluster/p/configmap.extra.yaml
# the run dies after the remote took the push: the state from before it, the pending ref left
known=$(git -C d/.idpmake/repo rev-parse refs/idpmake/known/main) || t_bail "no known ref"
cp "$T/state-before.db" d/.idpmake/state.db
rm -f d/.idpmake/state.db-wal d/.idpmake/state.db-shm
t_ok "the pending ref a run dying in its push leaves" git -C d/.idpmake/repo update-ref refs/idpmake/pending/main "$known"
# and the extra object goes again: the render is what the state records as pushed
rm d/packages/p/extra.yaml
t_ok "up after the death" idpmake -C d up
t_fail "the remote no longer holds the dead run's object" git --git-dir="$bare" cat-file -e main:in-cluster/p/configmap.extra.yaml
t_ok "the pending ref is gone" sh -c "! git -C d/.idpmake/repo rev-parse -q --verify refs/idpmake/pending/main"
t_ok "a further up" idpmake -C d up
t_nogrep "pushes nothing" 'commit pushed' "$STDOUT"
t_ok "render -o" idpmake -C d render -o "$T/rendered"
mkdir -p "$T/remote" && git --git-dir="$bare" archive main | tar -x -C "$T/remote"
t_ok "the remote holds exactly the render" diff -r -x .idpmake -x .idpmake-keys "$T/rendered" "$T/remote"
t_done
