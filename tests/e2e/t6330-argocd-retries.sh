#!/bin/bash
# Retries against Argo CD (engine.md "Argo CD"): 429 and 5xx are retried with
# backoff, 501 (not implemented) is not; a proxy's HTML error page (502 or
# 503 with a text/html body, as nginx answers when argocd-server is down) is
# retried, and when it lasts it is reported clearly: the status, what the
# page says, and no HTML markup.  Counts come from the emulator's request log.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

mkdistro d <<EOF
idpmake: 1
name: retries
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  a: {type: manifests, path: packages/a}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a apps
cd d || exit 1
n=0
bump() { n=$((n + 1)); echo "  v$n: \"$n\"" >>packages/a/cm.yaml; }
# posts PATH-SUFFIX: how many POSTs to the Application's PATH-SUFFIX the log has
posts() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)
          if e["method"] == "POST" and e["path"] == "/api/v1/applications/in-cluster-a" + sys.argv[1]))' "$1"
}
sync_fault() { emu_post fault "{\"path_regex\": \"/applications/in-cluster-a/sync\$\", \"method\": \"POST\", $1}"; }
nginx502='<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.25.3</center>
</body>
</html>'
html_json() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

t_ok "first up" idpmake up
t_grep "first up: synced" ' 1 synced' "$STDOUT"

# ---- 429: retried ------------------------------------------------------
bump
emu_reset && sync_fault '"status": 429, "count": 2, "message": "too many requests"'
t_ok "429 twice, then 200: up succeeds" idpmake up
t_grep "429: synced" ' 1 synced' "$STDOUT"
t_eq "429: the sync was POSTed 3 times (2 refused, 1 taken)" 3 "$(posts /sync)"

# ---- 501: not retried ----------------------------------------------------
bump
emu_reset && sync_fault '"status": 501, "count": 5, "message": "method Sync not implemented"'
t_exit 1 "501: up fails" idpmake up
t_eq "501: the sync was POSTed once (no retry)" 1 "$(posts /sync)"
t_grep "501: the error names the status and Argo CD's message" 'in-cluster/a:sync: .*HTTP 501.*method Sync not implemented' "$STDERR"
t_nogrep "501: no retry announced" 'retrying' "$OUTPUT"
emu_reset
t_ok "after the 501: the next up syncs" idpmake up
t_eq "after the 501: one sync" 1 "$(posts /sync)"

# ---- 503: retried (JSON) -------------------------------------------------
bump
emu_reset && sync_fault '"status": 503, "count": 2'
t_ok "503 twice, then 200: up succeeds" idpmake up
t_eq "503: 3 POSTs" 3 "$(posts /sync)"

# ---- a proxy's HTML page, passing: retried -------------------------------
bump
emu_reset && sync_fault "\"status\": 502, \"count\": 2, \"body\": $(html_json "$nginx502")"
t_ok "an HTML 502 twice, then 200: up succeeds" idpmake up
t_grep "HTML 502 passing: synced" ' 1 synced' "$STDOUT"
t_eq "HTML 502 passing: 3 POSTs" 3 "$(posts /sync)"

# ---- a proxy's HTML page that lasts: reported clearly --------------------
bump
emu_reset && sync_fault "\"status\": 502, \"count\": 100, \"body\": $(html_json "$nginx502")"
t_exit 1 "an HTML 502 that lasts: up fails" idpmake up
cp "$STDERR" "$T/html502.err"
t_eq "HTML 502: tried 6 times (5 retries)" 6 "$(posts /sync)"
t_grep "HTML 502: the step and the status" 'in-cluster/a:sync: .*HTTP 502' "$T/html502.err"
t_grep "HTML 502: what the page says" '502 Bad Gateway' "$T/html502.err"
t_grep "HTML 502: the tries" 'tried 6 times' "$T/html502.err"
t_grep "HTML 502: says it is an HTML page, not Argo CD's answer" "an HTML page, not Argo CD's JSON" "$T/html502.err"
t_nogrep "HTML 502: no HTML markup in the message" '<(html|head|body|center|hr|title|h1)\b|</' "$T/html502.err"
t_nogrep "HTML 502: no line of the page spills into the output" '^(<|nginx/)' "$T/html502.err"

bump
emu_reset && emu_post fault "{\"path_regex\": \"^/api/v1/applications\", \"count\": 100, \"status\": 503, \"content_type\": \"text/html; charset=utf-8\", \"body\": $(html_json '<!DOCTYPE html><html><body><h1>Service Unavailable</h1><p>The server is temporarily down.</p></body></html>')}"
t_exit 1 "an HTML 503 on every Argo CD request: up fails" idpmake up
cp "$STDERR" "$T/html503.err"
t_grep "HTML 503: the step and the status" 'in-cluster/a:sync: .*HTTP 503' "$T/html503.err"
t_grep "HTML 503: what the page says" 'Service Unavailable' "$T/html503.err"
t_nogrep "HTML 503: no HTML markup" '<(!DOCTYPE|html|body|h1|p)\b|</' "$T/html503.err"
emu_reset
t_ok "after the HTML errors: up syncs" idpmake up
t_grep "after the HTML errors: synced" ' 1 synced' "$STDOUT"
t_done
