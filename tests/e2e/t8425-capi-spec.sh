#!/bin/bash
# create.spec: a cluster made from a package of raw Cluster API manifests (issue 23
# point 1, spec/capi.md "Format"), against kube-emu --capi and the Argo CD emulator's
# live clusters (set-up: capi-faults.sh):
#   - the package renders per created cluster, with that cluster's ${cluster} and vars,
#     into mgmt/cluster-NAME; its Cluster gets idpmake's labels, sync wave and Prune=false;
#     the template itself goes to no cluster;
#   - provision, register and the packages follow as for a class; a no-op up asks nothing;
#   - an upgrade through the cluster's var, converged; +2 minors refused before the push;
#   - bad specs: located errors (no Cluster NAME, another api, class and spec together);
#   - up --prune --delete-clusters deletes it.
# shellcheck source=tests/e2e/capi-faults.sh
. "$(dirname "$0")/capi-faults.sh"

mkdir -p packages/capi-raw || t_bail "mkdir"
cat >packages/capi-raw/cluster.yaml <<'ZZEND'
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: CLUSTER
  namespace: fleet
spec:
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: CLUSTER-cp}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerCluster, name: CLUSTER}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerCluster
metadata: {name: CLUSTER, namespace: fleet}
spec: {}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: CLUSTER-cp, namespace: fleet}
spec: {replicas: 1, version: K8S}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: CLUSTER-md-0, namespace: fleet}
spec: {clusterName: CLUSTER, replicas: 1, template: {spec: {clusterName: CLUSTER, version: K8S}}}
ZZEND
cat >>distro.yaml <<'ZZEND'
  capi-raw:
    type: manifests
    path: packages/capi-raw
    rewrite:
      - {match: CLUSTER, replace: '${cluster}'}
      - {match: K8S, replace: '${k8s}'}
ZZEND
python3 - distro.yaml <<'ZZPY' || t_bail "cannot edit distro.yaml"
import sys
s = open(sys.argv[1]).read()
s = s.replace("\nprofiles:\n", """
  r1:
    profiles: [workload]
    vars: {k8s: v1.33.2}
    create:
      management: mgmt
      namespace: fleet
      spec: capi-raw
      version: ${k8s}
      cni: [calico]
      timeout: 60
profiles:
""", 1)
open(sys.argv[1], "w").write(s)
ZZPY

# ---- 1. made from the spec package --------------------------------------------
t_ok "up makes r1 from create.spec" idpmake up
save made
t_grep "mgmt/cluster-r1 renders the spec package's four objects" 'mgmt/cluster-r1:render' "$OUTPUT"
t_grep "r1 is provisioned, said in words (issue 32 #8)" \
	'\] provision r1:provision: Cluster provisioned on mgmt \(v1\.33\.2\), uid [0-9a-f-]{8} \(' "$OUTPUT"
t_grep "registered" '\] register r1:register' "$OUTPUT"
t_grep "then its packages" 'r1/podinfo:sync' "$OUTPUT"
t_eq "the KubeadmControlPlane r1-cp has r1's \${k8s}" "v1.33.2" \
	"$(kget get kubeadmcontrolplanes.controlplane.cluster.x-k8s.io -n fleet r1-cp -o jsonpath='{.spec.version}')"
t_eq "the Cluster r1 has the label idpmake.io/cluster" "r1" \
	"$(kget get clusters.cluster.x-k8s.io -n fleet r1 -o jsonpath='{.metadata.labels.idpmake\.io/cluster}')"
t_eq "sync wave 1" "1" \
	"$(kget get clusters.cluster.x-k8s.io -n fleet r1 -o jsonpath='{.metadata.annotations.argocd\.argoproj\.io/sync-wave}')"
t_eq "Prune=false" "Prune=false" \
	"$(kget get clusters.cluster.x-k8s.io -n fleet r1 -o jsonpath='{.metadata.annotations.argocd\.argoproj\.io/sync-options}')"
t_eq "mgmt/cluster-r1 in git holds the four objects" "4" \
	"$(git --git-dir="$bare" ls-tree --name-only main mgmt/cluster-r1/ | grep -c '\.yaml$')"
t_fail "the template goes to no cluster: no folder mgmt/capi-raw" git --git-dir="$bare" cat-file -e main:mgmt/capi-raw
t_fail "nor its Application" argo /api/v1/applications/mgmt-capi-raw
t_ok "r1 is registered in Argo CD" argo "/api/v1/clusters/r1?id.type=name"
t_eq "r1's Machines came from its own MachineDeployment r1-md-0" "1" \
	"$(kget get machines.cluster.x-k8s.io -n fleet -o name | grep -c 'r1-md-0-')"
remember_secrets

# ---- 2. a no-op up asks nothing ------------------------------------------------
n=$(nargo)
t_ok "a second up" idpmake up
t_grep "is a no-op" '0 rendered, nothing pushed, 0 synced' "$OUTPUT"
t_eq "and asks Argo CD nothing" "$n" "$(nargo)"

# ---- 3. upgrade through the cluster's var --------------------------------------
sed -i 's/^    vars: {k8s: v1.33.2}/    vars: {k8s: v1.34.0}/' distro.yaml
t_ok "up with r1's k8s at v1.34.0" idpmake up
save upgrade
t_grep "the provision says the upgrade in words" \
	'\] provision r1:provision: Cluster upgraded from v1\.33\.2 on mgmt \(v1\.34\.0\), uid [0-9a-f-]{8} \(' "$OUTPUT"
t_grep "only the spec re-renders" 'mgmt/cluster-r1:render' "$OUTPUT"
t_grep "provision waits until it has converged" 'r1:provision.*' "$OUTPUT"
t_eq "r1-cp is at v1.34.0" "v1.34.0" \
	"$(kget get kubeadmcontrolplanes.controlplane.cluster.x-k8s.io -n fleet r1-cp -o jsonpath='{.spec.version}')"
t_eq "its Machines too" "v1.34.0" "$(kget get machines.cluster.x-k8s.io -n fleet -o jsonpath='{range .items[*]}{.spec.version}{"\n"}{end}' | sort -u | tr -d '\n')"
sed -i 's/^    vars: {k8s: v1.34.0}/    vars: {k8s: v1.36.0}/' distro.yaml
n=$(git --git-dir="$bare" rev-parse main)
t_exit 1 "two minors at once is refused" idpmake up
t_grep "naming the minor to go to" 'create.version v1.36.0 is 2 minors past the synced v1.34.0.*go to v1.35 first' "$OUTPUT"
t_grep "by the pre-flight" 'pre-flight: 1 problem; nothing was rendered, pushed' "$OUTPUT"
t_eq "nothing pushed" "$n" "$(git --git-dir="$bare" rev-parse main)"
sed -i 's/^    vars: {k8s: v1.36.0}/    vars: {k8s: v1.34.0}/' distro.yaml

# ---- 4. bad specs ----------------------------------------------------------------
cp distro.yaml "$T/distro.good"
sed -i 's/^      spec: capi-raw/      spec: capi-raw\n      class: {package: capi-classes, name: quick-start}/' distro.yaml
t_exit 2 "class and spec together" idpmake validate
t_grep "located" '^distro.yaml:[0-9]+:[0-9]+: error: create has both .class. and .spec.' "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^      spec: capi-raw/      spec: capi-raw\n      workers: {md-0: {class: default-worker}}/' distro.yaml
t_exit 2 "a topology field with spec" idpmake validate
t_grep "is named" '^distro.yaml:[0-9]+:[0-9]+: error: create.workers is a topology field' "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^      spec: capi-raw/      spec: capi-raw\n      api: v1beta1/' distro.yaml
t_exit 1 "a Cluster at another api than create.api" idpmake render -o "$T/out1"
t_grep "names both, in the package's file" 'packages/capi-raw/cluster.yaml:[0-9]+:[0-9]+: error: the Cluster .r1. is cluster.x-k8s.io/v1beta2, and create.api .distro.yaml:[0-9]+. says v1beta1' "$OUTPUT"
t_ok "create.api is in the render's key: plan" idpmake plan
t_grep "renders it again" '^render +mgmt/cluster-r1:render: package spec changed' "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^  management: \[capi-classes\]/  management: [capi-classes, capi-raw]/' distro.yaml
t_exit 2 "the template in a profile" idpmake validate
t_grep "is refused, located" "^distro.yaml:[0-9]+:[0-9]+: error: package 'capi-raw' is a created cluster's create.spec: .*drop it from profile 'management'" "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^      spec: capi-raw/      spec: capi-classes/' distro.yaml
t_exit 2 "a class package as a spec" idpmake validate
t_grep "is refused (it is on mgmt through a profile)" "^distro.yaml:[0-9]+:[0-9]+: error: package 'capi-classes' is a created cluster's create.spec" "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^    vars: {k8s: v1.34.0}/    vars: {k8s: v1.34.0, cp: v1.35.0}/; s/^      - {match: K8S, replace: .*/      - {match: "version: K8S", replace: "version: ${cp}"}/' distro.yaml
t_exit 1 "a KubeadmControlPlane at another version than create.version" idpmake render -o "$T/out3"
t_grep "is refused at its version, naming both" "packages/capi-raw/cluster.yaml:[0-9]+:[0-9]+: error: KubeadmControlPlane 'r1-cp' renders version v1.35.0, and create.version is v1.34.0" "$OUTPUT"
cp "$T/distro.good" distro.yaml
sed -i 's/^  name: CLUSTER$/  name: CLUSTER-x/' packages/capi-raw/cluster.yaml
t_exit 1 "a spec whose Cluster is not \${cluster}" idpmake render -o "$T/out2"
t_grep "is refused, named" "error: create.spec 'capi-raw' .distro.yaml:[0-9]+. renders Cluster 'r1-x'" "$OUTPUT"
sed -i 's/^  name: CLUSTER-x$/  name: CLUSTER/' packages/capi-raw/cluster.yaml
t_ok "fixed: a no-op plan" idpmake plan

# ---- 5. deleted in order ---------------------------------------------------------
python3 - distro.yaml <<'ZZPY' || t_bail "cannot edit distro.yaml"
import re, sys
s = open(sys.argv[1]).read()
s2 = re.sub(r"\n  r1:\n(    .*\n)+", "\n", s)
assert s2 != s
open(sys.argv[1], "w").write(s2)
ZZPY
t_ok "up --prune --delete-clusters" idpmake up --prune --delete-clusters
save deleted
t_grep "deletes r1" "deleting cluster 'r1'" "$OUTPUT"
t_fail "the Cluster r1 is gone" kget get clusters.cluster.x-k8s.io -n fleet r1
t_fail "its Application too" argo /api/v1/applications/mgmt-cluster-r1

check_secrets 3	# one cluster: its kubeconfig's token and key, argocd-manager's token
t_done
