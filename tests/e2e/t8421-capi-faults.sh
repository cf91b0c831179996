#!/bin/bash
# Cluster API failure modes (issue 23; notes/capi.md §8), against kube-emu --capi and
# the Argo CD emulator's live clusters (set-up: capi-faults.sh), one cluster a case:
#   f1  provisioning fails (fail_provision before the control plane is up): exit 1
#       naming the condition, its packages not run, not registered; after the fault
#       is cleared the next up resumes: no commit, no re-sync of the Cluster;
#   k1  credential: kubeconfig registers the Secret's client certificate, no token;
#   f1  deleted out of band: plain up makes no request; up --refresh syncs the
#       Cluster again, waits for it, registers it again at its new endpoint (the
#       old entry removed: Argo CD refuses a name with two servers), syncs every
#       package again;
#   u1  management cluster unreachable on its first up: fails naming it, no secret;
#   n1  no cni (a Deployment only): what the sync says (reported, nodes NotReady);
#   and no kubeconfig or argocd-manager token in any output or in .idpmake.
# shellcheck source=tests/e2e/capi-faults.sh
. "$(dirname "$0")/capi-faults.sh"

t_ok "up: the management cluster's class" idpmake up
save base

# ---- 1. provisioning fails ---------------------------------------------------
# the fault is set as soon as the Cluster exists (tick 0: the controller has not
# made it Provisioning yet): the emulator needs the Cluster to exist
dedit add f1 workload "timeout: 15"
on_exists f1 '{"cluster": "f1", "namespace": "fleet", "fail_provision": "QuotaExceeded: no quota"}'
poller=$!
t_exit 1 "up with f1's provisioning failing exits 1" idpmake up
save f1-fail
wait "$poller"
st=$?
sed 's/^/# f1 fault set /' "$T/f1.on_exists"
grep -q 'at step \(new\|pending\|provisioning\)$' "$T/f1.on_exists" || st=1
t_report $st "set-up: the fault was set before the control plane was initialized" "$T/f1.on_exists"
t_grep "f1:provision fails" 'f1:provision' "$OUTPUT"
t_grep "naming the condition's reason" 'QuotaExceeded' "$OUTPUT"
t_grep "and its message" 'no quota' "$OUTPUT"
t_grep "f1's calico sync is not run" 'not run: f1/calico' "$OUTPUT"
t_grep "f1's podinfo sync is not run" 'not run: f1/podinfo' "$OUTPUT"
argo /api/v1/clusters >"$T/clusters.json"
python3 -c 'import json, sys
names = [c["name"] for c in json.load(open(sys.argv[1]))["items"]]
print(names); sys.exit("f1" in names)' "$T/clusters.json" >"$T/why" 2>&1
t_report $? "f1 is not registered in Argo CD" "$T/why"
commits=$(git --git-dir="$bare" rev-list --count main)
n=$(nargo)
kemu_post reset '{}'
t_ok "the next up (fault cleared) completes f1" idpmake up
save f1-resume
t_eq "no new commit" "$commits" "$(git --git-dir="$bare" rev-list --count main)"
since "$n" >"$T/f1.req"
t_nogrep "no re-sync of mgmt/cluster-f1" '^POST /api/v1/applications/mgmt-cluster-f1/sync' "$T/f1.req"
t_grep "f1's calico synced" '^POST /api/v1/applications/f1-calico/sync' "$T/f1.req"
t_grep "f1's podinfo synced" '^POST /api/v1/applications/f1-podinfo/sync' "$T/f1.req"
t_ok "f1 is registered now" argo "/api/v1/clusters/f1?id.type=name"

# ---- 3. credential: kubeconfig -----------------------------------------------
dedit add k1 workload "credential: kubeconfig"
n=$(nargo)
t_ok "up with k1 (credential: kubeconfig)" idpmake up
save k1
since_json "$n" "$T/k1.json"
python3 - "$T/k1.json" >"$T/why" 2>&1 <<'ZZPY'
import json, sys
reg = [e for e in json.load(open(sys.argv[1])) if e["method"] == "POST" and e["path"] == "/api/v1/clusters"
       and (e.get("body") or {}).get("name") == "k1"]
assert reg, "no registration of k1"
for e in reg:
    cfg = e["body"]["config"]
    tls = cfg.get("tlsClientConfig") or {}
    assert tls.get("certData") and tls.get("keyData"), "no client certificate: %s" % sorted(tls)
    assert not cfg.get("bearerToken"), "a bearerToken"
    assert "BEGIN CERTIFICATE" in __import__("base64").b64decode(tls["certData"]).decode(), "certData is no PEM"
ZZPY
t_report $? "k1 is registered with the Secret's certData/keyData, never a bearerToken" "$T/why"
python3 -c 'import json, sys
sys.exit(not any(e["method"] == "POST" and e["path"] == "/api/v1/applications/k1-podinfo/sync" for e in json.load(open(sys.argv[1]))))' "$T/k1.json"
t_report $? "k1's packages synced through that registration"
# its client certificate near its NotAfter: from 30 days before it (by the local clock), registered again once
# Cluster API has rotated the Secret
kemu_post capi '{"cluster": "k1", "namespace": "fleet", "client_cert_days": 20, "rotate_kubeconfig": true}'
t_ok "up --refresh registers k1's rotated certificate (20 days left)" idpmake up --refresh
save k1-20d
t_grep "saying that Cluster API has not rotated it yet" "cluster 'k1': the client certificate of Secret fleet/k1-kubeconfig expires on 20[0-9-]* [0-9:]* UTC: Cluster API has not rotated it yet" "$OUTPUT"
n=$(nargo)
t_ok "plain up, the Secret not rotated since" idpmake up
save k1-wait
t_grep "says the certificate expires and the Secret is not rotated" "k1:register: the client certificate registered expires on 20[0-9-]* [0-9:]* UTC, and Cluster API has not rotated the kubeconfig Secret yet" "$OUTPUT"
t_nogrep "and registers nothing (the same certificate)" '^POST /api/v1/clusters' <(since "$n")
kemu_post capi '{"cluster": "k1", "namespace": "fleet", "client_cert_days": 365, "rotate_kubeconfig": true}'
t_ok "plan, once Cluster API has rotated it" idpmake plan
t_grep "plan: k1:register runs, the notAfter within 30 days and the Secret rotated" "k1:register.*expires on 20[0-9-]* [0-9:]* UTC \(30 days or less\) and the kubeconfig Secret was rotated" "$OUTPUT"
n=$(nargo)
t_ok "plain up (no --refresh)" idpmake up
save k1-renew
since_json "$n" "$T/k1.json"
python3 - "$T/k1.json" "$(kget get secret -n fleet k1-kubeconfig -o jsonpath='{.data.value}' | base64 -d |
	sed -n 's/^ *client-certificate-data: *//p')" >"$T/why" 2>&1 <<'ZZPY2'
import json, sys
reg = [e for e in json.load(open(sys.argv[1])) if e["method"] == "POST" and e["path"] == "/api/v1/clusters"
       and (e.get("body") or {}).get("name") == "k1"]
assert reg, "k1 was not registered again"
assert reg[-1]["body"]["config"]["tlsClientConfig"]["certData"] == sys.argv[2], "not the Secret's new certificate"
ZZPY2
t_report $? "registers k1 again, with the Secret's new certificate" "$T/why"
n=$(nargo)
t_ok "then up" idpmake up
t_nogrep "is a no-op for k1 (its certificate has 365 days)" '^POST /api/v1/clusters' <(since "$n")
t_nogrep "with nothing to say of it" 'k1.*(expires|expired)' "$OUTPUT"

# ---- 4. deleted out of band --------------------------------------------------
remember_secrets
uid0=$(kcapi | python3 -c 'import json,sys; print(json.load(sys.stdin)["clusters"]["fleet/f1"]["uid"])')
srv0=$(kcapi | python3 -c 'import json,sys; print(json.load(sys.stdin)["clusters"]["fleet/f1"]["server"])')
kemu_post capi '{"cluster": "f1", "namespace": "fleet", "delete_out_of_band": true}'
t_fail "set-up: f1's Cluster is gone" kget get clusters.cluster.x-k8s.io -n fleet f1
n=$(nargo)
k=$(nkube)
t_ok "plain up after f1 went out of band" idpmake up
save f1-oob-plain
since "$n" >"$T/oob.req"
t_eq "it made no request to Argo CD" "" "$(cat "$T/oob.req")"
t_eq "nor to the clusters" "$k" "$(nkube)"
n=$(nargo)
t_ok "up --refresh makes f1 again" idpmake up --refresh
save f1-oob-refresh
since_json "$n" "$T/oob.json"
uid1=$(kcapi | python3 -c 'import json,sys; c=json.load(sys.stdin)["clusters"]["fleet/f1"]; print(c.get("uid", ""), c.get("step", ""))')
case $uid1 in "$uid0"*|" "*) st=1 ;; *" provisioned") st=0 ;; *) st=1 ;; esac
echo "before: $uid0; now: $uid1" >"$T/why"
t_report $st "a new Cluster f1 (new uid) was provisioned" "$T/why"
python3 - "$T/oob.json" >"$T/why" 2>&1 <<'ZZPY'
import json, sys
log = json.load(open(sys.argv[1]))
posts = [e["path"] for e in log if e["method"] == "POST"]
print("POSTs: %s" % posts)
def at(p):
    return posts.index(p)
s = at("/api/v1/applications/mgmt-cluster-f1/sync")
r = next(i for i, e in enumerate(e for e in log if e["method"] == "POST") if e["path"] == "/api/v1/clusters"
         and (e.get("body") or {}).get("name") == "f1")
assert s < r, "the Cluster synced before the registration"
assert r < at("/api/v1/applications/f1-calico/sync") < at("/api/v1/applications/f1-podinfo/sync"), "registered, then calico, podinfo"
ZZPY
t_report $? "mgmt/cluster-f1 re-synced, f1 registered again, then calico and podinfo synced again" "$T/why"
# made again, f1 has a new endpoint: Argo CD keeps one entry of the name, at the new server (issue 33 #7)
srv1=$(kcapi | python3 -c 'import json,sys; print(json.load(sys.stdin)["clusters"]["fleet/f1"]["server"])')
argo /api/v1/clusters | python3 -c 'import json,sys
got = [c["server"] for c in json.load(sys.stdin)["items"] if c.get("name") == "f1"]
print("entries named f1: %s (the new server: %s; before: %s)" % (got, sys.argv[1], sys.argv[2]))
sys.exit(got != [sys.argv[1]] or sys.argv[1] == sys.argv[2])' "$srv1" "$srv0" >"$T/why" 2>&1
t_report $? "Argo CD has one entry named f1, at its new endpoint (the old one removed)" "$T/why"
k=$(nkube)
n=$(nargo)
t_ok "the next up is a no-op" idpmake up
save f1-noop
since "$n" >"$T/noop.req"
{ echo "requests:"; cat "$T/noop.req"; echo "its output:"; cat "$OUTPUT"; } >"$T/why"
[ ! -s "$T/noop.req" ]
t_report $? "no request to Argo CD (f1's package syncs recorded for its new incarnation)" "$T/why"
t_eq "nor to the clusters" "$k" "$(nkube)"

# ---- 5. management cluster unreachable ---------------------------------------
remember_secrets
dedit add u1
kemu_post capi '{"unreachable": true}'
t_fail "up with mgmt unreachable fails" idpmake up
save u1-unreachable
grep '^FAILED\|^not run\|^error' "$OUTPUT" | sed 's/^/# u1: /' 
t_grep "it names the management cluster or why" "management cluster 'mgmt' unreachable|mgmt.*(unreachable|connection|EOF|refused|reset)" "$OUTPUT"
kemu_post capi '{"unreachable": false}'
t_ok "with mgmt back, up makes u1" idpmake up
save u1-back
t_ok "u1 is registered" argo "/api/v1/clusters/u1?id.type=name"
# u2: mgmt fails once the Cluster is synced: every read of the Secret u2-kubeconfig is a 503
# (unreachable from provision on cannot be timed: provision passes at its first read)
dedit add u2
kemu_post fault '{"fail": 1000, "status": 503, "message": "the management cluster is down", "path_regex": "/secrets/u2-kubeconfig"}'
t_fail "up with mgmt failing u2's Secret read fails" timeout -k 5 120 "$IDPMAKE" up
save u2-unreachable
[ "$t_status" != 124 ] && [ "$t_status" != 137 ]
t_report $? "that up ends by itself (not killed by timeout 120)" "$OUTPUT"
grep '^FAILED\|^not run\|^error' "$OUTPUT" | sed 's/^/# u2: /'
t_grep "u2's register fails" 'FAILED: u2:register' "$OUTPUT"
t_grep "naming the management cluster" "FAILED: u2:register:.*management cluster 'mgmt'" "$OUTPUT"
t_grep "and why" "FAILED: u2:register:.*the management cluster is down" "$OUTPUT"
t_grep "u2's packages not run" 'not run: u2/podinfo' "$OUTPUT"
kemu_post reset '{}'
t_ok "with mgmt back, up makes u2" idpmake up
save u2-back
t_ok "u2 is registered" argo "/api/v1/clusters/u2?id.type=name"

# ---- 9. no cni ---------------------------------------------------------------
# reported, not judged: spec/capi.md wants a warning (kubeadm without cni) and a
# timeout naming the NotReady nodes; what idpmake says is printed here
dedit add n1 nocni "cni: []"
t_run idpmake validate
echo "# n1 (no cni): validate exit $t_status:"
sed 's/^/#   /' "$OUTPUT" | head -10
t_run idpmake up
save n1
echo "# n1 (no cni, a Deployment): up exit $t_status:"
grep -i 'n1\|notready\|not ready\|warn\|cni\|failed' "$OUTPUT" | sed 's/^/#   /' | head -20
kget get secret -n fleet n1-kubeconfig -o jsonpath='{.data.value}' | base64 -d >"$T/n1.kubeconfig"
echo "# n1's nodes when up ended:"
kget --kubeconfig "$T/n1.kubeconfig" get nodes -o jsonpath='{range .items[*]}{.metadata.name} Ready={.status.conditions[0].status}{"\n"}{end}' 2>&1 | sed 's/^/#   /'
rm -f "$T/n1.kubeconfig"
t_ok "n1: up ends (exit 0 or 1, within its timeout)" test "$t_status" = 0 -o "$t_status" = 1

# ---- 10. secrets ---------------------------------------------------------------
remember_secrets
check_secrets
t_done
