#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# kill -9 at chosen points: runs of `idpmake up` on a distro of 30 packages
# are killed, with changes in between, each at a point it is seen to reach (a
# marker, not a delay): the k-th slow render started, j steps done, or all
# steps but the push done; then one more up converges, the next is a no-op, no
# commit repeats its parent's tree, and the remote holds exactly what
# `idpmake render -o` renders. Each killed run is its own process group, killed
# whole, so no render of it is left running.
# The seed of the changes and kill points is fixed (5300) and printed;
# KILL_SEED=N runs (or replays) another sequence.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

seed=${KILL_SEED:-5300}
case $seed in ''|*[!0-9]*) t_bail "KILL_SEED must be a number: $seed" ;; esac
RANDOM=$seed
echo "# KILL_SEED=$seed (replay this sequence with KILL_SEED=$seed)"
command -v setsid >/dev/null || t_bail "setsid missing (util-linux)"

# Two thirds of the packages render with a slow rule (0.3 s each), so that the kills
# land in renders, in the push, and between them.
mkdir -p d/rules
cat >d/rules/slowcat.yaml <<'EOF'
rule: slowcat
description: plain manifests, slowly
command: [sh, -c, 'echo "$1" >>"$2"; if [ -s "$2.hold" ] && [ "$(wc -l <"$2")" -ge "$(cat "$2.hold")" ]; then sleep 60; fi; sleep 0.3; for f in "$1"/*.yaml; do echo ---; cat "$f"; done', slowcat, "${src}", "MARKS"]
inputs: ["**/*.yaml"]
EOF
# the slow rule appends its package's folder to $T/marks when it starts; when
# $T/marks.hold names a count the marks have reached, it waits there (60 s),
# so that a kill at "the start of slow render k" lands in flight however slow
# the machine is, not after a run that went on and ended
: >"$T/marks"
: >"$T/marks.hold"
sed -i "s#\"MARKS\"#\"$T/marks\"#" d/rules/slowcat.yaml
{
	echo 'idpmake: 1'
	echo 'name: crash'
	echo 'rules: [rules/slowcat.yaml]'
	echo 'packages:'
	for i in $(seq -w 1 30); do
		ty=manifests
		[ $((10#$i % 3)) != 0 ] && ty=slowcat
		printf '  p%s:\n    type: %s\n    path: packages/p%s\n    namespace: ns%s\n' "$i" "$ty" "$i" "$i"
	done
} >d/distro.yaml
for i in $(seq -w 1 30); do
	mkmanifest "d/packages/p$i/cm.yaml" ConfigMap "cm$i"
	mkmanifest "d/packages/p$i/svc.yaml" Service "svc$i"
done

bare=$T/d/.idpmake/gitops.git
gen=0
# change_some [slow]: edit 2 to 5 random packages (a value, a new object, a
# removed object) (every other time only packages with the fast rule, so that
# the run is short and the kill often lands in the push; never with "slow")
change_some() {
	local k i p fast=$((RANDOM % 2))
	[ "${1:-}" = slow ] && fast=0
	gen=$((gen + 1))
	for k in $(seq $((RANDOM % 4 + 2))); do
		if [ $fast = 1 ]; then
			i=$(printf '%02d' $((RANDOM % 10 * 3 + 3)))
		else
			i=$(printf '%02d' $((RANDOM % 30 + 1)))
		fi
		p=d/packages/p$i
		case $((RANDOM % 3)) in
		0) printf '  gen%d-%d: "%d"\n' "$gen" "$k" "$k" >>"$p/cm.yaml" ;;
		1) mkmanifest "$p/extra$gen.yaml" ConfigMap "extra$gen-$k" ;;
		2) rm -f "$p"/extra*.yaml ;;
		esac
	done
}

t_ok "first up" idpmake -C d up
t_ok "it pushed a commit" git -C "$bare" rev-parse --verify -q main

killed=0
lines() { wc -l <"$1"; }
# steps_done FILE: the run's "[k/N] ..." lines so far
steps_done() { grep -c -E '^\[[0-9]+/[0-9]+\]' "$1"; }
# steps_total FILE: N, once the first step line is out
steps_total() { grep -m 1 -o -E '^\[[0-9]+/[0-9]+\]' "$1" | sed -E 's#^\[[0-9]+/([0-9]+)\]#\1#'; }
# running: the run $pid has not exited (a zombie has)
running() { local st; st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) && [ "$st" != Z ]; }
at_point() {
	case $mode in
	render) [ "$(lines "$T/marks")" -ge $((marks0 + k)) ] ;;
	steps) [ "$(steps_done "$out")" -ge "$k" ] ;;
	push) n=$(steps_total "$out"); [ -n "$n" ] && [ "$(steps_done "$out")" -ge $((n - 1)) ] ;;
	esac
}
reached() { at_point || ! running; }
# Runs until 10 were killed in flight (a run may finish before its point), at
# most 30.
r=0
settled=0
while [ "$killed" -lt 10 ] && [ "$r" -lt 30 ]; do
	r=$((r + 1))
	# now and then a run that is not killed, so that the backlog stays short
	# and the kills land in renders, in the push and after it alike
	if [ $((r % 4)) = 0 ]; then
		settled=$((settled + 1))
		t_ok "an up that is not killed, after run $((r - 1))" idpmake -C d up
	fi
	# (half of the runs are killed in a held render, so that the count of
	# kills in flight does not hang on the machine's speed)
	case $((RANDOM % 4)) in
	0|1) mode=render k=$((RANDOM % 2 + 1)) ;;
	2) mode=steps k=$((RANDOM % 3 + 1)) ;;
	3) mode=push k=0 ;;
	esac
	if [ $mode = render ]; then change_some slow; else change_some; fi
	case $mode in
	render) point="the start of slow render $k" ;;
	steps) point="$k steps done" ;;
	push) point="all steps but the push done" ;;
	esac
	marks0=$(lines "$T/marks")
	: >"$T/marks.hold"
	[ $mode = render ] && echo $((marks0 + k)) >"$T/marks.hold"
	out=$T/run$r.out
	: >"$out"
	# its own process group (setsid execs idpmake: $! is idpmake's pid and group)
	setsid "$IDPMAKE" -C "$T/d" up >"$out" 2>&1 &
	pid=$!
	if ! t_wait_for 60 reached; then
		kill -9 -- "-$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		t_bail "run $r reached neither $point nor its end in 60 s"
	fi
	if running; then
		kill -9 -- "-$pid"
	fi
	wait "$pid" 2>/dev/null
	st=$?
	[ "$st" = 137 ] && killed=$((killed + 1))
	: >"$T/marks.hold"
	echo "# run $r: kill -9 at $point, exit $st: $(tail -n 1 "$out")"
done
echo "# $killed of $r runs were killed in flight"
t_ok "at least 5 runs were killed in flight ($killed of $r)" test "$killed" -ge 5
# none_left: no process runs in the distro's folder (the killed runs' renders)
none_left() { pgrep -f "$T/d/" >/dev/null; [ $? = 1 ]; }
if command -v pgrep >/dev/null; then
	t_ok "no process of a killed run is left" t_wait_for 10 none_left
else
	t_skip "pgrep missing (procps): no check that the killed runs left no process"
fi

change_some
t_ok "the final up converges" idpmake -C d up
t_ok "a further up succeeds" idpmake -C d up
t_grep "and renders nothing" '^idpmake: 0 rendered' "$STDOUT"
t_grep "and pushes nothing" 'nothing pushed' "$STDOUT"
t_ok "plan --exit-code: nothing to do" idpmake -C d plan --exit-code

t_ok "the remote's history" git -C "$bare" log --format='%H %T %P' main
cp "$STDOUT" "$T/commits"
ncommits=$(lines "$T/commits")
echo "# $ncommits commits in the remote"
t_ok "more than one commit in the remote ($ncommits)" test "$ncommits" -gt 1
# the checker prints one line per commit that repeats its parent's tree, then
# "checked N commits": a crash is a failed check, and so is a short count
t_ok "the tree checker runs" python3 - "$bare" "$T/commits" <<'EOF'
import subprocess, sys
bare = sys.argv[1]
n = 0
for line in open(sys.argv[2]):
    f = line.split()
    commit, tree, parents = f[0], f[1], f[2:]
    for p in parents:
        pt = subprocess.check_output(["git", "-C", bare, "rev-parse", p + "^{tree}"], text=True).strip()
        if pt == tree:
            print("commit %s has its parent %s's tree %s" % (commit, p, tree))
    n += 1
print("checked %d commits" % n)
EOF
cp "$STDOUT" "$T/same-tree"
t_grep "it checked every commit" "^checked $ncommits commits\$" "$T/same-tree"
t_nogrep "no commit repeats its parent's tree" 'has its parent' "$T/same-tree"
t_ok "the remote repository is sound (git fsck)" git -C "$bare" fsck --no-progress

t_ok "render -o" idpmake -C d render -o "$T/rendered"
mkdir -p "$T/remote"
git -C "$bare" archive main | tar -x -C "$T/remote"
t_ok "the remote holds exactly the rendered output" diff -r -x .idpmake "$T/rendered" "$T/remote"
t_ok "the state is a sound SQLite database" python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
' "$T/d/.idpmake/state.db"

# ---- what a kill -9 in the middle of a ref update leaves ------------------------
# A kill at the wrong instant leaves git's lock files behind (seen in this loop:
# STATE/repo/refs/remotes/origin/main.lock, STATE/repo/refs/idpmake/push.lock).
# idpmake holds the run lock, so a lock file in its own clone, or in the
# embedded remote, is stale: the next up must get past it.
for lock in repo/refs/remotes/origin/main.lock repo/refs/idpmake/push.lock gitops.git/refs/heads/main.lock; do
	mkdir -p "$(dirname "d/.idpmake/$lock")"
	git -C "$bare" rev-parse main >"d/.idpmake/$lock"
	before=$(git -C "$bare" rev-parse main)
	printf '  stale-%s: "1"\n' "$(basename "$lock" .lock)-$RANDOM" >>d/packages/p03/cm.yaml
	t_ok "up with a stale $lock left by a kill" idpmake -C d up
	t_ok "it pushed" test "$(git -C "$bare" rev-parse main)" != "$before"
	rm -f "d/.idpmake/$lock"
done

t_done
