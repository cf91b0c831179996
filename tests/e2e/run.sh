#!/bin/bash
# tests/e2e/run.sh [-v] [NAME...]: runs every tests/e2e/t[0-9]*.sh (those
# marked "# e2e: long" first, then in order), each in its own process,
# E2E_JOBS at once, prints one line per script as it ends (and the script's output
# when it failed, or always with -v; the reasons of its skips otherwise), and
# ends with the line "N passed, N failed, N skipped" summed over the scripts'
# "# N passed, N failed, N skipped" lines. A script that exits non-zero without
# reporting a failure, or that ends without that line (killed, timed out, no
# t_done), counts one failure more than it reported. NAMEs select the scripts
# whose file name contains one of them.
#
# Environment: IDPMAKE (the binary under test, default ./idpmake at the top),
# E2E_TIMEOUT (seconds per script, default 600), E2E_JOBS (scripts run at
# once, default 2; 1 runs them one after the other), KEEP=1 (keep failed
# scratch folders), TMPDIR.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 2
top=$(cd "$here/../.." && pwd) || exit 2
IDPMAKE=${IDPMAKE:-$top/idpmake}
case $IDPMAKE in /*) ;; *) IDPMAKE=$PWD/$IDPMAKE ;; esac
export IDPMAKE
timeout=${E2E_TIMEOUT:-600}
jobs=${E2E_JOBS:-2}
case $jobs in ''|*[!0-9]*|0) echo "E2E_JOBS must be a number above 0: $jobs" >&2; exit 2 ;; esac

verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi

[ -x "$IDPMAKE" ] || echo "# warning: $IDPMAKE is missing or not executable; build it first (ninja)"
echo "# idpmake under test: $IDPMAKE"

logdir=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-e2e-logs.XXXXXX") || exit 2
trap 'rm -rf "$logdir"' EXIT

runner=()
command -v timeout >/dev/null && runner=(timeout -k 10 "$timeout")

passed=0 failed=0 skipped=0 ran=0

# leftovers TOKEN PGID: the processes whose environment holds
# IDPMAKE_E2E_RUN=TOKEN (a script's, however it detached them) or in
# process group PGID (timeout's: the script's, whatever their environment),
# "PID COMMAND" a line each
leftovers() {
	local f pid
	{
		for f in $(grep -l -s -a -F "IDPMAKE_E2E_RUN=$1" /proc/[0-9]*/environ 2>/dev/null); do
			pid=${f#/proc/}
			echo "${pid%/environ}"
		done
		[ -z "$2" ] || pgrep -g "$2" 2>/dev/null
	} | sort -u | while read -r pid; do
		[ -r "/proc/$pid/cmdline" ] || continue
		# a zombie has ended: only its parent's wait is missing
		case $(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) in Z | '') continue ;; esac
		echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
	done
}

# run_one T: runs script T, its output in $logdir/NAME.log, then its exit
# status and seconds in $logdir/NAME.done (written last: the job is over).
# What the script left running (after 5 s to end) is killed, listed in
# $logdir/NAME.leak and is a failure: a process left behind holds what it
# inherited (ninja waits for its console pipe to close), and takes CPU
# from the scripts after it.
run_one() {
	local t=$1 name start st tok i left pid pgid=
	name=$(basename "$t" .sh)
	tok=$name.$$.$(printf %05d $RANDOM)
	start=$SECONDS
	IDPMAKE_E2E_RUN=$tok "${runner[@]}" bash "$t" >"$logdir/$name.log" 2>&1 </dev/null &
	pid=$!
	# timeout(1) puts itself and the script in a process group of its own
	[ ${#runner[@]} = 0 ] || pgid=$pid
	wait "$pid"
	st=$?
	if [ -d /proc/self ]; then
		i=$((SECONDS + 5))
		while left=$(leftovers "$tok" "$pgid") && [ -n "$left" ] && [ $SECONDS -lt $i ]; do
			sleep 0.2
		done
		if [ -n "$left" ]; then
			echo "$left" >"$logdir/$name.leak"
			# shellcheck disable=SC2046 # the pids, one word each
			kill -KILL $(echo "$left" | cut -d' ' -f1) 2>/dev/null
		fi
	fi
	echo "$st $((SECONDS - start))" >"$logdir/$name.tmp"
	mv "$logdir/$name.tmp" "$logdir/$name.done"
}

# report NAME: the script's line (and its output when it failed), its counts
# added to the totals
report() {
	local name=$1 log=$logdir/$1.log st secs p=0 f=0 s=0 why= line
	read -r st secs <"$logdir/$name.done"
	line=$(grep -E '^# [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		read -r _ p _ f _ s _ <<<"$line"
	else
		# No summary (killed, or t_done never reached): count its checks.
		p=$(grep -E '^ok [0-9]+ ' "$log" | grep -c -v -E '^ok [0-9]+ # SKIP')
		f=$(grep -c -E '^not ok [0-9]+ ' "$log")
		s=$(grep -c -E '^ok [0-9]+ # SKIP' "$log")
	fi
	if [ -s "$logdir/$name.leak" ]; then
		why=" (left running after it ended, now killed: $(cut -d' ' -f2- "$logdir/$name.leak" | tr '\n' ';'))"
		f=$((f + 1))
	elif [ "$st" = 124 ] || [ "$st" = 137 ]; then
		why=" (timed out after ${timeout}s)"
		f=$((f + 1))
	elif [ -z "$line" ]; then
		why=" (exit $st, no '# N passed, N failed' line: missing t_done?)"
		f=$((f + 1))
	elif [ "$st" != 0 ] && [ "$f" = 0 ]; then
		why=" (exit $st)"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))

	if [ "$f" = 0 ]; then
		echo "ok   $name: $p passed, $f failed, $s skipped, ${secs}s"
		if [ $verbose = 0 ]; then
			grep -E '^ok [0-9]+ # SKIP' "$log" | sed 's/^/    /'
		else
			sed 's/^/    /' "$log"
		fi
	else
		echo "FAIL $name: $p passed, $f failed, $s skipped, ${secs}s$why"
		sed 's/^/    /' "$log"
		# for the recap at the end: the line, its first failed check with
		# what follows it (or the log's last lines when none failed)
		{
			echo "FAIL $name: $p passed, $f failed, $s skipped, ${secs}s$why"
			if grep -q -E '^not ok [0-9]+ ' "$log"; then
				grep -m 1 -A 8 -E '^not ok [0-9]+ ' "$log"
			else
				tail -n 6 "$log"
			fi
		} | cut -c1-300 | sed 's/^/    /;1s/^    //' >>"$logdir/recap"
	fi
}

# The scripts run E2E_JOBS at a time (they wait on servers and on the
# emulators' controllers more than they compute), the ones with the line
# "# e2e: long" first (the longest, so that none is left alone at the end),
# and each script's line comes out as it ends.  A script with the line
# "# e2e: alone" runs with no other script of this runner beside it.
names=()
reported=()
njobs=0
flush() {	# report the scripts that have ended, once each
	local i
	for i in "${!names[@]}"; do
		if [ -z "${reported[$i]:-}" ] && [ -e "$logdir/${names[$i]}.done" ]; then
			reported[$i]=1
			report "${names[$i]}"
		fi
	done
}
reap() {	# wait for one running script to end
	wait -n 2>/dev/null
	njobs=$((njobs - 1))
	flush
}
long=() rest=()
for t in "$here"/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		want=0
		for n in "$@"; do
			case $name in *"$n"*) want=1 ;; esac
		done
		[ $want = 1 ] || continue
	fi
	if grep -q '^# e2e: long$' "$t"; then long+=("$t"); else rest+=("$t"); fi
done
for t in ${long[@]+"${long[@]}"} ${rest[@]+"${rest[@]}"}; do
	name=$(basename "$t" .sh)
	ran=$((ran + 1))
	alone=0
	grep -q '^# e2e: alone$' "$t" && alone=1
	limit=$jobs
	[ $alone = 1 ] && limit=1
	while [ $njobs -ge "$limit" ]; do reap; done
	names+=("$name")
	run_one "$t" &
	njobs=$((njobs + 1))
	if [ $alone = 1 ]; then
		while [ $njobs -gt 0 ]; do reap; done
	fi
done
while [ $njobs -gt 0 ]; do reap; done
flush

if [ $ran = 0 ]; then
	echo "# no test script matched: $*"
	failed=$((failed + 1))
fi
# The failures again, short, next to the closing line: CI shows a run's
# last lines, and a failed script's output can be hundreds of lines above.
if [ -s "$logdir/recap" ]; then
	echo "# the scripts that failed (their output is above):"
	head -n 40 "$logdir/recap"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
