#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# ENOSPC on a small tmpfs: the state folder (cache, clone, state.db) or the
# GitOps remote on it, filled up.  Each time: a failed step or a clear error
# naming the cause, exit non-zero and no crash, nothing recorded as done
# (status keeps the last success), nothing half-pushed (the remote's branch
# unchanged, its objects sound); after space is freed the next up converges
# and plan has nothing to do.  Needs root (mount); skips otherwise.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mnt=$T/small
mkdir -p "$mnt"
if ! err=$(mount -t tmpfs -o size=2M tmpfs "$mnt" 2>&1); then
	t_skip_rest "cannot mount a tmpfs to fill: ${err:-mount failed} (needs root)"
fi
trap 'umount "$mnt" 2>/dev/null; t_cleanup' EXIT

# avail, fill and unfill: lib.sh
# bigmap and rec: lib.sh
tip() { git -C "$remote" rev-parse -q --verify main || echo none; }
im() { idpmake -C "$T/d" --state "$state" "$@"; }

remote=$T/gitops.git
git init -q --bare -b main "$remote"
mkdistro d <<EOF
idpmake: 1
name: nospc
git: {remote: "$remote"}
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web

# ---- 1. the state folder on the tmpfs: the render's cache write ----------------
state=$mnt/state
t_ok "first up, the state on a 2 MiB tmpfs" im up
good_tip=$(tip)
good_rec=$(rec in-cluster/web:render)
bigmap big 300 >d/packages/web/big.yaml
fill 120
t_exit 1 "up with 120 KiB free and a 300 KiB render" im up
t_grep "... the render fails with the cause" "in-cluster/web:render: .*No space left on device" "$OUTPUT"
t_grep "... the push did not run" "not run: push" "$OUTPUT"
t_eq "... the remote's branch is unchanged" "$good_tip" "$(tip)"
t_eq "... status keeps the last success's key" "failed ${good_rec#* }" "$(rec in-cluster/web:render)"
t_eq "... no temporary file is left" "" "$(find "$state" -name '*.tmp*')"
unfill
t_ok "up once space is freed" im up
t_eq "... pushes one commit" "$good_tip" "$(git -C "$remote" rev-parse -q --verify main~1)"
t_exit 0 "... plan has nothing to do" im plan --exit-code
good_tip=$(tip)

# ---- 2. the disk full when the run starts: state.db's writes ------------------
mkmanifest d/packages/web/cm2.yaml ConfigMap web2
fill 0
t_fail "up on a full disk" im up
t_grep "... names state.db and the cause" "state .*/state\.db: .*(No space left on device|database or disk is full)" "$STDERR"
t_grep "... and the way out" "free space and run again" "$STDERR"
t_eq "... and stops at that first error" 1 "$(grep -c 'error:' "$STDERR")"
t_eq "... nothing pushed" "$good_tip" "$(tip)"
unfill
t_ok "up once space is freed" im up
t_eq "... pushes one commit" "$good_tip" "$(git -C "$remote" rev-parse -q --verify main~1)"
t_exit 0 "... plan has nothing to do" im plan --exit-code

# ---- 3. the GitOps remote on the tmpfs: the push's writes ---------------------
rm -rf "${mnt:?}/state"
state=$T/state
remote=$mnt/gitops.git
git init -q --bare -b main "$remote"
mkdistro d <<EOF
idpmake: 1
name: nospc
git: {remote: "$remote"}
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
rm d/packages/web/big.yaml
t_ok "up, the remote on the tmpfs" im up
good_tip=$(tip)
bigmap big2 400 >d/packages/web/big.yaml
fill 100
t_exit 1 "up with 100 KiB free on the remote and a 400 KiB render" im up
t_grep "... the push fails with the cause" "No space left on device" "$OUTPUT"
t_grep "... as a failed push step" "FAILED: push" "$OUTPUT"
t_eq "... the remote's branch is unchanged" "$good_tip" "$(tip)"
t_ok "... and its objects are sound" git -C "$remote" fsck --no-dangling
t_eq "... status: the push is not recorded as done" failed "$(rec push | cut -d' ' -f1)"
unfill
t_ok "up once space is freed" im up
t_eq "... pushes one commit" "$good_tip" "$(git -C "$remote" rev-parse -q --verify main~1)"
t_ok "... the remote holds the render" sh -c "git -C '$remote' ls-tree -r --name-only main | grep -q big2"
t_exit 0 "... plan has nothing to do" im plan --exit-code

t_done
