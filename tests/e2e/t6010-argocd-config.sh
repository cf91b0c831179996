#!/bin/bash
# Argo CD settings and outcomes: where the server and the token come from
# (ARGOCD_SERVER, ARGOCD_OPTS, argocd.token-file), a root path, unreachable
# servers; an Application namespace of its own; a failed operation; a
# timeout.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER

ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50 --app-namespace team
server=$ARGOCD_SERVER
emu=http://$server/_emu
unset ARGOCD_SERVER ARGOCD_OPTS

# requests PYTHON-EXPR over the emulator's request log `log`
requests() {
	curl -s -f "$emu/requests" >"$T/requests.json"
	python3 - "$T/requests.json" "$1" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))
posts = [e for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications"]
syncs = [e for e in log if e["method"] == "POST" and e["path"].endswith("/sync")]
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, list) else r)
EOF
}
bumps=0
bump() {
	bumps=$((bumps + 1))
	echo "  change$bumps: \"$bumps\"" >>"packages/$1/cm.yaml"
}

mkdistro d <<EOF
idpmake: 1
name: conf
git: {remote: "$url"}
packages:
  app: {type: manifests, path: packages/app, namespace: app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app app
cd d || exit 1

# ---- no token: fails before anything runs --------------------------------
export ARGOCD_SERVER=$server ARGOCD_OPTS=--plaintext
emu=http://$server/_emu	# back to the first emulator (start_argocd_emulator set emu to the rooted one)
t_exit 1 "up without a token fails" idpmake up
t_grep "saying which variable to set" "set ARGOCD_AUTH_TOKEN \(or argocd.token-file\)" "$OUTPUT"
t_fail "before anything is pushed" git -C "$bare" rev-parse --verify -q main
t_eq "and without a request to Argo CD" 0 "$(requests 'len(log)')"

t_exit 1 "a bare word in ARGOCD_OPTS is an error" env ARGOCD_OPTS="--plaintext s3cr3t-word" "$IDPMAKE" up
t_grep "naming its position" "ARGOCD_OPTS invalid at word 2" "$OUTPUT"
t_nogrep "not the word" "s3cr3t-word" "$OUTPUT"

# ---- ARGOCD_OPTS --server and --auth-token, no argocd in the distro -------
unset ARGOCD_SERVER
t_ok "ARGOCD_OPTS alone configures Argo CD" env ARGOCD_OPTS="--plaintext --server $server --auth-token $ARGOCD_TEST_TOKEN" "$IDPMAKE" up
t_grep "and the package is synced" ' 1 synced' "$OUTPUT"
t_eq "with the token of --auth-token" True \
	"$(requests 'all(e["headers"]["Authorization"] == "Bearer '"$ARGOCD_TEST_TOKEN"'" for e in log)')"

# ---- a full URL in ARGOCD_SERVER; the token from argocd.token-file -------
emu_reset
printf '%s\n' "$ARGOCD_TEST_TOKEN" >../token
cat >>distro.yaml <<EOF
argocd: {token-file: ../token}
EOF
bump app
t_ok "ARGOCD_SERVER as a URL, the token from argocd.token-file" env ARGOCD_SERVER="http://$server/" "$IDPMAKE" up
t_grep "synced" ' 1 synced' "$OUTPUT"
t_eq "its trailing newline trimmed" True \
	"$(requests 'all(e["headers"]["Authorization"] == "Bearer '"$ARGOCD_TEST_TOKEN"'" for e in log)')"

# ---- unreachable servers --------------------------------------------------
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
bump app
closed= && dead_port closed || t_bail "cannot hold a port that refuses"
t_exit 1 "a refused connection fails after retries" env ARGOCD_SERVER="127.0.0.1:$closed" "$IDPMAKE" up
t_grep "naming the server" "cannot reach Argo CD at http://127.0.0.1:$closed: .*\(tried 6 times\)" "$OUTPUT"
t_exit 1 "https to a plain-HTTP server fails" env ARGOCD_SERVER="$server" ARGOCD_OPTS= "$IDPMAKE" up
t_grep "naming the https URL" "cannot reach Argo CD at https://$server" "$OUTPUT"

# ---- a server behind a root path (--grpc-web-root-path) -----------------
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50 --rootpath /argocd
rooted=$ARGOCD_SERVER
t_ok "--grpc-web-root-path puts the prefix before every path" \
	env ARGOCD_SERVER="$rooted" ARGOCD_OPTS="--plaintext --grpc-web-root-path /argocd/" "$IDPMAKE" up
t_eq "the rooted emulator saw every request under /argocd" True \
	"$(curl -s "http://$rooted/_emu/requests" | python3 -c 'import json,sys; l=json.load(sys.stdin); print(bool(l) and all(e["path"].startswith("/argocd/api/") and e["status"] == 200 for e in l))')"
export ARGOCD_SERVER=$server ARGOCD_OPTS=--plaintext
emu=http://$server/_emu	# back to the first emulator (start_argocd_emulator set emu to the rooted one)

# ---- an Application namespace of its own, a custom app name ---------------
emu_reset
cat >distro.yaml <<EOF
idpmake: 1
name: conf
git: {remote: "$url"}
argocd: {namespace: team, app-name: '\${package}-on-\${cluster}'}
packages:
  app: {type: manifests, path: packages/app, namespace: app}
EOF
t_ok "an Application in namespace team, named by argocd.app-name" idpmake up
t_eq "created there" "app-on-in-cluster:team" \
	"$(requests '[e["body"]["metadata"]["name"] + ":" + e["body"]["metadata"]["namespace"] for e in posts]')"
t_eq "the sync names the Application namespace" "team" "$(requests '[e["body"]["appNamespace"] for e in syncs]')"
t_eq "and so do the polls" True \
	"$(requests 'all(e["args"]["appNamespace"] == ["team"] for e in log if e["method"] == "GET" and e["path"].startswith("/api/v1/applications"))')"

# ---- a failed operation; a timeout -----------------------------------------
emu_reset
emu_post fault '{"app": "app-on-in-cluster", "sync_fail": "one or more objects failed to apply, reason: admission webhook denied"}'
bump app
t_exit 1 "a failed operation fails the step" idpmake up
t_grep "with Argo CD's message" "in-cluster/app:sync: sync of application 'app-on-in-cluster' failed: one or more objects failed to apply, reason: admission webhook denied" "$OUTPUT"

emu_reset
emu_post fault '{"app": "app-on-in-cluster", "clear": true}'
emu_post fault '{"app": "app-on-in-cluster", "health": "Progressing", "message": "waiting for rollout"}'
sed -i 's|  app: {type: manifests, path: packages/app, namespace: app}|  app: {type: manifests, path: packages/app, namespace: app, sync: {timeout: 3}}|' distro.yaml
t_exit 1 "an application that never gets Healthy times out" idpmake up
t_grep "naming what it saw" "timed out after 3 s waiting for application 'app-on-in-cluster' to be Synced and Healthy \(sync Synced, health Progressing: waiting for rollout" "$OUTPUT"

t_nogrep "the token is in no output" "$ARGOCD_TEST_TOKEN" "$OUTPUT"
t_nostring "nor in .idpmake" "$ARGOCD_TEST_TOKEN" .idpmake

t_done
