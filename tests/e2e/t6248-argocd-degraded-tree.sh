#!/bin/bash
# A Degraded Application names its Degraded resources: Argo CD 3 keeps the
# resources' health in the resource tree only (status.resourceHealthSource
# "appTree": status.resources carry none), so idpmake reads them from GET
# .../resource-tree; the emulator answers as Argo CD 3 does.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF2
idpmake: 1
name: tree
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF2
mkdir -p d/packages/web
cat >d/packages/web/deploy.yaml <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1"}]}
EOF2
cd d || exit 1
t_ok "first up" idpmake up

app() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/in-cluster-web"; }
t_ok "Argo CD says appTree, and status.resources carry no health" python3 -c '
import json, sys
st = json.loads(sys.argv[1])["status"]
assert st["resourceHealthSource"] == "appTree", st.get("resourceHealthSource")
assert st["resources"] and not [r for r in st["resources"] if "health" in r], st["resources"]' "$(app)"

emu_post live '{"app": "in-cluster-web", "kind": "Deployment", "name": "web", "health": {"status": "Degraded", "message": "Deployment does not have minimum availability."}}'
emu_post fault '{"app": "in-cluster-web", "health": "Degraded", "message": "one of its resources is Degraded"}'
sed -i 's/replicas: 1/replicas: 2/' packages/web/deploy.yaml
t_exit 1 "a Degraded Application fails its sync" idpmake up
t_grep "with Argo CD's message" "in-cluster/web:sync: application 'in-cluster-web' is Degraded: one of its resources is Degraded" "$OUTPUT"
t_grep "naming the Degraded Deployment, read from the resource tree" "Degraded: one of its resources is Degraded; Deployment/web: Deployment does not have minimum availability\." "$OUTPUT"
t_done
