#!/bin/bash
# shellcheck disable=SC2317,SC2119 # functions run through t_ok and friends; start_capi_emulators takes no argument here
# A hook of a cluster Cluster API made gets that cluster's kube context (issue
# 33 #2), whatever is current for the user (here mgmt): KUBECONFIG names a
# kubeconfig idpmake writes from the Secret NAME-kubeconfig on the management
# cluster (as its registration reads it): context NAME, the Secret's server,
# CA and credential only, 0600 in a 0700 folder of its own, removed once the
# hook has ended.  The 'acting on' line says so before anything runs, the
# hook's line names the context and the Secret; the credential is in no
# output, log or state.  kube-context and register.context: t8308.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_capi_emulators
capi_clusterctl_init true
idpmake() { timeout -k 5 240 "$IDPMAKE" "$@"; }
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR" "$T/out" "$T/d" || exit 1
cp -R "$top/examples/capi/packages" "$T/d/packages" || t_bail "cannot copy examples/capi/packages"
cd "$T/d" || exit 1
cat >distro.yaml <<ZZDISTRO
idpmake: 1
name: capi-hook
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
vars: {out: "$T/out"}
clusters:
  mgmt:
    server: https://kubernetes.default.svc
    kube-context: mgmt
    profiles: [management]
  w1:
    profiles: [workload]
    create:
      management: mgmt
      namespace: fleet
      class: {package: capi-classes, name: quick-start}
      version: v1.33.2
      control-plane: {replicas: 1}
      workers: {md-0: {class: default-worker, replicas: 1}}
      vars: {imageRepository: registry.k8s.io}
      timeout: 60
profiles:
  management: [capi-classes]
  workload: [podinfo]
packages:
  capi-classes: {type: manifests, path: packages/capi-classes, namespace: fleet, sync: {options: [CreateNamespace=true]}}
  podinfo:
    type: manifests
    path: packages/podinfo
    sync: {options: [CreateNamespace=true]}
    hooks:
      post:
        - name: ctx
          run: |
            o=\$IDPMAKE_VAR_OUT
            kubectl config current-context >"\$o/context"
            kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}' >"\$o/server"
            printf '%s\n' "\$KUBECONFIG" >"\$o/kubeconfig"
            stat -c %a "\$KUBECONFIG" >"\$o/mode"
            stat -c %a "\$(dirname "\$KUBECONFIG")" >"\$o/dirmode"
            kubectl get namespace podinfo -o name >"\$o/ns"
ZZDISTRO

t_ok "plan" idpmake plan
t_grep "the 'acting on' line names w1's hooks' context and its Secret" \
	'^acting on .*, hooks w1: context w1 from Secret fleet/w1-kubeconfig on mgmt \(create.management\)' "$STDERR"
t_ok "up makes w1 and runs its hook" idpmake up
cp "$OUTPUT" "$T/up.out"
t_eq "the hook's kubectl: w1's context, not the current mgmt" w1 "$(cat "$T/out/context")"
t_grep "at w1's workload face" '/k8s/w1$' "$T/out/server"
t_eq "which answers it: podinfo's namespace there" namespace/podinfo "$(cat "$T/out/ns")"
t_eq "the kubeconfig alone in KUBECONFIG, under TMPDIR" 1 "$(grep -c "^$T/tmp/idpmake-hook-[^/:]*/kubeconfig$" "$T/out/kubeconfig")"
t_eq "written 0600" 600 "$(cat "$T/out/mode")"
t_eq "in a folder 0700" 700 "$(cat "$T/out/dirmode")"
t_fail "removed after the hook, its folder too" test -e "$(dirname "$(cat "$T/out/kubeconfig")")"
t_eq "nothing left under TMPDIR" "" "$(ls -A "$TMPDIR")"
t_grep "the hook's line names the context and the Secret" \
	'post w1/podinfo:post:ctx: context w1 \(Secret fleet/w1-kubeconfig on mgmt\)' "$T/up.out"
t_eq "the user's current context is still mgmt" mgmt "$(kubectl config current-context)"
kubectl -n fleet get secret w1-kubeconfig -o jsonpath='{.data.value}' | base64 -d >"$T/w1.kc" ||
	t_bail "cannot read w1's kubeconfig Secret"
tok=$(sed -n 's/^ *token: *//p' "$T/w1.kc")
key=$(sed -n 's/^ *client-key-data: *//p' "$T/w1.kc")
t_ok "the Secret has a token and a key (set-up)" test -n "$tok" -a -n "$key"
t_nostring "its token in no output" "$tok" "$T/up.out"
t_nostring "its key in no output" "$key" "$T/up.out"
grep -rlF -e "$tok" -e "$key" "$T/d" >"$T/leaks" 2>/dev/null
t_eq "nor in the state or any log" "" "$(cat "$T/leaks")"

# ---- a Secret naming another server: checked as the registration checks it ----
sed 's|^\( *server: \).*|\1https://127.0.0.1:9/k8s/w1|' "$T/w1.kc" >"$T/w1-other.kc"
t_ok "set-up: w1's Secret now names another server" kubectl -n fleet patch secret w1-kubeconfig --type merge \
	-p "{\"data\": {\"value\": \"$(base64 -w0 <"$T/w1-other.kc")\"}}"
rm -f "$T/out/context"
t_ok "forget the hook" idpmake forget w1/podinfo:post:ctx
t_exit 1 "up: the hook is refused" idpmake up
cp "$OUTPUT" "$T/up2.out"
t_grep "naming the server, the Cluster's endpoint, and that it does not run" \
	"w1/podinfo:post:ctx.*Secret fleet/w1-kubeconfig names the server https://127.0.0.1:9/k8s/w1, which is not the Cluster's spec.controlPlaneEndpoint .*: the hook does not run" "$T/up2.out"
t_fail "the hook did not run" test -e "$T/out/context"
t_nostring "the token in no output" "$tok" "$T/up2.out"
t_eq "nothing left under TMPDIR" "" "$(ls -A "$TMPDIR")"
t_done
