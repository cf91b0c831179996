#!/bin/bash
# deploy: kubectl when Kubernetes says no (tests/kube-emu, the real
# kubectl), once the pre-flight found the kube context answering (t7142):
# a kind the credential may not write (403), an object in a namespace that
# does not exist (404), the API server failing (500).  Each time `up` exits 1 naming the step and kubectl's own message,
# records no success (plan runs the sync again, and the next `up` applies
# it), and pushes nothing: the GitOps push comes after the kubectl syncs.
# kubectl's message is in the step's log, which a failed `up` prints.
# The token never reaches idpmake's state or output.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
kubeconfig_for kubeconfig emu
export KUBECONFIG=$T/kubeconfig
init_gitops
kreset() { kemu_post reset '{}'; }
stored() { kemu_state | grep -c -E "$1"; }

mkdistro d <<EOF
idpmake: 1
name: kube
git: {remote: "$bare"}
clusters:
  c: {server: "$KUBE_SERVER", kube-context: emu}
packages:
  core: {type: manifests, path: packages/core, deploy: kubectl}
EOF
mkmanifest d/packages/core/cm.yaml ConfigMap core
mkmanifest d/packages/core/deploy.yaml Deployment web

# a failed up: exit 1, the step and kubectl's message, nothing pushed, the sync still to run
failed_up() {	# failed_up WHAT MESSAGE-RE [COMMAND-RE]: the command that failed (default kubectl apply)
	local before
	before=$(head_of)
	t_exit 1 "$1: up fails" idpmake -C d up
	t_grep "$1: the step and the command" "c/core:sync: ${3:-kubectl apply}" "$STDERR"
	t_grep "$1: kubectl's message" "$2" "$STDERR"
	t_eq "$1: nothing pushed" "$before" "$(head_of)"
	t_ok "$1: plan" idpmake -C d plan
	t_grep "$1: the sync is not recorded as done" '^sync +c/core:sync' "$STDOUT"
}

# ---- the first up --------------------------------------------------------------
t_ok "up applies" idpmake -C d up
t_grep "synced" '1 synced' "$STDOUT"
t_eq "the ConfigMap landed" 1 "$(stored '^ConfigMap core/core$')"
t_ok "pushed once applied" git --git-dir="$bare" rev-parse -q --verify main
t_nostring "the token is not in idpmake's state" "$KUBE_TOKEN" d/.idpmake
t_nostring "nor in its output" "$KUBE_TOKEN" "$OUTPUT"

# ---- a kind refused: 403 ----------------------------------------------------
mkmanifest d/packages/core/deploy.yaml Deployment web2
kemu_post fault '{"refuse": {"kind": "Deployment", "verbs": ["patch"]}}'
failed_up "403" 'deployments.apps "web2" is forbidden: User "kubeemu-admin" cannot patch resource "deployments"'
t_eq "403: the Deployment is not there" 0 "$(stored '^Deployment core/web2$')"
kreset
# not even allowed to read it: the look at who applied it before fails, and says so
kemu_post fault '{"refuse": {"kind": "Deployment"}}'
failed_up "403 on get" 'deployments.apps "web2" is forbidden: User "kubeemu-admin" cannot get resource "deployments"' \
	'kubectl get \(who applied the objects before\)'
t_eq "403 on get: the Deployment is not there" 0 "$(stored '^Deployment core/web2$')"
kreset
t_ok "allowed again: up applies" idpmake -C d up
t_eq "the Deployment landed" 1 "$(stored '^Deployment core/web2$')"

# ---- a namespace that does not exist: 404 -----------------------------------
mkmanifest d/packages/core/other.yaml ConfigMap other elsewhere
failed_up "404" 'namespaces "elsewhere" not found'
mkmanifest d/packages/core/ns.yaml Namespace elsewhere
t_ok "with the Namespace in the package: up applies" idpmake -C d up
t_eq "the namespace first, then the object in it" 1 "$(stored '^ConfigMap elsewhere/other$')"

# ---- the API server fails: 500 ----------------------------------------------
mkmanifest d/packages/core/cm.yaml ConfigMap core2
kemu_post fault '{"fail": 1000, "path_regex": "/namespaces/core/", "message": "etcdserver: request timed out"}'
failed_up "500" "etcdserver: request timed out" 'kubectl get \(who applied the objects before\)'
kreset
t_ok "the server well again: up applies" idpmake -C d up
t_eq "the new ConfigMap landed" 1 "$(stored '^ConfigMap core/core2$')"

t_done
