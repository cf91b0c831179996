#!/bin/bash
# A server and its credential come from the same place (issue 19 #2):
# ARGOCD_SERVER naming another server than a context chosen for the run is
# refused, and a default context's token never follows ARGOCD_SERVER to
# another host; IDPMAKE_GIT_TOKEN is not sent to a remote the context gave
# unless the context names it (git-token-env), and a context's git-token-env
# is what reaches its remote.  A listener records every Authorization header.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10
start_git_server
qs=$(new_remote qs) || t_bail "new_remote failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
git init -q --bare -b main "$T/local.git" || t_bail "git init failed"
start_argocd_emulator --repo-map "$qs=$T/git-srv/repos/qs.git" --repo-map "$T/local.git=$T/local.git" --repo-map "file://$T/local.git=$T/local.git" --op-ms 20 --health-ms 20 --reconcile-ms 10
server=$ARGOCD_SERVER
unset ARGOCD_SERVER		# ARGOCD_OPTS=--plaintext stays
printf '%s\n' "$ARGOCD_TEST_TOKEN" >"$T/prod-token"

# the listener: answers 401 to everything, records each request's Authorization header
cat >listen.py <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def any(self):
        with open(sys.argv[2], "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Authorization", "-")))
        self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers()
    do_GET = do_POST = do_PUT = do_DELETE = any
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
: >heard.log
python3 listen.py listen.port heard.log &
t_pids="$t_pids $!"
t_wait_for 60 test -s listen.port || t_bail "the listener did not start"
listener=127.0.0.1:$(cat listen.port)

mkdistro d <<EOF
idpmake: 1
name: creds
git: {remote: "$T/local.git"}
argocd: {repo-url: "file://$T/local.git"}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
t_ok "context add prod (its server, its token file)" \
	idpmake context add prod --argocd-server "$server" --token-file "$T/prod-token"

# ---- ARGOCD_SERVER against a context chosen for the run ----------------------
t_exit 2 "ARGOCD_SERVER=listener with --context prod is refused" \
	env ARGOCD_SERVER="$listener" "$IDPMAKE" --context prod -C d up
t_grep "naming both servers" "ARGOCD_SERVER names the Argo CD server $listener, and the context 'prod' \(--context\) names $server" "$STDERR"
t_exit 2 "so is ARGOCD_OPTS --server" \
	env ARGOCD_OPTS="--plaintext --server $listener" "$IDPMAKE" --context prod -C d up
t_nostring "prod's token never reached the listener" "$ARGOCD_TEST_TOKEN" heard.log
t_eq "nor did anything else" "" "$(cat heard.log)"

# ---- a default context's server is not replaced by ARGOCD_SERVER (issue 33 #1) ------
t_exit 2 "ARGOCD_SERVER=listener under the default context is refused" env ARGOCD_SERVER="$listener" "$IDPMAKE" -C d up
t_grep "naming both, and the ways out" "the context 'prod' \(context use\) names the Argo CD server $server, and ARGOCD_SERVER names $listener: .*unset ARGOCD_SERVER to use the context's" "$OUTPUT"
t_nostring "prod's token never reached the listener" "$ARGOCD_TEST_TOKEN" heard.log
idpmake -C d forget >/dev/null 2>&1
t_ok "the default context's own server gets its token" idpmake -C d up
t_grep "synced" '1 synced' "$STDOUT"
idpmake -C d forget >/dev/null 2>&1

# ---- a context's own token, never the environment's (review of issue 33) ------------
t_ok "context add tokened (its server, its token from \$MYTOK)" \
	idpmake context add tokened --argocd-server "$server" --token-env MYTOK
t_exit 1 "--context tokened with MYTOK unset: ARGOCD_AUTH_TOKEN is not used for its server" \
	env -u MYTOK ARGOCD_AUTH_TOKEN=env-token-for-another-server "$IDPMAKE" --context tokened -C d up
t_grep "naming the context's variable" "the context 'tokened' takes the Argo CD token from \\\$MYTOK, which is not set" "$OUTPUT"
t_nostring "the environment's token reached no request" "env-token-for-another-server" "$T/emu.log"
t_ok "with MYTOK set, the context's token is used, not ARGOCD_AUTH_TOKEN" \
	env MYTOK="$ARGOCD_TEST_TOKEN" ARGOCD_AUTH_TOKEN=env-token-for-another-server "$IDPMAKE" --context tokened -C d up
idpmake -C d forget >/dev/null 2>&1

# ---- IDPMAKE_GIT_TOKEN and a context's git-remote -----------------------------
t_ok "context add git (a remote, no git-token-env)" idpmake context add git --git-remote "$qs"
t_exit 2 "IDPMAKE_GIT_TOKEN is not sent to the context's remote" \
	env IDPMAKE_GIT_TOKEN="$GIT_PASS" IDPMAKE_GIT_USERNAME="$GIT_USER" "$IDPMAKE" --context git -C d plan
t_grep "saying how to mean it" "comes from the context 'git' \(--context\), which names no git-token-env, and IDPMAKE_GIT_TOKEN is set" "$STDERR"
t_nogrep "the git server saw no request with the token" " $GIT_USER\$" "$T/git-srv/access.log"
t_ok "context set git --git-token-env QS_TOKEN" idpmake context set git --git-token-env QS_TOKEN
t_ok "context set prod: the same remote, its token from QS_TOKEN" \
	idpmake context set prod --git-remote "$qs" --git-token-env QS_TOKEN
# (--adopt: the Application the run without the context made pushes to another remote, t6431)
t_ok "up --context prod with QS_TOKEN (and a wrong IDPMAKE_GIT_TOKEN)" \
	env QS_TOKEN="$GIT_PASS" IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN=wrong "$IDPMAKE" --context prod -C d up --adopt
t_grep "synced" '1 synced' "$STDOUT"
t_grep "pushed with the context's token" "^POST /qs.git/git-receive-pack\? $GIT_USER\$" "$T/git-srv/access.log"
t_nostring "no token in the state or the logs" "$GIT_PASS" d/.idpmake
idpmake -C d forget >/dev/null 2>&1
t_fail "up --context prod, plain http not allowed" env -u IDPMAKE_GIT_ALLOW_HTTP QS_TOKEN="$GIT_PASS" \
	IDPMAKE_GIT_USERNAME="$GIT_USER" "$IDPMAKE" --context prod -C d up
t_grep "the refusal names the variable the context took the token from" '\$QS_TOKEN \(context prod\)' "$OUTPUT"
t_nogrep "not one the user never set" 'IDPMAKE_GIT_TOKEN' "$OUTPUT"

t_done
