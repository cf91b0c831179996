#!/bin/bash
# A cluster named by `server`, without `register`, that Argo CD does not know
# (issue 7 §8): creating its Application fails with Argo CD's own error
# (v3: "application destination spec for APP is invalid: error getting
# cluster by server "URL": ... not found"; v2 said "unable to find
# destination server: there are no clusters with this URL: URL"), shown as
# is, naming the step and the cluster, and what to do; the other clusters'
# syncs go on.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443
mkdistro d <<EOF2
idpmake: 1
name: unknown
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
  far: {server: "https://far.example:6443"}
packages:
  base: {type: manifests, path: packages/base}
EOF2
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1

t_exit 1 "up fails for the unregistered cluster" idpmake up -j 2 -k 0
t_grep "Argo CD's error, as is, on the step of cluster far" \
	"^FAILED: far/base:sync: creating or updating application 'far-base': Argo CD answered HTTP 400: application destination spec for far-base is invalid: error getting cluster by server \"https://far.example:6443\": rpc error: code = NotFound desc = cluster \"https://far.example:6443\" not found" "$STDERR"
t_grep "it names the cluster and what to do" \
	"cluster 'far' \\(https://far.example:6443\\) is not registered in Argo CD: give it \`register\` in the distro" "$STDERR"
t_grep "canary still syncs" " 1 synced" "$STDOUT"
t_done
