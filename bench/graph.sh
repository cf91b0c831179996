#!/usr/bin/env bash
# bench/graph.sh - graph building against packages x clusters (issue: graph
# building was quadratic). Writes two distros of PACKAGES (1000) packages
# chained by `needs`, on 20 and on 40 clusters, times `idpmake graph
# --format json` on each (median of RUNS, 3) and prints the ratio, whose
# target is <= 2.5 (linear would be 2.0). STRICT=1: exit 1 when it is missed;
# exit 1 when idpmake graph failed.
set -u
export LC_ALL=C NO_COLOR=1
IDPMAKE=${IDPMAKE:-$(cd "$(dirname "$0")/.." && pwd)/idpmake}
PACKAGES=${PACKAGES:-1000}
RUNS=${RUNS:-3}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-graph.XXXXXX") || exit 2
trap 'rm -rf "$DIR"' EXIT

gen() {	# gen DIR CLUSTERS
	mkdir -p "$1/pkgs/p"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' >"$1/pkgs/p/cm.yaml"
	{
		printf 'idpmake: 1\nname: graph-bench\nclusters:\n'
		for ((c = 1; c <= $2; c++)); do printf '  c%d: {server: "https://c%d.example:6443"}\n' $c $c; done
		printf 'packages:\n'
		for ((p = 1; p <= PACKAGES; p++)); do
			printf '  p%d:\n    type: manifests\n    path: pkgs/p\n' $p
			((p > 1)) && printf '    needs: [p%d]\n' $((p - 1))
		done
	} >"$1/distro.yaml"
}

median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

measure() {	# measure DIR: median seconds of `idpmake graph`
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$EPOCHREALTIME
		"$IDPMAKE" -C "$1" graph --format json >/dev/null 2>"$DIR/graph.err" || { cat "$DIR/graph.err" >"$DIR/failed"; return; }
		t1=$EPOCHREALTIME
		awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", b-a}'
	done | median
}

gen "$DIR/c20" 20
gen "$DIR/c40" 40
a=$(measure "$DIR/c20")
b=$(measure "$DIR/c40")
[ -e "$DIR/failed" ] && { echo "graph.sh: idpmake graph failed:"; head -n 20 "$DIR/failed"; exit 1; }
r=$(awk -v x="$b" -v y="$a" 'BEGIN{if (y > 0) printf "%.2f", x/y; else print "inf"}')
ok=$(awk -v r="$r" 'BEGIN{print (r <= 2.5) ? "ok" : "MISSED"}')
printf '%-28s %-9s %-13s %-7s %-8s %s\n' "graph ${PACKAGES}x40 vs x20" "$b s" "$a s" "$r" "<= 2.5" "$ok"
[ "${STRICT:-0}" = 1 ] && [ "$ok" != ok ] && exit 1
exit 0
