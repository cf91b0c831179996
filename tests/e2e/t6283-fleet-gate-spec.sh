#!/bin/bash
# A wave's gate judges the Application idpmake synced, not any Application of
# that name Synced somewhere (issue 20, suspected: "the gate never compares
# the Application's spec, and Applications Argo CD renders accept any
# revision"): a helm Application Argo CD reports Synced at another chart
# version than the one pinned, and one whose source someone re-pointed to
# another folder and synced there, fail the gate, naming what differs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443 --cluster eu=https://eu.example:6443
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"])' >"$T/req.txt" || t_bail "cannot read the request log"; }
# APP FIELD: a field of an Application as Argo CD has it
app_field() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/$1" |
		python3 -c 'import json, sys
o = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    o = o.get(k, {}) if isinstance(o, dict) else {}
print(o if o != {} else "")' "$2"
}
# APP PATH: someone points the Application at another folder and syncs it there
repoint() {
	python3 - "$ARGOCD_SERVER" "$ARGOCD_AUTH_TOKEN" "$1" "$2" <<'PY'
import json, sys, urllib.request
srv, tok, app, path = sys.argv[1:]
def call(method, p, body=None):
    r = urllib.request.Request("http://%s%s" % (srv, p), method=method,
                               data=json.dumps(body).encode() if body is not None else None,
                               headers={"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r))
a = call("GET", "/api/v1/applications/" + app)
a["spec"]["source"]["path"] = path
call("POST", "/api/v1/applications?upsert=true", {"metadata": {"name": app, "namespace": a["metadata"]["namespace"],
     "labels": a["metadata"].get("labels", {})}, "spec": a["spec"]})
call("POST", "/api/v1/applications/%s/sync" % app, {})
PY
}
settled() { [ "$(app_field "$1" status.sync.status)" = Synced ] && [ -z "$(app_field "$1" operation)" ] &&
	[ "$(app_field "$1" status.operationState.phase)" = Succeeded ]; }

mkdistro d <<EOF
idpmake: 1
name: gatespec
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
  eu: {server: "https://eu.example:6443"}
rollout:
  waves:
    - {name: first, clusters: [canary], bake: 1}
    - {name: second, clusters: [eu]}
packages:
  base: {type: manifests, path: packages/base}
  other: {type: manifests, path: packages/other}
  chart:
    type: helm
    chart: {repo: https://charts.example.com, name: podinfo, version: 6.5.0}
    namespace: podinfo
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/other/cm.yaml ConfigMap base
cd d || exit 1

# ---- a helm Application Synced at another chart version --------------------------
emu_post fault '{"app": "canary-chart", "report_revision": "6.4.0"}'
t_exit 1 "the gate fails a chart Synced at another version" idpmake up -j 2
t_grep "it names the Application, the version seen and the one pinned" \
	"wave 'first': .*application 'canary-chart' is not the one idpmake synced: its spec.source is Synced at 6.4.0, not at 6.5.0" "$OUTPUT"
t_grep "the next wave does not move" "not run: eu/chart:sync: wave:first failed" "$OUTPUT"
emu_post fault '{"app": "canary-chart", "clear": true}'
t_ok "at the pinned version, the gate passes" idpmake up -j 2
t_grep "the gate passed" 'wave wave:first: gate passed' "$OUTPUT"
t_eq "the chart is Synced at its version" "6.5.0" "$(app_field canary-chart status.sync.revision)"

# ---- an Application someone re-pointed to another folder and synced -------------
path=$(app_field canary-base spec.source.path)
t_eq "canary-base's folder" "_shared/base" "$path"
repoint canary-base _shared/other
t_wait_for 60 settled canary-base
t_report $? "canary-base is Synced at _shared/other now"
echo '  change: "2"' >>packages/other/cm.yaml
emu_reset
t_exit 1 "the gate fails an Application whose source is not the one idpmake sent" idpmake up -j 2
t_grep "it names the field, what it is and what idpmake sent" \
	"application 'canary-base' is not the one idpmake synced: its spec.source.path is '_shared/other', not '_shared/base' as idpmake sent it" "$OUTPUT"
reqlog
t_eq "eu was not synced" 0 "$(grep -c 'POST /api/v1/applications/eu-[a-z]*/sync' "$T/req.txt")"
t_done
