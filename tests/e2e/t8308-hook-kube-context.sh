#!/bin/bash
# A hook's kubectl goes to its cluster's own kube context (issue 33 #2), never
# to whatever is current for the user: with the user's current-context
# PROD-DO-NOT-TOUCH, a post hook running the real `kubectl config
# current-context` prints the cluster's kube-context, or its register.context
# (in its register.kubeconfig), and the hook's line says which context it got
# and whence.  A cluster naming none keeps the current one, which the 'acting
# on' line names before anything runs.  The user's kubeconfig is not written.
# A kind cluster's hooks: t8411; a created (Cluster API) cluster's: t8428.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v kubectl >/dev/null || t_skip_rest "kubectl missing: run ./configure --install-deps"
cat >kc <<'ZZ'
apiVersion: v1
kind: Config
current-context: PROD-DO-NOT-TOUCH
clusters:
- name: prod
  cluster: {server: "https://prod.invalid:6443"}
- name: dev
  cluster: {server: "https://dev.invalid:6443"}
contexts:
- name: PROD-DO-NOT-TOUCH
  context: {cluster: prod, user: u}
- name: dev
  context: {cluster: dev, user: u}
users:
- name: u
  user: {token: not-a-real-token}
ZZ
cat >reg.kc <<'ZZ'
apiVersion: v1
kind: Config
current-context: not-this-one
clusters:
- name: dev2
  cluster: {server: "https://dev2.invalid:6443"}
contexts:
- name: not-this-one
  context: {cluster: dev2, user: u}
- name: dev2
  context: {cluster: dev2, user: u}
users:
- name: u
  user: {token: not-a-real-token-either}
ZZ
cp kc kc.before
export KUBECONFIG=$T/kc
unset ARGOCD_SERVER
git init -q --bare -b main "$T/gitops.git" || t_bail "git init failed"
mkdir -p out
mkdistro d <<EOF
idpmake: 1
name: hookctx
git: {remote: "$T/gitops.git"}
argocd: {server: null}
vars: {out: "$T/out"}
clusters:
  a: {server: "https://dev.invalid:6443", kube-context: dev}
  b: {server: "https://dev2.invalid:6443", register: {kubeconfig: "$T/reg.kc", context: dev2}}
  c: {server: "https://kubernetes.default.svc"}
packages:
  web:
    type: manifests
    path: packages/web
    hooks:
      post:
        - name: ctx
          run: |
            kubectl config current-context >"\$IDPMAKE_VAR_OUT/\$IDPMAKE_CLUSTER"
            kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}' >"\$IDPMAKE_VAR_OUT/\$IDPMAKE_CLUSTER.server"
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web

t_ok "plan" idpmake -C d plan
t_grep "the 'acting on' line names the current context c's hooks get" \
	"^acting on .*, hooks c: current-context PROD-DO-NOT-TOUCH in $T/kc \(no kube-context named\)" "$STDERR"
t_nogrep "and none for a and b, which name theirs" "hooks [ab]:" "$STDERR"
t_ok "up runs the hooks" idpmake -C d up
t_eq "a's hook: its kube-context, not PROD-DO-NOT-TOUCH" dev "$(cat out/a)"
t_eq "... at a's server" https://dev.invalid:6443 "$(cat out/a.server)"
t_eq "b's hook: its register.context in its register.kubeconfig" dev2 "$(cat out/b)"
t_eq "... at b's server" https://dev2.invalid:6443 "$(cat out/b.server)"
t_eq "c names none: the current one, as announced" PROD-DO-NOT-TOUCH "$(cat out/c)"
t_grep "a's hook's line names its context and whence" '^\[[0-9]+/[0-9]+\] post a/web:post:ctx: context dev \(kube-context\)' "$STDOUT"
t_grep "b's too" '^\[[0-9]+/[0-9]+\] post b/web:post:ctx: context dev2 \(register.context\)' "$STDOUT"
t_grep "c's line names none" '^\[[0-9]+/[0-9]+\] post c/web:post:ctx \(' "$STDOUT"
t_ok "the user's kubeconfig is as it was" cmp kc kc.before
t_ok "register.kubeconfig too" grep -q '^current-context: not-this-one$' reg.kc
t_ok "forget a's hook" idpmake -C d forget a/web:post:ctx
t_ok "up --json" idpmake -C d --json up
t_grep "the done event carries it" '"event":"done","id":"a/web:post:ctx".*"reason":"context dev \(kube-context\)"' "$STDOUT"
t_done
