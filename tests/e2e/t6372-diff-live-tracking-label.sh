#!/bin/bash
# diff --live against Argo CD 2.x's label tracking (issue 34 item 4): Argo CD
# 2.13/2.14 mark what they apply with the label app.kubernetes.io/instance
# (argocd-cm application.resourceTrackingMethod: label; annotation+label sets
# both; argo-cd util/argo/resource_tracking.go SetAppInstance).  The label is in
# the live object and its last-applied-configuration, not in the render: it is
# Argo CD's mark, not a change.  A label app.kubernetes.io/instance the render
# sets itself is compared as any other label.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --tracking-method label
mkdistro d <<EOF
idpmake: 1
name: track
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkdir -p d/packages/web
cat >d/packages/web/cm.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: web
  labels: {team: a}
data: {k: v}
EOF
mkmanifest d/packages/web/ns.yaml Namespace web
cd d || exit 1
live() {	# KIND NAME: the live object's labels and tracking annotation
	curl -sS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
		"http://$ARGOCD_SERVER/api/v1/applications/in-cluster-web/managed-resources?kind=$1&name=$2" |
		python3 -c 'import json, sys; m = json.loads(json.load(sys.stdin)["items"][0]["liveState"])["metadata"]
print(sorted(m.get("labels", {}).items()), (m.get("annotations") or {}).get("argocd.argoproj.io/tracking-id", "-"))'
}

t_ok "label tracking: up" idpmake up
t_eq "Argo CD labelled the object (no annotation)" "[('app.kubernetes.io/instance', 'in-cluster-web'), ('team', 'a')] -" \
	"$(live ConfigMap cfg)"
t_exit 0 "label tracking: nothing differs after the sync" idpmake --color=never diff --live --exit-code
t_grep "0 objects differ" '0 objects differ from what Argo CD reports live' "$STDERR"

emu_post config '{"tracking_method": "annotation+label"}'
sed -i 's/data: {k: v}/data: {k: v2}/' packages/web/cm.yaml
t_ok "annotation+label tracking: up" idpmake up
t_eq "Argo CD labelled and annotated the object" \
	"[('app.kubernetes.io/instance', 'in-cluster-web'), ('team', 'a')] in-cluster-web:/ConfigMap:web/cfg" \
	"$(live ConfigMap cfg)"
t_exit 0 "annotation+label tracking: nothing differs after the sync" idpmake --color=never diff --live --exit-code

# the render's own instance label: Argo CD overwrites it with its mark; that is a difference
cat >packages/web/own.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: own
  namespace: web
  labels: {app.kubernetes.io/instance: mine}
data: {k: v}
EOF
t_ok "a rendered instance label: up" idpmake up
t_exit 1 "the rendered label is compared with Argo CD's" idpmake --color=never diff --live --exit-code
t_grep "the object is listed as a change" 'ConfigMap web/own' "$OUTPUT"
t_grep "Argo CD's value is the live side" '^-    app.kubernetes.io/instance: in-cluster-web' "$STDOUT"
t_grep "the render's value is the other" '^[+]    app.kubernetes.io/instance: mine' "$STDOUT"
t_nogrep "the other objects still do not differ" 'ConfigMap web/cfg' "$OUTPUT"

# annotation tracking (3.x): a rendered label is left as rendered; a live value equal to Argo CD's is still a change
emu_post config '{"tracking_method": "annotation"}'
sed -i 's/data: {k: v}/data: {k: v3}/' packages/web/own.yaml
t_ok "annotation tracking: up" idpmake up
t_exit 0 "annotation tracking: nothing differs" idpmake --color=never diff --live --exit-code
emu_post live '{"app": "in-cluster-web", "kind": "ConfigMap", "name": "own", "labels": {"app.kubernetes.io/instance": "in-cluster-web"}}'
t_exit 1 "a live instance label that looks like Argo CD's still differs from a rendered one" \
	idpmake --color=never diff --live --exit-code
t_grep "the rendered label's change is listed" '^[+]    app.kubernetes.io/instance: mine' "$STDOUT"
t_done
