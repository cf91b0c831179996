#!/bin/bash
# An argocd-app package's Application is sent to Argo CD with its scalars
# typed as YAML (and Kubernetes) reads them, by yaml.c's one resolver:
# prune: yes is true, selfHeal: off is false, limit: 0x5 is 5, a quoted
# "yes" stays a string.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
bare=$T/gitops.git
git init -q --bare -b main "$bare"
start_argocd_emulator --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu

mkdir -p d/pkg/manifests
mkmanifest d/pkg/manifests/cm.yaml ConfigMap typed typed
cat >d/pkg/app.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: typed, namespace: argocd}
spec:
  destination: {namespace: typed, server: "https://kubernetes.default.svc"}
  source: {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
  project: default
  syncPolicy:
    automated: {prune: yes, selfHeal: off}
    retry: {limit: 0x5}
    syncOptions: ["yes", CreateNamespace=true]
EOF
mkdistro d <<EOF
idpmake: 1
name: typed
git: {remote: "file://$T/gitops.git"}
argocd: {repo-url: "file://$T/gitops.git"}
packages:
  typed: {type: argocd-app, path: pkg}
EOF
cd d || exit 1

t_ok "up" idpmake up
curl -s -f "$emu/requests" >requests.json
t_ok "prune: yes is sent as true, selfHeal: off as false, 0x5 as 5, \"yes\" as a string" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
app = next(e["body"] for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications"
           and e["body"]["metadata"]["name"] == "in-cluster-typed-typed")
sp = app["spec"]["syncPolicy"]
assert sp["automated"]["prune"] is True, sp
assert sp["automated"]["selfHeal"] is False, sp
assert sp["retry"]["limit"] == 5 and type(sp["retry"]["limit"]) is int, sp
assert sp["syncOptions"][0] == "yes", sp
' requests.json
t_done
