#!/bin/bash
# The pre-flight (issue 19 #6) checks that the kube context of each cluster
# whose deploy: kubectl syncs will run answers and takes its credential
# (`kubectl get --raw /api`, the real kubectl against tests/kube-emu), before
# anything is rendered, applied or pushed: an API server that is down and a
# wrong token are listed with the other problems (here: Argo CD's token),
# `up` exits 1, no cluster took a write and nothing was pushed.  A run that
# has nothing to apply on a cluster does not ask it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
A=$KUBE_SERVER A_EMU=$kemu
# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
B=$KUBE_SERVER B_PID=$KUBE_EMU_PID
B_PORT=${B##*:}
mkconfig() { kubeconfig_two kubeconfig "$1"; }	# mkconfig TOKEN-OF-A
mkconfig "$KUBE_TOKEN"
export KUBECONFIG=$T/kubeconfig
init_gitops
writes() {
	curl -fsS -m 10 --cacert "$KUBE_CA" "$1/requests" |
		python3 -c 'import json, sys; print(sum(1 for r in json.load(sys.stdin) if r["method"] in ("POST", "PUT", "PATCH", "DELETE")))'
}
kreset() { curl -fsS -m 10 --cacert "$KUBE_CA" -X POST -d '{}' "$1/reset" >/dev/null || t_bail "cannot reset $1"; }
stop_b() { kill "$B_PID" && wait "$B_PID" 2>/dev/null; t_pids=${t_pids/ $B_PID/}; }
start_b() {	# again on its port, so that the cluster's server is the same
	start_kube_emulator --port "$B_PORT"
	B_PID=$KUBE_EMU_PID
	[ "$KUBE_SERVER" = "$B" ] || t_bail "the emulator came back at $KUBE_SERVER, not $B"
}

mkdistro d <<EOF
idpmake: 1
name: kube
git: {remote: "$bare"}
argocd: {server: "127.0.0.1:1", repo-url: "file://$bare"}
clusters:
  a: {server: "$A", kube-context: ctx-a, vars: {who: alpha}}
  b: {server: "$B", kube-context: ctx-b, vars: {who: beta}}
packages:
  core:
    type: manifests
    path: packages/core
    deploy: kubectl
    rewrite: [{match: WHO, replace: "\${who}"}]
  apps: {type: manifests, path: packages/apps}
EOF
mkdir -p d/packages/core
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: core}\ndata: {who: WHO}\n' >d/packages/core/cm.yaml
mkmanifest d/packages/apps/cm.yaml ConfigMap apps

# ---- b's API server down, a's token wrong, no Argo CD token --------------------
stop_b
mkconfig "not-the-token"
t_exit 1 "up: the pre-flight refuses" idpmake -C d up
t_grep "b's kube context does not answer: the cluster, the context, kubectl's message, the step" \
	"error: cluster 'b': the kube context 'ctx-b' \(kube-context; server $B; in $T/kubeconfig\) does not answer \(kubectl get --raw /api: The connection to the server 127.0.0.1:$B_PORT was refused.*\(needed by b/core:sync\)" "$STDERR"
t_grep "a's does not take the token" \
	"error: cluster 'a': the kube context 'ctx-a' .* does not answer \(kubectl get --raw /api: error: You must be logged in to the server \(Unauthorized\)\); check the server, the credential.*\(needed by a/core:sync\)" "$STDERR"
t_grep "listed with Argo CD's problem" 'ARGOCD_AUTH_TOKEN' "$STDERR"
t_grep "all three, then nothing done" 'pre-flight: 3 problems; nothing was rendered, pushed, synced or registered' "$STDERR"
t_nogrep "no step ran" 'FAILED|[0-9]+ synced' "$OUTPUT"
t_eq "a took no write" 0 "$(writes "$A_EMU")"
t_eq "nothing pushed" "" "$(head_of)"
t_nostring "the token is not in the output" "$KUBE_TOKEN" "$OUTPUT"

# ---- the Argo CD package out: a's token right, b still down ---------------------
sed -i '/^  apps:/d;/^argocd:/d' d/distro.yaml
mkconfig "$KUBE_TOKEN"
t_exit 1 "b down: refused" idpmake -C d up
t_grep "naming b alone" 'pre-flight: 1 problem;' "$STDERR"
t_grep "b" "error: cluster 'b'" "$STDERR"
t_eq "a, which answers, took no write either" 0 "$(writes "$A_EMU")"
t_eq "nothing pushed" "" "$(head_of)"

start_b
t_ok "b up again: up applies both" idpmake -C d up
t_grep "both" '2 synced' "$STDOUT"
t_ok "and pushes" git --git-dir="$bare" rev-parse -q --verify main

# ---- what does not apply on b does not ask b -------------------------------------
stop_b
t_ok "nothing to do: up asks no cluster" idpmake -C d up
kreset "$A_EMU"
sed -i 's/who: alpha/who: alpha2/' d/distro.yaml
t_ok "a change on a alone: b, down, is not asked" idpmake -C d up
t_grep "a synced" '1 synced' "$STDOUT"
[ "$(writes "$A_EMU")" -gt 0 ]
t_report $? "a took the apply"

t_done
