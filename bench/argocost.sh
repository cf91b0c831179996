#!/usr/bin/env bash
# bench/argocost.sh - what a run costs Argo CD (issue 26), side by side:
#   1. manifest generations by the emulator's repo-server model (Argo CD's
#      UpdateRevisionForPaths rule) for a one-package change over N linked
#      clusters x 5 packages, with the Applications' manifest-generate-paths
#      annotation and with an Argo CD that ignores it (the emulator's
#      manifest_generate_paths: false); target: at most the Applications whose
#      folders changed (N), not N x 5;
#   2. requests to Argo CD and wall time of that `up` (push to the last
#      Application Synced and Healthy), waiting on the watch stream and
#      polling (IDPMAKE_ARGOCD_WATCH=0); target: requests while waiting
#      O(waves), and the stream no slower than polling at 1 cluster.
# SIZES (default "1 100 400"): the cluster counts.  OP_MS (200) and HEALTH_MS
# (200): how long the emulator's operations and health transitions take.
# RESYNC_MS: the emulator's controller resync (default 200 ms up to 20
# clusters, 120 s above: each comparison costs a `git rev-parse` under the
# emulator's one lock, and a 200 ms resync over 500 to 2,000 Applications
# kept that lock busy all the time, so every request waited; the resync
# only makes the Applications idpmake does not sync compare the new commit,
# which `settled` waits for before counting generations; the emulator
# memoises its git look-ups by commit and tree id).  EMU_PROFILE=FILE: profile the emulator
# (bench/profemu.py), FILE.cCLUSTERS for each size.  KEEP=1 keeps the folder.
set -u
export LC_ALL=C NO_COLOR=1
top=$(cd "$(dirname "$0")/.." && pwd)
IDPMAKE=${IDPMAKE:-$top/idpmake}
SIZES=${SIZES:-1 100 400}
OP_MS=${OP_MS:-200}
HEALTH_MS=${HEALTH_MS:-200}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-argocost.XXXXXX") || exit 2
EMU_PID=
trap '[ -n "$EMU_PID" ] && kill ${EMU_PROFILE:+-USR1} $EMU_PID 2>/dev/null; [ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"' EXIT
export ARGOCD_AUTH_TOKEN=eyJhbGciOiJIUzI1NiJ9.argocost.bench ARGOCD_OPTS=--plaintext
export IDPMAKE_ARGOCD_POLL_MS=${IDPMAKE_ARGOCD_POLL_MS:-500}

gen() {	# gen DIR CLUSTERS
	local d=$1 n=$2 c p
	mkdir -p "$d"
	git init -q --bare -b main "$d/gitops.git"
	for ((p = 1; p <= 5; p++)); do
		mkdir -p "$d/pkgs/p$p"
		printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p%d, namespace: p%d}\ndata:\n  v: "0"\n' $p $p >"$d/pkgs/p$p/cm.yaml"
	done
	{
		printf 'idpmake: 1\nname: cost\ngit: {remote: "%s"}\nargocd: {repo-url: "file://%s"}\nclusters:\n' "$d/gitops.git" "$d/gitops.git"
		for ((c = 1; c <= n; c++)); do printf '  c%d: {server: "https://c%d.example:6443"}\n' $c $c; done
		printf 'packages:\n'
		for ((p = 1; p <= 5; p++)); do printf '  p%d: {type: manifests, path: pkgs/p%d, namespace: p%d, sync: {options: [CreateNamespace=true]}}\n' $p $p $p; done
	} >"$d/distro.yaml"
}

emulator() {	# emulator CLUSTERS REPO: sets EMU (its control URL) and EMU_PID
	local args=() c
	rm -f "$DIR/emu.port"
	for ((c = 1; c <= $1; c++)); do args+=(--cluster "c$c=https://c$c.example:6443"); done
	python3 ${EMU_PROFILE:+"$top/bench/profemu.py" "$EMU_PROFILE.c$1"} "$top/tests/argocd-emu/emulator.py" --port 0 --port-file "$DIR/emu.port" --token "$ARGOCD_AUTH_TOKEN" \
		--op-ms "$OP_MS" --health-ms "$HEALTH_MS" --reconcile-ms 0 --resync-ms "${RESYNC_MS:-$(($1 > 20 ? 120000 : 200))}" \
		--repo-map "$2=$2" --repo-map "file://$2=$2" "${args[@]}" >"$DIR/emu.log" 2>&1 &
	EMU_PID=$!
	for _ in $(seq 100); do [ -s "$DIR/emu.port" ] && break; sleep 0.1; done
	export ARGOCD_SERVER=127.0.0.1:$(cat "$DIR/emu.port")
	EMU=http://$ARGOCD_SERVER/_emu
}

post() { curl -fsS -m 30 -X POST -H 'Content-Type: application/json' -d "$2" "$EMU/$1" >/dev/null; }
stat() { curl -fsS -m 30 "$EMU/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
requests() {	# all API requests, and GETs of one Application, since the last reset
	curl -fsS -m 60 "$EMU/requests" | python3 -c '
import json, sys
log = [e for e in json.load(sys.stdin) if e["path"].startswith("/api/")]
print(len(log), sum(1 for e in log if e["method"] == "GET" and e["path"].startswith("/api/v1/applications/")))'
}
settled() {	# every Application compared at the branch's tip (the controller has seen the commit)
	local tip
	tip=$(git --git-dir="$1/gitops.git" rev-parse main)
	for _ in $(seq 300); do
		curl -fsS -m 60 "$EMU/apps" | python3 -c '
import json, sys
apps = json.load(sys.stdin)
sys.exit(0 if apps and all((a["status"].get("sync") or {}).get("revision") == sys.argv[1] for a in apps) else 1)' "$tip" && return 0
		sleep 2
	done
	echo "argocost.sh: the emulator did not compare every Application at $tip in 10 minutes" >&2
	return 1
}
change() { sed -i "s/v: \"[0-9]*\"/v: \"$2\"/" "$1/pkgs/p1/cm.yaml"; }
timed_up() {	# timed_up DIR [ENV...]: sets SECS
	local t0=$EPOCHREALTIME
	(cd "$1" && shift && env "$@" "$IDPMAKE" up >"$DIR/up.log" 2>&1) || { echo "argocost.sh: up failed:"; tail -20 "$DIR/up.log"; exit 1; }
	SECS=$(python3 -c "print('%.1f' % ($EPOCHREALTIME - $t0))")
}

printf '%-9s %-7s | %-26s | %-40s | %-40s\n' clusters apps "manifest generations" "stream: requests (app GETs), time" \
	"polling: requests (app GETs), time"
for n in $SIZES; do
	d=$DIR/c$n
	gen "$d" "$n"
	emulator "$n" "$d/gitops.git"
	timed_up "$d" X=1
	settled "$d" || exit 1
	# 1. generations: with the annotation, then an Argo CD that ignores it
	post reset '{}'
	change "$d" 1
	timed_up "$d" X=1
	read -r sreq sget <<<"$(requests)"
	ssecs=$SECS
	settled "$d" || exit 1
	with=$(stat manifest_generations)
	post config '{"manifest_generate_paths": false}'
	post reset '{}'
	change "$d" 2
	timed_up "$d" IDPMAKE_ARGOCD_WATCH=0
	read -r preq pget <<<"$(requests)"
	psecs=$SECS
	settled "$d" || exit 1
	without=$(stat manifest_generations)
	post config '{"manifest_generate_paths": true}'
	printf '%-9s %-7s | %5s with, %5s without | %6s (%6s), %6ss %19s | %6s (%6s), %6ss\n' "$n" $((n * 5)) \
		"$with" "$without" "$sreq" "$sget" "$ssecs" "" "$preq" "$pget" "$psecs"
	kill ${EMU_PROFILE:+-USR1} "$EMU_PID" 2>/dev/null
	wait "$EMU_PID" 2>/dev/null
	EMU_PID=
done
echo "(one package changed: its N Applications sync; generations counted until every Application has"
echo " compared the new commit; requests: all API requests of that up, and GETs of an Application)"
