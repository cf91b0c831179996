#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# An answer with an empty body (a proxy's bare 502, a 404 from a router)
# is a failed sync step that names the status, not a crash: resp_reset left
# the body's buffer NULL and decode read it as text (found by
# tests/fuzz/fuzz-argocd; its input is corpus/argocd/crash-empty-body).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=10

# a server that answers every request with STATUS and no body (but up's
# pre-flight GET /api/version, answered as Argo CD answers a logged-in caller)
start_empty_server() {	# start_empty_server STATUS
	rm -f "$T/srv.port"
	python3 - "$1" "$T/srv.port" >"$T/srv.log" 2>&1 <<'EOF' &
import http.server, sys
status, portfile = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if self.path == "/api/version":
            body = b'{"Version": "v3.6.0", "BuildDate": "2026-08-22T00:00:00Z"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = answer
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(portfile, "w").write(str(s.server_address[1]))
s.serve_forever()
EOF
	t_pids="$t_pids $!"
	t_wait_for 10 test -s "$T/srv.port" || t_bail "the empty-answer server did not start"
	export ARGOCD_SERVER=127.0.0.1:$(cat "$T/srv.port") ARGOCD_OPTS=--plaintext
}

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
export ARGOCD_AUTH_TOKEN=eyJhbGciOiJIUzI1NiJ9.e30.c2ln
mkdistro d <<EOF
idpmake: 1
name: empty-answer
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app

for status in 502 404 403; do
	kill $t_pids 2>/dev/null
	start_empty_server $status
	t_exit 1 "HTTP $status with no body: the sync step fails (no crash)" idpmake -C d up
	t_grep "HTTP $status with no body: the error names the status" "in-cluster/app:sync: .*(HTTP |\\()$status" "$OUTPUT"
	t_nogrep "HTTP $status with no body: no sanitizer report" 'runtime error|AddressSanitizer|Segmentation' "$OUTPUT"
done
t_done
