#!/bin/bash
# MGMT:capi-check (issue 23 "Bootstrap and pre-flight"): two owners of
# Cluster API on the management cluster (clusterctl's inventory and the
# cluster-api-operator's CoreProvider) are refused before anything is synced
# there; so is clusterctl's install when the distro installs the providers
# too (capi-providers); a core older than 1.11 for api: v1beta2 names
# api: v1beta1; a passed check is not asked again (no kubectl on a no-op).
# validate --live dry-runs the class and the Clusters on the management
# cluster: a version two minors up is refused in the webhook's words, and
# nothing is kept.  mode: cloned holds a created cluster's Cluster until
# `idpmake promote`.  ready: available waits for the Cluster's Available
# condition after the cni (none: it times out naming the cni).
# credential: external waits for another registrar, then sets the labels.
# credential: kubeconfig registers the Secret's certificate, and again on
# --refresh once Cluster API rotated it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_capi_emulators

cp -R "$top/examples/capi" "$T/capi" || t_bail "cannot copy examples/capi"
rm -rf "$T/capi/.idpmake"
cd "$T/capi" || exit 1
sed -i "s|^name: capi-fleet|name: capi-fleet\ngit: {remote: \"$bare\"}\nargocd: {repo-url: \"file://$bare\"}|" distro.yaml

kemu_post capi '{"providers": {"topology_gate": true,
	"clusterctl": [{"name": "cluster-api", "type": "CoreProvider", "version": "v1.11.0"}],
	"operator": [{"kind": "CoreProvider", "name": "cluster-api", "version": "v1.11.0"}]}}'
t_exit 1 "two owners are refused" idpmake up
t_grep "naming both" "mgmt:capi-check: management cluster 'mgmt' has two owners of Cluster API: clusterctl .* and the cluster-api-operator" "$OUTPUT"
t_eq "nothing was synced to the management cluster" "0" "$(emu_posts "/sync$")"

kubectl delete coreproviders.operator.cluster.x-k8s.io -n capi-system cluster-api >/dev/null 2>&1 ||
	t_bail "cannot delete the operator's CoreProvider"
kemu_post capi '{"providers": {"clusterctl": [{"name": "cluster-api", "type": "CoreProvider", "version": "v1.10.5"}]}}'
t_exit 1 "a core older than 1.11 is refused for api: v1beta2" idpmake up
t_grep "naming api: v1beta1" "runs Cluster API v1.10.5, which has no v1beta2 .*create.api: v1beta1" "$OUTPUT"

kemu_post capi '{"providers": {"clusterctl": [{"name": "cluster-api", "type": "CoreProvider", "version": "v1.11.0"}]}}'
mkdir -p packages/capi-providers
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: providers}\n' >packages/capi-providers/cm.yaml
sed -i 's|^  management: \[capi-classes\]|  management: [capi-providers, capi-classes]|; s|^packages:|packages:\n  capi-providers: {type: manifests, path: packages/capi-providers, namespace: capi-system}|' distro.yaml
t_exit 1 "clusterctl's install and the distro's providers are two owners" idpmake up
t_grep "naming the package" "Cluster API from clusterctl, and the distro installs it too \(capi-providers\)" "$OUTPUT"

sed -i 's|^  management: \[capi-providers, capi-classes\]|  management: [capi-classes]|; /^  capi-providers: /d' distro.yaml
t_ok "clusterctl's install alone is adopted" idpmake up
t_grep "said" "mgmt:capi-check: adopted clusterctl's Cluster API v1.11.0" "$OUTPUT"
n=$(curl -sS -f --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(len([e for e in json.load(sys.stdin) if not e.get("user_agent", "").startswith("argocd-application-controller")]))')
t_ok "a no-op" idpmake up
t_eq "asks the management cluster nothing" "$n" "$(curl -sS -f --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(len([e for e in json.load(sys.stdin) if not e.get("user_agent", "").startswith("argocd-application-controller")]))')"

# validate --live: the class and the Clusters dry-run on the management cluster, nothing kept
t_ok "validate --live" idpmake validate --live
t_grep "the class accepted" "mgmt/capi-classes:render: [0-9]+ objects accepted by 'mgmt' \\(server-side dry run\\)" "$OUTPUT"
t_grep "eu-1's Cluster accepted" "mgmt/cluster-eu-1:render: 1 object accepted by 'mgmt'" "$OUTPUT"
sed -i 's/^  k8s: v1.33.2 .*/  k8s: v1.35.0/' distro.yaml
t_exit 1 "validate, with no server: two minors past the synced version is refused, as up refuses it (issue 32 #1)" idpmake validate
t_grep "in up's words" 'is 2 minors past the synced v1.33.2.*go to v1.34 first' "$STDERR"
t_exit 1 "validate --live: two minors at once is refused by Cluster API's webhook" idpmake validate --live
t_grep "in its words" "mgmt/cluster-eu-1:render: the management cluster 'mgmt' refuses it \\(server-side dry run\\): .*v1.33.2.*v1.35.0" "$OUTPUT"
t_eq "nothing was kept" "v1.33.2" "$(kubectl get clusters.cluster.x-k8s.io -n fleet eu-1 -o jsonpath='{.spec.topology.version}')"
t_nogrep "no dry-run folder left" . <(find .idpmake/tmp -mindepth 1 2>/dev/null)

# mode: cloned keeps a created cluster's Cluster until promote
sed -i 's/^  k8s: v1.35.0/  k8s: v1.34.0/; s/^    labels: {region: us}/    labels: {region: us}\n    mode: cloned/' distro.yaml
t_ok "plan with us-1 cloned and a version bump" idpmake plan
t_grep "us-1's Cluster is behind" '^behind cloned cluster us-1: cluster-us-1 \(idpmake promote us-1\)' "$OUTPUT"
t_ok "up moves eu-1 only" idpmake up
t_eq "eu-1 is at v1.34.0" "v1.34.0" "$(kubectl get clusters.cluster.x-k8s.io -n fleet eu-1 -o jsonpath='{.spec.topology.version}')"
t_eq "us-1 stays at v1.33.2" "v1.33.2" "$(kubectl get clusters.cluster.x-k8s.io -n fleet us-1 -o jsonpath='{.spec.topology.version}')"
t_ok "promote us-1" idpmake promote us-1
t_eq "us-1 is at v1.34.0" "v1.34.0" "$(kubectl get clusters.cluster.x-k8s.io -n fleet us-1 -o jsonpath='{.spec.topology.version}')"

# ready: available: NAME:ready waits for the Cluster's Available condition after the cni, before the rest
python3 - distro.yaml <<'ZZPY' || t_bail "cannot edit distro.yaml"
import sys
s = open(sys.argv[1]).read()
s = s.replace("\nprofiles:\n", """
  ap-1:
    labels: {region: us}
    profiles: [apps]
    create:
      management: mgmt
      namespace: fleet
      class: {package: capi-classes, name: quick-start}
      version: ${k8s}
      control-plane: {replicas: 1}
      workers: {md-0: {class: default-worker, replicas: 1}}
      vars: {imageRepository: registry.k8s.io}
      ready: available
      timeout: 15

profiles:
  apps: [podinfo]
""", 1)
open(sys.argv[1], "w").write(s)
ZZPY
t_exit 1 "without a cni, ap-1 is never Available" idpmake up
t_grep "ap-1:ready times out, naming the cni" "ap-1:ready: .*timed out after 15 s waiting for the Cluster of 'ap-1' to be Available \\(a missing cni" "$OUTPUT"
t_grep "its packages wait" "not run: ap-1/podinfo:sync" "$OUTPUT"
sed -i 's/^    profiles: \[apps\]/    profiles: [workload]/; s/^      ready: available/      ready: available\n      cni: [calico]/' distro.yaml
t_ok "with calico first, it is" idpmake up
t_grep "ready after the cni" "ap-1:ready: Available" "$OUTPUT"
t_grep "then podinfo" "ap-1/podinfo:sync" "$OUTPUT"
python3 - "$OUTPUT" >"$T/why" 2>&1 <<'ZZPY'
import sys
lines = open(sys.argv[1]).read().split("\n")
at = lambda s: next(i for i, l in enumerate(lines) if s in l)
assert at("ap-1/calico:sync") < at("ap-1:ready") < at("ap-1/podinfo:sync"), lines
ZZPY
t_report $? "calico, then ready, then podinfo" "$T/why"

# credential: external: another registers it; idpmake waits, then sets its labels only
python3 - distro.yaml <<'ZZPY' || t_bail "cannot edit distro.yaml"
import sys
s = open(sys.argv[1]).read()
s = s.replace("\nprofiles:\n", """
  ex-1:
    labels: {region: us, registrar: theirs}
    profiles: [workload]
    create:
      management: mgmt
      namespace: fleet
      class: {package: capi-classes, name: quick-start}
      version: ${k8s}
      control-plane: {replicas: 1}
      workers: {md-0: {class: default-worker, replicas: 1}}
      vars: {imageRepository: registry.k8s.io}
      cni: [calico]
      credential: external
      timeout: 60

profiles:
""", 1)
open(sys.argv[1], "w").write(s)
ZZPY
idpmake up >"$T/ex.out" 2>&1 &
up=$!
t_wait_for 60 kubectl get secret -n fleet ex-1-kubeconfig
t_report $? "ex-1's kubeconfig Secret appears"
kubectl get secret -n fleet ex-1-kubeconfig -o jsonpath='{.data.value}' | base64 -d >"$T/ex1.kubeconfig"
python3 - "$T/ex1.kubeconfig" "$T/ex1.json" <<'ZZPY'
import json, re, sys, base64
t = open(sys.argv[1]).read()
server = re.search(r"server: *\"?([^\"\n]+)", t).group(1)
token = re.search(r"token: *\"?([^\"\n]+)", t).group(1)
ca = re.search(r"certificate-authority-data: *\"?([^\"\n]+)", t).group(1)
json.dump({"name": "ex-1", "server": server, "labels": {"team": "net"},
           "config": {"bearerToken": token, "tlsClientConfig": {"caData": ca}}},
          open(sys.argv[2], "w"))
ZZPY
sleep 1
# (Argo CD reaches the cluster before it saves it: under a loaded CI machine that can take more than 10 s)
curl -fsS -m 60 -X POST -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" -H 'Content-Type: application/json' \
	-d @"$T/ex1.json" "http://$ARGOCD_SERVER/api/v1/clusters" >/dev/null
t_report $? "the registrar registers ex-1 by hand"
wait $up
t_report $? "up waited for the registrar, then went on" "$T/ex.out"
t_grep "it set the labels" "ex-1:register" "$T/ex.out"
curl -fsS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters/ex-1?id.type=name" >"$T/ex1.cl"
t_grep "the labels are the distro's" '"registrar": *"theirs"' "$T/ex1.cl"
t_grep "and the registrar's own label stays" '"team": *"net"' "$T/ex1.cl"
t_nogrep "and it is not marked idpmake's (--prune leaves it)" 'idpmake.io/cluster' "$T/ex1.cl"
sed -i 's/^    labels: {region: us, registrar: theirs}/    labels: {region: us, tier: gold}/' distro.yaml
t_ok "ex-1's labels changed in the distro" idpmake up
t_grep "registers ex-1 again" 'register ex-1:register' "$OUTPUT"
curl -fsS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters/ex-1?id.type=name" >"$T/ex1.cl"
t_grep "the new label is set" '"tier": *"gold"' "$T/ex1.cl"
t_nogrep "the label the distro dropped is gone" '"registrar"' "$T/ex1.cl"
t_grep "the registrar's own label still stays" '"team": *"net"' "$T/ex1.cl"
sed -i 's/^    labels: {region: us, tier: gold}/    labels: {region: us, tier: gold, team: core}/' distro.yaml
t_ok "the distro sets the registrar's key too" idpmake up
sed -i 's/^    labels: {region: us, tier: gold, team: core}/    labels: {region: us, tier: gold}/' distro.yaml
t_ok "then drops it" idpmake up
curl -fsS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters/ex-1?id.type=name" >"$T/ex1.cl"
t_grep "a key the registrar had is never removed (the registrar's)" '"team": *"' "$T/ex1.cl"

# credential: kubeconfig, then the Secret rotated: --refresh registers the new certificate
python3 - distro.yaml <<'ZZPY' || t_bail "cannot edit distro.yaml"
import sys
s = open(sys.argv[1]).read()
i = s.index("  eu-1:")
j = s.index("      cni: [calico]", i)
s = s[:j] + "      credential: kubeconfig\n" + s[j:]
open(sys.argv[1], "w").write(s)
ZZPY
t_ok "eu-1 registers its client certificate" idpmake up
t_grep "registered again" "eu-1:register" "$OUTPUT"
cert() {
	curl -fsS "$emu/requests" | python3 -c 'import json, sys
regs = [e for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"] == "/api/v1/clusters"
        and (e.get("body") or {}).get("name") == "eu-1"]
print(regs[-1]["body"]["config"]["tlsClientConfig"].get("certData", "none") if regs else "none")'
}
first=$(cert)
t_ok "with a certificate, no token" test "$first" != none
kemu_post capi '{"cluster": "eu-1", "namespace": "fleet", "rotate_kubeconfig": true}'
t_ok "a no-op after the rotation" idpmake up
t_nogrep "does not look" "eu-1:register" "$OUTPUT"
t_ok "plan --refresh" idpmake plan --refresh
t_grep "names the rotation" "eu-1:register.*kubeconfig Secret of 'eu-1' was rotated" "$OUTPUT"
t_ok "up --refresh" idpmake up --refresh
t_grep "registers again" "eu-1:register" "$OUTPUT"
t_ok "with the new certificate" test "$(cert)" != "$first"
t_done
