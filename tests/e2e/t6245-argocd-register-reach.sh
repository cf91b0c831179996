#!/bin/bash
# Argo CD checks a cluster registration (issue 21 item 6): server/cluster
# Create and Update reach the cluster (its server version) with the
# credentials before saving anything, a labels-only PUT too (with the
# credentials Argo CD holds), and answer HTTP 500 "error getting server
# version: ..." when they cannot.  idpmake's register step then fails at
# once (that answer is not retried), naming the cluster and Argo CD's
# message, the token never shown, the step not recorded as done; the
# cluster's syncs do not run.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
dead= && dead_port dead || t_bail "cannot hold a port that refuses"
EU_TOKEN="eu-$(random_string)"
export EU_TOKEN
mkdistro d <<EOF
idpmake: 1
name: reach
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  eu-1:
    server: https://eu-1.example:6443
    labels: {env: prod}
    register: {token-env: EU_TOKEN}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base base
mkmanifest d/packages/base/ns.yaml Namespace base
cd d || exit 1
clusters() {
	curl -sS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters" |
		python3 -c 'import json, sys; print(" ".join(sorted(c["server"] for c in json.load(sys.stdin)["items"])))'
}

# ---- the token the cluster does not accept ----------------------------------
emu_post config '{"cluster_tokens": {"https://eu-1.example:6443": "the-right-one"}}'
t_exit 1 "a token the cluster refuses: up fails" idpmake up
t_grep "the step names the cluster and Argo CD's message" \
	"eu-1:register: registering cluster 'eu-1': Argo CD could not reach cluster 'eu-1' at https://eu-1.example:6443 with the given credentials, so it saved nothing \(HTTP 500: error getting server version: failed to get server version: Unauthorized\)" "$OUTPUT"
t_nogrep "the token is not shown" "$EU_TOKEN" "$OUTPUT"
t_eq "the answer was final: one upsert, no retries" 1 "$(emu_posts '^/api/v1/clusters$')"
t_eq "Argo CD has no such cluster" "https://kubernetes.default.svc" "$(clusters)"
t_eq "no Application was created for it" 0 "$(emu_posts '^/api/v1/applications$')"
t_ok "plan" idpmake plan
t_grep "the register step is still to run: nothing recorded" 'eu-1:register' "$OUTPUT"

# ---- the right token: registered ------------------------------------------
emu_reset
EU_TOKEN=the-right-one
t_ok "with the token the cluster accepts, up registers and syncs" idpmake up
t_eq "the cluster is in Argo CD" "https://eu-1.example:6443 https://kubernetes.default.svc" "$(clusters)"

# ---- a labels-only change: the PUT is checked with the stored credentials ----
emu_post config '{"cluster_tokens": {"https://eu-1.example:6443": "rotated"}}'
sed -i 's/env: prod/env: staging/' distro.yaml
emu_reset
t_exit 1 "the cluster no longer takes the stored token: the label change fails" idpmake up
t_grep "naming the cluster, what Argo CD holds, and the way out" \
	"eu-1:register: setting the labels of cluster 'eu-1': Argo CD could not reach cluster 'eu-1' at https://eu-1.example:6443 with the credentials it holds, so it saved nothing \(HTTP 500: failed to get server version: failed to get server version: Unauthorized\); .*register again with a new credential" "$OUTPUT"
t_eq "the PUT alone, no upsert after it" "0" "$(emu_posts '^/api/v1/clusters$')"

# ---- a server where nothing listens ------------------------------------------
emu_reset
cat >distro.yaml <<EOF
idpmake: 1
name: reach
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  gone:
    server: https://127.0.0.1:$dead
    register: {token-env: EU_TOKEN}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
t_exit 1 "an unreachable server: up fails" idpmake up
t_grep "Argo CD's dial error, the cluster named" \
	"gone:register: registering cluster 'gone': Argo CD could not reach cluster 'gone' at https://127.0.0.1:$dead .*dial tcp 127.0.0.1:$dead: connect: connection refused" "$OUTPUT"
t_eq "one upsert" 1 "$(emu_posts '^/api/v1/clusters$')"
t_grep "its sync did not run" "not run: gone/base:sync: gone:register failed" "$OUTPUT"
t_eq "no Application was created" 0 "$(emu_posts '^/api/v1/applications$')"
t_done
