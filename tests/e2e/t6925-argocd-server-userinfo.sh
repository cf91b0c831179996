#!/bin/bash
# A user name or password in the Argo CD server's URL (http://admin:pw@host)
# is refused, wherever the server comes from (argocd.server: a located
# error, exit 2; ARGOCD_SERVER, ARGOCD_OPTS --server: exit 1; context add:
# a usage error), and the password is in no output, -v line, log or state.
# (Found in review: it reached -v, the step logs and status.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
emu_port=${ARGOCD_SERVER##*:}
PW="pw-$(random_string)"
write_distro() {
	mkdistro d <<EOF2
idpmake: 1
name: userinfo
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"${1:+, server: "$1"}}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF2
}
mkmanifest d/packages/web/cm.yaml ConfigMap web
unset ARGOCD_SERVER
mkdir -p d/.idpmake

write_distro "http://admin:$PW@127.0.0.1:$emu_port"
t_exit 2 "argocd.server with a password: a located error" idpmake -C d -v up
t_grep "naming the line, without the password" '^distro.yaml:4:[0-9]+: error: argocd.server must not hold a user name or password \('"'"'http://\*\*\*@127.0.0.1:'"$emu_port"'/'"'"'\)' "$OUTPUT"
t_nostring "the password is not in the output" "$PW" "$OUTPUT"
t_exit 2 "plan refuses it too" idpmake -C d plan
write_distro "admin:$PW@127.0.0.1:$emu_port"
t_exit 2 "without a scheme too" idpmake -C d status
t_nostring "the password is not in that output" "$PW" "$OUTPUT"

write_distro ""	# the distro names no server: the environment's is used (issue 33 #1)
export ARGOCD_SERVER="http://admin:$PW@127.0.0.1:$emu_port"
t_exit 1 "ARGOCD_SERVER with a password: up fails" idpmake -C d -v up
t_grep "saying why and the way out" "argocd: the Argo CD server 'http://\*\*\*@127.0.0.1:$emu_port/' has a user name or password in it, which Argo CD does not take: give the server without it and the token in ARGOCD_AUTH_TOKEN" "$OUTPUT"
t_nostring "the password is not in the output" "$PW" "$OUTPUT"
t_nostring "the user name is not either (it may be a token)" "admin" "$OUTPUT"
t_eq "no request reached Argo CD" 0 "$(emu_posts .)"
idpmake -C d status >"$T/status.txt" 2>&1
t_nostring "nor in status" "$PW" "$T/status.txt"
t_fail "diff --live refuses it too" idpmake -C d diff --live
t_nostring "without the password" "$PW" "$OUTPUT"
export ARGOCD_SERVER="TOKEN$PW@127.0.0.1:$emu_port"
t_exit 1 "a user name alone, no scheme: refused too" idpmake -C d up
t_nostring "not shown" "$PW" "$OUTPUT"
unset ARGOCD_SERVER
export ARGOCD_OPTS="--plaintext --server admin:$PW@127.0.0.1:$emu_port"
t_exit 1 "ARGOCD_OPTS --server with a password: refused" idpmake -C d up -v
t_nostring "not shown" "$PW" "$OUTPUT"
export ARGOCD_OPTS=--plaintext

t_exit 2 "context add --argocd-server with a password: a usage error" idpmake context add prod --argocd-server "https://admin:$PW@argocd.example" --git-remote "$bare"
t_grep "saying why" "a user name or password in the server is not taken" "$OUTPUT"
t_nostring "not shown" "$PW" "$OUTPUT"
t_nostring "and not stored" "$PW" "$HOME"

export ARGOCD_SERVER="127.0.0.1:$emu_port"
t_ok "without user info, up syncs" idpmake -C d up -v
t_nostring "the password is nowhere in the state, logs or cache" "$PW" d/.idpmake
t_done
