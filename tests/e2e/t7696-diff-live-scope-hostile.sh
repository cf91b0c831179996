#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff --live: the scope a render's CustomResourceDefinition claims decides
# only how a create is labelled, never which live object an object is
# compared with.  A CRD turned to scope: Cluster for a kind whose objects
# Argo CD lists in two namespaces made both rendered objects match the
# first live one: the change of b/g1 shown as a/g1's, b/g1 shown as pruned.
# A namespaced custom kind named like a Kubernetes cluster-scoped kind
# (example.com/StorageClass) is not cluster-scoped either.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: scoped
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  crds: {type: manifests, path: packages/crds}
  web: {type: manifests, path: packages/web, needs: [crds], sync: {prune: true}}
EOF
mkdir -p d/packages/crds d/packages/web
crd() { # SCOPE
	cat <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: $1
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
EOF
}
crd Namespaced >d/packages/crds/crd.yaml
for ns in a b; do
	printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: %s}\nspec: {size: 1}\n' $ns \
		>d/packages/web/g-$ns.yaml
done
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
t_ok "setup: up" idpmake up
t_exit 0 "diff --live --exit-code after up: nothing" idpmake diff --live --exit-code

crd Cluster >packages/crds/crd.yaml
sed -i 's/size: 1/size: 2/' packages/web/g-b.yaml
t_exit 1 "diff --live --exit-code: the CRD and b/g1 change" idpmake --color=never diff --live --exit-code
t_grep "b/g1 is the one changed" '^change +example\.com/Gadget b/g1$' "$STDOUT"
t_nogrep "a/g1 is not" '^change +example\.com/Gadget a/g1$' "$STDOUT"
t_nogrep "nothing pruned" '^prune ' "$STDOUT"
t_grep "the size change shown" '^\+  size: 2$' "$STDOUT"
t_done
