#!/bin/bash
# Argo CD sync against the emulator and a real smart-HTTP git server: the
# first up creates and syncs every Application in needs order, a no-op up
# makes no request, a change syncs exactly its package, 401/403 messages, a
# busy application waited out, a 503 retried, a Degraded application fails
# its step and its dependents, the next up redoes exactly those, and the
# token never leaks.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER

# a JWT-shaped token, as Argo CD wants (API.md 3.2)
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu

emu_get() { curl -s -f "$emu/$1"; }

# requests PYTHON-EXPR: evaluates EXPR with `log` (the request log) in scope
requests() {
	emu_get requests >"$T/requests.json"
	python3 - "$T/requests.json" "$1" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))
def app_of(e):
    if e["path"].startswith("/api/v1/stream/"):
        return None  # the run's watch stream: every Application of the distro, none touched
    p = e["path"].split("/")
    if e["path"] == "/api/v1/applications":
        return (e.get("body") or {}).get("metadata", {}).get("name")
    return p[4] if len(p) > 4 else None
def apps(pred=lambda e: True):
    return sorted({app_of(e) for e in log if pred(e)} - {None})
def seqs(method, suffix, app):
    return [e["seq"] for e in log if e["method"] == method and app_of(e) == app and e["path"].endswith(suffix)]
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, list) else r)
EOF
}

mkdistro d <<EOF
idpmake: 1
name: argo
git: {remote: "$url"}
argocd: {}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
  db: {type: manifests, path: packages/db, namespace: db, needs: [base]}
  web:
    type: manifests
    path: packages/web
    namespace: web
    needs: [db]
    sync: {prune: true, options: [CreateNamespace=true]}
  tools: {type: manifests, path: packages/tools, namespace: tools}
EOF
# bump PKG: change a package's rendered output
bumps=0
bump() {
	bumps=$((bumps + 1))
	echo "  change$bumps: \"$bumps\"" >>"packages/$1/cm.yaml"
}
for p in base db web tools; do
	mkmanifest "d/packages/$p/cm.yaml" ConfigMap "$p" "$p"
done
cd d || exit 1

# ---- first up: every Application created and synced, in needs order -----
t_ok "first up syncs every package" idpmake up -j 4
t_grep "four syncs" ' 4 synced' "$OUTPUT"
head=$(git -C "$bare" rev-parse main)
t_eq "four Applications, created with upsert" "in-cluster-base in-cluster-db in-cluster-tools in-cluster-web" \
	"$(requests 'apps(lambda e: e["method"] == "POST" and e["path"] == "/api/v1/applications" and e["args"].get("upsert") == ["true"])')"
t_eq "each synced once" "1 1 1 1" \
	"$(requests '[len(seqs("POST", "/sync", a)) for a in ("in-cluster-base", "in-cluster-db", "in-cluster-web", "in-cluster-tools")]')"
t_eq "base synced before db, db before web" True \
	"$(requests 'seqs("POST", "/sync", "in-cluster-base")[0] < seqs("POST", "/sync", "in-cluster-db")[0] < seqs("POST", "/sync", "in-cluster-web")[0]')"
t_eq "db starts only after base's last poll (base is Healthy first)" True \
	"$(requests 'max(e["seq"] for e in log if app_of(e) == "in-cluster-base") < min(e["seq"] for e in log if app_of(e) == "in-cluster-db")')"
t_eq "web starts only after db's last poll" True \
	"$(requests 'max(e["seq"] for e in log if app_of(e) == "in-cluster-db") < min(e["seq"] for e in log if app_of(e) == "in-cluster-web")')"
t_eq "every non-GET request has exactly Content-Type: application/json" True \
	"$(requests 'all(e["headers"].get("Content-Type") == "application/json" for e in log if e["method"] != "GET")')"
t_eq "every request has the bearer token" True \
	"$(requests 'all(e["headers"].get("Authorization") == "Bearer '"$ARGOCD_TEST_TOKEN"'" for e in log)')"
t_eq "no request failed" "" "$(requests '[e["status"] for e in log if e["status"] != 200]')"

web='[e["body"] for e in log if e["method"] == "POST" and app_of(e) == "in-cluster-web" and e["path"] == "/api/v1/applications"][0]'
t_eq "the Application's source is the GitOps repository's folder" "$url in-cluster/web main" \
	"$(requests "[${web}['spec']['source'][k] for k in ('repoURL', 'path', 'targetRevision')]")"
t_eq "its destination" "https://kubernetes.default.svc web" \
	"$(requests "[${web}['spec']['destination'][k] for k in ('server', 'namespace')]")"
t_eq "its namespace, project and finalizer" "argocd default resources-finalizer.argocd.argoproj.io" \
	"$(requests "[${web}['metadata']['namespace'], ${web}['spec']['project']] + ${web}['metadata']['finalizers']")"
t_eq "its labels name distro, cluster and package" "argo in-cluster web" \
	"$(requests "[${web}['metadata']['labels']['idpmake.io/' + k] for k in ('distro', 'cluster', 'package')]")"
t_eq "its sync options" "CreateNamespace=true" "$(requests "${web}['spec']['syncPolicy']['syncOptions']")"
websync='[e["body"] for e in log if e["method"] == "POST" and app_of(e) == "in-cluster-web" and e["path"].endswith("/sync")][0]'
t_eq "the sync asks for the pushed commit, prune and the options" "$head True CreateNamespace=true" \
	"$(requests "[${websync}['revision'], ${websync}['prune']] + ${websync}['syncOptions']['items']")"
t_eq "the emulator holds four Synced, Healthy apps at the commit" "Synced Healthy $head|Synced Healthy $head|Synced Healthy $head|Synced Healthy $head" \
	"$(emu_get apps | python3 -c 'import json,sys; print("|".join("%s %s %s" % (a["status"]["sync"]["status"], a["status"]["health"]["status"], a["status"]["sync"]["revision"]) for a in json.load(sys.stdin)))')"

# ---- a no-op up makes no request at all --------------------------------
emu_reset
t_ok "a no-op up succeeds" idpmake up
t_eq "and makes no request to Argo CD" 0 "$(requests 'len(log)')"

# ---- a change syncs exactly its package, not its dependents -------------
emu_reset
bump db
t_ok "up after changing db" idpmake up
t_eq "only db's Application is touched" "in-cluster-db" "$(requests 'apps()')"
t_eq "updated with upsert, then synced" "POST /api/v1/applications POST /api/v1/applications/in-cluster-db/sync" \
	"$(requests '[e["method"] + " " + e["path"] for e in log if e["method"] != "GET"]')"
head=$(git -C "$bare" rev-parse main)
t_eq "to the new commit" "$head" "$(requests '[e["body"]["revision"] for e in log if e["path"].endswith("/sync")]')"

# ---- 401: a token Argo CD refuses --------------------------------------
emu_reset
bump tools
bad="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
t_exit 1 "a refused token is found by the pre-flight, before the push" env ARGOCD_AUTH_TOKEN="$bad" "$IDPMAKE" up
t_grep "with a message naming the variable" "Argo CD at http://$ARGOCD_SERVER does not accept the token .*set ARGOCD_AUTH_TOKEN \(or argocd.token-file\) to a valid token" "$OUTPUT"
t_nogrep "the refused token is not shown" "$bad" "$OUTPUT"
t_eq "with one request" "/api/version" "$(requests '[e["path"] for e in log]')"
# a token refused during the run (revoked, expired): the sync fails, not retried
emu_reset
emu_post fault '{"path_regex": "/in-cluster-tools/sync$", "status": 401, "code": 16, "count": 1, "message": "invalid session: token has invalid claims: token is expired"}'
t_exit 1 "a 401 during the run fails the sync" idpmake up
t_grep "with a message naming the variable" "in-cluster/tools:sync: Argo CD refused the token \(401\): set ARGOCD_AUTH_TOKEN to a valid token" "$OUTPUT"
t_eq "401 is not retried" 1 "$(requests 'len([e for e in log if e["path"].endswith("/sync")])')"

# ---- 403: the account lacks a permission --------------------------------
emu_reset
emu_post fault '{"path_regex": "/in-cluster-tools/sync$", "status": 403, "code": 7, "count": 1, "message": "permission denied: applications, sync, default/in-cluster-tools, sub: ci:apiKey, iat: 2026-01-01T00:00:00Z"}'
t_exit 1 "a denied sync fails" idpmake up
t_grep "naming the permission" "Argo CD denied 'sync' on applications 'default/in-cluster-tools' \(403\): the token's account needs that permission" "$OUTPUT"

# ---- another operation in progress is waited out ------------------------
emu_reset
emu_post fault '{"app": "in-cluster-tools", "busy_for_ms": 4000}'
t_ok "a sync refused because another operation runs is waited out" idpmake up
t_eq "refused once with code 9, then accepted" "400 200" \
	"$(requests '[e["status"] for e in log if e["path"].endswith("/sync")]')"
t_eq "Synced and Healthy at the end" "Synced Healthy" \
	"$(emu_get apps | python3 -c 'import json,sys; a=[a for a in json.load(sys.stdin) if a["metadata"]["name"]=="in-cluster-tools"][0]; print(a["status"]["sync"]["status"], a["status"]["health"]["status"])')"

# ---- 503 is retried -----------------------------------------------------
emu_reset
bump tools
emu_post fault '{"path_regex": "^/api/v1/applications$", "method": "POST", "status": 503, "count": 2}'
t_ok "two 503s on the upsert are retried" idpmake up
t_eq "the upsert was tried three times" "503 503 200" \
	"$(requests '[e["status"] for e in log if e["path"] == "/api/v1/applications" and e["method"] == "POST"]')"

# ---- Degraded: the step fails with Argo CD's message; dependents not run --
emu_reset
emu_post fault '{"app": "in-cluster-db", "health": "Degraded", "message": "Back-off restarting failed container db"}'
bump db
bump web
t_exit 1 "a Degraded application fails its step" idpmake up -k 0
t_grep "with Argo CD's message" "in-cluster/db:sync: application 'in-cluster-db' is Degraded: Back-off restarting failed container db" "$OUTPUT"
t_grep "its dependent is not run" "not run: in-cluster/web:sync: in-cluster/db:sync failed" "$OUTPUT"
t_eq "web's Application was not touched" "in-cluster-db" "$(requests 'apps()')"
t_grep "the step's log shows the requests" "POST http://$ARGOCD_SERVER/api/v1/applications/in-cluster-db/sync" .idpmake/logs/in-cluster_db_sync.log

emu_reset
emu_post fault '{"app": "in-cluster-db", "clear": true}'
t_ok "plan after the failure" idpmake plan --json
t_eq "the next up would redo exactly the failed and the unreached step" "in-cluster/db:sync in-cluster/web:sync" \
	"$(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(open(sys.argv[1]))["steps"]))' "$STDOUT")"
t_ok "the next up succeeds" idpmake up
t_grep "with two syncs" ' 2 synced' "$OUTPUT"
t_eq "touching db and web only" "in-cluster-db in-cluster-web" "$(requests 'apps()')"
t_eq "syncing db before web" True \
	"$(requests 'seqs("POST", "/sync", "in-cluster-db")[0] < seqs("POST", "/sync", "in-cluster-web")[0]')"

# ---- the token never leaks ----------------------------------------------
emu_reset
bump tools
t_ok "up -v" idpmake -v up
t_grep "-v shows the requests" "POST http://$ARGOCD_SERVER/api/v1/applications/in-cluster-tools/sync" "$OUTPUT"
t_grep "with the token masked" "Authorization: Bearer \*\*\*" "$OUTPUT"
t_nogrep "-v output has no token" "$ARGOCD_TEST_TOKEN" "$OUTPUT"
bump tools
t_ok "up --json" idpmake --json up
t_nogrep "--json output has no token" "$ARGOCD_TEST_TOKEN" "$OUTPUT"
t_ok "status --json" idpmake --json status
t_nogrep "status has no token" "$ARGOCD_TEST_TOKEN" "$OUTPUT"
t_nostring "the token is nowhere in .idpmake (state.db, logs)" "$ARGOCD_TEST_TOKEN" .idpmake
t_nostring "nor the git password" "$GIT_PASS" .idpmake/state.db .idpmake/logs
t_grep "Argo CD got requests" '"path"' "$T/requests.json"
t_nostring "nor the git password in what Argo CD got" "$GIT_PASS" "$T/requests.json"

t_done
