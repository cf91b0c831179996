#!/bin/bash
# examples/fleet runs as documented: without Argo CD, one up renders
# readonly-rbac once and writes it once (_shared/readonly-rbac) for the
# linked clusters, the cloned lab keeps its own folder, cert-manager is an
# Application per cluster; against the Argo CD emulator, the clusters sync
# in the order of the waves, the last wave's check runs, and a no-op costs
# no request.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
cp -R "$top/examples/fleet" "$T/fleet" || t_bail "cannot copy examples/fleet"
rm -rf "$T/fleet/.idpmake"
cd "$T/fleet" || exit 1

t_ok "validate" idpmake validate
t_ok "plan" idpmake plan
t_grep "plan: the waves" '^wave +eu: eu-1, eu-2 \(max-parallel 2\)$' "$STDOUT"
t_grep "plan: readonly-rbac renders once" '^render +readonly-rbac \(for 5 clusters\)' "$STDOUT"
t_ok "up without Argo CD" idpmake up
t_grep "one commit" '1 commit pushed' "$OUTPUT"
git clone -q .idpmake/gitops.git "$T/co" || t_bail "clone failed"
[ -f "$T/co/_shared/readonly-rbac/clusterrole.fleet-readonly.yaml" ]
t_report $? "readonly-rbac is one folder for the linked clusters"
[ -f "$T/co/lab/readonly-rbac/clusterrole.fleet-readonly.yaml" ]
t_report $? "the cloned lab has its own copy"
[ ! -e "$T/co/canary/readonly-rbac" ]
t_report $? "no per-cluster copy for a linked cluster"
for c in canary eu-1 eu-2 us-1; do
	[ -f "$T/co/$c/cert-manager/application.yaml" ]
	t_report $? "$c/cert-manager is an Application of the chart"
done
[ ! -e "$T/co/lab/cert-manager" ]
t_report $? "lab's profile has no cert-manager"

# against Argo CD: waves
rm -rf .idpmake
bare=$T/fleet-gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
sed -i "s|^name: fleet|name: fleet\ngit: {remote: \"$bare\"}\nargocd: {repo-url: \"file://$bare\"}|" distro.yaml
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10 \
	--cluster canary=https://canary.k8s.example:6443 --cluster eu-1=https://eu-1.k8s.example:6443 \
	--cluster eu-2=https://eu-2.k8s.example:6443 --cluster us-1=https://us-1.k8s.example:6443 \
	--cluster lab=https://lab.k8s.example:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
t_ok "up against Argo CD" idpmake up -j 4
t_grep "nine syncs" ' 9 synced' "$OUTPUT"
t_grep "the last wave's check ran" 'wave:world.*gate passed' "$OUTPUT"
t_grep "the check's log names its clusters" '^wave world healthy at [0-9a-f]{40}: us-1 lab$' .idpmake/logs/wave_world.log
curl -sS -f "http://$ARGOCD_SERVER/_emu/requests" >"$T/req.json" || t_bail "no request log"
t_ok "canary synced before eu, eu before the world wave" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
def first(app): return min(e["seq"] for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications/%s/sync" % app)
def last(app): return max(e["seq"] for e in log if "/api/v1/applications/%s" % app in e["path"])
assert last("canary-cert-manager") < first("eu-1-readonly-rbac"), "canary before eu"
assert max(last("eu-1-cert-manager"), last("eu-2-cert-manager")) < first("us-1-readonly-rbac"), "eu before world"
assert max(last("eu-1-cert-manager"), last("eu-2-cert-manager")) < first("lab-readonly-rbac"), "eu before lab"' "$T/req.json"
t_ok "every linked Application points at the shared folder" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
paths = {e["body"]["metadata"]["name"]: e["body"]["spec"]["source"].get("path") for e in log
         if e["method"] == "POST" and e["path"] == "/api/v1/applications" and e.get("body")}
for c in ("canary", "eu-1", "eu-2", "us-1"):
    assert paths["%s-readonly-rbac" % c] == "_shared/readonly-rbac", paths
assert paths["lab-readonly-rbac"] == "lab/readonly-rbac", paths' "$T/req.json"
emu_reset
t_ok "no-op" idpmake up
curl -sS -f "http://$ARGOCD_SERVER/_emu/requests" >"$T/req2.json" || t_bail "no request log"
t_eq "a no-op makes no request" 0 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/req2.json")"
t_done
