#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The GitOps repository over https with a private CA: lighttpd (mod_openssl) +
# git http-backend with basic auth on 127.0.0.1, its certificate for
# `localhost` signed by a CA made here. Without git.ca-file the push fails
# (exit 1) on the certificate, says to set the CA file, and pushes nothing;
# with `ca-file: ca.pem` (relative to the distro folder) and
# IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN it pushes, and a change pushes one
# more commit, also when run from another folder with -f; a CA that did not sign the certificate, a URL with the IP the
# certificate does not name, or an unreadable CA file fail and push nothing; a
# wrong token fails naming IDPMAKE_GIT_TOKEN and never shows the token, and no
# token reaches the state.
#
# Debian's libgit2 1.5.1 uses mbedTLS: it checks the name in the URL against
# the certificate's DNS names, so the URL says https://localhost:PORT (the
# server binds 127.0.0.1 only; /etc/hosts maps localhost there).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

lighttpd=$(command -v lighttpd || ls /usr/sbin/lighttpd 2>/dev/null)
[ -n "$lighttpd" ] || t_bail "lighttpd missing: run ./configure --install-deps"
moddir=/usr/lib/lighttpd
[ -f "$moddir/mod_openssl.so" ] ||
	t_bail "$moddir/mod_openssl.so missing: run ./configure --install-deps (lighttpd-mod-openssl)"
command -v openssl >/dev/null || t_bail "openssl missing: run ./configure --install-deps (openssl)"
backend=$(git --exec-path)/git-http-backend
[ -x "$backend" ] || t_bail "git http-backend missing ($backend): run ./configure --install-deps"

# ---- a CA, a certificate for localhost, and a CA that signed nothing here ------------
make_tls

# ---- lighttpd with TLS: the lib's layout ($T/git-srv/repos), stopped on exit ------------
srvdir=$T/git-srv
mkdir -p "$srvdir/repos"
GIT_USER=idp
GIT_PASS=$(random_string)
printf '%s:%s\n' "$GIT_USER" "$GIT_PASS" >"$srvdir/users"

# tls_code URL: the HTTP status of a GET that trusts only our CA, 000 if none.
tls_code() {
	python3 - "$1" "$tls/ca.pem" <<'EOF'
import ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile=sys.argv[2])
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5, context=ctx).status, end="")
except urllib.error.HTTPError as e:
    print(e.code, end="")
except Exception:
    print("000", end="")
EOF
}

# the listening socket from listen_exec (lib.sh): the port is held from the moment it is chosen
cat >"$srvdir/lighttpd.conf.in" <<EOF
server.modules = ("mod_openssl", "mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi")
server.modules-directory = "$moddir"
server.document-root = "$srvdir/repos"
server.bind = "127.0.0.1"
server.port = @PORT@
server.systemd-socket-activation = "enable"
server.pid-file = "$srvdir/lighttpd.pid"
server.errorlog = "$srvdir/error.log"
ssl.engine = "enable"
ssl.pemfile = "$tls/server.pem"
ssl.privkey = "$tls/server.key"
auth.backend = "plain"
auth.backend.plain.userfile = "$srvdir/users"
auth.require = ( "/git/" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
alias.url = ( "/git/" => "$backend/" )
setenv.set-environment = ( "GIT_PROJECT_ROOT" => "$srvdir/repos", "GIT_HTTP_EXPORT_ALL" => "1" )
cgi.assign = ( "" => "" )
EOF
: >"$srvdir/error.log"
listen_exec "$srvdir/port" "$srvdir/lighttpd.conf.in" "$srvdir/lighttpd.conf" \
	"$lighttpd" -D -f "$srvdir/lighttpd.conf" >"$srvdir/stdout.log" 2>&1 &
pid=$!
t_pids="$t_pids $pid"
port=$(read_port "$srvdir/port" "$pid") || { sed 's/^/# /' "$srvdir/stdout.log"; t_bail "no port for lighttpd (TLS)"; }
# 401: TLS with our CA and the name localhost works, and auth is on
tls_answers() { [ "$(tls_code "https://localhost:$port/git/")" = 401 ]; }
t_wait_for 10 tls_answers || {
	sed 's/^/# /' "$srvdir/stdout.log" "$srvdir/error.log"
	t_bail "lighttpd (TLS) did not answer 401 on https://localhost:$port/git/ within 10 s (log above)"
}

# new_remote (lib.sh) makes the bare repository and prints its URL from GIT_HTTP_BASE
export GIT_USER GIT_PASS GIT_HTTP_BASE=https://localhost:$port/git
url=$(new_remote gitops) || t_bail "new_remote failed"
srv=$srvdir/repos/gitops.git
commits() { git -C "$srv" rev-list --count main 2>/dev/null || echo 0; }

# distro CA-FILE-LINE URL: d/distro.yaml, with the git key's ca-file line (or none)
distro() {
	mkdistro d <<EOF
idpmake: 1
name: githttps
git:
  remote: $2
$1
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF
}
distro '' "$url"
mkmanifest d/packages/web/deploy.yaml Deployment web
cp "$tls/ca.pem" d/ca.pem
cp "$tls/stranger.pem" d/stranger.pem

# up [ENV=VALUE...]: one run, bounded in time (timeout exits 124, which no check expects)
up() { env "$@" timeout 30 "$IDPMAKE" -C "$T/d" up; }
good=(IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$GIT_PASS")

# ---- no ca-file: the certificate is not trusted -----------------------------------------
t_exit 1 "up over https without git.ca-file fails (exit 1)" up "${good[@]}"
cp "$OUTPUT" "$T/noca.out"
t_grep "says the certificate is not trusted" 'certificate' "$T/noca.out"
t_grep "and to set the CA file for a private CA" 'for a server with a private CA, set git\.ca-file' "$T/noca.out"
t_grep "naming the remote" "localhost:$port/git/gitops\.git" "$T/noca.out"
t_nogrep "not an authentication error" 'authentication|IDPMAKE_GIT_TOKEN' "$T/noca.out"
t_nogrep "never printing the token" "$GIT_PASS" "$T/noca.out"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- a CA file that does not exist -------------------------------------------------------
distro '  ca-file: missing.pem' "$url"
t_exit 1 "a ca-file that does not exist fails (exit 1)" up "${good[@]}"
t_grep "naming the file" 'cannot read the CA file .*missing\.pem' "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- a CA that did not sign the server's certificate --------------------------------------
distro '  ca-file: stranger.pem' "$url"
t_exit 1 "a ca-file with another CA fails (exit 1)" up "${good[@]}"
t_grep "on the certificate, asking whether it is the right CA" \
	'certificate.*is git\.ca-file the CA that signed the server.s certificate' "$OUTPUT"
t_nogrep "never printing the token" "$GIT_PASS" "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- the right CA, but a URL with the IP the certificate does not name ---------------------
distro '  ca-file: ca.pem' "https://127.0.0.1:$port/git/gitops.git"
t_exit 1 "https://127.0.0.1 with a certificate for localhost fails (exit 1)" up "${good[@]}"
t_grep "on the certificate" 'certificate' "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- the right CA and the right credentials ----------------------------------------------
distro '  ca-file: ca.pem' "$url"
t_ok "up with ca-file: ca.pem and IDPMAKE_GIT_USERNAME/IDPMAKE_GIT_TOKEN" up "${good[@]}"
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
t_nogrep "never printing the token" "$GIT_PASS" "$OUTPUT"
t_eq "the remote has one commit" 1 "$(commits)"
t_ok "with web's object" git -C "$srv" cat-file -e main:in-cluster/web/deployment.web.yaml

# ---- a change: one more commit -------------------------------------------------------------
mkmanifest d/packages/web/svc.yaml Service web
t_ok "up after a change" up "${good[@]}"
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
t_eq "the remote has one more commit" 2 "$(commits)"
t_ok "with the new object" git -C "$srv" cat-file -e main:in-cluster/web/service.web.yaml
t_eq "the parent is the first commit" 1 "$(git -C "$srv" rev-list --count main~1)"

# ---- a wrong token ------------------------------------------------------------------------
wrong=wrongtoken$(random_string)
printf '  extra: "yes"\n' >>d/packages/web/svc.yaml
t_exit 1 "up with a wrong token fails (exit 1)" up IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$wrong"
cp "$OUTPUT" "$T/wrong.out"
t_grep "naming IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$T/wrong.out"
t_nogrep "not a certificate error" 'certificate' "$T/wrong.out"
t_nogrep "never printing the token" "$wrong" "$T/wrong.out"
t_eq "the remote is unchanged" 2 "$(commits)"
t_exit 1 "the same with -v" env IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$wrong" \
	timeout 30 "$IDPMAKE" -v -C "$T/d" up
t_nogrep "-v does not print the token either" "$wrong" "$OUTPUT"

# ---- the right token again ----------------------------------------------------------------
t_ok "up with the right token after the failure" up "${good[@]}"
t_eq "the remote has the change" 3 "$(commits)"

# ---- ca-file is relative to the distro folder, not to the working directory ---------------
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkdir -p elsewhere
t_ok "up -f ../d/distro.yaml from another folder finds d/ca.pem" \
	sh -c 'cd elsewhere && exec env "$@"' sh "${good[@]}" timeout 30 "$IDPMAKE" -f ../d/distro.yaml up
t_eq "and pushes" 4 "$(commits)"

# ---- no secret in the state ---------------------------------------------------------------
t_ok "the state exists" test -d d/.idpmake
t_nostring "no file under .idpmake holds the token" "$GIT_PASS" "$T/d/.idpmake"
t_nostring "nor the wrong one" "$wrong" "$T/d/.idpmake"

t_done
