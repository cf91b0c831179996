#!/usr/bin/env bash
# bench/emptystate.sh - an up with an empty state folder (a fresh CI runner)
# against an up-to-date GitOps repository (issue 8 §5), beside a warm no-op
# and a cold scan.  Generates a distro with bench/gen.sh (PACKAGES 2000 x
# FILES 100 = the 200,000-file distro by default) pushed to a local bare
# repository outside the state folder; then, RUNS times each (median):
#   warm no-op   up with the state as the last up left it
#   cold scan    up after every source file was touched: each is hashed
#                again (the stat cache misses), nothing renders
#   empty state  up after rm -rf .idpmake: keys from the scan, renders and
#                pushes proven from .idpmake/keys and the folders' trees
# Targets: the empty-state up <= 1.5 x the cold scan, with 0 renders and no
# commit.  No Argo CD here (t6800 covers the syncs).  STRICT=1: exit 1 when
# a target is missed.  KEEP=1 keeps the folder.
set -u
export LC_ALL=C NO_COLOR=1
here=$(cd "$(dirname "$0")" && pwd)
IDPMAKE=${IDPMAKE:-$(cd "$here/.." && pwd)/idpmake}
PACKAGES=${PACKAGES:-2000}
FILES=${FILES:-100}
RUNS=${RUNS:-3}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-emptystate.XXXXXX") || exit 2
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT

"$here/gen.sh" "$DIR/d" "$PACKAGES" "$FILES" >/dev/null || exit 2
git init -q --bare -b main "$DIR/remote.git" || exit 2
printf 'git: {remote: "%s"}\n' "$DIR/remote.git" >>"$DIR/d/distro.yaml"
cd "$DIR/d" || exit 2

median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
# run LOG: one timed up; its seconds on stdout, its output in LOG
run() {
	local t0 t1
	t0=$EPOCHREALTIME
	"$IDPMAKE" up >"$1" 2>&1 || { echo "emptystate.sh: up failed, see $1" >&2; cat "$1" >&2; exit 2; }
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", b-a}'
}
rendered() { sed -n 's/^idpmake: \([0-9]*\) rendered.*/\1/p' "$1" | tail -1; }

cold=$(run "$DIR/first.log")
first=$(git --git-dir="$DIR/remote.git" rev-parse main)
noop=$(for ((i = 0; i < RUNS; i++)); do run "$DIR/noop.log"; done | median)
scan=$(for ((i = 0; i < RUNS; i++)); do
	find pkgs -type f -exec touch {} +
	run "$DIR/scan.log"
done | median)
empty=$(for ((i = 0; i < RUNS; i++)); do
	rm -rf .idpmake
	run "$DIR/empty-$i.log"
done | median)
renders=$(rendered "$DIR/empty-0.log")
after=$(git --git-dir="$DIR/remote.git" rev-parse main)
next=$(run "$DIR/next.log")

r=$(awk -v x="$empty" -v y="$scan" 'BEGIN{if (y > 0) printf "%.2f", x/y; else print "inf"}')
ok=$(awk -v r="$r" 'BEGIN{print (r <= 1.5) ? "ok" : "MISSED"}')
rok=ok
[ "$renders" = 0 ] && [ "$first" = "$after" ] && [ "$(rendered "$DIR/next.log")" = 0 ] || rok=MISSED
n=$((PACKAGES * FILES))
printf 'empty state, %d packages x %d files (%d files), median of %d:\n' "$PACKAGES" "$FILES" "$n" "$RUNS"
printf '  %-34s %s s\n' "first up (renders, push)" "$cold"
printf '  %-34s %s s\n' "warm no-op" "$noop"
printf '  %-34s %s s\n' "cold scan (every file touched)" "$scan"
printf '  %-34s %s s  (%s x the cold scan, target <= 1.5: %s)\n' "empty state folder" "$empty" "$r" "$ok"
printf '  %-34s %s s\n' "the up after it" "$next"
printf '  %-34s %s renders, %s (target 0 renders, no commit: %s)\n' "empty state: work done" "${renders:-?}" \
	"$([ "$first" = "$after" ] && echo "no commit" || echo "a new commit")" "$rok"
[ "${STRICT:-0}" = 1 ] && { [ "$ok" != ok ] || [ "$rok" != ok ]; } && exit 1
exit 0
