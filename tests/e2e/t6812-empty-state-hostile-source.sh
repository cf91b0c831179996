#!/bin/bash
# An empty state's proof of a source in another repository (lsremote.c)
# against a hostile server at the Application's repoURL:
#   silent   accepts the connection and never answers: the proof gives up
#            in time (the Application syncs), the run does not hang
#   auth     asks for credentials: none is sent, neither IDPMAKE_GIT_TOKEN
#            nor IDPMAKE_SOURCE_TOKEN
#   redir    redirects to another host: not followed (Argo CD follows none)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

ext=$T/ext.git
git init -q --bare -b main "$ext" || t_bail "git init failed"
hlog=$T/hostile.log
: >"$hlog"
cat >"$T/hostile.py" <<'EOF'
import http.server, os, socketserver, sys, time
log = open(sys.argv[2], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write("GET %s\n%s\n" % (self.path, self.headers))
        if self.path.startswith("/silent"):
            time.sleep(3600)
        elif self.path.startswith("/redir"):
            self.send_response(302)
            self.send_header("Location", "http://localhost:%d/landing/x.git/info/refs?service=git-upload-pack" % port)
            self.end_headers()
        else:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="x"')
            self.send_header("Content-Length", "0")
            self.end_headers()
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
srv = S(("127.0.0.1", 0), H)
port = srv.server_address[1]
open(sys.argv[1] + ".tmp", "w").write("%d\n" % port)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
EOF
# the server binds a port the kernel picks and says which (a port chosen
# before, then bound, can be another script's server by then)
python3 "$T/hostile.py" "$T/hostile.port" "$hlog" &
t_pids="$t_pids $!"
port=$(read_port "$T/hostile.port" $!) || t_bail "the hostile server did not start"
h=http://127.0.0.1:$port
t_wait_for 10 curl -s -o /dev/null "$h/auth/" || t_bail "the hostile server did not start"

# shellcheck disable=SC2119 # emulator arguments follow
start_gitops_argocd --repo-map "$h/silent/x.git=$ext" --repo-map "$h/auth/x.git=$ext" --repo-map "$h/redir/x.git=$ext"
work=$T/ext-work
mkdir -p "$work/app"
mkmanifest "$work/app/cm.yaml" ConfigMap ext
git -C "$work" init -q -b main && git -C "$work" add -A &&
	git -C "$work" -c user.name=T -c user.email=t@example.com commit -q -m one &&
	git -C "$work" push -q "$ext" main || t_bail "cannot fill the other repository"

mkdistro d <<EOF
idpmake: 1
name: hostile-source
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  silent: {type: argocd-app, path: stacks/silent}
  auth: {type: argocd-app, path: stacks/auth}
  redir: {type: argocd-app, path: stacks/redir}
EOF
cd d || exit 1
for a in silent auth redir; do
	mkdir -p stacks/$a
	cat >stacks/$a/app.yaml <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: from-$a, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: $a}
  source: {repoURL: "$h/$a/x.git", targetRevision: main, path: app}
EOF
done
export IDPMAKE_LSREMOTE_TIMEOUT_MS=3000
export IDPMAKE_GIT_TOKEN=gitops-secret-$RANDOM$RANDOM IDPMAKE_SOURCE_TOKEN=source-secret-$RANDOM$RANDOM
t_ok "first up syncs the three" idpmake up
t_grep "3 synced" ' 3 synced' "$STDOUT"

rm -rf .idpmake
emu_reset
# a run that hangs on the silent server is killed at 120 s, and fails here
t_ok "empty state: up ends" timeout 120 "$IDPMAKE" up -v
t_grep "none of the three is proven: 3 synced" '^idpmake: 0 rendered, nothing pushed, 3 synced' "$STDOUT"
t_grep "-v says why" 'cannot list .*/silent/x.git: no answer in time' "$STDERR"
t_grep "the silent server was asked" '^GET /silent/' "$hlog"
t_grep "the asking one" '^GET /auth/' "$hlog"
t_grep "the redirecting one" '^GET /redir/' "$hlog"
t_nogrep "its redirect is not followed" '^GET /landing/' "$hlog"
t_nogrep "no Authorization header reached it" '^[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]:' "$hlog"
t_nostring "nor the GitOps token" "$IDPMAKE_GIT_TOKEN" "$hlog"
t_nostring "nor the source token" "$IDPMAKE_SOURCE_TOKEN" "$hlog"

t_done
