#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Credentials never follow a redirect to another server.  Server A (the
# GitOps remote's or the source's host) redirects to server B on another
# port; B answers 401 to everything and records what it was sent.  Under
# /redir/ A redirects at once; under /authfirst/ it asks for credentials
# first (and gets them: it is the remote's own host), then redirects.  B
# never receives a credential, and the error says a server other than the
# remote's asked, even over plain http with IDPMAKE_GIT_ALLOW_HTTP=1 (it
# used to tell a source's user to set the variable they had set).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

python3 - "$T/auth.log" "$T/a.port" <<'EOF2' &
import base64, http.server, os, sys, threading
log, portfile = sys.argv[1], sys.argv[2]
def record(who, h):
    a = h.headers.get("Authorization")
    if a and a.startswith("Basic "):
        a = "Basic " + base64.b64decode(a[6:]).decode("utf-8", "replace")
    with open(log, "a") as f:
        f.write("%s %s %s\n" % (who, h.path, a or "-"))
    return a
def reply(h, code, headers):
    h.send_response(code)
    for k, v in headers:
        h.send_header(k, v)
    h.send_header("Content-Length", "0")
    h.end_headers()
class B(http.server.BaseHTTPRequestHandler):
    def answer(self):
        record("B", self)
        reply(self, 401, [("WWW-Authenticate", 'Basic realm="b"')])
    do_GET = do_POST = answer
    def log_message(self, *a):
        pass
b = http.server.ThreadingHTTPServer(("127.0.0.1", 0), B)
class A(http.server.BaseHTTPRequestHandler):
    def answer(self):
        a = record("A", self)
        if self.path.startswith("/authfirst/") and not a:
            reply(self, 401, [("WWW-Authenticate", 'Basic realm="a"')])
        else:
            reply(self, 302, [("Location", "http://127.0.0.1:%d%s" % (b.server_address[1], self.path))])
    do_GET = do_POST = answer
    def log_message(self, *a):
        pass
a = http.server.ThreadingHTTPServer(("127.0.0.1", 0), A)
threading.Thread(target=b.serve_forever, daemon=True).start()
with open(portfile + ".tmp", "w") as f:
    f.write(str(a.server_address[1]))
os.rename(portfile + ".tmp", portfile)
a.serve_forever()
EOF2
t_pids="$t_pids $!"
t_wait_for 10 test -s "$T/a.port" || t_bail "the redirecting server did not start"
A=http://127.0.0.1:$(cat "$T/a.port")

gitops_token=gitops-$(random_string)
source_token=source-$(random_string)

# gitops DIR MODE: a distro whose GitOps remote is A's /MODE/gitops.git
gitops() {
	mkdistro "$1" <<EOF2
idpmake: 1
name: redirect
git:
  remote: $A/$2/gitops.git
packages:
  web:
    type: manifests
    path: p
    namespace: apps
EOF2
	mkmanifest "$1/p/cm.yaml" ConfigMap web
}
# srcdistro DIR MODE: a distro with one package from A's /MODE/src.git
srcdistro() {
	mkdistro "$1" <<EOF2
idpmake: 1
name: redirect
packages:
  ext:
    type: manifests
    git: {url: $A/$2/src.git, ref: main}
    namespace: apps
EOF2
}
run() { local dir=$1 cmd=$2; shift 2; env "$@" timeout 30 "$IDPMAKE" -C "$T/$dir" "$cmd"; }
creds=(IDPMAKE_GIT_TOKEN="$gitops_token" IDPMAKE_SOURCE_TOKEN="$source_token" IDPMAKE_GIT_ALLOW_HTTP=1)

for mode in redir authfirst; do
	: >"$T/auth.log"
	gitops "g-$mode" "$mode"
	t_exit 1 "GitOps remote, $mode: up fails (exit 1)" run "g-$mode" up "${creds[@]}"
	t_grep "GitOps remote, $mode: B was asked" "^B /$mode/gitops\\.git" "$T/auth.log"
	t_nogrep "GitOps remote, $mode: B received no credential" '^B .* Basic' "$T/auth.log"
	t_grep "GitOps remote, $mode: the error says another server asked" 'server other than 127\.0\.0\.1' "$STDERR"
	t_nogrep "GitOps remote, $mode: no token shown" "$gitops_token|$source_token" "$OUTPUT"

	: >"$T/auth.log"
	srcdistro "s-$mode" "$mode"
	t_exit 1 "source, $mode: plan fails (exit 1)" run "s-$mode" plan "${creds[@]}"
	t_grep "source, $mode: B was asked" "^B /$mode/src\\.git" "$T/auth.log"
	t_nogrep "source, $mode: B received no credential" '^B .* Basic' "$T/auth.log"
	t_grep "source, $mode: the error says another server asked" "server other than the source's" "$STDERR"
	t_nogrep "source, $mode: and does not ask for the opt-in already given" 'set IDPMAKE_GIT_ALLOW_HTTP' "$STDERR"
	t_nogrep "source, $mode: no token shown" "$gitops_token|$source_token" "$OUTPUT"
done
# the remote's own host asked first: it, and only it, got its own credential
t_grep "A (the source's host) got the source token" "^A /authfirst/src\\.git.* Basic git:$source_token\$" "$T/auth.log"
t_nogrep "and never the GitOps token" "$gitops_token" "$T/auth.log"
t_done
