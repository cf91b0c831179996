#!/bin/bash
# Say what it acts on (issue 19 #3): before it changes anything, `up` prints
# one line naming the GitOps remote and branch (credentials masked), the Argo
# CD server and where it came from, and the context in use and why; `plan`
# prints the same (on stderr under --json).  A plan whose only syncs are
# `deploy: kubectl` ones never says that sync steps are skipped.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
start_gitops_argocd
unset IDPMAKE_GIT_TOKEN
mkdistro d <<EOF
idpmake: 1
name: line
git: {remote: "$(authurl "$url")", branch: live}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
line="^acting on gitops ${url/:\/\//://$GIT_USER:\\*\\*\\*@} branch live \(distro\), argocd $ARGOCD_SERVER \(ARGOCD_SERVER\), context none"

t_ok "plan" idpmake -C d plan
t_grep "names the remote, its branch, the server and no context, on stderr" "$line" "$STDERR"
t_nogrep "and not on stdout" "acting on" "$STDOUT"
t_nostring "the password is masked" "$GIT_PASS" "$OUTPUT"
t_ok "plan --json" idpmake -C d --json plan
t_grep "the line on stderr" "$line" "$STDERR"
cp "$STDOUT" plan.json
t_ok "stdout stays JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' plan.json
t_fail "up (the emulator does not know this remote)" idpmake -C d up
t_grep "up prints it first" "$line" "$STDERR"
t_eq "as its first line" 1 "$(grep -n 'acting on' "$STDERR" | cut -d: -f1)"
t_nostring "the password is masked" "$GIT_PASS" "$OUTPUT"

# ---- the context, and why ----------------------------------------------------
t_ok "context add c" idpmake context add c --argocd-server "$ARGOCD_SERVER"
t_ok "plan --context c" env -u ARGOCD_SERVER "$IDPMAKE" --context c -C d plan
t_grep "the server from the context, chosen with --context" "argocd $ARGOCD_SERVER \(context 'c'\), context c \(--context\)$" "$STDERR"
t_ok "plan under IDPMAKE_CONTEXT" env -u ARGOCD_SERVER IDPMAKE_CONTEXT=c "$IDPMAKE" -C d plan
t_grep "says IDPMAKE_CONTEXT" "context c \(IDPMAKE_CONTEXT\)$" "$STDERR"
t_ok "a plain plan" env -u ARGOCD_SERVER "$IDPMAKE" -C d plan
t_grep "the default context fills in the server" "argocd $ARGOCD_SERVER \(context 'c'\), context c \(context use\)$" "$STDERR"
t_ok "context rm c" idpmake context rm c

# ---- no Argo CD: a kubectl sync runs, an Argo CD one is skipped -------------
mkdistro k <<EOF
idpmake: 1
name: kube
git: {remote: "$bare"}
argocd: {server: null}
packages:
  core: {type: manifests, path: packages/core, deploy: kubectl}
EOF
mkmanifest k/packages/core/cm.yaml ConfigMap core
t_ok "plan with only a kubectl sync and no argocd" env -u ARGOCD_SERVER "$IDPMAKE" -C k plan
t_grep "the kubectl sync is listed" '^sync +in-cluster/core:sync' "$STDOUT"
t_nogrep "and nothing says sync steps are skipped" 'skipped' "$STDOUT"
t_grep "the line says there is no argocd" 'argocd none' "$STDERR"
cat >>k/distro.yaml <<EOF
  web: {type: manifests, path: packages/core}
EOF
t_ok "plan with an Argo CD sync too" env -u ARGOCD_SERVER "$IDPMAKE" -C k plan
t_grep "which is counted as skipped" 'no argocd configured: 1 Argo CD step is skipped' "$STDOUT"

# ---- hooks with no kube context named: the one they will get is said first (issue 33 #2) ----
cat >kc <<EOF
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://prod.invalid:6443"}
contexts:
- name: PROD-DO-NOT-TOUCH
  context: {cluster: prod, user: u}
current-context: PROD-DO-NOT-TOUCH
users:
- name: u
  user: {token: not-a-token}
EOF
hooks_distro() {	# hooks_distro [CLUSTERS-LINE]
	mkdistro h <<EOF
idpmake: 1
name: hooks
git: {remote: "$bare"}
argocd: {server: null}
$1
packages:
  web:
    type: manifests
    path: packages/web
    hooks:
      post:
        - {name: ctx, run: kubectl config current-context}
EOF
}
hooks_distro ""
mkmanifest h/packages/web/cm.yaml ConfigMap web
t_ok "plan of a distro whose hook runs kubectl, no context named" env -u ARGOCD_SERVER KUBECONFIG="$PWD/kc" "$IDPMAKE" -C h plan
t_grep "the line names the context its hooks get" "^acting on .*, hooks in-cluster: current-context PROD-DO-NOT-TOUCH in $PWD/kc \(no kube-context named\)" "$STDERR"
hooks_distro 'clusters: {in-cluster: {server: "https://kubernetes.default.svc", kube-context: PROD-DO-NOT-TOUCH}}'
t_ok "plan with the cluster's kube-context named" env -u ARGOCD_SERVER KUBECONFIG="$PWD/kc" "$IDPMAKE" -C h plan
t_nogrep "then the hooks get that one, and the line says nothing more" "hooks in-cluster" "$STDERR"

t_done
