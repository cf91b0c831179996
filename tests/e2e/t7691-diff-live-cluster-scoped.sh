#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff --live (issue 8 §1): "cluster-scoped objects show no namespace noise"
# for objects Argo CD does not list yet (a create), where only idpmake can
# tell the scope: a kind whose CustomResourceDefinition (scope: Cluster) a
# package renders, and a cluster-scoped kind outside the first list
# (VolumeSnapshotClass).  Neither is labelled nor saved with the package's
# namespace, and once synced each matches its live object (no create and
# prune of the same object).
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
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
mkdir -p d/packages/crds
cat >d/packages/crds/crd.yaml <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
EOF
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
t_ok "setup: up" idpmake up

printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 1}\n' >packages/web/g.yaml
printf 'apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: snap}\ndriver: x\n' \
	>packages/web/vsc.yaml
mkmanifest packages/web/cm2.yaml ConfigMap cfg2
t_exit 1 "diff --live --exit-code: three objects to create" idpmake --color=never diff --live --exit-code
t_grep "the custom cluster-scoped kind has no namespace" '^create +example\.com/Gadget g1$' "$STDOUT"
t_grep "nor in its diff's label" '^\+\+\+ render example\.com/Gadget g1$' "$STDOUT"
t_grep "VolumeSnapshotClass neither" '^create +snapshot\.storage\.k8s\.io/VolumeSnapshotClass snap$' "$STDOUT"
t_grep "a namespaced object keeps its namespace" '^create +ConfigMap web/cfg2$' "$STDOUT"
t_nogrep "no namespace field in the diffs" '^[-+ ] +namespace:' "$STDOUT"
t_ok "--json" idpmake diff --live --json
t_eq "--json: no namespace for the cluster-scoped creates" "cfg2=web g1= snap=" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%s=%s" % (o["name"], o["namespace"]) for a in d["applications"] for o in a["objects"])))' "$STDOUT")"

t_ok "up syncs them" idpmake up
t_exit 0 "diff --live --exit-code after up: each matches its live object" idpmake diff --live --exit-code
t_nogrep "no create or prune" '^(create|prune) ' "$STDOUT"
t_done
