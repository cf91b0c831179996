#!/usr/bin/env bash
# bench/capi.sh [N] - clusters created through Cluster API (issue 23,
# spec/capi.md "Performance"), side by side with the same fleet of existing
# clusters:
#   - a cold `up -j 4` of N (default 20) created clusters (a management cluster
#     `mgmt` with the ClusterClass package; each created cluster gets calico,
#     then podinfo, as examples/capi) against the management-cluster emulator
#     (tests/kube-emu --capi, over https) and the Argo CD emulator in live mode;
#   - a no-op `up`, median of RUNS (5): wall time, requests to Argo CD, and
#     requests to the clusters (the kube emulator's log without the Argo CD
#     emulator's own, user agent argocd-application-controller); target: 0
#     requests, time within 1.5 x the no-op of N existing clusters;
#   - the same distro with N existing clusters (`server:
#     https://eN.k8s.example:6443`, registered with --cluster, and a cluster
#     `hub` holding the class package), against the same emulators, the no-op
#     runs interleaved with the created ones;
#   - the register latency of each created cluster: its
#     ControlPlaneInitialized event (GET /_emu/capi of the kube emulator) to
#     the Argo CD emulator's POST /api/v1/clusters of it: min, median, max;
#   - the requests to Argo CD of a one-cluster upgrade (one created cluster's
#     version one minor up through its vars).
# Figures are printed, not asserted; an `up` that failed (or hung) makes it exit
# 1 after the table. RUNS (5), CAPI_MS (50), UP_TIMEOUT (600 s
# for a cold or upgrade up), KEEP=1 keeps the
# folder (logs in it). Needs python3, curl, openssl, kubectl.
set -u
export LC_ALL=C NO_COLOR=1
top=$(cd "$(dirname "$0")/.." && pwd)
IDPMAKE=${IDPMAKE:-$top/idpmake}
N=${1:-${N:-20}}
RUNS=${RUNS:-5}
CAPI_MS=${CAPI_MS:-50}
UP_TIMEOUT=${UP_TIMEOUT:-600}	# seconds a cold or upgrade up may take (exit 124 past it: a hang is a figure too)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-capi.XXXXXX") || exit 2
EMU_PID= KEMU_PID=
FAILED=0
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	[ -n "$EMU_PID" ] && kill "$EMU_PID" 2>/dev/null
	[ -n "$KEMU_PID" ] && kill "$KEMU_PID" 2>/dev/null
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "(kept $DIR)"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "capi.sh: $*" >&2; exit 2; }
for c in python3 curl openssl kubectl; do command -v $c >/dev/null || die "$c is needed"; done
[ -x "$IDPMAKE" ] || die "no idpmake at $IDPMAKE (./configure && ninja)"

# ---------------------------------------------------------------- emulators
tls=$DIR/tls
mkdir -p "$tls"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
{
	openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=idpmake bench ca" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
		-keyout "$tls/ca.key" -out "$tls/ca.pem" &&
		printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature' \
			'extendedKeyUsage=serverAuth' 'subjectAltName=IP:127.0.0.1' >"$tls/server.ext" &&
		openssl req -new "${ec[@]}" -subj /CN=localhost -keyout "$tls/server.key" -out "$tls/server.csr" &&
		openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -set_serial 2 \
			-days 2 -extfile "$tls/server.ext" -out "$tls/server.pem"
} >"$tls/openssl.log" 2>&1 || { cat "$tls/openssl.log"; die "openssl failed"; }
KUBE_CA=$tls/ca.pem
KUBE_TOKEN=kube-bench-$RANDOM$RANDOM

waitport() {	# waitport FILE PID: prints the port written to FILE
	local p
	for _ in $(seq 300); do
		p=$(tr -d ' \n' 2>/dev/null <"$1")
		case $p in '' | *[!0-9]*) ;; *) echo "$p"; return 0 ;; esac
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

python3 "$top/tests/kube-emu/kubeemu.py" --capi --capi-ms "$CAPI_MS" --ca-cert "$KUBE_CA" \
	--tls-cert "$tls/server.pem" --tls-key "$tls/server.key" --token "$KUBE_TOKEN" \
	--port 0 --port-file "$DIR/kube-emu.port" >"$DIR/kube-emu.log" 2>&1 &
KEMU_PID=$!
kport=$(waitport "$DIR/kube-emu.port" $KEMU_PID) || { cat "$DIR/kube-emu.log"; die "the kube emulator did not start"; }
KUBE_SERVER=https://127.0.0.1:$kport
kemu=$KUBE_SERVER/_emu
# what `clusterctl init --infrastructure docker` leaves (mgmt:capi-check adopts it), as tests/e2e/lib.sh
curl -fsS -m 30 --cacert "$KUBE_CA" -X POST -H 'Content-Type: application/json' "$kemu/capi" -d '{"providers":
	{"topology_gate": true, "clusterctl": [
	{"name": "cluster-api", "type": "CoreProvider", "version": "v1.11.0"},
	{"name": "bootstrap-kubeadm", "type": "BootstrapProvider", "version": "v1.11.0", "namespace": "capi-kubeadm-bootstrap-system"},
	{"name": "control-plane-kubeadm", "type": "ControlPlaneProvider", "version": "v1.11.0", "namespace": "capi-kubeadm-control-plane-system"},
	{"name": "infrastructure-docker", "type": "InfrastructureProvider", "version": "v1.11.0", "namespace": "capd-system"}]}}' \
	>/dev/null || die "the kube emulator does not take the clusterctl inventory"
cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: mgmt
clusters:
- name: mgmt
  cluster: {server: "$KUBE_SERVER", certificate-authority: "$KUBE_CA"}
contexts:
- name: mgmt
  context: {cluster: mgmt, user: mgmt}
users:
- name: mgmt
  user: {token: "$KUBE_TOKEN"}
EOF
export KUBECONFIG=$DIR/kubeconfig

cbare=$DIR/created.git ebare=$DIR/existing.git
git init -q --bare -b main "$cbare" && git init -q --bare -b main "$ebare" || die "git init failed"
ARGOCD_AUTH_TOKEN="eyJhbGciOiJIUzI1NiJ9.capi$RANDOM.bench$RANDOM"
eargs=(--cluster "hub=https://hub.k8s.example:6443")
for ((c = 1; c <= N; c++)); do eargs+=(--cluster "e$c=https://e$c.k8s.example:6443"); done
python3 "$top/tests/argocd-emu/emulator.py" --port 0 --port-file "$DIR/emu.port" --token "$ARGOCD_AUTH_TOKEN" \
	--namespaces-exist --op-ms 20 --health-ms 20 --reconcile-ms 10 --live-clusters \
	--in-cluster-kube "$KUBE_SERVER" --in-cluster-kube-token "$KUBE_TOKEN" --in-cluster-kube-ca "$KUBE_CA" \
	--repo-map "$cbare=$cbare" --repo-map "file://$cbare=$cbare" --repo-map "$ebare=$ebare" --repo-map "file://$ebare=$ebare" "${eargs[@]}" >"$DIR/emu.log" 2>&1 &
EMU_PID=$!
aport=$(waitport "$DIR/emu.port" $EMU_PID) || { cat "$DIR/emu.log"; die "the Argo CD emulator did not start"; }
emu=http://127.0.0.1:$aport/_emu
export ARGOCD_SERVER=127.0.0.1:$aport ARGOCD_OPTS=--plaintext ARGOCD_AUTH_TOKEN
export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20 IDPMAKE_ARGOCD_WATCH=0

argo_count() { curl -fsS -m 30 "$emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
kube_count() {	# idpmake's requests to the clusters (kubectl, libcurl), not the Argo CD emulator's
	curl -fsS -m 30 --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(sum(1 for e in json.load(sys.stdin) if not e.get("user_agent", "").startswith("argocd-application-controller")))'
}

# ---------------------------------------------------------------- distros
# gen DIR BARE created|existing: N clusters (c1..cN created on mgmt, or e1..eN existing, plus hub)
gen() {
	local d=$1 kind=$3 c
	mkdir -p "$d"
	cp -R "$top/examples/capi/packages" "$d/packages" || die "cannot copy examples/capi/packages"
	{
		printf 'idpmake: 1\nname: capi-bench-%s\ngit: {remote: "%s"}\nargocd: {repo-url: "file://%s"}\nclusters:\n' "$kind" "$2" "$2"
		if [ "$kind" = created ]; then
			printf '  mgmt: {server: "https://kubernetes.default.svc", kube-context: mgmt, profiles: [management]}\n'
			for ((c = 1; c <= N; c++)); do
				printf '  c%d:\n    profiles: [workload]\n    vars: {k8s: v1.33.2}\n' $c
				printf '    create:\n      management: mgmt\n      namespace: fleet\n'
				printf '      class: {package: capi-classes, name: quick-start}\n      version: ${k8s}\n'
				printf '      control-plane: {replicas: 1}\n      workers: {md-0: {class: default-worker, replicas: 1}}\n'
				printf '      vars: {imageRepository: registry.k8s.io}\n      cni: [calico]\n'
			done
		else
			printf '  hub: {server: "https://hub.k8s.example:6443", profiles: [management]}\n'
			for ((c = 1; c <= N; c++)); do
				printf '  e%d: {server: "https://e%d.k8s.example:6443", profiles: [workload], vars: {k8s: v1.33.2}}\n' $c $c
			done
		fi
		cat <<'EOF'
profiles:
  management: [capi-classes]
  workload: [calico, podinfo]
packages:
  capi-classes: {type: manifests, path: packages/capi-classes, namespace: fleet, sync: {options: [CreateNamespace=true]}}
  calico: {type: manifests, path: packages/calico, namespace: kube-system}
  podinfo: {type: manifests, path: packages/podinfo, sync: {options: [CreateNamespace=true]}}
EOF
	} >"$d/distro.yaml"
}

secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
cold() {	# cold NAME: the first up; sets COLD_NAME
	local t0 st
	t0=$EPOCHREALTIME
	timeout -k 10 "$UP_TIMEOUT" "$IDPMAKE" -C "$DIR/$1" up -j 4 >"$DIR/$1-cold.log" 2>&1 </dev/null
	st=$?
	eval "COLD_$1=$(secs "$t0" "$EPOCHREALTIME") COLDST_$1=$st"
	[ $st = 0 ] || { FAILED=1; echo "capi.sh: the cold up of $1 failed ($st):"; grep -v '^\[' "$DIR/$1-cold.log" | tail -n 20; }
}
noop() {	# noop NAME I: one no-op up; appends to T_NAME, AREQ_NAME, KREQ_NAME
	local a0 k0 t0 t st
	a0=$(argo_count) k0=$(kube_count)
	t0=$EPOCHREALTIME
	"$IDPMAKE" -C "$DIR/$1" up >"$DIR/$1-noop-$2.log" 2>&1 </dev/null
	st=$?
	t=$(secs "$t0" "$EPOCHREALTIME")
	if [ $st != 0 ]; then
		t=; FAILED=1; eval "NOOPFAIL_$1=\"\${NOOPFAIL_$1:-} $2:$st\""
		echo "capi.sh: no-op $2 of $1 failed ($st):"; tail -n 5 "$DIR/$1-noop-$2.log"
	fi
	eval "T_$1=\"\${T_$1:-} $t\" AREQ_$1=\"\${AREQ_$1:-} $(($(argo_count) - a0))\" KREQ_$1=\"\${KREQ_$1:-} $(($(kube_count) - k0))\""
}

gen "$DIR/created" "$cbare" created
gen "$DIR/existing" "$ebare" existing
echo "idpmake $("$IDPMAKE" version 2>/dev/null | head -n 1): $N created clusters against $N existing, $(nproc) cpus," \
	"CAPI tick ${CAPI_MS} ms, Argo CD ops 20 ms, no-op median of $RUNS" >&2
echo "cold ups..." >&2
cold created
cold existing
echo "no-op ups..." >&2
# one untimed warm-up each, then interleaved
"$IDPMAKE" -C "$DIR/created" up >"$DIR/created-warm.log" 2>&1 </dev/null
"$IDPMAKE" -C "$DIR/existing" up >"$DIR/existing-warm.log" 2>&1 </dev/null
for ((i = 1; i <= RUNS; i++)); do
	noop created $i
	noop existing $i
done

# register latency: ControlPlaneInitialized (kube emulator) to Argo CD's POST /api/v1/clusters
curl -fsS -m 30 --cacert "$KUBE_CA" "$kemu/capi" >"$DIR/capi.json" || die "no $kemu/capi"
curl -fsS -m 60 "$emu/requests" >"$DIR/req.json" || die "no $emu/requests"
LAT=$(python3 - "$DIR/capi.json" "$DIR/req.json" "$N" <<'PY'
import json, statistics, sys
capi = json.load(open(sys.argv[1]))["clusters"]
log = json.load(open(sys.argv[2]))
lat, missing = [], []
for i in range(1, int(sys.argv[3]) + 1):
    name = "c%d" % i
    t0 = [e["t"] for e in (capi.get("fleet/" + name) or {}).get("events", [])
          if e["event"] == "condition ControlPlaneInitialized True Initialized"]
    t1 = [e["t"] for e in log if e["method"] == "POST" and e["path"] == "/api/v1/clusters"
          and (e.get("body") or {}).get("name") == name]
    if t0 and t1:
        lat.append(min(t1) - min(t0))
    else:
        missing.append(name)
if lat:
    print("%.2f %.2f %.2f %d %s" % (min(lat), statistics.median(lat), max(lat), len(lat), ",".join(missing) or "-"))
else:
    print("- - - 0 %s" % ",".join(missing))
PY
)
read -r LMIN LMED LMAX LN LMISS <<<"$LAT"

# a one-cluster upgrade: c1's version one minor up
echo "one-cluster upgrade..." >&2
sed -i '/^  c1:$/,/^  c2:$/ s/k8s: v1.33.2/k8s: v1.34.0/' "$DIR/created/distro.yaml"
a0=$(argo_count) k0=$(kube_count)
t0=$EPOCHREALTIME
timeout -k 10 "$UP_TIMEOUT" "$IDPMAKE" -C "$DIR/created" up -j 4 >"$DIR/created-upgrade.log" 2>&1 </dev/null
UPST=$?
UPT=$(secs "$t0" "$EPOCHREALTIME")
UPA=$(($(argo_count) - a0)) UPK=$(($(kube_count) - k0))
[ $UPST = 0 ] || { FAILED=1; echo "capi.sh: the upgrade up failed ($UPST):"; grep -v '^\[' "$DIR/created-upgrade.log" | tail -n 20; }
UPSYNC=$(curl -fsS -m 60 "$emu/requests" | python3 -c 'import collections, json, re, sys
log = json.load(sys.stdin)[int(sys.argv[1]):]
kinds = collections.Counter("%s %s" % (e["method"], re.sub(r"^(/api/v1/applications)/[^/]+", r"\1/APP", e["path"])) for e in log)
print("syncs: %s; %s" % (",".join(e["path"].split("/")[4] for e in log if e["method"] == "POST" and e["path"].endswith("/sync")) or "none",
                         ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))))' "$a0")

# ---------------------------------------------------------------- the table
line() { printf '%-36s %-14s %-14s %s\n' "$@"; }
nm() { eval "printf '%s' \"\${$1_$2:-}\"" | median; }
echo
line figure "$N created" "$N existing" "ratio / note"
line "cold up -j 4: time (s)" "$COLD_created" "$COLD_existing" \
	"$(awk -v a="$COLD_created" -v b="$COLD_existing" 'BEGIN{printf "%.1f x", a/b}') (exit $COLDST_created, $COLDST_existing)"
tc=$(nm T created) te=$(nm T existing)
line "no-op up: time (s, median of $RUNS)" "$tc" "$te" \
	"$(awk -v a="$tc" -v b="$te" 'BEGIN{if (b > 0) printf "%.2f x (spec: <= 1.5 x)", a/b; else print "n/a"}')"
line "no-op up: Argo CD requests (median)" "$(nm AREQ created)" "$(nm AREQ existing)" "spec: 0; per run:$(eval echo "\$AREQ_created") /$(eval echo "\$AREQ_existing")"
line "no-op up: cluster requests (median)" "$(nm KREQ created)" "$(nm KREQ existing)" "spec: 0; per run:$(eval echo "\$KREQ_created") /$(eval echo "\$KREQ_existing")"
line "no-op up: times (s)" "" "" "created:$T_created; existing:$T_existing"
[ -z "${NOOPFAIL_created:-}${NOOPFAIL_existing:-}" ] ||
	echo "no-op runs that failed (run:exit), not in the medians: created${NOOPFAIL_created:- none}; existing${NOOPFAIL_existing:- none}"
echo
echo "register latency (ControlPlaneInitialized to Argo CD's POST /api/v1/clusters), $LN of $N clusters:"
echo "  min $LMIN s, median $LMED s, max $LMAX s (spec: within 2 s in the emulator)$([ "$LMISS" = - ] || echo "; not measured: $LMISS")"
echo "one-cluster upgrade (c1 v1.33.2 -> v1.34.0, up -j 4): $UPA Argo CD requests, $UPK cluster requests, $UPT s (exit $UPST)"
echo "  $UPSYNC"
[ "$FAILED" = 0 ] || { echo "capi.sh: an up failed (above; KEEP=1 keeps the logs)"; exit 1; }
exit 0
