#!/bin/bash
# Pre-flight before the push (issue 19 §6): before anything is rendered,
# pushed, synced or registered, up checks what the steps that will run need
# (the Argo CD token, that Argo CD answers GET /api/version and accepts it,
# each register.token-env, the kubeconfig and context a register names, the
# git token an http(s) remote asks for), lists every problem at once and
# exits 1 with the remote's branch unchanged; a no-op up checks nothing and
# makes no request, and a credential only a step that will not run needs is
# not asked for.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
EAST_TOKEN="east-$(random_string)$(random_string)"

# lines [RE]: the emulator's request log, one "METHOD PATH" a line, paths matching RE
lines() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, re, sys
for e in json.load(sys.stdin):
    if re.search(sys.argv[1], e["path"]):
        print(e["method"], e["path"])' "${1:-.}" || t_bail "cannot read the request log"
}
head_of() { git -C "$bare" rev-parse --verify -q main || echo none; }

mkdir -p d/kube
cat >d/kube/config <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: west-cluster
    cluster: {server: "https://west.k8s.example:6443"}
contexts:
  - name: west
    context: {cluster: west-cluster, user: west-admin}
users:
  - name: west-admin
    user: {token: west-$(random_string)}
EOF
write_distro() {
	# write_distro WEST-CONTEXT
	cat >"$T/d/distro.yaml" <<EOF
idpmake: 1
name: pre
git: {remote: "$url"}
argocd: {}
clusters:
  east:
    server: https://east.k8s.example:6443
    register: {token-env: EAST_TOKEN}
  west:
    server: https://west.k8s.example:6443
    register: {kubeconfig: kube/config, context: $1}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
}
write_distro wset
mkmanifest d/packages/base/cm.yaml ConfigMap base base
cd d || exit 1

# ---- everything missing: every problem at once, nothing done ---------------
emu_reset
t_exit 1 "up with no credential at all fails" env -u ARGOCD_AUTH_TOKEN "$IDPMAKE" up
t_grep "the Argo CD token" "error: argocd: set ARGOCD_AUTH_TOKEN \(or argocd.token-file\)" "$OUTPUT"
t_grep "east's register.token-env" "error: east:register: cluster 'east': the variable EAST_TOKEN \(register.token-env\) is not set or empty" "$OUTPUT"
t_grep "west's kubeconfig context" "error: west:register: kubeconfig '.*kube/config' has no context 'wset'" "$OUTPUT"
t_grep "the git token the remote asks for" "error: push: the GitOps remote $url asks for credentials \(HTTP 401\), and none are given: set IDPMAKE_GIT_TOKEN" "$OUTPUT"
t_grep "counted, nothing done" "error: pre-flight: 4 problems; nothing was rendered, pushed, synced or registered" "$OUTPUT"
t_eq "the remote has no branch yet" none "$(head_of)"
t_eq "Argo CD got no request" "" "$(lines)"
t_nogrep "nothing was rendered" "render .*:render" "$OUTPUT"

# ---- a token Argo CD refuses, an Argo CD that does not answer ----------------
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER EAST_TOKEN
write_distro west
emu_reset
t_exit 1 "a token Argo CD does not accept" env ARGOCD_AUTH_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)" "$IDPMAKE" up
t_grep "is found before the push" "error: Argo CD at http://$ARGOCD_SERVER does not accept the token .*set ARGOCD_AUTH_TOKEN" "$OUTPUT"
t_grep "naming a step that needs it" "needed by [a-z/]+:(sync|register)" "$OUTPUT"
t_grep "one problem" "pre-flight: 1 problem;" "$OUTPUT"
t_eq "with one request, GET /api/version" "GET /api/version" "$(lines)"
t_eq "the remote has no branch yet" none "$(head_of)"
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
closed= && dead_port closed || t_bail "cannot hold a port that refuses"
t_exit 1 "an Argo CD that does not answer" env ARGOCD_SERVER="127.0.0.1:$closed" "$IDPMAKE" up
t_grep "is found before the push" "error: Argo CD at http://127.0.0.1:$closed does not answer \(GET /api/version\)" "$OUTPUT"
t_eq "the remote has no branch yet" none "$(head_of)"

# ---- all there: the run goes on --------------------------------------------
emu_reset
t_ok "up with every credential" idpmake up
t_eq "it asked Argo CD its version first" "GET /api/version" "$(lines | head -n 1)"
t_grep "registered and synced" " 2 synced" "$OUTPUT"
first=$(head_of)
t_ok "the remote took a commit" test "$first" != none

# ---- a no-op up checks nothing ----------------------------------------------
emu_reset
t_ok "a no-op up without a single credential" env -u ARGOCD_AUTH_TOKEN -u EAST_TOKEN -u IDPMAKE_GIT_TOKEN "$IDPMAKE" up
t_eq "makes no request" "" "$(lines)"

# ---- only what the steps that run need ---------------------------------------
echo "  more: x" >>packages/base/cm.yaml
emu_reset
t_ok "east registered before: a change runs without EAST_TOKEN" env -u EAST_TOKEN "$IDPMAKE" up
t_grep "and syncs both" " 2 synced" "$OUTPUT"
second=$(head_of)

# ---- after a push: a new problem still stops the run before the next push -----
echo "  more: y" >>packages/base/cm.yaml
write_distro nowhere
emu_reset
t_exit 1 "west's register changed to a context the kubeconfig lacks" idpmake up
t_grep "named" "west:register: kubeconfig '.*' has no context 'nowhere'" "$OUTPUT"
t_eq "the remote's branch is unchanged" "$second" "$(head_of)"
t_eq "nothing was registered or synced" "" "$(lines | grep -v '^GET')"

t_done
