#!/bin/bash
# A created cluster has an owner (issue 35 #1, #5, #8), against kube-emu --capi and the
# Argo CD emulator's live clusters (set-up: capi-faults.sh):
#   o1  distro A (capi-faults) makes it; distro B (intruder: its own git path and
#       Application names) declares the same name on the same management cluster
#       and namespace with 2 workers: refused before anything of o1 changes (its
#       Cluster, its registration, no argocd-manager); up --prune --delete-clusters
#       of B deletes nothing of A's; up --adopt takes it over, saying so; A takes
#       it back, and B's prune of it is refused; a distro of A's name pushing
#       elsewhere is refused even with no tracking annotation on the Cluster, and
#       so is another distro's plain package that renders o1's Cluster;
#   o2  its kubeconfig Secret names o3's server: not registered (the Cluster's
#       controlPlaneEndpoint is not that server); with the endpoint made to match
#       too, Argo CD's entry of that server, named o3, is not renamed;
#   o3  Argo CD loses its registration: up --refresh registers it again.
# shellcheck source=tests/e2e/capi-faults.sh
. "$(dirname "$0")/capi-faults.sh"

# replicas of md-0 of Cluster fleet/NAME
md0() { kget get clusters.cluster.x-k8s.io -n fleet "$1" -o jsonpath='{.spec.topology.workers.machineDeployments[0].replicas}'; }
label() { kget get clusters.cluster.x-k8s.io -n fleet "$1" -o jsonpath='{.metadata.labels.idpmake\.io/distro}'; }
# the name and distro annotation of Argo CD's entry for cluster NAME (by name), "NAME DISTRO SERVER"
entry() { argo "/api/v1/clusters/$1?id.type=name" | python3 -c 'import json,sys
c = json.load(sys.stdin); print(c["name"], c.get("annotations", {}).get("idpmake.io/distro"), c["server"])'; }
# the names of Argo CD's entries at SERVER
names_at() { argo /api/v1/clusters | python3 -c 'import json,sys
print(" ".join(sorted(c["name"] for c in json.load(sys.stdin)["items"] if c["server"].rstrip("/") == sys.argv[1].rstrip("/"))))' "$1"; }
# the requests idpmake made to the clusters' faces that write argocd-manager, after the first N of kube-emu's log
kreq() { curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(len(json.load(sys.stdin)))'; }
sa_writes() { curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(len([e for e in json.load(sys.stdin)[int(sys.argv[1]):] if e["method"] != "GET" and "argocd-manager" in e["path"]]))' "$1"; }

dedit add o1
dedit add o3
t_ok "distro A makes o1 and o3 (within 180 s)" idpmake up -j 4
save a-create
remember_secrets
t_eq "o1 has 1 worker" 1 "$(md0 o1)"
t_eq "o1's Cluster is distro A's" capi-faults "$(label o1)"
t_eq "Argo CD's o1 is A's" capi-faults "$(entry o1 | cut -d' ' -f2)"
a_entry=$(entry o1)

# ---- o1: distro B declares the same cluster --------------------------------------
mkdir -p "$T/b" && cp -R packages "$T/b/packages" || t_bail "cannot copy the packages"
sed -e 's/^name: capi-faults$/name: intruder/' \
    -e "s|^git: {remote: \"\\(.*\\)\"}$|git: {remote: \"\\1\", path: \"b/\${cluster}/\${package}\"}|" \
    -e "s|^argocd: {\\(.*\\)}$|argocd: {\\1, app-name: \"b-\${cluster}-\${package}\"}|" \
    distro.yaml >"$T/b/distro.yaml"
python3 - "$T/b/distro.yaml" <<'ZZPY' || t_bail "cannot edit B's distro"
import re, sys
f = sys.argv[1]
s = open(f).read()
s = re.sub(r"\n  o3:\n(    .*\n)+", "\n", s)
s = s.replace("md-0: {class: default-worker, replicas: 1}", "md-0: {class: default-worker, replicas: 2}")
open(f, "w").write(s)
ZZPY
grep -q 'path: "b/' "$T/b/distro.yaml" && grep -q 'name: intruder' "$T/b/distro.yaml"
t_report $? "set-up: B pushes to its own path, under its own name and Application names" "$T/b/distro.yaml"
k0=$(kreq)
n=$(nargo)
t_exit 1 "B's up is refused" idpmake -C "$T/b" up
save b-up
t_grep "naming o1's Cluster and its owner" "cluster 'o1': its Cluster fleet/o1 on 'mgmt' belongs to distro 'capi-faults', not to distro 'intruder'" "$OUTPUT"
t_grep "and the way out" "idpmake up --adopt" "$OUTPUT"
t_eq "o1 still has 1 worker" 1 "$(md0 o1)"
t_eq "o1's Cluster is still A's" capi-faults "$(label o1)"
t_eq "Argo CD's o1 is unchanged" "$a_entry" "$(entry o1)"
t_eq "no argocd-manager was written by B" 0 "$(sa_writes "$k0")"
since "$n" >"$T/b.req"
t_nogrep "B sent Argo CD no cluster upsert" '^POST /api/v1/clusters' "$T/b.req"
t_nogrep "nor synced o1's Cluster" '^POST /api/v1/applications/b-mgmt-cluster-o1/sync' "$T/b.req"

# B drops it again, and prunes with --delete-clusters: A's cluster stays
python3 - "$T/b/distro.yaml" <<'ZZPY' || t_bail "cannot edit B's distro"
import re, sys
f = sys.argv[1]
s = open(f).read()
s = re.sub(r"\n  o1:\n(    .*\n)+", "\n", s)
open(f, "w").write(s)
ZZPY
t_run idpmake -C "$T/b" up --prune --delete-clusters
save b-prune
echo "# B's up --prune --delete-clusters exited $t_status"
t_ok "o1's Cluster is still there" kget get clusters.cluster.x-k8s.io -n fleet o1
t_eq "and still A's" capi-faults "$(label o1)"
t_eq "Argo CD's o1 is still A's" "$a_entry" "$(entry o1)"

# B declares it again and takes it over on purpose
cp "$T/b/distro.yaml" "$T/b/distro.yaml.noo1"
python3 - "$T/b/distro.yaml" <<'ZZPY' || t_bail "cannot edit B's distro"
import sys
f = sys.argv[1]
s = open(f).read()
block = ("  o1:\n    profiles: [workload]\n    create:\n      management: mgmt\n      namespace: fleet\n"
         "      class: {package: capi-classes, name: quick-start}\n      version: v1.33.2\n"
         "      control-plane: {replicas: 1}\n      workers: {md-0: {class: default-worker, replicas: 2}}\n"
         "      vars: {imageRepository: registry.k8s.io}\n      cni: [calico]\n      timeout: 60\n")
s = s.replace("\nprofiles:\n", "\n" + block + "profiles:\n", 1)
open(f, "w").write(s)
ZZPY
t_ok "B's up --adopt takes o1 over" idpmake -C "$T/b" up --adopt
save b-adopt
t_grep "saying so" "adopted \(--adopt\) the Cluster fleet/o1 of distro 'capi-faults'" "$OUTPUT"
t_eq "o1's Cluster is B's now" intruder "$(label o1)"
t_wait_for 30 sh -c '[ "$(kubectl --request-timeout=10s get clusters.cluster.x-k8s.io -n fleet o1 -o jsonpath="{.spec.topology.workers.machineDeployments[0].replicas}")" = 2 ]'
t_report $? "with 2 workers"
t_eq "Argo CD's o1 is B's" intruder "$(entry o1 | cut -d' ' -f2)"

# A takes it back on purpose; B, dropping it, then never deletes A's cluster
# (A's own record says its Cluster is synced: it syncs again once it forgets that)
t_ok "set-up: A forgets its sync of o1's Cluster" idpmake forget mgmt/cluster-o1:sync
t_ok "A's up --adopt takes o1 back" idpmake up --adopt
save a-adopt
t_eq "o1's Cluster is A's again" capi-faults "$(label o1)"
cp "$T/b/distro.yaml.noo1" "$T/b/distro.yaml"
t_exit 1 "B's up --prune --delete-clusters with o1 dropped is refused" idpmake -C "$T/b" up --prune --delete-clusters
save b-prune2
t_grep "naming its owner, deleting nothing" "cluster 'o1': its Cluster fleet/o1 on 'mgmt' belongs to distro 'capi-faults', not to distro 'intruder': not deleted" "$OUTPUT"
t_ok "o1's Cluster is still there" kget get clusters.cluster.x-k8s.io -n fleet o1
t_eq "and A's" capi-faults "$(label o1)"

# a same-named distro (its own git path and Application names), with Argo CD's tracking
# annotation gone from the Cluster (label tracking, as Argo CD 2.x): still another owner
mkdir -p "$T/c" && cp -R packages "$T/c/packages" || t_bail "cannot copy the packages"
sed -e "s|^git: {remote: \"\\(.*\\)\"}$|git: {remote: \"\\1\", path: \"c/\${cluster}/\${package}\"}|" \
    -e "s|^argocd: {\\(.*\\)}$|argocd: {\\1, app-name: \"c-\${cluster}-\${package}\"}|" \
    -e 's/md-0: {class: default-worker, replicas: 1}/md-0: {class: default-worker, replicas: 3}/' \
    distro.yaml >"$T/c/distro.yaml"
grep -q 'path: "c/' "$T/c/distro.yaml" && grep -q '^name: capi-faults$' "$T/c/distro.yaml"
t_report $? "set-up: C is named as A, pushes to its own path, under its own Application names" "$T/c/distro.yaml"
kget annotate clusters.cluster.x-k8s.io -n fleet o1 argocd.argoproj.io/tracking-id- >/dev/null
t_report $? "set-up: o1's tracking annotation removed"
t_exit 1 "the same-named distro's up is refused" idpmake -C "$T/c" up
save c-up
t_grep "naming it as a same-named distro pushing elsewhere" "belongs to distro 'capi-faults' pushing elsewhere \(a same-named distro" "$OUTPUT"
t_eq "o1 still has 1 worker" 1 "$(md0 o1)"
# and with no home on the Cluster either (as an older idpmake made it): only a state that synced it owns it
kget annotate clusters.cluster.x-k8s.io -n fleet o1 idpmake.io/home- >/dev/null
t_report $? "set-up: o1's idpmake.io/home removed"
t_exit 1 "the same-named distro's up is still refused" idpmake -C "$T/c" up
save c-up2
t_grep "which never synced it" "marked by an idpmake that did not record where it pushes, and never synced by this state" "$OUTPUT"
t_eq "o1 still has 1 worker" 1 "$(md0 o1)"

# a plain package of another distro rendering o1's Cluster (raw Cluster API objects): refused too
mkdir -p "$T/p/packages/raw" || t_bail "mkdir"
kget get clusters.cluster.x-k8s.io -n fleet o1 -o json | python3 -c 'import json, sys
c = json.load(sys.stdin)
c["metadata"] = {"name": c["metadata"]["name"], "namespace": c["metadata"]["namespace"]}
c.pop("status", None)
c["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 5
json.dump(c, sys.stdout)
print("\n---")
c["metadata"]["namespace"] = "decoy"	# a namesake elsewhere: the files become NS.cluster.o1.yaml
json.dump(c, sys.stdout)' >"$T/p/packages/raw/cluster.yaml"
t_report $? "set-up: a package holding o1's Cluster with 5 workers (and one of its name in another namespace)"
cat >"$T/p/distro.yaml" <<EOF
idpmake: 1
name: plain
git: {remote: "$bare", path: "p/\${cluster}/\${package}"}
argocd: {repo-url: "file://$bare", app-name: "p-\${cluster}-\${package}"}
clusters:
  mgmt:
    server: https://kubernetes.default.svc
    kube-context: mgmt
    profiles: [management]
profiles:
  management: [raw]
packages:
  raw: {type: manifests, path: packages/raw, namespace: fleet}
EOF
t_exit 1 "another distro's plain package with o1's Cluster is refused" idpmake -C "$T/p" up
save p-up
t_grep "naming the Cluster and its owner" "its render holds the Cluster API Cluster fleet/o1, which on 'mgmt' belongs to distro 'capi-faults'" "$OUTPUT"
t_eq "o1 still has 1 worker" 1 "$(md0 o1)"

# ---- o2: a kubeconfig Secret naming another cluster's server ------------------
dedit add o2
t_ok "A makes o2" idpmake up
save a-o2
remember_secrets
o3_server=$(entry o3 | cut -d' ' -f3)
o2_server=$(entry o2 | cut -d' ' -f3)
[ -n "$o3_server" ] && [ "$o3_server" != "$o2_server" ]
t_report $? "set-up: o2 and o3 have servers of their own ($o2_server, $o3_server)"
# o2's Secret made a copy of o3's kubeconfig (its server and credentials), then o2 registered again
kget get secret -n fleet o3-kubeconfig -o jsonpath='{.data.value}' >"$T/o3-value" &&
kget get secret -n fleet o2-kubeconfig -o json | python3 -c 'import json, sys
s = json.load(sys.stdin)
s["data"]["value"] = open(sys.argv[1]).read().strip()
for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
    s["metadata"].pop(k, None)
json.dump(s, sys.stdout)' "$T/o3-value" >"$T/o2-secret.json" && kget apply -f "$T/o2-secret.json" >/dev/null
t_report $? "set-up: o2's Secret holds o3's kubeconfig"
rm -f "$T/o3-value" "$T/o2-secret.json"
k0=$(kreq)
t_ok "set-up: o2's registration forgotten" idpmake forget o2:register
t_exit 1 "o2's registration is refused" idpmake up
save o2-secret
t_grep "naming the Secret, its server and the Cluster's endpoint" "Secret fleet/o2-kubeconfig names the server $o3_server, which is not the Cluster's spec.controlPlaneEndpoint" "$OUTPUT"
t_eq "Argo CD's entry at o3's server is still o3 alone" o3 "$(names_at "$o3_server")"
t_eq "and o2's is still o2" o2 "$(names_at "$o2_server")"
t_eq "no argocd-manager was written on o3 for o2" 0 "$(sa_writes "$k0")"
# the Cluster's endpoint made to match too (as a Secret and endpoint both wrong would): Argo CD decides
port=${o3_server##*:}
port=${port%%/*}
kget patch clusters.cluster.x-k8s.io -n fleet o2 --type merge -p "{\"spec\": {\"controlPlaneEndpoint\": {\"host\": \"127.0.0.1\", \"port\": $port}}}" >/dev/null
t_report $? "set-up: o2's controlPlaneEndpoint is o3's"
t_exit 1 "o2 is still not registered over o3's entry" idpmake up
save o2-endpoint
t_grep "naming the entry Argo CD has there" "Argo CD has the server $o3_server registered as cluster 'o3': cluster 'o2' is not registered over it" "$OUTPUT"
t_eq "Argo CD's entry at o3's server is still o3" o3 "$(names_at "$o3_server")"

# ---- o3: Argo CD loses the registration: --refresh registers it again -----------
dedit del o2
dedit del o1	# B's since --adopt: A's sync of it would be refused (and is: above)
kemu_post capi '{"cluster": "o2", "namespace": "fleet", "delete_out_of_band": true}' >/dev/null
t_run idpmake forget o2:register o2:provision
curl -sS -m 10 -X DELETE -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" -w ' %{http_code}' "http://$ARGOCD_SERVER/api/v1/clusters/o3?id.type=name" >"$T/del.out" 2>&1
grep -q ' 200$' "$T/del.out"
t_report $? "set-up: Argo CD lost o3" "$T/del.out"
t_fail "set-up: Argo CD has no o3" argo "/api/v1/clusters/o3?id.type=name"
t_ok "plan --refresh" idpmake plan --refresh
t_grep "names o3's registration, and why" "o3:register.*Argo CD no longer has cluster 'o3'" "$OUTPUT"
t_ok "up --refresh registers o3 again" idpmake up --refresh
save o3-refresh
t_eq "Argo CD has o3 again, A's" "o3 capi-faults $o3_server" "$(entry o3)"
t_nogrep "without asking for a server: the cluster cannot have" "give it server: and register:" "$OUTPUT"

remember_secrets
check_secrets
t_done
