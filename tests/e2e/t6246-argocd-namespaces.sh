#!/bin/bash
# Namespaces as Argo CD has them (issue 21 item 7).  A sync into a namespace
# the cluster lacks fails gitops-engine's dry run ('namespaces "X" not
# found') unless the Application has CreateNamespace=true or the render has
# the Namespace: idpmake names the namespace and the way out.  A cluster no
# Application deploys to is not watched by Argo CD ("Unknown", no API
# versions): validate --live says it could not check it, not that it did.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export EMU_STRICT_NAMESPACES=1
start_gitops_argocd
write() {
	cat >"$T/d/distro.yaml" <<EOF
idpmake: 1
name: ns
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web$1}
  own: {type: manifests, path: packages/own, namespace: own}
EOF
}
mkdir -p d
write ""
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
mkmanifest d/packages/own/cm.yaml ConfigMap cfg
mkmanifest d/packages/own/ns.yaml Namespace own
cd d || exit 1

# ---- validate --live before any Application: Argo CD watches no cluster ----
t_ok "validate --live with no Application anywhere" idpmake validate --live
t_grep "it says it could not check the cluster, and why" \
	"could not check the kinds of cluster 'in-cluster': Argo CD reports no API versions for it \(connection Unknown: Cluster has no applications and is not being monitored.\); Argo CD watches a cluster only once an Application deploys to it" "$OUTPUT"
t_grep "and that nothing was checked" "nothing checked: Argo CD lists no API for cluster 'in-cluster'" "$OUTPUT"
t_nogrep "it does not claim it checked" "objects? checked against" "$OUTPUT"

# ---- a namespace the cluster lacks ------------------------------------------
t_exit 1 "up: the sync into a namespace the cluster lacks fails" idpmake up -k 0
t_grep "Argo CD's result, the namespace named, the way out" \
	"in-cluster/web:sync: .*namespaces \"web\" not found; namespace 'web' does not exist on the cluster: Argo CD creates the destination namespace only with sync: \{options: \[CreateNamespace=true\]\}" "$OUTPUT"
t_grep "the package that renders its Namespace synced" "in-cluster/own:sync" "$OUTPUT"
t_nogrep "and did not fail" "in-cluster/own:sync: .*not found" "$OUTPUT"

write ", sync: {options: [CreateNamespace=true]}"
t_ok "with CreateNamespace=true the sync creates it" idpmake up

# ---- now an Application deploys to in-cluster: Argo CD watches it, checked ----
t_ok "validate --live" idpmake validate --live
t_grep "in-cluster's kinds were checked" "3 objects checked against 1 cluster' API$" "$OUTPUT"
t_nogrep "nothing is said not checked" "not checked|could not check" "$OUTPUT"
t_done
