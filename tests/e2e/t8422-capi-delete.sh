#!/bin/bash
# Deleting clusters made through Cluster API, partially (issue 23; notes/capi.md §8.6),
# against kube-emu --capi and the Argo CD emulator's live clusters (set-up:
# capi-faults.sh), one cluster a case:
#   d1  plain up --prune with it removed: exit 1, nothing deleted; then CAPI stuck
#       (stuck_delete): up --prune --delete-clusters times out naming the message,
#       the folder stays; once unstuck the next run finishes without deleting the
#       Applications again, and the folder goes;
#   d2  kill -9 while the deletion waits for the Cluster: the next run finishes it;
#   d3  Argo CD's tree shows no Cluster: not "gone" (kubectl finds it), nothing deleted;
#       Argo CD 3.x's RBAC refuses the Cluster's deletion (delete/GROUP/KIND/NS/NAME): the
#       error names the permission;
#   and no kubeconfig or argocd-manager token in any output or in .idpmake.
# shellcheck source=tests/e2e/capi-faults.sh
. "$(dirname "$0")/capi-faults.sh"

dedit add d1 workload "delete-timeout: 15"	# recorded by its provision, read once it is gone
dedit add d2
dedit add d3
t_ok "up -j 4 makes d1, d2 and d3 (within 120 s)" timeout -k 5 120 "$IDPMAKE" up -j 4
save create
if [ "$t_status" != 0 ]; then
	echo "# up -j 4 exited $t_status (124 or 137: hung, killed at 120 s); the cases below go on after a plain up"
	t_ok "up (-j 1) makes d1, d2 and d3" idpmake up
	save create-j1
fi
remember_secrets
in_git() { git --git-dir="$bare" cat-file -e "main:mgmt/cluster-$1"; }
t_ok "set-up: the folder mgmt/cluster-d1 is in git" in_git d1

# ---- 8. plain --prune ----------------------------------------------------------
dedit del d1
n=$(nargo)
commits=$(git --git-dir="$bare" rev-list --count main)
t_exit 1 "up --prune with d1 removed exits 1" idpmake up --prune
save prune
t_grep "naming d1" "cluster 'd1' was made through Cluster API .*--delete-clusters" "$OUTPUT"
t_ok "d1's Cluster is still on mgmt" kget get clusters.cluster.x-k8s.io -n fleet d1
t_ok "its Application d1-calico is still in Argo CD" argo /api/v1/applications/d1-calico
t_ok "and d1-podinfo" argo /api/v1/applications/d1-podinfo
t_ok "and mgmt-cluster-d1" argo /api/v1/applications/mgmt-cluster-d1
t_ok "d1 is still registered" argo "/api/v1/clusters/d1?id.type=name"
t_ok "the folder mgmt/cluster-d1 is still in git" in_git d1
# d1 and d2 share _shared/calico and _shared/podinfo: d1's Applications must keep their source
for app in d1-calico d1-podinfo; do
	path=$(argo "/api/v1/applications/$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["source"]["path"])')
	t_ok "$app's source path '$path' is still in git" git --git-dir="$bare" cat-file -e "main:$path"
done
echo "# commits pushed by the refused up --prune:"
git --git-dir="$bare" log --format='%h %s' --stat "main~$(($(git --git-dir="$bare" rev-list --count main) - commits))..main" 2>/dev/null | sed 's/^/#   /'
since "$n" >"$T/prune.req"
t_nogrep "no DELETE to Argo CD" '^DELETE ' "$T/prune.req"

# ---- 6. CAPI stuck deleting -------------------------------------------------------
kemu_post capi '{"cluster": "d1", "namespace": "fleet", "stuck_delete": "DependencyViolation: the VPC has dependencies"}'
# d1's create.delete-timeout (15 s), as its provision recorded it: long enough for a read of
# the Cluster's status under load, so that the message names what it saw
t0=$(date +%s)
t_exit 1 "up --prune --delete-clusters with d1's deletion stuck exits 1" idpmake up --prune --delete-clusters
save stuck
echo "# took $(($(date +%s) - t0)) s"
grep '^FAILED\|^not run\|^error\|d1' "$OUTPUT" | sed 's/^/# d1: /'
t_grep "naming CAPI's message" 'DependencyViolation.*the VPC has dependencies|the VPC has dependencies' "$OUTPUT"
t_grep "and the timeout, create.delete-timeout of the cluster gone from the distro" 'timed out after 15 s' "$OUTPUT"
t_nogrep "without blaming Argo CD, which answered throughout" 'cannot reach Argo CD' "$OUTPUT"
t_grep "d1's Applications were deleted" "deleted Application 'd1-calico'" "$OUTPUT"
t_fail "d1-calico is gone from Argo CD" argo /api/v1/applications/d1-calico
t_fail "d1-podinfo too" argo /api/v1/applications/d1-podinfo
t_ok "the Cluster d1 is still there (deleting)" kget get clusters.cluster.x-k8s.io -n fleet d1
t_ok "the folder mgmt/cluster-d1 is still in git" in_git d1
t_run idpmake status
echo "# status after the stuck deletion (exit $t_status):"
grep 'd1' "$OUTPUT" | sed 's/^/#   /' | head -10
kemu_post reset '{}'
t_wait_for 20 sh -c "! kubectl --request-timeout=10s get clusters.cluster.x-k8s.io -n fleet d1 >/dev/null 2>&1"
t_report $? "set-up: unstuck, CAPI finishes deleting d1"
n=$(nargo)
t_ok "the next up --prune --delete-clusters finishes" idpmake up --prune --delete-clusters
save unstuck
since "$n" >"$T/unstuck.req"
sed 's/^/# d1 second run: /' "$T/unstuck.req" | grep -v ' GET ' | head -20
t_nogrep "it does not delete d1's Applications again" '^DELETE /api/v1/applications/d1-' "$T/unstuck.req"
t_nogrep "nor unregisters d1 again" '^DELETE /api/v1/clusters/' "$T/unstuck.req"
# the folder goes with the next push (idpmake(1) --delete-clusters: not in the destroying run yet)
t_ok "the folder mgmt/cluster-d1 stays until the next push" in_git d1
t_fail "mgmt-cluster-d1 is gone from Argo CD" argo /api/v1/applications/mgmt-cluster-d1
if in_git d1; then
	t_ok "a third up --prune --delete-clusters" idpmake up --prune --delete-clusters
	save third
	t_fail "removes the folder mgmt/cluster-d1 (as t8420's last step)" in_git d1
fi
t_ok "d2 is untouched" kget get clusters.cluster.x-k8s.io -n fleet d2

# ---- 7. kill -9 while the deletion waits ----------------------------------------
kemu_post capi '{"cluster": "d2", "namespace": "fleet", "stuck_delete": "DependencyViolation: still attached"}'
dedit del d2
IDPMAKE_CAPI_DELETE_TIMEOUT=60 "$IDPMAKE" up --prune --delete-clusters >"$T/kill.out" 2>&1 &
pid=$!
t_wait_for 30 grep -q "deleted Application 'd2-calico'" "$T/kill.out"
t_report $? "set-up: the Applications of d2 were deleted" "$T/kill.out"
# shellcheck disable=SC2317 # called through t_wait_for
capi_deleting() { kcapi | python3 -c 'import json,sys; sys.exit(not json.load(sys.stdin)["clusters"]["fleet/d2"].get("deleting"))'; }
t_wait_for 30 capi_deleting
t_report $? "set-up: the Cluster d2 is being deleted" "$T/kill.out"
sleep 0.5
kill -0 "$pid" 2>/dev/null
t_report $? "set-up: up is still waiting for the Cluster to go" "$T/kill.out"
kill -9 "$pid"
wait "$pid" 2>/dev/null
cp "$T/kill.out" "$T/out.kill"
sed 's/^/# killed run: /' "$T/kill.out" | tail -8
kemu_post reset '{}'
n=$(nargo)
t_ok "the run after kill -9 finishes the deletion" idpmake up --prune --delete-clusters
save after-kill
since "$n" >"$T/kill.req"
sed 's/^/# d2 after kill: /' "$T/kill.req" | grep -v ' GET ' | head -20
t_fail "the Cluster d2 is gone" kget get clusters.cluster.x-k8s.io -n fleet d2
t_fail "d2 is no longer registered" argo "/api/v1/clusters/d2?id.type=name"
t_fail "mgmt-cluster-d2 is gone from Argo CD" argo /api/v1/applications/mgmt-cluster-d2
t_ok "the folder mgmt/cluster-d2 stays until the next push" in_git d2
if in_git d2; then
	t_ok "another up --prune --delete-clusters" idpmake up --prune --delete-clusters
	save another
	t_fail "removes the folder mgmt/cluster-d2" in_git d2
fi
t_nogrep "d2's Applications were not deleted again" '^DELETE /api/v1/applications/d2-' "$T/kill.req"
n=$(nargo)
t_ok "then up is a no-op" idpmake up --prune --delete-clusters
since "$n" | grep -v '^GET ' >"$T/noop.req"
t_eq "that writes nothing to Argo CD" "" "$(cat "$T/noop.req")"

# ---- 10. secrets -------------------------------------------------------------------
# ---- 8. Argo CD's resource tree without the Cluster (its cache behind) -------------
dedit del d3
emu_post fault '{"path_regex": "/applications/mgmt-cluster-d3/resource-tree$", "status": 200, "count": 1,
	"body": "{\"nodes\": []}", "content_type": "application/json"}'
t_exit 1 "d3's tree shows no Cluster: not taken as gone" idpmake up --prune --delete-clusters
save d3-tree
t_grep "says so, and that the management cluster still has it" "cluster 'd3': Argo CD's resource tree of Application 'mgmt-cluster-d3' shows no Cluster 'd3', yet the Cluster fleet/d3 is on 'mgmt': not deleted; run again" "$OUTPUT"
t_ok "its Application is not deleted" argo /api/v1/applications/mgmt-cluster-d3
# Argo CD 3.x checks delete/GROUP/KIND/NS/NAME for a resource's deletion (issue 34 item 8): a role
# with a plain delete is refused; the error names the permission to grant
emu_post config '{"rbac_deny": ["applications, delete/*, *"]}'
t_exit 1 "the Cluster's deletion refused by Argo CD's fine-grained RBAC exits 1" idpmake up --prune --delete-clusters
save d3-rbac
t_grep "naming the permission it needs" "p, ROLE, applications, delete/cluster.x-k8s.io/Cluster/fleet/d3, default/mgmt-cluster-d3, allow" "$OUTPUT"
t_ok "the Cluster d3 is still there" kget get clusters.cluster.x-k8s.io -n fleet d3
emu_post config '{"rbac_deny": []}'
t_ok "the next run deletes d3" idpmake up --prune --delete-clusters
save d3-deleted
t_fail "the Cluster d3 is gone" kget get clusters.cluster.x-k8s.io -n fleet d3

check_secrets
t_done
