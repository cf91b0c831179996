#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# ENOSPC at the two steps t3610 does not reach: the clone's commit (STATE/repo
# full while the render cache has room) and the state write after a push
# landed (state.db full while the cache and the clone have room), and the
# sync's record with Argo CD (state.db filled while the sync runs).  Each time:
# a failed step or a clear error naming the cause, exit non-zero, no crash,
# nothing recorded as done that was not, nothing half-pushed and nothing
# pushed twice; after space is freed the next up converges and plan has
# nothing to do.  Needs root (mount); skips otherwise.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mnt=$T/small
mkdir -p "$mnt"
if ! err=$(mount -t tmpfs -o size=2M tmpfs "$mnt" 2>&1); then
	t_skip_rest "cannot mount a tmpfs to fill: ${err:-mount failed} (needs root)"
fi
umount "$mnt"
mounted=
trap 'for m in $mounted; do umount "$m" 2>/dev/null; done; t_cleanup' EXIT

# move folder $1's content onto a fresh tmpfs of size $2 mounted over it
overmount() {
	local keep=$T/keep.$$
	rm -rf "$keep" && cp -a "$1" "$keep" && mount -t tmpfs -o "size=$2" tmpfs "$1" &&
		cp -a "$keep/." "$1/" && rm -rf "$keep" && mnt=$1 && mounted="$1 $mounted"
}
# avail, fill and unfill: lib.sh
# the state's cache, clone and logs moved to $T/disk and bind-mounted back,
# so that only state.db (and the lock) stay on the tmpfs
disk_out() {
	local f
	for f in cache repo logs; do
		if ! { mv "$state/$f" "$T/disk/$f" && mkdir "$state/$f" && mount --bind "$T/disk/$f" "$state/$f"; }; then
			t_bail "cannot bind-mount $state/$f"
		fi
		mounted="$state/$f $mounted"
	done
}
# bigmap and rec: lib.sh
commit_of() { idpmake -C "$T/d" --state "$state" status --json |
	python3 -c 'import json, sys; print([s for s in json.load(sys.stdin)["steps"] if s["id"] == sys.argv[1]][0]["commit"])' "$1"; }
tip() { git -C "$remote" rev-parse -q --verify main || echo none; }
im() { idpmake -C "$T/d" --state "$state" "$@"; }

remote=$T/gitops.git
state=$T/state
git init -q --bare -b main "$remote"
mkdistro d <<EOF
idpmake: 1
name: nospc
git: {remote: "$remote"}
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web

# ---- 1. the clone full: the commit's writes, the cache has room ---------------
t_ok "first up" im up
good_tip=$(tip)
good_push=$(rec push)
t_ok "the clone moved onto a 2 MiB tmpfs" overmount "$state/repo" 2M
bigmap big 400 >d/packages/web/big.yaml
fill 100
t_exit 1 "up with 100 KiB free in the clone and a 400 KiB render" im up
t_grep "... the push fails with the cause" "cannot write the new objects to .*state/repo: .*No space left on device" "$OUTPUT"
t_grep "... as a failed push step" "FAILED: push" "$OUTPUT"
t_eq "... the render is done (its cache had room)" ok "$(rec in-cluster/web:render | cut -d' ' -f1)"
t_eq "... the remote's branch is unchanged" "$good_tip" "$(tip)"
t_ok "... and its objects are sound" git -C "$remote" fsck --no-dangling
t_eq "... status: the push is not recorded as done" "failed ${good_push#* }" "$(rec push)"
t_eq "... no partial pack is left in the clone" "" "$(find "$state/repo" -name "pack_git2_*")"
unfill
t_eq "... no lock or temporary file is left in the clone" "" \
	"$(find "$state/repo" -name '*.lock' -o -name '*tmp*' -type f)"
t_ok "up once space is freed" im up
t_eq "... pushes one commit" "$good_tip" "$(git -C "$remote" rev-parse -q --verify main~1)"
t_ok "... the remote holds the render" sh -c "git -C '$remote' ls-tree -r --name-only main | grep -q big"
t_ok "... its objects are sound" git -C "$remote" fsck --no-dangling
t_ok "... and the clone's" git -C "$state/repo" fsck --no-dangling
t_exit 0 "... plan has nothing to do" im plan --exit-code

# ---- 2. state.db full after the push landed: the push's record fails ---------
# The remote over smart HTTP, so that a git hook runs in it: its
# reference-transaction hook, when armed, fills the tmpfs holding state.db at
# the moment the remote commits the branch update, before receive-pack reports
# it, so the push succeeds and the very next write, the push's record, finds
# the disk full.  The cache, the clone and the logs are bind mounts of
# folders on disk.  How we know the failure came at the record after the
# push: the hook left its mark, the remote's branch moved by the run's one
# commit, and the error names the transaction that failed, the one after
# the push (state_push_done: "committing pushed folders"), with ENOSPC; an
# strace of this run showed pwrite64 on state.db-wal failing with ENOSPC
# once the push had moved the clone's refs/remotes/origin/main (accepted).
start_git_server
url=$(new_remote nospc) || t_bail "new_remote failed"
remote=$T/git-srv/repos/nospc.git
export IDPMAKE_GIT_USERNAME=$GIT_USER IDPMAKE_GIT_TOKEN=$GIT_PASS
mnt=$T/small2
mkdir -p "$mnt" "$T/disk"
mount -t tmpfs -o size=2M tmpfs "$mnt" || t_bail "cannot mount $mnt"
mounted="$mnt $mounted"
state=$mnt/state
cat >"$remote/hooks/reference-transaction" <<EOF
#!/bin/sh
[ "\$1" = committed ] && [ -e "$T/armed" ] || exit 0
rm -f "$T/armed"
cat /dev/zero >>"$mnt/filler" 2>/dev/null
echo filled >"$T/hook-ran"
exit 0
EOF
chmod +x "$remote/hooks/reference-transaction"
mkdistro d <<EOF
idpmake: 1
name: nospc
git: {remote: "$url"}
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
t_ok "up, state.db on a 2 MiB tmpfs, the remote over http" im up
disk_out
t_exit 0 "... plan has nothing to do" im plan --exit-code
good_tip=$(tip)
good_push=$(rec push)
good_commit=$(commit_of push)
mkmanifest d/packages/web/cm3.yaml ConfigMap web3
touch "$T/armed"
t_exit 1 "up, the disk under state.db filled as the remote takes the push" im up
t_eq "... the hook filled the disk" filled "$(cat "$T/hook-ran" 2>/dev/null)"
t_eq "... after the remote took the push: one commit on it" "$good_tip" \
	"$(git -C "$remote" rev-parse -q --verify main~1)"
t_grep "... the record after the push failed" "state .*/state\.db: committing pushed folders: " "$OUTPUT"
t_grep "... names state.db and the cause" "state .*/state\.db: .*(No space left on device|database or disk is full)" "$OUTPUT"
t_grep "... and the way out" "free space and run again" "$OUTPUT"
t_grep "... as a failed push step" "FAILED: push" "$OUTPUT"
landed=$(tip)
t_grep "... the push step says the remote took the commit" \
	"FAILED: push: the remote took commit ${landed:0:7}, but the state could not record it" "$OUTPUT"
t_grep "... and so does the summary" "1 commit pushed \(${landed:0:7}\)" "$OUTPUT"
# the failure's own record could not be written either: status keeps the
# last success, its key and its commit, so the next run redoes the push
t_eq "... status: the push keeps the last success" "$good_push" "$(rec push)"
t_eq "... and its commit" "$good_commit" "$(commit_of push)"
t_exit 1 "... plan has the push to do" im plan --exit-code
rm -f "$mnt/filler"
t_ok "up once space is freed" im up
t_grep "... recognises the landed push" "the remote already holds this content" "$OUTPUT"
t_eq "... and makes no new commit" "$landed" "$(tip)"
t_eq "... status: the push recorded with that commit" "ok $landed" "$(rec push | cut -d' ' -f1) $(commit_of push)"
t_ok "... the remote's objects are sound" git -C "$remote" fsck --no-dangling
t_exit 0 "... plan has nothing to do" im plan --exit-code

# ---- 3. state.db full while Argo CD syncs: the sync's record fails -----------
# The emulator holds the sync's operation Running for 3 s; once it has taken
# the sync request (its request log), the test fills the tmpfs, so the push's
# record is written and the sync's, when the operation ends, is not.
unset IDPMAKE_GIT_USERNAME IDPMAKE_GIT_TOKEN
# shellcheck disable=SC2119 # no emulator arguments
start_gitops_argocd
remote=$bare
rm -f "$mnt/filler"
for m in $state/cache $state/repo $state/logs; do umount "$m" && mounted=${mounted/$m /}; done
rm -rf "${state:?}" "$T/disk" && mkdir -p "$T/disk"
mkdistro d <<EOF
idpmake: 1
name: nospc
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
t_ok "up with Argo CD, state.db on the tmpfs" im up
disk_out
good_sync=$(rec in-cluster/web:sync)
mkmanifest d/packages/web/cm4.yaml ConfigMap web4
emu_post config '{"op_ms": 3000}'
emu_post reset '{}'
synced() { curl -fsS "$emu/requests" | grep -q '/sync"'; }
im up >"$T/up3.out" 2>&1 &
up_pid=$!
t_ok "... the emulator takes the sync request" t_wait_for 20 synced
fill 0
wait "$up_pid"
t_eq "up with the disk filled while the sync runs exits 1" 1 "$?"
t_grep "... the push is done and recorded" "\\] push: [0-9a-f]{7} \\(1 folder\\)" "$T/up3.out"
t_grep "... the sync fails naming state.db and the cause" \
	"state .*/state\.db: .*(No space left on device|database or disk is full)" "$T/up3.out"
t_grep "... as a failed sync step" "FAILED: in-cluster/web:sync: the state could not record" "$T/up3.out"
landed=$(tip)
t_eq "... status: the push recorded with the commit that landed" "ok $landed" \
	"$(rec push | cut -d' ' -f1) $(commit_of push)"
t_eq "... status: the sync keeps the last success" "$good_sync" "$(rec in-cluster/web:sync)"
unfill
emu_post config '{"op_ms": 50}'
t_ok "up once space is freed" im up
t_eq "... makes no new commit" "$landed" "$(tip)"
t_eq "... status: the sync recorded" ok "$(rec in-cluster/web:sync | cut -d' ' -f1)"
t_exit 0 "... plan has nothing to do" im plan --exit-code

t_done
