#!/bin/bash
# A helm package rendered by Argo CD: its Application has the chart as its
# source, the values inline, and its sync names no git revision; with
# `wait: synced` the step does not wait for health.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER

ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu

# requests PYTHON-EXPR over the emulator's request log `log`
requests() {
	curl -s -f "$emu/requests" >"$T/requests.json"
	python3 - "$T/requests.json" "$1" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
posts = [e["body"] for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications"]
syncs = [e["body"] for e in log if e["method"] == "POST" and e["path"].endswith("/sync")]
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, list) else r)
PY
}

mkdistro d <<EOF
idpmake: 1
name: charts
git: {remote: "$url"}
argocd: {}
packages:
  podinfo:
    type: helm
    chart: {repo: https://charts.example.com, name: podinfo, version: 6.5.0}
    values: [values.yaml]
    set: {ui.message: hello}
    namespace: podinfo
    sync: {wait: synced}
EOF
echo "replicaCount: 3" >d/values.yaml
cd d || exit 1

emu_post fault '{"app": "in-cluster-podinfo", "health": "Degraded", "message": "never healthy"}'
t_ok "up with a helm package rendered by Argo CD" idpmake up
t_grep "synced" ' 1 synced' "$OUTPUT"
t_eq "the Application's source is the chart" "https://charts.example.com podinfo 6.5.0 podinfo" \
	"$(requests '[posts[0]["spec"]["source"][k] for k in ("repoURL", "chart", "targetRevision")] + [posts[0]["spec"]["source"]["helm"]["releaseName"]]')"
t_eq "with the values file inline" True "$(requests '"replicaCount: 3" in posts[0]["spec"]["source"]["helm"]["values"]')"
t_eq "and the set values" True "$(requests '"message: hello" in posts[0]["spec"]["source"]["helm"]["values"]')"
t_eq "its destination is the package's namespace" "https://kubernetes.default.svc podinfo" \
	"$(requests '[posts[0]["spec"]["destination"][k] for k in ("server", "namespace")]')"
t_eq "its sync names no git revision" False "$(requests '"revision" in syncs[0]')"
t_eq "wait: synced does not wait for health (the app stays Degraded)" "Synced Degraded" \
	"$(curl -s "$emu/apps" | python3 -c 'import json,sys; a=json.load(sys.stdin)[0]["status"]; print(a["sync"]["status"], a["health"]["status"])')"

# ---- a values change updates the Application ---------------------------
emu_post reset '{}'
echo "replicaCount: 4" >values.yaml
t_ok "up after a values change" idpmake up
t_eq "the new values reach Argo CD" True "$(requests '"replicaCount: 4" in posts[0]["spec"]["source"]["helm"]["values"]')"
t_eq "synced once" 1 "$(requests 'len(syncs)')"

t_done
