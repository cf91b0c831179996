#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The cnoe distro's hooks and Gitea's admin password (issue 35 #3): no
# process they start is given it in its arguments (/proc/PID/cmdline, which
# any user may read), and it goes only to a server whose certificate is
# checked with the CA of the step tls (IDPMAKE_TLS_CA): never curl -k, never
# git -c http.sslVerify=false.  Each hook runs as idpmake runs it (sh, its
# variables, a kubeconfig) under strace, which records every execve of the
# hook and its children, whatever they are:
#  - gitea-admin.sh makes gitea/gitea-credential in the Kubernetes API
#    emulator (the real kubectl);
#  - gitea-repos.sh asks Gitea's API for the two repositories: a fake curl
#    on PATH answers it, takes the login from curl's config on its stdin
#    (-K -), and refuses a request whose --cacert is not the CA;
#  - backstage-templates.sh clones and pushes the entities repository: a git
#    wrapper on PATH serves github.com/cnoe-io/stacks from a local repository
#    and Gitea from a local bare repository, and lets a clone or a push to
#    Gitea through only with the Authorization header of the password and
#    the CA from git's configuration (GIT_CONFIG_*, scoped to Gitea's URL).
# Both give the CA alone: an empty folder as curl's --capath and git's
# http.sslCAPath (libcurl reads the system's CA folder beside the CA file
# otherwise).  Then, with the real curl and git (root only: system_trust), a
# server whose certificate the system trusts but the CA given does not: both
# hooks fail on the certificate and the password never reaches it; given the
# server's own CA (the control), both reach it with the login.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null 2>&1 || t_skip_rest "strace is not installed"
command -v openssl >/dev/null 2>&1 || t_skip_rest "openssl is not installed"
strace -f -qq -e trace=execve -o /dev/null true 2>/dev/null || t_skip_rest "strace cannot trace here (ptrace refused)"
hooks=$top/distros/cnoe/hooks
real_git=$(command -v git)
real_kubectl=$(command -v kubectl) || t_skip_rest "kubectl is not installed"

# shellcheck disable=SC2119 # no arguments
start_kube_emulator
kubeconfig_for "$T/kubeconfig" emu
make_tls DNS:cnoe.localtest.me "$T/ca"
mkdir -p "$T/bin" "$T/gitea/giteaAdmin"

# the environment idpmake gives a hook (exec.c's allowlist and the hook's variables)
h_host=cnoe.localtest.me h_port=8443 h_ca=$T/ca/ca.pem
hook() {	# LOG NAMESPACE SCRIPT
	local log=$1 ns=$2 script=$3
	env -i PATH="$T/bin:$PATH" HOME="$T" KUBECONFIG="$T/kubeconfig" IDPMAKE_NAMESPACE="$ns" \
		IDPMAKE_VAR_HOST="$h_host" IDPMAKE_VAR_PORT="$h_port" IDPMAKE_TLS_CA="$h_ca" \
		strace -f -qq -e trace=execve -s 65536 -o "$T/$log" sh "$hooks/$script"
}
# the execve lines of a strace log, its processes' arguments
argv_of() { grep -h 'execve(' "$@"; }

# ---- gitea-admin.sh -------------------------------------------------------------------
t_ok "gitea-admin.sh makes the Secret" hook admin.strace gitea gitea-admin.sh
t_grep "(it says so)" 'made gitea/gitea-credential' "$OUTPUT"
PASS=$("$real_kubectl" --kubeconfig "$T/kubeconfig" -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
t_ok "a password of 32 hex digits" sh -c "printf '%s' '$PASS' | grep -qE '^[0-9a-f]{32}\$'"
argv_of "$T/admin.strace" >"$T/admin.argv"
t_grep "the strace log has kubectl's execve" 'kubectl.*create.*secret.*gitea-credential' "$T/admin.argv"
t_nostring "the password is in no process's arguments" "$PASS" "$T/admin.argv"
t_ok "a second run keeps it" hook admin2.strace gitea gitea-admin.sh
t_grep "(it says so)" 'exists; kept' "$OUTPUT"

# ---- gitea-repos.sh: a fake curl for Gitea's API ----------------------------------------
cat >"$T/bin/curl" <<EOF
#!/bin/sh
T=$(t_shquote "$T")
EOF
cat >>"$T/bin/curl" <<'EOF'
user='' cacert='' capath='' url='' data='' wcode=''
while [ $# -gt 0 ]; do
	case $1 in
	-u) user=$2; shift ;;
	-K) [ "$2" = - ] && user=$(sed -n 's/^user = "\(.*\)"$/\1/p' | sed 's/\\\(.\)/\1/g'); shift ;;
	--cacert) cacert=$2; shift ;;
	--capath) capath=$2; shift ;;
	-k|--insecure|-[!-]*k*) echo "insecure" >>"$T/curl.refused" ;;
	-d) data=$2; shift ;;
	-w) wcode=1; shift ;;
	-o|-H|-X) shift ;;
	-*) ;;
	*) url=$1 ;;
	esac
	shift
done
code=200
case $url in
*/api/v1/user/repos)
	# the login goes to a server checked with the CA (/version, which takes none, answers anyone)
	cmp -s "$cacert" "$T/ca/ca.pem" || { echo "not the CA: '$cacert'" >>"$T/curl.refused"; code=495; }
	# ... alone: an empty CA folder, not the system's
	[ -d "$capath" ] && [ -z "$(ls -A "$capath")" ] || { echo "not the CA alone: --capath '$capath'" >>"$T/curl.refused"; code=495; }
	if [ $code = 200 ]; then
		printf '%s\n' "$user" >>"$T/curl.logins"
		name=$(printf '%s' "$data" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
		code=201
		[ -z "$user" ] && code=401
		[ $code = 201 ] && [ -d "$T/gitea/giteaAdmin/$name.git" ] && code=409
		[ $code = 201 ] && git init -q --bare -b main "$T/gitea/giteaAdmin/$name.git"
	fi
	;;
esac
[ -z "$wcode" ] || printf '%s' "$code"
case $code in 2*) exit 0 ;; esac
[ -n "$wcode" ] && exit 0
exit 22
EOF
chmod +x "$T/bin/curl"
t_ok "gitea-repos.sh makes the repositories" hook repos.strace gitea gitea-repos.sh
t_grep "(it says so)" 'created giteaAdmin/idpbuilder-localdev-backstage-templates-entities' "$OUTPUT"
t_eq "Gitea's API got the login, twice" "giteaAdmin:$PASS giteaAdmin:$PASS" "$(tr '\n' ' ' <"$T/curl.logins" | sed 's/ $//')"
t_fail "curl was never told -k, and always given the CA alone (an empty --capath)" test -s "$T/curl.refused"
argv_of "$T/repos.strace" >"$T/repos.argv"
t_grep "the strace log has curl's execve" 'curl.*api/v1/user/repos' "$T/repos.argv"
t_nostring "the password is in no process's arguments" "$PASS" "$T/repos.argv"

# ---- backstage-templates.sh: a git wrapper for GitHub and Gitea ---------------------------
mkdir -p "$T/stacks/ref-implementation/backstage-templates/entities"
printf 'url: https://cnoe.localtest.me:8443/gitea\nhost: cnoe.localtest.me\n' \
	>"$T/stacks/ref-implementation/backstage-templates/entities/catalog-info.yaml"
"$real_git" -C "$T/stacks" init -q -b main &&
	"$real_git" -C "$T/stacks" add -A &&
	"$real_git" -C "$T/stacks" -c user.name=t -c user.email=t@t commit -q -m stacks
cat >"$T/bin/git" <<EOF
#!/bin/bash
T=$(t_shquote "$T")
REAL=$(t_shquote "$real_git")
EOF
cat >>"$T/bin/git" <<'EOF'
# GitHub: the local stacks, at its tip for the pinned commit
gitea=https://cnoe.localtest.me:8443/gitea/
args=() to_gitea=''
for a in "$@"; do
	case $a in
	https://github.com/cnoe-io/stacks) a=$T/stacks ;;
	[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) [ ${#a} = 40 ] && a=main ;;
	http.sslVerify=false|*sslverify=false) echo "sslVerify=false" >>"$T/git.refused" ;;
	https://*@cnoe.localtest.me:8443/gitea/*) to_gitea=1; echo "a password in the URL" >>"$T/git.refused"; a=$T/gitea/${a#*/gitea/} ;;
	"$gitea"*) to_gitea=1; a=$T/gitea/${a#"$gitea"} ;;
	esac
	args+=("$a")
done
if [ -n "$to_gitea" ]; then
	# as Gitea behind the ingress would: the login in the header, the certificate checked with the CA
	auth='' ca='' capath=''
	for ((i = 0; i < ${GIT_CONFIG_COUNT:-0}; i++)); do
		k=GIT_CONFIG_KEY_$i v=GIT_CONFIG_VALUE_$i
		case ${!k} in
		"http.${gitea}.extraHeader") auth=${!v} ;;
		"http.${gitea}.sslCAInfo") ca=${!v} ;;
		"http.${gitea}.sslCAPath") capath=${!v} ;;
		esac
	done
	cmp -s "$ca" "$T/ca/ca.pem" || { echo "not the CA: '$ca'" >>"$T/git.refused"; exit 128; }
	[ -d "$capath" ] && [ -z "$(ls -A "$capath")" ] || { echo "not the CA alone: sslCAPath '$capath'" >>"$T/git.refused"; exit 128; }
	[ "$auth" = "Authorization: Basic $(printf '%s' "giteaAdmin:$(cat "$T/password")" | base64 -w0)" ] ||
		{ echo "fatal: Authentication failed" >&2; exit 128; }
	for a in "$@"; do
		case $a in clone|push|fetch|ls-remote) echo "$a" >>"$T/git.gitea"; break ;; esac
	done
fi
exec "$REAL" "${args[@]}"
EOF
chmod +x "$T/bin/git"
printf '%s' "$PASS" >"$T/password"
t_ok "backstage-templates.sh pushes the entities" hook backstage.strace backstage backstage-templates.sh
t_grep "(it says so)" 'pushed to https://cnoe.localtest.me:8443/gitea/giteaAdmin/idpbuilder-localdev-backstage-templates-entities.git' "$OUTPUT"
t_fail "git was never told sslVerify=false, nor given a password in a URL, and always the CA alone" test -s "$T/git.refused"
t_eq "it cloned and pushed Gitea's repository with the login" "clone push" "$(tr '\n' ' ' <"$T/git.gitea" | sed 's/ $//')"
"$real_git" --git-dir="$T/gitea/giteaAdmin/idpbuilder-localdev-backstage-templates-entities.git" show main:catalog-info.yaml >"$T/pushed" 2>&1
t_grep "the entities are there, with the host" '^host: cnoe.localtest.me$' "$T/pushed"
argv_of "$T/backstage.strace" >"$T/backstage.argv"
t_grep "the strace log has git's push" 'git.*push' "$T/backstage.argv"
t_nostring "the password is in no process's arguments" "$PASS" "$T/backstage.argv"
t_nostring "nor the login's base64" "$(printf '%s' "giteaAdmin:$PASS" | base64 -w0)" "$T/backstage.argv"
t_ok "a second run" hook backstage2.strace backstage backstage-templates.sh
t_grep "finds it up to date" 'is up to date' "$OUTPUT"

# ---- the CA alone, with the real curl and git: a server the system trusts ---------------
# An HTTPS server on loopback that answers anything (200; 201 to a POST) and
# logs each request with the Basic login it carried; its certificate is from
# sys/ca.pem, which the system trusts for the script (system_trust, root
# only); the hooks are given sys/stranger.pem, or (the control) sys/ca.pem.
make_tls DNS:localhost "$T/sys"
cat >"$T/server.py" <<'ZZ'
import base64, http.server, ssl, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self):
        self.rfile.read(int(self.headers.get('Content-Length') or 0))
        auth = self.headers.get('Authorization') or ''
        login = base64.b64decode(auth[6:]).decode() if auth.startswith('Basic ') else '-'
        with open(sys.argv[3], 'a') as log:
            log.write('%s %s %s\n' % (self.command, self.path, login))
        self.send_response(201 if self.command == 'POST' else 200)
        self.send_header('Content-Length', '2')
        self.end_headers()
        self.wfile.write(b'{}')
    do_GET = do_POST = answer
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
ZZ
python3 "$T/server.py" "$T/sys/server.pem" "$T/sys/server.key" "$T/server.log" >"$T/server.port" 2>"$T/server.err" &
t_pids="$t_pids $!"
for _ in $(seq 50); do [ -s "$T/server.port" ] && break; sleep 0.1; done
[ -s "$T/server.port" ] || { cat "$T/server.err" >&2; t_bail "the HTTPS server did not start"; }
port=$(cat "$T/server.port")
system_trust "$T/sys/ca.pem" "localhost:$port"
t_ok "set-up: curl trusts the server with the system's CAs alone" curl -fsS -m 10 -o /dev/null "https://localhost:$port/"
# the real curl (git's wrapper passes anything but cnoe.localtest.me:8443 to the real git);
# a sleep that does not, for gitea-repos.sh's 60 tries
rm -f "$T/bin/curl"
printf '#!/bin/sh\n' >"$T/bin/sleep" && chmod +x "$T/bin/sleep"
h_host=localhost h_port=$port
logins() { sed -n 's/^[A-Z]* [^ ]* \(giteaAdmin:.*\)$/\1/p' "$T/server.log" | sort -u; }

: >"$T/server.log"
h_ca=$T/sys/ca.pem
t_ok "control: given the server's own CA, gitea-repos.sh makes the repositories" hook real-repos.strace gitea gitea-repos.sh
t_eq "... the server got the login" "giteaAdmin:$PASS" "$(logins)"
: >"$T/server.log"
hook real-backstage.strace backstage backstage-templates.sh >"$T/real-backstage.out" 2>&1
t_eq "control: given the server's own CA, backstage-templates.sh's git reaches it with the login" "giteaAdmin:$PASS" "$(logins)"

: >"$T/server.log"
h_ca=$T/sys/stranger.pem
t_exit 1 "given another CA than the server's, gitea-repos.sh fails" hook stranger-repos.strace gitea gitea-repos.sh
t_grep "... on the certificate" 'does not answer: curl: \(60\) SSL certificate problem' "$OUTPUT"
t_nostring "... and the password never reached the server" "$PASS" "$T/server.log"
t_eq "... nor did any request" "" "$(cat "$T/server.log")"
: >"$T/server.log"
t_exit 128 "given another CA than the server's, backstage-templates.sh fails" hook stranger-backstage.strace backstage backstage-templates.sh
t_grep "... on the certificate" 'certificate verification failed' "$OUTPUT"
t_nostring "... and the password never reached the server" "$PASS" "$T/server.log"
t_eq "... nor did any request" "" "$(cat "$T/server.log")"
argv_of "$T"/real-*.strace "$T"/stranger-*.strace >"$T/real.argv"
t_grep "the strace logs have the real curl's execve" 'curl.*--cacert' "$T/real.argv"
t_nostring "the password is in no process's arguments" "$PASS" "$T/real.argv"

t_done
