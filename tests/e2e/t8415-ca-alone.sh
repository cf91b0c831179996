#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A CA idpmake is given is the only one it trusts for that server (issue 35 #2):
# libcurl reads its CA folder (CApath, /etc/ssl/certs on Debian) beside the CA
# file it is given unless told not to.  A throwaway CA the system trusts for the
# script's length (system_trust, root only) signs the servers' certificates:
#   control          no CA given: the system's trust reaches Argo CD;
#   argocd.ca-file   naming another CA: up fails on the certificate, and no
#                    request (no token) reaches the server;
#   the tls step     its CA (tls.hosts names the server): the same;
#   git.ca-file      naming another CA: the fetch fails on the certificate
#                    (libgit2 with mbedTLS: its CA file replaces the system's
#                    bundle, and it reads no CA folder).
# (A created cluster's CA: t8416.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || t_skip_rest "openssl missing: run ./configure --install-deps (openssl)"
export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

make_tls
init_gitops
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10 \
	--tls-cert "$tls/server.pem" --tls-key "$tls/server.key"
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
port=${ARGOCD_SERVER##*:}
unset ARGOCD_SERVER ARGOCD_OPTS
emu=https://localhost:$port/_emu
system_trust "$tls/ca.pem" "localhost:$port"
t_ok "set-up: curl trusts the server with the system's CAs alone" curl -fsS -m 10 -o /dev/null "$emu/requests"
requests() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }

distro() {	# REMOTE ARGOCD-KEYS [OTHER-LINES [GIT-KEYS [DIR]]]
	local ru=	# a local remote: where Argo CD reads it (issue 33 #3)
	case $1 in /*) ru=", repo-url: \"file://$1\"" ;; esac
	mkdistro "${5:-d}" <<ZZ
idpmake: 1
name: alone-${5:-d}
git: {remote: "$1"$4}
argocd: {server: "localhost:$port"$ru$2}
$3
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
ZZ
}
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkmanifest g/packages/web/cm.yaml ConfigMap web
n=0
change() { n=$((n + 1)); mkmanifest "d/packages/web/cm$n.yaml" ConfigMap "web$n"; }

distro "$bare" ""
t_ok "control: with no CA given, up reaches Argo CD through the system's trust" idpmake -C d up
t_grep "... synced" "1 synced" "$STDOUT"

change
distro "$bare" ", ca-file: \"$tls/stranger.pem\""
emu_reset
t_exit 1 "argocd.ca-file naming another CA: up fails" idpmake -C d up
t_grep "... on the certificate" "certificate|SSL" "$OUTPUT"
t_eq "... and no request reached Argo CD (no token sent)" 0 "$(requests)"

distro "$bare" "" "tls: {hosts: [localhost]}"
emu_reset
t_exit 1 "the tls step's CA (tls.hosts names the server): up fails" idpmake -C d up
t_grep "... on the certificate" "certificate|SSL" "$OUTPUT"
t_eq "... and no request reached Argo CD (no token sent)" 0 "$(requests)"
t_ok "... after the step made its CA" test -s d/.idpmake/tls/ca.crt

# libgit2: the emulator answers https (no git there: 404 after the handshake)
distro "https://localhost:$port/gitops.git" "" "" ", ca-file: \"$tls/stranger.pem\"" g
t_exit 1 "git.ca-file naming another CA: up fails" idpmake -C g up
t_grep "... on the certificate" "certificate|SSL|x509" "$OUTPUT"
t_nogrep "... not on the server's answer" "404" "$OUTPUT"
distro "https://localhost:$port/gitops.git" "" "" ", ca-file: \"$tls/ca.pem\"" g
t_exit 1 "control: with git.ca-file naming the server's CA, the handshake passes" idpmake -C g up
t_grep "... and the server answers 404" "404" "$OUTPUT"

t_nostring "the token is in no output" "$ARGOCD_AUTH_TOKEN" "$OUTPUT"
t_done
