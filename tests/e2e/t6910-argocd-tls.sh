#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Argo CD over TLS: verified by default (a certificate from a CA idpmake was
# not given fails the run, naming the fix); argocd.ca-file trusts a private
# CA, with no warning; `insecure` (ARGOCD_OPTS --insecure, or argocd.insecure)
# skips verification only when asked, and is warned about on every run.
# The GitOps remote is a local bare repository (no register step).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || t_skip_rest "openssl missing: run ./configure --install-deps (openssl)"
export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

# ---- a CA and a certificate for localhost signed by it -----------------------
make_tls

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10 \
	--tls-cert "$tls/server.pem" --tls-key "$tls/server.key"
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
port=${ARGOCD_SERVER##*:}
export ARGOCD_SERVER=localhost:$port
unset ARGOCD_OPTS

distro() {	# distro [ARGOCD-KEYS]
	mkdistro d <<EOF
idpmake: 1
name: tls
git: {remote: "$bare"}
argocd: {server: "localhost:$port", repo-url: "file://$bare"$1}
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
}
distro ""
mkmanifest d/packages/web/cm.yaml ConfigMap web
n=0
change() { n=$((n + 1)); mkmanifest "d/packages/web/cm$n.yaml" ConfigMap "web$n"; }
warned='warning: argocd: TLS verification is off'

t_fail "up against a certificate from an unknown CA" idpmake -C d up
t_grep "... fails on the certificate, naming the fix" "argocd\.ca-file" "$STDERR"
t_nogrep "... with no insecure warning" "$warned" "$STDERR"

distro ", ca-file: \"$tls/ca.pem\""
t_ok "up with argocd.ca-file" idpmake -C d up
t_grep "... synced" "1 synced" "$STDOUT"
t_nogrep "... and no warning" "$warned" "$STDERR"

distro ""
change
export ARGOCD_OPTS=--insecure
t_ok "up with ARGOCD_OPTS=--insecure" idpmake -C d up
t_grep "... warns, naming where it was asked" "$warned \(--insecure in ARGOCD_OPTS\).*localhost:$port" "$STDERR"
t_ok "a no-op up with --insecure" idpmake -C d up
t_grep "... warns again" "$warned" "$STDERR"
unset ARGOCD_OPTS

distro ", insecure: true"
change
t_ok "up with argocd.insecure" idpmake -C d up
t_grep "... warns, naming the key" "$warned \(argocd\.insecure in the distro\)" "$STDERR"
t_nostring "the token is in no warning" "$ARGOCD_AUTH_TOKEN" "$STDERR"

t_done
