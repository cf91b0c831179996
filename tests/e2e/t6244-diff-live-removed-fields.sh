#!/bin/bash
# A field removed from the render is a change (issue 21 item 4): Argo CD
# diffs three ways, against the live object's last-applied-configuration
# (gitops-engine diff.Diff), so a data key and a label the render no longer
# sets are a difference, and a sync removes them live.  A field only the
# server or a controller set (live, not in last-applied) still does not count.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: three
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
  labels: {team: a, tier: b}
data: {k: v, old: x}
EOF
mkmanifest d/packages/web/ns.yaml Namespace web
cd d || exit 1
t_ok "setup: up" idpmake up
t_exit 0 "right after up nothing differs" idpmake diff --live --exit-code
# a controller labels the object and the server adds a key: only live, not in last-applied
emu_post live '{"app": "in-cluster-web", "kind": "ConfigMap", "name": "cfg", "labels": {"ctl": "y"}, "set": {"data.srv": "s"}}'
t_exit 0 "fields only live (not last-applied) do not count" idpmake diff --live --exit-code
t_grep "0 objects differ" '0 objects differ from what Argo CD reports live' "$STDERR"

sed -i 's/labels: {team: a, tier: b}/labels: {team: a}/; s/data: {k: v, old: x}/data: {k: v}/' packages/web/cm.yaml
t_exit 1 "a data key and a label removed from the render differ" idpmake --color=never diff --live --exit-code
t_grep "the object is listed as a change" 'ConfigMap web/cfg' "$OUTPUT"
t_grep "the removed data key is a - line" '^-  old: x' "$STDOUT"
t_grep "the removed label is a - line" '^-    tier: b' "$STDOUT"
t_nogrep "the controller's label is not" 'ctl' "$STDOUT"
t_nogrep "nor the server's key" 'srv' "$STDOUT"

t_ok "up syncs the render" idpmake up
live() {
	curl -sS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
		"http://$ARGOCD_SERVER/api/v1/applications/in-cluster-web/managed-resources?kind=ConfigMap" |
		python3 -c 'import json, sys; o = json.loads(json.load(sys.stdin)["items"][0]["liveState"])
print(sorted(o["data"]), sorted(o["metadata"].get("labels", {})))'
}
t_eq "the sync removed the key and the label, kept what was only live" "['k', 'srv'] ['ctl', 'team']" "$(live)"
t_exit 0 "then nothing differs" idpmake diff --live --exit-code
t_done
