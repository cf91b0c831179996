#!/bin/bash
# tests/run.sh [all|fast|asan] - run the test suites and print one closing
# line "N passed, N failed" over all of them.
#   fast: unit tests, the Argo CD emulator's self-test, the e2e tests
#   asan: the unit and e2e tests against the ASan/UBSan build
#   all:  both
set -u
cd "$(dirname "$0")/.."
mode=${1:-all}
passed=0 failed=0

tally() {	# tally LOGFILE EXIT: add the "N passed, N failed" line of a suite
	local line p f
	line=$(grep -E '^(# )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		echo "  (no summary line; counted as 1 failure)"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^(# )?([0-9]+) passed.*/\2/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$2" != 0 ] && [ "$f" = 0 ]; then
		echo "  (exit status $2 without a failure counted; counted as 1 failure)"
		failed=$((failed + 1))
	fi
}

suite() {	# suite NAME COMMAND...
	local name=$1 log rc
	shift
	log=$(mktemp)
	echo "== $name"
	"$@" >"$log" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		cat "$log"
	else
		grep -E '^(not ok|FAIL)' "$log"
		tail -n 1 "$log"
	fi
	tally "$log" $rc
	rm -f "$log"
}

unit() {	# unit DIR
	local t
	for t in "$1"/t-*; do
		[ -x "$t" ] || continue
		case $t in *.o|*.d) continue ;; esac
		suite "unit $(basename "$t")${2:+ ($2)}" "$t"
	done
}

emulator_selftest() {
	python3 tests/argocd-emu/test_emulator.py >/tmp/emu-test.$$ 2>&1
	local rc=$?
	cat /tmp/emu-test.$$
	local n
	n=$(grep -E '^Ran [0-9]+ test' /tmp/emu-test.$$ | sed -E 's/Ran ([0-9]+).*/\1/')
	rm -f /tmp/emu-test.$$
	if [ $rc = 0 ]; then echo "${n:-0} passed, 0 failed"; else echo "0 passed, ${n:-1} failed"; fi
	return $rc
}

if [ "$mode" = all ] || [ "$mode" = fast ]; then
	unit build
	suite "argocd emulator self-test" emulator_selftest
	suite "e2e" env IDPMAKE="$PWD/idpmake" tests/e2e/run.sh
fi
if [ "$mode" = all ] || [ "$mode" = asan ]; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86:fast_unwind_on_malloc=0}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
	unit build/asan asan
	suite "e2e (asan)" env IDPMAKE="$PWD/build/asan/idpmake" tests/e2e/run.sh
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
