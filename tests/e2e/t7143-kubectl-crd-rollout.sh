#!/bin/bash
# deploy: kubectl's phases against Kubernetes (tests/kube-emu, the real
# kubectl): a package with a CustomResourceDefinition and an object of its
# kind is applied CRD first, `kubectl wait` for it to be established, then
# the object (a kind kubectl did not know when the run began); a Deployment
# that never rolls out fails the sync at sync.timeout, naming the step and
# kubectl's message, records nothing and pushes nothing, and the next `up`
# applies it once it rolls out.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
kubeconfig_for kubeconfig emu
export KUBECONFIG=$T/kubeconfig
init_gitops
stored() { kemu_state | grep -c -E "$1"; }

mkdistro d <<EOF
idpmake: 1
name: kube
git: {remote: "$bare"}
clusters:
  c: {server: "$KUBE_SERVER", kube-context: emu}
packages:
  widgets: {type: manifests, path: packages/widgets, deploy: kubectl}
  web: {type: manifests, path: packages/web, deploy: kubectl, needs: [widgets], sync: {timeout: 3}}
EOF
mkdir -p d/packages/widgets
cat >d/packages/widgets/crd.yaml <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
EOF
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n' >d/packages/widgets/w1.yaml
mkmanifest d/packages/web/deploy.yaml Deployment web

t_ok "up: the CRD, then its object" idpmake -C d up
t_eq "the CRD is there" 1 "$(stored '^CustomResourceDefinition /widgets.example.com$')"
t_eq "and the Widget, in the package's namespace" 1 "$(stored '^Widget widgets/w1$')"
t_grep "kubectl waited for the CRD" 'condition met' d/.idpmake/logs/c_widgets_sync.log
t_grep "and for the rollout" 'successfully rolled out' d/.idpmake/logs/c_web_sync.log

# ---- a rollout that never ends ---------------------------------------------
kemu_post fault '{"stall": "Deployment"}'
mkmanifest d/packages/web/deploy.yaml Deployment web2
before=$(head_of)
t_exit 1 "the Deployment does not roll out: up fails" idpmake -C d up
t_grep "the step and the command" 'FAILED: c/web:sync: kubectl rollout: ' "$STDERR"
t_grep "kubectl's message" 'timed out waiting for the condition' "$OUTPUT"
t_eq "nothing pushed" "$before" "$(head_of)"
t_ok "plan" idpmake -C d plan
t_grep "the sync is still to run" '^sync +c/web:sync' "$STDOUT"
kemu_post reset '{}'
t_ok "rolled out: up applies" idpmake -C d up
t_grep "synced" '1 synced' "$STDOUT"
t_ok "and pushes" test "$before" != "$(head_of)"

t_done
