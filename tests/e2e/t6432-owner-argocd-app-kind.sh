#!/bin/bash
# shellcheck disable=SC2317,SC2119 # functions run through t_ok and friends
# The ownership check of an argocd-app package looks up the kind its file
# is (owner.c): an Application file collides with Applications only, an
# ApplicationSet file with ApplicationSets only, so an unrelated object of
# the other kind that happens to carry the name does not refuse the run;
# one of the same kind still does.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
api=http://$ARGOCD_SERVER/api/v1
post() {
	curl -fsS -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/$1" -d "$2"
}

mkdir -p d/stacks/one/manifests d/stacks/set/web
mkmanifest d/stacks/one/manifests/cm.yaml ConfigMap one default
mkmanifest d/stacks/set/web/cm.yaml ConfigMap web default
cat >d/stacks/one/app.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: my-app}
spec:
  project: default
  destination: {namespace: default, server: "https://kubernetes.default.svc"}
  source: {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
EOF
cat >d/stacks/set/set.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: webs}
spec:
  goTemplate: true
  generators: [{list: {elements: [{env: dev}]}}]
  template:
    metadata: {name: "{{.env}}-web"}
    spec:
      project: default
      destination: {namespace: default, server: "https://kubernetes.default.svc"}
      source: {repoURL: "cnoe://web", targetRevision: HEAD, path: "."}
EOF
mkdistro d <<EOF
idpmake: 1
name: kinds
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  one: {type: argocd-app, path: stacks/one}
  set: {type: argocd-app, path: stacks/set}
EOF

# the other kind, by hand (no idpmake label), with each package's Application name
t_ok "setup: an unrelated ApplicationSet named like the Application" post applicationsets '{"metadata": {"name": "in-cluster-one-my-app"},
	"spec": {"generators": [{"list": {"elements": []}}], "template": {"metadata": {"name": "x"}, "spec": {"project": "default",
	"source": {"repoURL": "https://example.com/x.git", "path": "x"}, "destination": {"server": "https://kubernetes.default.svc"}}}}}'
t_ok "setup: an unrelated Application named like the ApplicationSet" post "applications?validate=false" "{\"metadata\": {\"name\": \"in-cluster-set-webs\"},
	\"spec\": {\"project\": \"default\", \"source\": {\"repoURL\": \"$bare\", \"path\": \"elsewhere\", \"targetRevision\": \"main\"},
	\"destination\": {\"server\": \"https://kubernetes.default.svc\", \"namespace\": \"default\"}}}"

t_ok "up: neither is a collision" idpmake -C d up
t_nogrep "nothing is said to belong to anyone" "belongs to" "$OUTPUT"
t_grep "both packages' objects were sent" " 2 synced" "$STDOUT"

# the same kind still collides
t_ok "setup: an Application made by hand, named like the next package's" post "applications?validate=false" "{\"metadata\": {\"name\": \"in-cluster-two-my-app\"},
	\"spec\": {\"project\": \"default\", \"source\": {\"repoURL\": \"$bare\", \"path\": \"elsewhere\", \"targetRevision\": \"main\"},
	\"destination\": {\"server\": \"https://kubernetes.default.svc\", \"namespace\": \"default\"}}}"
cp -r d/stacks/one d/stacks/two
echo '  two: {type: argocd-app, path: stacks/two}' >>d/distro.yaml
t_exit 1 "an Application of the same kind is refused" idpmake -C d up
t_grep "named as such" "in-cluster/two-my-app:sync: Application 'in-cluster-two-my-app' in Argo CD belongs to nobody" "$STDERR"
t_nogrep "and not as either kind" "may be either kind" "$STDERR"

t_done
