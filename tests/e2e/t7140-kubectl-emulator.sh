#!/bin/bash
# deploy: kubectl against Kubernetes (tests/kube-emu) with the real kubectl:
# two clusters, each its own API server and kube context; `up` applies each
# cluster's render there (the objects land, with the cluster's values), an
# unchanged distro applies nothing, and a change to one cluster's values
# applies that cluster alone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
A=$KUBE_SERVER A_EMU=$kemu
# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
B=$KUBE_SERVER B_EMU=$kemu
kubeconfig_two kubeconfig
export KUBECONFIG=$T/kubeconfig
init_gitops
# the writes (POST, PUT, PATCH, DELETE) an emulator took since its last reset
writes() {
	curl -fsS -m 10 --cacert "$KUBE_CA" "$1/requests" |
		python3 -c 'import json, sys; print(sum(1 for r in json.load(sys.stdin) if r["method"] in ("POST", "PUT", "PATCH", "DELETE")))'
}
kreset() { curl -fsS -m 10 --cacert "$KUBE_CA" -X POST -d '{}' "$1/reset" >/dev/null || t_bail "cannot reset $1"; }
who() { kubectl --context "$1" get configmap core -n core -o 'jsonpath={.data.who}' 2>&1; }

mkdistro d <<EOF
idpmake: 1
name: kube
git: {remote: "$bare"}
clusters:
  a: {server: "$A", kube-context: ctx-a, vars: {who: alpha}}
  b: {server: "$B", kube-context: ctx-b, vars: {who: beta}}
packages:
  core:
    type: manifests
    path: packages/core
    deploy: kubectl
    rewrite: [{match: WHO, replace: "\${who}"}]
EOF
mkdir -p d/packages/core
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: core}\ndata: {who: WHO}\n' >d/packages/core/cm.yaml
mkmanifest d/packages/core/deploy.yaml Deployment web
mkmanifest d/packages/core/svc.yaml Service web

t_ok "up applies both clusters with kubectl" idpmake -C d up
t_grep "both synced" '2 synced' "$STDOUT"
t_eq "a's ConfigMap, with a's value" alpha "$(who ctx-a)"
t_eq "b's, with b's" beta "$(who ctx-b)"
kemu=$A_EMU kemu_state >state-a
t_grep "a has the package's namespace" '^Namespace /core$' state-a
t_grep "and the Deployment in it" '^Deployment core/web$' state-a
t_grep "and the Service" '^Service core/web$' state-a
t_ok "kubectl sees the Deployment rolled out" kubectl --context ctx-b rollout status -n core deployment/web --timeout=30s
t_ok "what was applied was pushed after" git --git-dir="$bare" rev-parse -q --verify main

kreset "$A_EMU"
kreset "$B_EMU"
before=$(head_of)
t_ok "up again, nothing changed" idpmake -C d up
t_eq "a took no write" 0 "$(writes "$A_EMU")"
t_eq "b took no write" 0 "$(writes "$B_EMU")"
t_eq "nothing pushed" "$before" "$(head_of)"

sed -i 's/who: alpha/who: alpha2/' d/distro.yaml
t_ok "plan: a's sync alone" idpmake -C d plan
t_grep "a/core:sync runs" 'sync +a/core:sync' "$STDOUT"
t_nogrep "b/core:sync does not" 'b/core:sync' "$STDOUT"
t_ok "up after a's value changed" idpmake -C d up
t_grep "one synced" '1 synced' "$STDOUT"
t_eq "a has the new value" alpha2 "$(who ctx-a)"
t_eq "b still has its own" beta "$(who ctx-b)"
t_eq "b took no write" 0 "$(writes "$B_EMU")"
[ "$(writes "$A_EMU")" -gt 0 ]
t_report $? "a took the apply"

t_done
