# shellcheck shell=bash
# shared set-up of t8421, t8422 and t8424 (sourced): a management cluster mgmt (kube-emu --capi)
# and the Argo CD emulator in live mode; a distro capi-faults in $T/d whose created
# clusters are added and removed per case (dedit add|del NAME [PROFILE] [CREATE-LINES])
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_capi_emulators --capi-ms 50 "$@"
capi_clusterctl_init	# MGMT:capi-check adopts it
# every idpmake run of these scripts ends within 180 s (a hung run: exit 124, or 137 when TERM is not enough)
idpmake() { timeout -k 5 180 "$IDPMAKE" "$@"; }
argo() { curl -fsS -m 10 -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER$1"; }
kget() { kubectl --request-timeout=10s "$@"; }
kcapi() { curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/capi"; }

mkdir -p "$T/d" || exit 1
cp -R "$top/examples/capi/packages" "$T/d/packages" || t_bail "cannot copy examples/capi/packages"
cd "$T/d" || exit 1
cat >distro.yaml <<ZZDISTRO
idpmake: 1
name: capi-faults
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  mgmt:
    server: https://kubernetes.default.svc
    kube-context: mgmt
    profiles: [management]
profiles:
  management: [capi-classes]
  workload: [calico, podinfo]
  nocni: [podinfo]
packages:
  capi-classes: {type: manifests, path: packages/capi-classes, namespace: fleet, sync: {options: [CreateNamespace=true]}}
  calico: {type: manifests, path: packages/calico, namespace: kube-system}
  podinfo: {type: manifests, path: packages/podinfo, sync: {options: [CreateNamespace=true]}}
ZZDISTRO

# dedit add NAME [PROFILE [EXTRA-CREATE-KEYS (one line each, "key: value")]] | dedit del NAME
dedit() {
	python3 - distro.yaml "$@" <<'ZZPY' || t_bail "cannot edit distro.yaml: $*"
import re, sys
f, op, name = sys.argv[1:4]
s = open(f).read()
if op == "add":
    prof = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else "workload"
    extra = [l for l in (sys.argv[5] if len(sys.argv) > 5 else "").split("\n") if l.strip()]
    keys = {l.split(":", 1)[0].strip() for l in extra}
    body = ["management: mgmt", "namespace: fleet", "class: {package: capi-classes, name: quick-start}",
            "version: v1.33.2", "control-plane: {replicas: 1}", "workers: {md-0: {class: default-worker, replicas: 1}}",
            "vars: {imageRepository: registry.k8s.io}", "cni: [calico]", "timeout: 60"]
    body = [l for l in body if l.split(":", 1)[0] not in keys] + extra
    block = "  %s:\n    profiles: [%s]\n    create:\n" % (name, prof) + "".join("      %s\n" % l for l in body)
    s = s.replace("\nprofiles:\n", "\n" + block + "profiles:\n", 1)
else:
    s2 = re.sub(r"\n  %s:\n(    .*\n)+" % re.escape(name), "\n", s)
    assert s2 != s, "no cluster " + name
    s = s2
open(f, "w").write(s)
ZZPY
}

# the request logs: nargo (the Argo CD emulator's length), nkube (idpmake's requests to the
# clusters, not Argo CD's); since N: the Argo CD requests after the first N as "METHOD PATH" lines
nargo() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
nkube() {
	curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(len([e for e in json.load(sys.stdin) if not e.get("user_agent", "").startswith("argocd-application-controller")]))'
}
since() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json, sys
for e in json.load(sys.stdin)[int(sys.argv[1]):]: print(e["method"], e["path"])' "$1"; }
# the Argo CD request log entries after N as JSON, into FILE
since_json() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json, sys
json.dump(json.load(sys.stdin)[int(sys.argv[1]):], sys.stdout)' "$1" >"$2"; }
# save: a copy of the last command's output, for the secret checks at the end
nsave=0
save() { nsave=$((nsave + 1)); cp "$OUTPUT" "$T/out.$nsave.$1"; }
# the admin tokens of the kubeconfig Secrets and every service-account token of the workload clusters
# (the emulator's store), one a line, into FILE
secrets_of() {
	curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/state" >"$T/.state.json" || t_bail "no /_emu/state"
	curl -fsS -m 10 "$emu/requests" >"$T/.req.json" || t_bail "no request log"
	touch "$T/seen-secrets"
	python3 - "$T/.state.json" "$T/.req.json" "$T/seen-secrets" >"$1.new" <<'ZZPY2'
import base64, json, re, sys
out = set(l for l in open(sys.argv[3]).read().split("\n") if l.strip())
for e in json.load(open(sys.argv[2])):
    body = e.get("body")
    cfg = body.get("config") if isinstance(body, dict) else None
    if isinstance(cfg, dict):
        tls = cfg.get("tlsClientConfig") or {}
        for v in (cfg.get("bearerToken"), cfg.get("password"), tls.get("keyData")):
            if v:
                out.add(v)
for o in json.load(open(sys.argv[1])):
    if o.get("kind") != "Secret":
        continue
    for k, v in (o.get("data") or {}).items():
        d = base64.b64decode(v).decode("utf-8", "replace")
        for m in re.finditer(r"(?m)^\s*(token|client-key-data):\s*\"?([^\s\"]+)", d):
            out.add(m.group(2))
        if k == "token":
            out.add(d)
print("\n".join(sorted(out)))
ZZPY2
}
# remember the tokens of the Secrets now (a deleted cluster's Secret goes with it)
remember_secrets() { secrets_of "$T/seen-secrets" && mv "$T/seen-secrets.new" "$T/seen-secrets"; }
# on_exists NAME BODY: in the background, POST BODY (JSON, naming the cluster NAME) to
# /_emu/capi again and again until the emulator knows the Cluster fleet/NAME (404 before):
# a fault set within the controller's first ticks; prints "at step S" (the step the fault
# found it at) into $T/NAME.on_exists; $! is it
on_exists() {
	python3 - "$kemu/capi" "$KUBE_CA" "$1" "$2" >"$T/$1.on_exists" 2>&1 <<'ZZPY3' &
import http.client, json, ssl, sys, time
from urllib.parse import urlsplit
url, ca, name, body = sys.argv[1:5]
u = urlsplit(url)
ctx = ssl.create_default_context(cafile=ca)
conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=5)
end = time.time() + 60
while time.time() < end:
    try:
        conn.request("POST", u.path, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
    except (OSError, http.client.HTTPException):
        conn.close()
        conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=5)
        continue
    if r.status == 200:
        print("at step %s" % json.loads(data)["clusters"]["fleet/" + name].get("step"))
        sys.exit(0)
    time.sleep(0.002)
print("fleet/%s unknown to the emulator within 60 s" % name)
sys.exit(1)
ZZPY3
}

# check_secrets [MIN]: every credential remember_secrets saw ($T/seen-secrets, at least MIN,
# default 4) is in no saved output and not in .idpmake
check_secrets() {
	local n i=0 s
	n=$(wc -l <"$T/seen-secrets")
	echo "# $n credentials to look for"
	[ "$n" -ge "${1:-4}" ]
	t_report $? "set-up: the tokens of the kubeconfig Secrets and argocd-manager are known"
	while IFS= read -r s; do
		i=$((i + 1))
		t_nostring "credential $i is in no output and not in .idpmake" "$s" "$T"/out.* .idpmake
	done <"$T/seen-secrets"
}
