#!/bin/bash
# A linked ClusterClass's revisions (issue 23, spec/capi.md "Upgrades and
# linked classes"; render/capiclass.c, run/classplan.c) where t8420 does not
# take them, against the emulators of t8420 and the example's distro:
#   all     a class change every Cluster takes in one run: the old revision's
#           folder goes in the next run (no synced Cluster names it), and the
#           run after is a no-op; a ConfigMap of the class package stays on
#           top, not renamed;
#   forget  the class render forgotten while us-1 lags on its revision: that
#           revision is rendered back from the folder in git, never dropped;
#   fresh   a state folder lost while us-1 lags: a created cluster whose row
#           is not known keeps every revision the folder holds;
#   row     a Cluster synced before the rows existed (its row forgotten):
#           its revision is read from its sync's recorded render;
#   two     two ClusterClasses in the package, one for each Cluster: one
#           revision of both, its folder kept once.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_capi_emulators
kget() { kubectl --request-timeout=10s "$@"; }
cp -R "$top/examples/capi" "$T/capi" || t_bail "cannot copy examples/capi"
rm -rf "$T/capi/.idpmake"
cd "$T/capi" || exit 1
sed -i "s|^name: capi-fleet|name: capi-fleet\ngit: {remote: \"$bare\"}\nargocd: {repo-url: \"file://$bare\"}|" distro.yaml
cat >>packages/capi-classes/quick-start.yaml <<'YAMLEND'
---
apiVersion: v1
kind: ConfigMap
metadata: {name: quick-start-notes}
data: {about: "not a template: it stays where it is"}
YAMLEND
capi_clusterctl_init true
rev_of() { kget get clusters.cluster.x-k8s.io -n fleet "$1" -o jsonpath='{.spec.topology.classRef.name}' | sed 's/^quick-start-//'; }
revs() { git --git-dir="$bare" ls-tree --name-only main mgmt/capi-classes/ | sed -n 's|^mgmt/capi-classes/\([0-9a-f]\{8\}\)$|\1|p' | tr '\n' ' '; }
both() { printf '%s\n' "$@" | sort | tr '\n' ' '; }
bump() { sed -i "s|^spec: {template: {spec: {[^}]*}}}$|spec: {template: {spec: {customImage: kindest/node:$1}}}|" \
	packages/capi-classes/quick-start.yaml; }
fail_us1() { emu_post fault '{"path_regex": "/applications/mgmt-cluster-us-1/sync$", "status": 500, "count": 100, "message": "sync refused by the test"}'; }
nargo() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

kget create namespace fleet >/dev/null || t_bail "cannot create the namespace fleet"
t_ok "validate --live before anything is made (a state that knows no folder)" idpmake validate --live
t_grep "the class revision accepted" "mgmt/capi-classes:render: [0-9]+ objects accepted by 'mgmt'" "$OUTPUT"
t_ok "plan too" idpmake plan
t_ok "up makes both clusters" idpmake up -j 4
h1=$(rev_of eu-1)
t_ok "the ConfigMap stays on the folder's top, under its own name" \
	git --git-dir="$bare" cat-file -e main:mgmt/capi-classes/configmap.quick-start-notes.yaml
t_fail "not in the revision" git --git-dir="$bare" cat-file -e "main:mgmt/capi-classes/$h1/configmap.quick-start-notes-$h1.yaml"

# ---- all: every Cluster moves in one run ------------------------------------------
bump v1.33.1
t_ok "a class change every Cluster takes" idpmake up
h2=$(rev_of eu-1)
t_ok "eu-1 on a new revision" test -n "$h2" -a "$h2" != "$h1"
t_eq "us-1 on it too" "$h2" "$(rev_of us-1)"
t_eq "the old one stays for this run (the Clusters named it when it began)" "$(both "$h1" "$h2")" "$(revs)"
t_ok "plan" idpmake plan
t_grep "plan: the class renders again, saying why" "mgmt/capi-classes:render.*class revision $h1 is named by no synced Cluster any more" "$OUTPUT"
t_ok "the next up" idpmake up
t_eq "drops it" "$h2 " "$(revs)"
t_fail "and its ClusterClass (the class's sync prunes)" kget get clusterclasses.cluster.x-k8s.io -n fleet "quick-start-$h1"
n=$(nargo)
t_ok "the run after" idpmake up
t_eq "asks Argo CD nothing" "$n" "$(nargo)"

# ---- forget: the class render forgotten while us-1 lags ---------------------------
bump v1.33.3
fail_us1
t_exit 1 "a class change; us-1's sync fails" idpmake up
h3=$(rev_of eu-1)
t_eq "us-1 lags on the old revision" "$h2" "$(rev_of us-1)"
t_ok "forget the class render" idpmake forget mgmt/capi-classes:render
t_exit 1 "up, us-1 still failing" idpmake up
t_eq "us-1's revision is still in the folder" "$(both "$h2" "$h3")" "$(revs)"
t_ok "its ClusterClass is still live" kget get clusterclasses.cluster.x-k8s.io -n fleet "quick-start-$h2"
t_ok "its templates too" kget get kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io -n fleet \
	"quick-start-control-plane-$h2"
emu_reset
t_ok "up, us-1's sync let through" idpmake up
t_eq "us-1 moves" "$h3" "$(rev_of us-1)"

# ---- fresh: a lost state folder while us-1 lags -----------------------------------
bump v1.33.4
fail_us1
t_exit 1 "a class change; us-1's sync fails" idpmake up
h4=$(rev_of eu-1)
t_eq "us-1 lags" "$h3" "$(rev_of us-1)"
mv .idpmake "$T/state.lost"
t_exit 1 "up with a new state folder, us-1 still failing" idpmake up
t_eq "every revision the folder held stays" "$(both "$h3" "$h4")" "$(revs)"
t_ok "us-1's ClusterClass is still live" kget get clusterclasses.cluster.x-k8s.io -n fleet "quick-start-$h3"
emu_reset
t_ok "up, us-1's sync let through" idpmake up
t_eq "us-1 moves" "$h4" "$(rev_of us-1)"

# ---- row: a Cluster synced before the rows existed --------------------------------
t_ok "up" idpmake up
t_eq "one revision left" "$h4 " "$(revs)"
bump v1.33.5
fail_us1
t_exit 1 "a class change; us-1's sync fails" idpmake up
h5=$(rev_of eu-1)
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("DELETE FROM step WHERE id = ?", ("mgmt/cluster-us-1:class",)).rowcount
db.commit()
sys.exit(n != 1)' .idpmake/state.db
t_report $? "us-1's row taken out of the state (as before the rows existed)"
emu_reset
fail_us1
t_exit 1 "up, us-1 still failing" idpmake up
t_eq "its revision, read from its sync's render, stays" "$(both "$h4" "$h5")" "$(revs)"
emu_reset
t_ok "up, us-1's sync let through" idpmake up

# ---- two classes in the package, one a Cluster -------------------------------------
python3 - packages/capi-classes/quick-start.yaml <<'ZZPY3'
import sys
s = open(sys.argv[1]).read()
cc = s[s.index("apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass"):s.index("---")]
open(sys.argv[1], "w").write(s + "---\n" + cc.replace("name: quick-start\n", "name: quick-start-b\n", 1))
ZZPY3
sed -i '/^  us-1:/,/^  [a-z]/ s/name: quick-start}/name: quick-start-b}/' distro.yaml
t_ok "us-1 moves to a second class of the package" idpmake up
h6=$(rev_of eu-1)
t_eq "quick-start-b at the package's revision" "quick-start-b-$h6" \
	"$(kget get clusters.cluster.x-k8s.io -n fleet us-1 -o jsonpath='{.spec.topology.classRef.name}')"
bump v1.33.6
fail_us1
t_exit 1 "a class change; us-1's sync fails" idpmake up
h7=$(rev_of eu-1)
emu_reset
t_ok "up: each revision's folder copied once, whichever classes of it the Clusters name" idpmake up
t_eq "us-1 on quick-start-b's new revision" "quick-start-b-$h7" \
	"$(kget get clusters.cluster.x-k8s.io -n fleet us-1 -o jsonpath='{.spec.topology.classRef.name}')"
t_ok "the next up" idpmake up
t_eq "leaves the one revision both name" "$h7 " "$(revs)"
t_done
