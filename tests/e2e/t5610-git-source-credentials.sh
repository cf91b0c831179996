#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A git source's server never receives the GitOps token: sources get
# IDPMAKE_SOURCE_TOKEN / IDPMAKE_SOURCE_USERNAME, and no credential goes over
# plain http without IDPMAKE_GIT_ALLOW_HTTP=1.  The source's server is a tiny
# HTTP server on loopback that answers 401 to everything and records the
# Authorization header of each request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# start_recorder: $T/auth.log gets one line per request, the decoded
# Authorization header or "-"; sets REC_PORT
start_recorder() {
	python3 - "$T/auth.log" "$T/rec.port" <<'EOF' &
import base64, http.server, sys
log, portfile = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        a = self.headers.get("Authorization")
        if a and a.startswith("Basic "):
            a = "Basic " + base64.b64decode(a[6:]).decode("utf-8", "replace")
        with open(log, "a") as f:
            f.write((a or "-") + "\n")
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="src"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST = answer
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
EOF
	t_pids="$t_pids $!"
	for _ in $(seq 100); do
		[ -s "$T/rec.port" ] && break
		sleep 0.1
	done
	REC_PORT=$(cat "$T/rec.port" 2>/dev/null) || t_bail "the recording server did not start"
}
start_recorder
: >"$T/auth.log"

mkdistro d <<EOF
idpmake: 1
name: srccreds
packages:
  ext:
    type: manifests
    git: {url: http://127.0.0.1:$REC_PORT/org/ext.git, ref: main}
    namespace: apps
EOF

gitops_token=gitops-$(random_string)
source_token=source-$(random_string)
plan() { env "$@" timeout 30 "$IDPMAKE" -C "$T/d" plan; }

# ---- the GitOps token is never offered to a source ----------------------------------
t_exit 1 "a source answering 401 fails the plan (exit 1)" \
	plan IDPMAKE_GIT_TOKEN="$gitops_token" IDPMAKE_GIT_USERNAME=ops IDPMAKE_GIT_ALLOW_HTTP=1
t_grep "the source was asked" '.' "$T/auth.log"
t_nogrep "the source's server never received the GitOps token" "$gitops_token" "$T/auth.log"
t_nogrep "nor any credentials" '^Basic' "$T/auth.log"
t_grep "the error names the source's variables" 'IDPMAKE_SOURCE_TOKEN' "$OUTPUT"
t_nogrep "and does not show the GitOps token" "$gitops_token" "$OUTPUT"

# ---- no credentials over plain http without the opt-in ---------------------------------
: >"$T/auth.log"
t_exit 1 "IDPMAKE_SOURCE_TOKEN over plain http without IDPMAKE_GIT_ALLOW_HTTP fails" \
	plan IDPMAKE_SOURCE_TOKEN="$source_token" IDPMAKE_GIT_TOKEN="$gitops_token"
t_grep "naming IDPMAKE_GIT_ALLOW_HTTP" 'plain http.*IDPMAKE_GIT_ALLOW_HTTP=1' "$OUTPUT"
t_nogrep "the source token did not go out" "$source_token" "$T/auth.log"
t_nogrep "nor the GitOps token" "$gitops_token" "$T/auth.log"
t_nogrep "nor any credentials" '^Basic' "$T/auth.log"

# ---- with the opt-in: the source's own token, and a warning ----------------------------------
: >"$T/auth.log"
t_exit 1 "with IDPMAKE_GIT_ALLOW_HTTP=1 the source token is offered (and refused: exit 1)" \
	plan IDPMAKE_SOURCE_TOKEN="$source_token" IDPMAKE_SOURCE_USERNAME=reader \
	IDPMAKE_GIT_TOKEN="$gitops_token" IDPMAKE_GIT_ALLOW_HTTP=1
t_grep "the server received IDPMAKE_SOURCE_USERNAME:IDPMAKE_SOURCE_TOKEN" "^Basic reader:$source_token\$" "$T/auth.log"
t_nogrep "and never the GitOps token" "$gitops_token" "$T/auth.log"
t_grep "a warning names the host and plain http" 'warning: sending .* to 127\.0\.0\.1 over plain http' "$STDERR"
t_nogrep "the source token is not shown" "$source_token" "$OUTPUT"

# ---- a password in the source's URL: sent as the URL's, never shown or stored ----------------------
: >"$T/auth.log"
pw="p#w$(random_string)"
sed -i "s|url: http://|url: http://carol:${pw//#/%23}@|" d/distro.yaml
t_exit 1 "a source URL with a %23 password (refused: exit 1)" plan IDPMAKE_GIT_ALLOW_HTTP=1
t_grep "the server received the URL's user and decoded password" "^Basic carol:$pw\$" "$T/auth.log"
t_nogrep "the password is not shown" "${pw#p#}" "$OUTPUT"
t_ok "nor stored under .idpmake" sh -c "! grep -r -a -F -q -e '${pw#p#}' '$T/d/.idpmake'"

t_done
