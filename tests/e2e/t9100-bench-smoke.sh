#!/bin/bash
# Benches that cannot rot (issue 34, "What to build" 5): every bench/ script
# runs at its smallest size and must exit 0 and print its table, so that a
# stricter emulator or a changed flag cannot leave one broken unseen (as
# argocost.sh was: its distro had no CreateNamespace=true once the emulator
# checked namespaces as Argo CD does).  Figures are not checked: at this size
# they are noise.  bench/run.sh runs graph.sh, emptystate.sh, fleet.sh and
# capi.sh after its own table, each at the size the environment gives;
# argocost.sh and timeouts.sh are run apart.  gen.sh is run by run.sh and
# emptystate.sh, profemu.py by argocost.sh with EMU_PROFILE.  Each script
# exits non-zero when an idpmake run it measures failed.
# The plain pass only: the ASan build measures nothing worth the time.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $IDPMAKE in */asan/*) t_skip_rest "the bench smoke runs in the plain pass only" ;; esac
for c in ninja kubectl curl openssl timeout; do
	command -v $c >/dev/null || t_skip_rest "$c is not installed: the bench scripts need it"
done
bench=$top/bench
export TMPDIR=$T KEEP=0 STRICT=0

# bench NAME SECS CMD...: runs CMD, at most SECS seconds (a broken bench fails
# here, not at the runner's timeout: a sync that fails may be waited on for
# minutes), its output in NAME.out, the seconds it took in NAME.secs
bench() {
	local name=$1 secs=$2 t0
	shift 2
	t0=$EPOCHREALTIME
	t_ok "$name exits 0 within $secs s" timeout -k 5 "$secs" "$@"
	cp "$OUTPUT" "$name.out"
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f\n", b-a}' >"$name.secs"
}

# run.sh and its parts: 3 x 2 files, 1 run; graph 3 packages; fleet 1 cluster
# (the no-op scaling 2 against 1); capi 1 created cluster against 1 existing
bench run 240 env IDPMAKE="$IDPMAKE" PACKAGES=3 FILES=2 RUNS=1 CLUSTERS=1 BIG=2 N=1 "$bench/run.sh"
t_grep "run.sh: its table" '^case +idpmake +ninja\(\+git\) +ratio' run.out
t_grep "run.sh: the no-op row" '^no-op \(s, median of 1\) +[0-9.]+ ' run.out
t_grep "run.sh: the one-change row" '^one change vs ninja\+commit +[0-9.]+ ' run.out
t_grep "run.sh: the open check" '^open check \(' run.out
t_grep "graph.sh: its row" '^graph 3x40 vs x20 +[0-9.]+ s ' run.out
t_grep "emptystate.sh: its table" '^  empty state: work done +0 renders' run.out
t_grep "fleet.sh: its table" '^figure +1 cluster +1 clusters +target' run.out
t_grep "fleet.sh: the change synced" '^one package changed: syncs +1 +1 ' run.out
t_grep "fleet.sh: the scaling row" '^no-op, 2 vs 1 clusters \(s\) +[0-9.]+ ' run.out
t_grep "capi.sh: its table" '^figure +1 created +1 existing' run.out
t_grep "capi.sh: the cold ups ended" '^cold up -j 4: time \(s\) .*\(exit 0, 0\)' run.out
t_grep "capi.sh: the upgrade" '^one-cluster upgrade .*\(exit 0\)$' run.out
t_nogrep "run.sh: nothing failed" 'idpmake failed|^failed: |\.sh: .*failed' run.out

# argocost.sh at 1 cluster, the emulator's operations and health at 50 ms
bench argocost 90 env IDPMAKE="$IDPMAKE" SIZES=1 OP_MS=50 HEALTH_MS=50 "$bench/argocost.sh"
t_grep "argocost.sh: its table" '^clusters +apps +\| manifest generations' argocost.out
t_grep "argocost.sh: the 1-cluster row" '^1 +5 +\| +[0-9]+ with, +[0-9]+ without \| +[0-9]+ \( *[0-9]+\), +[0-9.]+s +\| +[0-9]+ \( *[0-9]+\), +[0-9.]+s$' argocost.out

# timeouts.sh, 1 run
bench timeouts 60 env IDPMAKE="$IDPMAKE" RUNS=1 "$bench/timeouts.sh"
t_grep "timeouts.sh: its row" '^hook timeout 1 s \(would sleep 60 s\) +[0-9.]+ ' timeouts.out

echo "# seconds: run.sh (and its parts) $(cat run.secs), argocost.sh $(cat argocost.secs), timeouts.sh $(cat timeouts.secs)"
t_done
