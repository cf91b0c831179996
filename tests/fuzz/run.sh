#!/bin/bash
# tests/fuzz/run.sh BUILDDIR NAME... - run the libFuzzer targets BUILDDIR/fuzz-NAME,
# one after the other, each for FUZZ_SECONDS (default 10) seconds of fuzzing,
# under ASan and UBSan (the targets are built with them; `ninja test-fuzz`).
#
# Each starts from its seed corpus tests/fuzz/corpus/NAME/ (never written to),
# with the dictionary tests/fuzz/NAME.dict when there is one,
# and a working corpus BUILDDIR/corpus/NAME/ (kept between runs, so a later
# run starts where the last one ended).  A crash, a leak, a UBSan report or a
# timeout stops that target; its input is saved as
# BUILDDIR/crashes/NAME-crash-SHA1 (libFuzzer's artifact) and this script
# exits 1 after running the others.  A fixed crash's input belongs in
# tests/fuzz/corpus/NAME/, where every later run replays it first.
#
# One closing line per target, from libFuzzer's final stats:
#   fuzz-NAME: ok, 123456 execs (12345/s), cov: 1234 ft: 5678, corpus 321 inputs, peak RSS 99 MB
#
# Environment: FUZZ_SECONDS (per target), FUZZ_SEED (libFuzzer's -seed; 1 by
# default, so that CI's verdict on a tree is the same on every run; 0 draws a
# random seed, for exploring), FUZZ_ARGS (more libFuzzer options).
set -u
cd "$(dirname "$0")/../.." || exit 2

[ $# -ge 2 ] || { echo "usage: $0 BUILDDIR NAME..." >&2; exit 2; }
build=$1
shift
secs=${FUZZ_SECONDS:-10}
case $secs in '' | *[!0-9]*) echo "FUZZ_SECONDS must be a number of seconds, not '$secs'" >&2; exit 2 ;; esac
seed=${FUZZ_SEED:-1}
case $seed in '' | *[!0-9]*) echo "FUZZ_SEED must be a number, not '$seed'" >&2; exit 2 ;; esac

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}

failed=0 npass=0 nfail=0
summary=
for name in "$@"; do
	bin=$build/fuzz-$name seeds=tests/fuzz/corpus/$name work=$build/corpus/$name
	log=$build/fuzz-$name.log
	mkdir -p "$work" "$build/crashes"
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "fuzz-$name: FAILED: no target $bin or no seed corpus $seeds"
		failed=1
		continue
	fi
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	echo "fuzz-$name: fuzzing for $secs s, seed $seed (log: $log)"
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: one using 2 GiB
	# is a blow-up; -max_len: room for a distro with its extends and rules
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -seed="$seed" -artifact_prefix="$build/crashes/$name-" $dict ${FUZZ_ARGS:-} \
		"$work" "$seeds" >"$log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
	stats="${execs:-?} execs (${rate:-?}/s), cov: ${cov:-?} ft: ${ft:-?}, corpus ${corp:-?} inputs, peak RSS ${rss:-?} MB"
	if [ "$st" = 0 ]; then
		line="fuzz-$name: ok, $stats"
	else
		failed=1
		art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		what=$(grep -E -m 1 '^(==[0-9]+==ERROR|SUMMARY|.*runtime error:|==[0-9]+== ERROR: libFuzzer)' "$log")
		sed 's/^/  /' "$log" | grep -E -A 30 -m 1 'ERROR|runtime error' | head -n 40
		line="fuzz-$name: FAILED (exit $st): ${what:-see $log}; input saved as ${art:-?}; $stats"
	fi
	echo "$line"
	summary="$summary$line"$'\n'
	if [ "$st" = 0 ]; then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
done
echo "---- fuzzing, $secs s per target ----"
printf '%s' "$summary"
echo "fuzz: ${npass:-0} passed, ${nfail:-0} failed"
exit $failed
