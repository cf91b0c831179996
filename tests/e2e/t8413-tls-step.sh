#!/bin/bash
# The distro's certificate (issue 24 #3, `tls`): a step `tls` makes a CA and
# a certificate for tls.hosts (libcrypto, no openssl child), keeps them 0600 in
# STATE/tls (the CA once), gives hooks their paths (IDPMAKE_TLS_CERT, _KEY,
# _CA), and idpmake's own Argo CD client trusts the CA when the distro
# gives no ca-file: an Argo CD emulator serving a certificate that CA
# signed is reached with no ca-file and no insecure (a server of those
# names only).  The CA may sign for those names alone: no address, URI
# or email name (issue 35 #9).  A no-op makes
# nothing; new names make a new CA and certificate, and rerun the hooks
# that ask for them, not the others; a file gone is made again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || t_bail "openssl missing: run ./configure --install-deps"
git init -q --bare -b main gitops.git
distro() {	# DOMAIN [ARGOCD-LINE]
	mkdistro d <<EOF
idpmake: 1
name: tlsd
git: {remote: "$T/gitops.git"}
# (the names change with the argument alone: the hooks' variables stay)
vars: {out: "$T", tld: test}
tls:
  hosts: [localhost, "*.$1.\${tld}"]
${2:-}
packages:
  hello:
    type: manifests
    path: packages/hello
    hooks:
      post:
        - {name: env, run: 'echo "\$IDPMAKE_TLS_CERT \$IDPMAKE_TLS_KEY \$IDPMAKE_TLS_CA" >"\$IDPMAKE_VAR_OUT/hook.env"; cat "\$IDPMAKE_TLS_CERT" >"\$IDPMAKE_VAR_OUT/hook.crt"', env: [IDPMAKE_TLS_CERT, IDPMAKE_TLS_KEY, IDPMAKE_TLS_CA]}
        - {name: other, run: 'echo "x\${IDPMAKE_TLS_CERT:-}" >>"\$IDPMAKE_VAR_OUT/other.runs"'}
EOF
}
distro one
mkmanifest d/packages/hello/cm.yaml ConfigMap hello
S=$T/d/.idpmake/tls

t_ok "up" idpmake -C d up
t_grep "the tls step ran" 'tls tls: a certificate for localhost, signed by the CA' "$STDOUT"
t_eq "the folder is 0700" 700 "$(stat -c %a "$S")"
t_eq "the CA's key is 0600" 600 "$(stat -c %a "$S/ca.key")"
t_eq "the certificate's key is 0600" 600 "$(stat -c %a "$S/tls.key")"
t_ok "the certificate is the CA's" openssl verify -CAfile "$S/ca.crt" "$S/tls.crt"
t_ok "its names" sh -c "openssl x509 -in '$S/tls.crt' -noout -ext subjectAltName >'$T/san'"
t_grep "are the hosts, expanded" 'DNS:localhost, DNS:\*\.one\.test' "$T/san"
t_ok "the CA is a CA" sh -c "openssl x509 -in '$S/ca.crt' -noout -ext basicConstraints | grep -q 'CA:TRUE'"
t_eq "the hook got the paths, absolute" "$S/tls.crt $S/tls.key $S/ca.crt" "$(cat "$T/hook.env")"
t_ok "and read the certificate there" cmp "$S/tls.crt" "$T/hook.crt"
t_nostring "no key reaches the output" "$(sed -n 2p "$S/ca.key")" "$OUTPUT" gitops.git d/.idpmake/logs
cp "$S/ca.crt" ca.1
cp "$S/tls.crt" tls.1

rm -f "$T/hook.env"
t_ok "a no-op up" idpmake -C d up
t_grep "runs nothing" '0 hooks' "$STDOUT"
t_fail "the hook did not run" test -e "$T/hook.env"
t_ok "the CA is the same" cmp ca.1 "$S/ca.crt"
t_ok "the certificate is the same" cmp tls.1 "$S/tls.crt"

t_ok "the CA's names are constrained to the hosts" sh -c "openssl x509 -in '$S/ca.crt' -noout -ext nameConstraints >'$T/nc'"
t_grep "localhost" '^ +DNS:localhost$' "$T/nc"
t_grep "and one.test for *.one.test" '^ +DNS:one\.test$' "$T/nc"
printf 'subjectAltName=DNS:evil.example\n' >evil.ext
openssl req -new -newkey rsa:2048 -nodes -subj /CN=evil.example -keyout evil.key -out evil.csr 2>/dev/null
openssl x509 -req -in evil.csr -CA "$S/ca.crt" -CAkey "$S/ca.key" -set_serial 9 -days 2 -extfile evil.ext -out evil.pem 2>/dev/null
t_fail "a certificate it signs for another name does not verify" openssl verify -CAfile "$S/ca.crt" evil.pem
# issue 35 #9: nor for a URI or an email name, even beside a name it may sign for
openssl x509 -in "$S/ca.crt" -noout -text >"$T/ca.txt"
t_ok "the CA's constraints are critical" grep -q 'Name Constraints: critical' "$T/ca.txt"
sed -n '/Excluded:/,/X509v3/p' "$T/ca.txt" >"$T/excluded"
t_grep "it excludes every URI" '^ +URI:$' "$T/excluded"
t_grep "and every email name" '^ +email:$' "$T/excluded"
t_grep "and every address" '^ +IP:0\.0\.0\.0/0\.0\.0\.0$' "$T/excluded"
sed -n '/Permitted:/,/Excluded:/p' "$T/ca.txt" >"$T/permitted"
t_grep "it permits URIs under .invalid alone (OpenSSL reads no empty constraint)" '^ +URI:\.invalid$' "$T/permitted"
t_grep "and email names" '^ +email:\.invalid$' "$T/permitted"
for alt in URI:https://localhost/ email:root@localhost; do
	printf 'subjectAltName=DNS:localhost,%s\n' "$alt" >alt.ext
	openssl x509 -req -in evil.csr -CA "$S/ca.crt" -CAkey "$S/ca.key" -set_serial 10 -days 2 -extfile alt.ext \
		-out alt.pem 2>/dev/null
	t_fail "a certificate it signs for DNS:localhost and ${alt%%:*} does not verify" \
		openssl verify -CAfile "$S/ca.crt" alt.pem
done
openssl x509 -in "$S/tls.crt" -noout -text >"$T/tls.txt"
t_grep "the certificate is a server's" 'TLS Web Server Authentication' "$T/tls.txt"
t_grep "and no CA" 'CA:FALSE' "$T/tls.txt"
t_grep "it names its CA's key" 'Authority Key Identifier' "$T/tls.txt"

distro two
t_ok "new names" idpmake -C d up
t_fail "a new CA, constrained to them" cmp -s ca.1 "$S/ca.crt"
t_ok "the certificate is the new CA's" openssl verify -CAfile "$S/ca.crt" "$S/tls.crt"
cp "$S/ca.crt" ca.1
t_fail "a new certificate" cmp -s tls.1 "$S/tls.crt"
t_ok "its names" sh -c "openssl x509 -in '$S/tls.crt' -noout -ext subjectAltName >'$T/san'"
t_grep "are the new ones" 'DNS:\*\.two\.test' "$T/san"
t_ok "the hook that uses it ran again" cmp "$S/tls.crt" "$T/hook.crt"
t_eq "a hook that does not ask for it ran once, without it, and not again" "x" "$(cat "$T/other.runs")"

rm "$S/tls.key"
t_ok "plan with a file gone" idpmake -C d plan
t_grep "says so" "a file of .*/tls is gone" "$OUTPUT"
t_ok "up" idpmake -C d up
t_ok "makes it again" test -s "$S/tls.key"
t_ok "with the same CA" cmp ca.1 "$S/ca.crt"

# ---- idpmake's Argo CD client trusts the CA --------------------------------------
srv=$T/srv
mkdir -p "$srv"
printf "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n" >"$srv/ext"
openssl req -new -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$srv/server.key" -out "$srv/server.csr" 2>/dev/null
openssl x509 -req -in "$srv/server.csr" -CA "$S/ca.crt" -CAkey "$S/ca.key" -set_serial 7 -days 2 \
	-extfile "$srv/ext" -out "$srv/server.pem" 2>/dev/null
t_ok "a server certificate the state's CA signed" openssl verify -CAfile "$S/ca.crt" "$srv/server.pem"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$T/gitops.git=$T/gitops.git" --repo-map "file://$T/gitops.git=$T/gitops.git" --op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--tls-cert "$srv/server.pem" --tls-key "$srv/server.key"
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
port=${ARGOCD_SERVER##*:}
unset ARGOCD_SERVER ARGOCD_OPTS
distro two "argocd: {server: \"localhost:$port\", repo-url: \"file://$T/gitops.git\"}"
t_ok "up syncs through Argo CD over TLS, no ca-file, no insecure" idpmake -C d up
t_grep "it synced" '1 synced' "$STDOUT"
sed -i '/^tls:/,/^  hosts/d' d/distro.yaml
t_exit 1 "without tls the same server is not trusted" idpmake -C d up --refresh
t_grep "a certificate error" 'certificate|SSL' "$OUTPUT"
# ---- idpmake's git client takes its own certificate from the remote (a pin) -------------
lighttpd=$(command -v lighttpd || ls /usr/sbin/lighttpd 2>/dev/null)
moddir=/usr/lib/lighttpd
[ -n "$lighttpd" ] && [ -f "$moddir/mod_openssl.so" ] ||
	t_bail "lighttpd with mod_openssl missing: run ./configure --install-deps"
unset ARGOCD_AUTH_TOKEN
git init -q --bare -b main local.git
gdistro() {	# REMOTE [TLS-HOSTS]
	mkdistro g <<EOF
idpmake: 1
name: gitpin
git: {remote: "$1"}
${2:+tls: {hosts: [$2]\}}
packages:
  hello: {type: manifests, path: packages/hello}
EOF
}
gdistro "$T/local.git" localhost
mkmanifest g/packages/hello/cm.yaml ConfigMap hello
t_ok "a distro with tls for localhost makes its certificate" idpmake -C g up
G=$T/g/.idpmake/tls
# start_https_git CERT KEY: lighttpd + git http-backend over TLS with that certificate; sets gport
start_https_git() {
	local srvdir=$T/https-$RANDOM p pid backend code
	backend=$(git --exec-path)/git-http-backend
	mkdir -p "$srvdir/repos"
	git init -q --bare -b main "$srvdir/repos/gitops.git"
	git -C "$srvdir/repos/gitops.git" config http.receivepack true
	printf 'idp:%s\n' "$GPASS" >"$srvdir/users"
	gport=
	cat >"$srvdir/lighttpd.conf.in" <<EOF
server.modules = ("mod_openssl", "mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi")
server.modules-directory = "$moddir"
server.document-root = "$srvdir/repos"
server.bind = "127.0.0.1"
server.port = @PORT@
server.systemd-socket-activation = "enable"
server.errorlog = "$srvdir/error.log"
ssl.engine = "enable"
ssl.pemfile = "$1"
ssl.privkey = "$2"
auth.backend = "plain"
auth.backend.plain.userfile = "$srvdir/users"
auth.require = ( "/git/" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
alias.url = ( "/git/" => "$backend/" )
setenv.set-environment = ( "GIT_PROJECT_ROOT" => "$srvdir/repos", "GIT_HTTP_EXPORT_ALL" => "1" )
cgi.assign = ( "" => "" )
EOF
	# the listening socket from listen_exec (lib.sh): the port is held from the moment it is chosen
	listen_exec "$srvdir/port" "$srvdir/lighttpd.conf.in" "$srvdir/lighttpd.conf" \
		"$lighttpd" -D -f "$srvdir/lighttpd.conf" >"$srvdir/stdout.log" 2>&1 &
	pid=$!
	t_pids="$t_pids $pid"
	p=$(read_port "$srvdir/port" "$pid") || t_bail "no port for lighttpd (TLS)"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		code=$(curl -sk -o /dev/null -w '%{http_code}' "https://localhost:$p/git/" 2>/dev/null)
		[ "$code" = 401 ] && { gport=$p; return 0; }
		sleep 0.1
	done
	t_bail "lighttpd (TLS) did not start"
}
GPASS=$(random_string)
export IDPMAKE_GIT_USERNAME=idp IDPMAKE_GIT_TOKEN=$GPASS
start_https_git "$G/tls.crt" "$G/tls.key"
gdistro "https://localhost:$gport/git/gitops.git" localhost
t_ok "the push over https takes the remote's certificate: idpmake's own" idpmake -C g up
t_grep "it pushed" 'commit pushed' "$STDOUT"
# the same CA, another certificate: not the pin, refused (the CA is not trusted by git)
printf 'subjectAltName=DNS:localhost\n' >other.ext
openssl req -new -newkey rsa:2048 -nodes -subj /CN=localhost -keyout other.key -out other.csr 2>/dev/null
openssl x509 -req -in other.csr -CA "$G/ca.crt" -CAkey "$G/ca.key" -set_serial 11 -days 2 -extfile other.ext \
	-out other.pem 2>/dev/null
start_https_git "$T/other.pem" "$T/other.key"
gdistro "https://localhost:$gport/git/gitops.git" localhost
t_exit 1 "a remote with another certificate of the same CA is refused" idpmake -C g up
t_grep "on its certificate" 'certificate' "$OUTPUT"
t_done
