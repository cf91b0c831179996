#!/usr/bin/env bash
# bench/fleet.sh - a fleet: CLUSTERS (100) clusters x 50 packages (40
# manifests, 10 kustomize), three profiles, per-cluster variables used by 5
# packages (manifests with `rewrite`), synced to the Argo CD emulator with
# fast syncs; every figure side by side with the same distro on 1 cluster.
# Then the no-op of BIG (1000) clusters x 50 packages (no Argo CD) against
# 100. Prints a table with the targets of the fleet issue. STRICT=1: exit 1
# when a target is missed; a cold `up` that failed makes it exit 1 at once,
# another `up` that failed after the table, STRICT or not.
# FLEET=applicationset: the Applications come from one ApplicationSet per
# package (argocd.fleet) instead of one per cluster.
set -u
export LC_ALL=C NO_COLOR=1
top=$(cd "$(dirname "$0")/.." && pwd)
IDPMAKE=${IDPMAKE:-$top/idpmake}
CLUSTERS=${CLUSTERS:-100}
BIG=${BIG:-1000}
RUNS=${RUNS:-3}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-fleet.XXXXXX") || exit 2
EMU_PID=
trap '[ -n "$EMU_PID" ] && kill $EMU_PID 2>/dev/null; [ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"' EXIT
command -v kubectl >/dev/null || { echo "fleet.sh: kubectl is needed (kubectl kustomize)"; exit 2; }
GNU_TIME=
/usr/bin/time -f %M -o /dev/null true 2>/dev/null && GNU_TIME=/usr/bin/time
MISSED=0 FAILED=0

gen() {	# gen DIR CLUSTERS ARGOCD(0|1)
	local d=$1 n=$2 argo=$3 c p
	# each package goes to its own namespace (its name), which Argo CD creates
	local ns='sync: {options: [CreateNamespace=true]}'
	mkdir -p "$d/pkgs"
	for ((p = 1; p <= 50; p++)); do
		mkdir -p "$d/pkgs/p$p"
		for ((f = 1; f <= 5; f++)); do
			printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p%d-c%d\ndata:\n  region: REGION\n  n: "%d"\n' \
				$p $f $f >"$d/pkgs/p$p/cm$f.yaml"
		done
		if ((p > 40)); then
			printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\n' \
				"cm1.yaml, cm2.yaml, cm3.yaml, cm4.yaml, cm5.yaml" >"$d/pkgs/p$p/kustomization.yaml"
		fi
	done
	git init -q --bare -b main "$d/gitops.git"
	{
		printf 'idpmake: 1\nname: fleet\ngit: {remote: "%s"}\n' "$d/gitops.git"
		((argo)) && printf 'argocd: {repo-url: "file://%s"%s}\n' "$d/gitops.git" "${FLEET:+, fleet: $FLEET}"
		printf 'profiles:\n  core: [%s]\n  apps: [%s]\n  edge: [%s]\n' \
			"$(seq -s, -f 'p%g' 1 20 | sed 's/,/, /g')" "$(seq -s, -f 'p%g' 21 45 | sed 's/,/, /g')" \
			"$(seq -s, -f 'p%g' 46 50 | sed 's/,/, /g')"
		printf 'clusters:\n'
		for ((c = 1; c <= n; c++)); do
			printf '  c%d: {server: "https://c%d.example:6443", profiles: [core, apps, edge], vars: {region: r%d}}\n' $c $c $((c % 7))
		done
		printf 'packages:\n'
		for ((p = 1; p <= 50; p++)); do
			if ((p > 40)); then
				printf '  p%d: {type: kustomize, path: pkgs/p%d, %s}\n' $p $p "$ns"
			elif ((p <= 5)); then
				printf '  p%d: {type: manifests, path: pkgs/p%d, rewrite: [{match: REGION, replace: "${region}"}], %s}\n' $p $p "$ns"
			else
				printf '  p%d: {type: manifests, path: pkgs/p%d, %s}\n' $p $p "$ns"
			fi
		done
	} >"$d/distro.yaml"
}

emulator() {	# emulator CLUSTERS REPO: start it; sets PORT and EMU_PID
	local args=() c
	rm -f "$DIR/emu.port"
	for ((c = 1; c <= $1; c++)); do args+=(--cluster "c$c=https://c$c.example:6443"); done
	python3 "$top/tests/argocd-emu/emulator.py" --port 0 --port-file "$DIR/emu.port" \
		--token "eyJhbGciOiJIUzI1NiJ9.fleet.bench" --op-ms 0 --health-ms 0 --reconcile-ms 0 \
		--repo-map "$2=$2" --repo-map "file://$2=$2" "${args[@]}" >"$DIR/emu.log" 2>&1 &
	EMU_PID=$!
	for _ in $(seq 100); do [ -s "$DIR/emu.port" ] && break; sleep 0.1; done
	PORT=$(cat "$DIR/emu.port")
}

# timed LOG CMD...: runs CMD; sets T (s) and RSS (KiB)
timed() {
	local log=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	if [ -n "$GNU_TIME" ]; then
		$GNU_TIME -f %M -o "$log.rss" "$@" >"$log" 2>&1
	else
		"$@" >"$log" 2>&1
	fi
	ST=$?
	t1=$EPOCHREALTIME
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
	RSS=$( [ -f "$log.rss" ] && tail -n 1 "$log.rss" || echo 0)
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
requests() { curl -s "http://127.0.0.1:$1/_emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
reset() { curl -s -X POST -H 'Content-Type: application/json' -d '{}' "http://127.0.0.1:$1/_emu/reset" >/dev/null; }
line() { printf '%-34s %-14s %-14s %s\n' "$@"; }

measure() {	# measure NAME CLUSTERS: fills R_<figure>_NAME
	local name=$1 n=$2 d=$DIR/$1 port
	gen "$d" "$n" 1
	emulator "$n" "$d/gitops.git"
	port=$PORT
	export ARGOCD_SERVER=127.0.0.1:$port ARGOCD_OPTS=--plaintext ARGOCD_AUTH_TOKEN=eyJhbGciOiJIUzI1NiJ9.fleet.bench
	export IDPMAKE_ARGOCD_POLL_MS=10
	timed "$DIR/$name-cold.log" "$IDPMAKE" -C "$d" up -j 8
	eval "COLD_$name=$T COLDST_$name=$ST COLDRSS_$name=$RSS"
	# the rest would measure failing syncs (each waited on for minutes): stop
	[ "$ST" = 0 ] || { echo "fleet.sh: cold up on $n clusters failed:"; grep -v '^\[' "$DIR/$name-cold.log" | head -n 20; exit 1; }
	eval "RENDERS_$name=$(grep -o '[0-9]* rendered' "$DIR/$name-cold.log" | cut -d' ' -f1)"
	eval "SYNCS_$name=$(grep -o '[0-9]* synced' "$DIR/$name-cold.log" | cut -d' ' -f1)"
	local v=() i
	for ((i = 0; i < RUNS; i++)); do
		reset "$port"
		timed "$DIR/$name-noop.log" "$IDPMAKE" -C "$d" up -j 8
		[ "$ST" = 0 ] || { FAILED=1; echo "fleet.sh: no-op up on $n clusters failed ($ST)"; }
		v+=("$T")
	done
	eval "NOOP_$name=$(printf '%s\n' "${v[@]}" | median) NOOPRSS_$name=$RSS NOOPREQ_$name=$(requests "$port")"
	# one package (p10: manifests, every cluster, no variables) changed
	echo '  extra: "1"' >>"$d/pkgs/p10/cm1.yaml"
	reset "$port"
	timed "$DIR/$name-change.log" "$IDPMAKE" -C "$d" up -j 8
	[ "$ST" = 0 ] || { FAILED=1; echo "fleet.sh: the up of one changed package on $n clusters failed ($ST)"; }
	eval "CHG_$name=$T CHGRSS_$name=$RSS"
	eval "CHGR_$name=$(grep -o '[0-9]* rendered' "$DIR/$name-change.log" | cut -d' ' -f1)"
	eval "CHGS_$name=$(grep -o '[0-9]* synced' "$DIR/$name-change.log" | cut -d' ' -f1)"
	eval "CHGC_$name=$(git --git-dir="$d/gitops.git" rev-list --count main)"
	eval "CHGREQ_$name=$(requests "$port")"
	kill "$EMU_PID" 2>/dev/null
	wait "$EMU_PID" 2>/dev/null
	EMU_PID=
}

measure one 1
measure fleet "$CLUSTERS"

verdict() { if awk "BEGIN{exit !($1)}"; then echo ok; else MISSED=1; echo MISSED; fi; }
echo
line figure "1 cluster" "$CLUSTERS clusters" "target / result"
line "cold up: renders run" "$RENDERS_one" "$RENDERS_fleet" \
	"<= distinct renders ($((45 + 5 * 7))): $(verdict "$RENDERS_fleet <= 80")"
line "cold up: time (s)" "$COLD_one" "$COLD_fleet" "reported (exit $COLDST_one, $COLDST_fleet)"
line "cold up: syncs" "$SYNCS_one" "$SYNCS_fleet" \
	"$(awk -v t="$COLD_fleet" -v n="$SYNCS_fleet" 'BEGIN{if (n > 0) printf "%.1f ms per sync step", 1000*t/n}')"
line "no-op up: time (s, median)" "$NOOP_one" "$NOOP_fleet" \
	"<= 5 x 1 cluster ($(awk -v a="$NOOP_fleet" -v b="$NOOP_one" 'BEGIN{printf "%.1f x", a/b}')): $(verdict "$NOOP_fleet <= 5 * $NOOP_one")"
line "no-op up: Argo CD requests" "$NOOPREQ_one" "$NOOPREQ_fleet" "0: $(verdict "$NOOPREQ_fleet == 0 && $NOOPREQ_one == 0")"
line "one package changed: renders" "$CHGR_one" "$CHGR_fleet" "1: $(verdict "$CHGR_fleet == 1")"
line "one package changed: syncs" "$CHGS_one" "$CHGS_fleet" "$CLUSTERS (every cluster has it): $(verdict "$CHGS_fleet == $CLUSTERS")"
line "one package changed: API requests" "$CHGREQ_one" "$CHGREQ_fleet" \
	"reported ($(awk -v n="$CHGREQ_fleet" -v c="$CLUSTERS" 'BEGIN{printf "%.1f", n/c}') per cluster, ${FLEET:-applications})"
line "one package changed: commits" "$((CHGC_one - 1))" "$((CHGC_fleet - 1))" "1 more: $(verdict "$CHGC_fleet == 2")"
line "peak memory (MiB)" "$((COLDRSS_one / 1024))" "$((COLDRSS_fleet / 1024))" "<= 100: $(verdict "$COLDRSS_fleet <= 102400")"

# no-op scaling: BIG clusters against CLUSTERS, without Argo CD (a cold sync of 50,000 Applications
# against the Python emulator would measure the emulator)
unset ARGOCD_SERVER ARGOCD_OPTS ARGOCD_AUTH_TOKEN
for n in "$CLUSTERS" "$BIG"; do
	gen "$DIR/noop$n" "$n" 0
	timed "$DIR/noop$n-cold.log" "$IDPMAKE" -C "$DIR/noop$n" up -j 8
	[ "$ST" = 0 ] || { FAILED=1; echo "fleet.sh: cold up on $n clusters without Argo CD failed ($ST)"; }
	v=()
	for ((i = 0; i < RUNS; i++)); do
		timed "$DIR/noop$n.log" "$IDPMAKE" -C "$DIR/noop$n" up -j 8
		[ "$ST" = 0 ] || { FAILED=1; echo "fleet.sh: no-op up on $n clusters without Argo CD failed ($ST)"; }
		v+=("$T")
	done
	eval "SCALE_$n=$(printf '%s\n' "${v[@]}" | median)"
done
a=$(eval echo "\$SCALE_$CLUSTERS"); b=$(eval echo "\$SCALE_$BIG")
line "no-op, $BIG vs $CLUSTERS clusters (s)" "$a" "$b" \
	"<= 12 x ($(awk -v a="$b" -v b="$a" 'BEGIN{printf "%.1f x", a/b}')): $(verdict "$b <= 12 * $a")"
[ "$FAILED" = 0 ] || { echo "fleet.sh: an up failed (above; KEEP=1 keeps the logs)"; exit 1; }
[ "${STRICT:-0}" = 1 ] && [ "$MISSED" -ne 0 ] && exit 1
exit 0
