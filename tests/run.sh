#!/bin/bash
# tests/run.sh [all|fast|asan] - build what it runs, run the test suites and
# print one closing line "N passed, N failed, N skipped" over all of them.
#   fast: unit tests, the Argo CD and Kubernetes emulators' self-tests, the
#         engine's layers (tests/layers.py), the e2e tests
#   asan: the unit and e2e tests against the ASan/UBSan build
#   all:  both
# The unit tests are the files tests/unit/t-*.c: each is built (ninja) before
# the suites run, and one that is missing or cannot be built is a failure,
# never left out.  A skip (a check that could not run here, with its reason)
# is counted apart, never as a pass.
#
# `all` runs the plain and the sanitizer passes at once (the sanitizer
# pass's lines prefixed "asan: "); SERIAL=1 runs one after the other.  The
# e2e runner's lines (one per script) are printed as they come.
#
# Environment: NINJA (default ninja), NINJA_FLAGS (say -j2), TMPDIR, TEST_SEED
# (the order of the unit tests in the asan pass; 1 by default, the plain pass
# runs them in the order listed), SERIAL.
set -u
# ninja runs this in its console pool and learns that it ended when every
# holder of a descriptor it passed (one above 2, a pipe) has closed it: a
# process a test left behind, its output sent elsewhere, would still hold
# it, and ninja would wait for ever (CI's timeout, twice).  It is closed
# here, so that only this script's end is waited for (tests/e2e/run.sh
# counts a script's leftovers as its failure).
if [ -d /proc/$$/fd ]; then
	for fd in /proc/$$/fd/*; do
		fd=${fd##*/}
		case $fd in 0 | 1 | 2 | 255 | '' | *[!0-9]*) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac
	done
fi
cd "$(dirname "$0")/.." || exit 2
mode=${1:-all}
case $mode in all|fast|asan) ;; *) echo "usage: tests/run.sh [all|fast|asan]" >&2; exit 2 ;; esac
# python3 itself, not a version manager's shim: pyenv's shim is a shell
# script that looks the version up on every call (0.3 s idle, seconds under
# load), and the tests call python3 hundreds of times
case $(command -v python3 2>/dev/null) in
*/shims/python3)
	if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
		PATH=${py%/*}:$PATH
		export PATH
	fi
	;;
esac

passed=0 failed=0 skipped=0
builddir=build
# what failed, gathered by suite() from both passes, printed again above the
# closing line (CI shows a run's last lines)
recap=$(mktemp "${TMPDIR:-/tmp}/idpmake-recap.XXXXXX") || exit 2
trap 'rm -f "$recap"' EXIT

units=()
for c in tests/unit/t-*.c; do
	[ -f "$c" ] && units+=("$(basename "$c" .c)")
done

tally() {	# tally LOGFILE EXIT: add the "N passed, N failed[, N skipped]" line of a suite
	local line p f s
	line=$(grep -E '^(# )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		echo "  (no summary line; counted as 1 failure)"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^(# )?([0-9]+) passed.*/\2/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=0
	case $line in *skipped) s=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped$/\1/') ;; esac
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$2" != 0 ] && [ "$f" = 0 ]; then
		echo "  (exit status $2 without a failure counted; counted as 1 failure)"
		failed=$((failed + 1))
	fi
}

suite() {	# suite [-s] NAME COMMAND...: -s streams its output as it comes (the e2e runner's line per script)
	local stream=0 name log rc
	if [ "$1" = -s ]; then
		stream=1
		shift
	fi
	name=$1
	shift
	log=$(mktemp "${TMPDIR:-/tmp}/idpmake-suite.XXXXXX")
	echo "== $name"
	if [ $stream = 1 ]; then
		"$@" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
	else
		"$@" >"$log" 2>&1
		rc=$?
		if [ $rc != 0 ]; then
			cat "$log"
		else
			grep -E '^(not ok|FAIL)|# SKIP' "$log"
			tail -n 1 "$log"
		fi
	fi
	tally "$log" "$rc"
	if [ $rc != 0 ]; then
		# for the recap at the end: the e2e runner's own recap, or the first failed checks
		{
			echo "${pass_label:-}$name: exit $rc"
			if grep -q '^# the scripts that failed' "$log"; then
				sed -n '/^# the scripts that failed/,$p' "$log" | sed 1d | grep -v -E '^[0-9]+ passed, '
			else
				grep -m 3 -A 4 -E '^(not ok|FAIL)' "$log" || tail -n 4 "$log"
			fi
		} | head -n 30 | cut -c1-300 >>"$recap"
	fi
	rm -f "$log"
}

build() {	# build TARGET...: ninja; a failed build is one failure
	echo "== build: $*"
	# shellcheck disable=SC2086 # NINJA_FLAGS is a list of flags
	if ! ${NINJA:-ninja} ${NINJA_FLAGS:-} "$@"; then
		echo "  (the build failed; counted as 1 failure)"
		failed=$((failed + 1))
	fi
}

unit() {	# unit DIR [LABEL [SEED]]: every unit test of tests/unit/t-*.c, built in DIR;
	# with SEED, in an order shuffled from it (test.h: no test depends on another's run)
	local t
	for t in "${units[@]}"; do
		if [ -x "$1/$t" ]; then
			suite "unit $t${2:+ ($2)}" env TEST_SEED="${3:-0}" "$1/$t"
		else
			echo "== unit $t${2:+ ($2)}"
			echo "  ($1/$t missing: not built; counted as 1 failure)"
			failed=$((failed + 1))
		fi
	done
}

emulator_selftest() {	# test_emulator.py (the API), test_fidelity.py (Argo CD's behaviours, issue 21), test_live.py (live clusters)
	local out rc=0 r n total=0 t
	out=$(mktemp "${TMPDIR:-/tmp}/idpmake-emu-test.XXXXXX")
	for t in test_emulator test_fidelity test_live; do
		python3 "tests/argocd-emu/$t.py" >"$out" 2>&1
		r=$?
		cat "$out"
		n=$(grep -E '^Ran [0-9]+ test' "$out" | sed -E 's/Ran ([0-9]+).*/\1/')
		total=$((total + ${n:-1}))
		[ $r = 0 ] || rc=$r
	done
	rm -f "$out"
	if [ $rc = 0 ]; then echo "$total passed, 0 failed"; else echo "0 passed, $total failed"; fi
	return $rc
}

# the Kubernetes API emulator's self-tests (tests/kube-emu: test_kubeemu.py,
# and test_capi.py for its fake Cluster API, --capi) drive the real kubectl:
# without kubectl their tests are skipped, and counted so
kube_emulator_selftest() {
	local out rc n s
	out=$(mktemp "${TMPDIR:-/tmp}/idpmake-kubeemu-test.XXXXXX")
	python3 "tests/kube-emu/${1:-test_kubeemu}.py" >"$out" 2>&1
	rc=$?
	cat "$out"
	n=$(grep -E '^Ran [0-9]+ test' "$out" | sed -E 's/Ran ([0-9]+).*/\1/')
	s=$(grep -E '^OK \(skipped=[0-9]+\)' "$out" | sed -E 's/.*skipped=([0-9]+).*/\1/')
	rm -f "$out"
	if [ $rc = 0 ]; then echo "$((${n:-0} - ${s:-0})) passed, 0 failed, ${s:-0} skipped"; else echo "0 passed, ${n:-1} failed"; fi
	return $rc
}

if [ "$mode" = all ] || [ "$mode" = fast ]; then
	build idpmake "${units[@]/#/$builddir/}"
fi
if [ "$mode" = all ] || [ "$mode" = asan ]; then
	build "$builddir/asan/idpmake" "${units[@]/#/$builddir/asan/}"
fi
plain_pass() {
	unit "$builddir"
	suite "argocd emulator self-test" emulator_selftest
	suite "kubernetes emulator self-test" kube_emulator_selftest
	suite "cluster api emulator self-test" kube_emulator_selftest test_capi
	# engine/ in its layers (engine/LAYERS): includes, calls (the plain build's objects), sizes
	suite "engine layers" python3 tests/layers.py "$builddir"
	# ... and the check fails each way a layer can be broken (a small tree of its own, built with cc)
	suite "engine layers self-test" python3 tests/layers-selftest.py
	suite -s "e2e" env IDPMAKE="$PWD/idpmake" tests/e2e/run.sh
}

asan_pass() {
	pass_label="asan: "
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86:fast_unwind_on_malloc=0}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
	# the sanitizer pass runs the unit tests in another order than the plain one
	unit "$builddir/asan" "asan, TEST_SEED=${TEST_SEED:-1}" "${TEST_SEED:-1}"
	suite -s "e2e (asan)" env IDPMAKE="$PWD/$builddir/asan/idpmake" tests/e2e/run.sh
}

case $mode in
fast) plain_pass ;;
asan) asan_pass ;;
all)
	if [ "${SERIAL:-0}" = 1 ]; then
		plain_pass
		asan_pass
	else
		# Both passes at once, each on its own core (the e2e scripts wait on
		# servers and on Argo CD's emulator as much as they compute), the
		# sanitizer pass's lines prefixed "asan: "; each adds its counts at the
		# end, and a pass that ends without them is a failure.
		counts=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-run.XXXXXX")
		(
			# shellcheck disable=SC2030 # each pass counts in its subshell, then in $counts
			passed=0 failed=0 skipped=0
			asan_pass
			echo "$passed $failed $skipped" >"$counts/asan"
		) 2>&1 | sed -u 's/^/asan: /' &
		apid=$!
		(
			# shellcheck disable=SC2030
			passed=0 failed=0 skipped=0
			plain_pass
			echo "$passed $failed $skipped" >"$counts/plain"
		)
		wait "$apid"
		for pass in plain asan; do
			# shellcheck disable=SC2031 # the parent's counts (the builds') plus each pass's
			if read -r p f s <"$counts/$pass" 2>/dev/null; then
				passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
			else
				echo "(the $pass pass ended without its counts; counted as 1 failure)"
				failed=$((failed + 1))
			fi
		done
		rm -rf "$counts"
	fi
	;;
esac
echo
if [ -s "$recap" ]; then
	echo "what failed (the whole output is above):"
	head -n 60 "$recap" | sed 's/^/  /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
