#!/bin/bash
# tests/e2e/run.sh [-v] [NAME...]: runs every tests/e2e/t[0-9]*.sh in order,
# each in its own process, prints one line per script (and the script's output
# when it failed, or always with -v; the reasons of its skips otherwise), and
# ends with the line "N passed, N failed, N skipped" summed over the scripts'
# "# N passed, N failed, N skipped" lines. A script that exits non-zero without
# reporting a failure, or that ends without that line (killed, timed out, no
# t_done), counts one failure more than it reported. NAMEs select the scripts
# whose file name contains one of them.
#
# Environment: IDPMAKE (the binary under test, default ./idpmake at the top),
# E2E_TIMEOUT (seconds per script, default 600), KEEP=1 (keep failed scratch
# folders), TMPDIR.
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 2
top=$(cd "$here/../.." && pwd) || exit 2
IDPMAKE=${IDPMAKE:-$top/idpmake}
case $IDPMAKE in /*) ;; *) IDPMAKE=$PWD/$IDPMAKE ;; esac
export IDPMAKE
timeout=${E2E_TIMEOUT:-600}

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
	ran=$((ran + 1))
	log=$logdir/$name.log
	start=$SECONDS
	"${runner[@]}" bash "$t" >"$log" 2>&1 </dev/null
	st=$?
	secs=$((SECONDS - start))

	p=0 f=0 s=0 why=
	line=$(grep -E '^# [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		read -r _ p _ f _ s _ <<<"$line"
	else
		# No summary (killed, or t_done never reached): count its checks.
		p=$(grep -E '^ok [0-9]+ ' "$log" | grep -c -v -E '^ok [0-9]+ # SKIP')
		f=$(grep -c -E '^not ok [0-9]+ ' "$log")
		s=$(grep -c -E '^ok [0-9]+ # SKIP' "$log")
	fi
	if [ "$st" = 124 ] || [ "$st" = 137 ]; then
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
	fi
done

if [ $ran = 0 ]; then
	echo "# no test script matched: $*"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
