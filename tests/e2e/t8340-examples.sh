#!/bin/bash
# The examples run as their READMEs say, each from a scratch copy.
# examples/custom-rule: the rule file's awk renderer makes the ConfigMap it
# should; a change to its input re-renders that package alone; a bad line
# fails that render, naming the line.
# examples/flavour (extends cnoe): spark-operator is removed from plan,
# render and the GitOps tree; the overridden host and Helm values are in the
# rendered output.  Offline: a distro extending the copy points cnoe's chart
# repositories at stand-in charts that lighttpd serves and the reference
# implementation's git source at a local stand-in of cnoe-io/stacks; a
# recording kubectl applies the core, and the Argo CD emulator syncs the rest.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20

# ---- examples/custom-rule ------------------------------------------------------
cp -R "$top/examples/custom-rule" "$T/cr" || t_bail "cannot copy examples/custom-rule"
rm -rf "$T/cr/.idpmake"
t_ok "custom-rule: validate" idpmake -C cr validate
t_grep "custom-rule: two packages" "distro 'custom-rule' is valid: 2 packages" "$OUTPUT"
t_ok "custom-rule: plan" idpmake -C cr plan
t_grep "custom-rule: settings would render" '^render +in-cluster/settings:render' "$STDOUT"
t_ok "custom-rule: render -o out" idpmake -C cr render -o out
f=cr/out/in-cluster/settings/configmap.settings.yaml
t_ok "custom-rule: the rule's ConfigMap is a file of its own" test -f "$f"
t_grep "custom-rule: in the package's namespace" '^  namespace: platform$' "$f"
t_grep "custom-rule: labelled by the rule" '^    rendered-by: env-configmap$' "$f"
t_grep "custom-rule: KEY=VALUE lines are data" '^  LOG_LEVEL: info$' "$f"
t_grep "custom-rule: a quote in a value survives" "^  GREETING: it's rendered by awk$" "$f"
t_nogrep "custom-rule: comments are not data" 'the platform' "$f"
t_eq "custom-rule: three keys" 3 "$(grep -c '^  [A-Z_]*:' "$f")"
t_ok "custom-rule: hello renders beside it" test -f cr/out/in-cluster/hello/configmap.hello.yaml
t_ok "custom-rule: up" idpmake -C cr up
t_ok "custom-rule: the GitOps tree has the rule's output" \
	git -C cr/.idpmake/gitops.git cat-file -e main:in-cluster/settings/configmap.settings.yaml
t_ok "custom-rule: plan after up" idpmake -C cr plan --exit-code
echo 'LOG_LEVEL=debug' >>cr/packages/settings/config.env
t_exit 1 "custom-rule: plan --exit-code after config.env changed" idpmake -C cr plan --exit-code
t_grep "custom-rule: settings renders again" '^render +in-cluster/settings:render' "$STDOUT"
t_nogrep "custom-rule: hello does not" 'in-cluster/hello:render' "$STDOUT"
t_ok "custom-rule: up after the change" idpmake -C cr up
git -C cr/.idpmake/gitops.git show main:in-cluster/settings/configmap.settings.yaml >cm.pushed 2>&1
t_grep "custom-rule: the pushed ConfigMap has the new value" '^  LOG_LEVEL: debug$' cm.pushed
echo 'not a pair' >>cr/packages/settings/config.env
t_exit 1 "custom-rule: a line that is not KEY=VALUE fails the render" idpmake -C cr up
t_grep "custom-rule: naming the file and line" 'config\.env:6: not KEY=VALUE: not a pair' "$OUTPUT"
t_grep "custom-rule: and the step" 'in-cluster/settings:render' "$OUTPUT"

# ---- examples/flavour ------------------------------------------------------------
command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"
real_curl=$(command -v curl) || t_bail "curl missing"
real_kubectl=$(command -v kubectl) || t_bail "kubectl missing: run ./configure --install-deps"

mkchart argo-cd 8.5.6
mkchart ingress-nginx 4.13.0
mkchart gitea 12.1.2
t_ok "flavour: the stand-in charts are packaged" test -f repo/argo-cd-8.5.6.tgz -a -f repo/gitea-12.1.2.tgz
start_chart_repo "$T/repo"

# a stand-in of cnoe-io/stacks: the three folders cnoe reads, saying
# cnoe.localtest.me:8443 as the real ones do
s=stacks/ref-implementation
mkdir -p $s/keycloak/manifests $s/backstage/manifests $s/argo-workflows/manifests/base $s/argo-workflows/manifests/dev
for p in keycloak backstage; do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-url}\ndata: {url: "https://cnoe.localtest.me:8443/%s"}\n' \
		"$p" "$p" >$s/$p/manifests/cm.yaml
done
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: workflows}\ndata: {url: "https://cnoe.localtest.me:8443/argo-workflows"}\n' \
	>$s/argo-workflows/manifests/base/cm.yaml
printf 'resources: [cm.yaml]\n' >$s/argo-workflows/manifests/base/kustomization.yaml
printf 'resources: [../base]\n' >$s/argo-workflows/manifests/dev/kustomization.yaml
git -C stacks init -q -b main && git -C stacks add -A && git -C stacks commit -q -m stacks || t_bail "cannot make the stacks repository"
rev=$(git -C stacks rev-parse HEAD)

# a recording kubectl and curl (children get an allowlisted environment: paths are written in)
mkdir -p bin
cat >bin/kubectl <<EOF2
#!/bin/sh
case \$1 in
kustomize|version) exec "$real_kubectl" "\$@" ;;
esac
echo "\$*" >>"$T/kubectl.log"
case "\$*" in
*" get "*jsonpath*) printf 'dGVzdA==' ;;
*" get "*) exit 1 ;;
esac
[ -t 0 ] || cat >/dev/null
exit 0
EOF2
cat >bin/curl <<EOF2
#!/bin/sh
case "\$*" in *http_code*) printf 201 ;; esac
exit 0
EOF2
chmod +x bin/kubectl bin/curl

cp -R "$top/examples/flavour" "$T/flavour" || t_bail "cannot copy examples/flavour"
rm -rf "$T/flavour/.idpmake"
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
{
	cat <<EOF2
idpmake: 1
name: flavour-offline
extends: ../flavour
vars: {argo-helm: "$REPO", ingress-nginx-charts: "$REPO", gitea-charts: "$REPO"}
git: {remote: "$bare"}
# the cluster is there (the recording kubectl's): not one idpmake makes
clusters: {in-cluster: {create: null}}
# the emulator at ARGOCD_SERVER, with ARGOCD_AUTH_TOKEN: no root path, no login
argocd: {server: null, repo-url: "file://$bare", grpc-web-root-path: null, login: null}
packages:
  backstage-templates: {hooks: {post: []}}
EOF2
	for p in keycloak argo-workflows backstage; do
		printf '  %s: {git: {url: "file://%s/stacks", ref: %s}}\n' "$p" "$T" "$rev"
	done
} | mkdistro run

t_ok "flavour: validate the example itself" idpmake -C flavour validate
t_grep "flavour: cnoe's ten packages less one" "distro 'flavour' is valid: 9 packages" "$OUTPUT"
t_ok "flavour: graph --format json" idpmake -C flavour graph --format json
t_nogrep "flavour: spark-operator is not in the graph" 'spark-operator' "$STDOUT"
t_grep "flavour: metric-server still is" '"in-cluster/metric-server:sync"' "$STDOUT"

PATH=$T/bin:$PATH
export PATH
t_ok "flavour: validate (offline)" idpmake -C run validate
t_ok "flavour: plan" idpmake -C run plan
t_grep "flavour: plan renders argocd" 'in-cluster/argocd:render' "$STDOUT"
t_grep "flavour: and external-secrets" 'in-cluster/external-secrets:render' "$STDOUT"
t_nogrep "flavour: plan has no spark-operator" 'spark-operator' "$OUTPUT"
t_ok "flavour: render -o out" idpmake -C run render -o out
o=run/out/in-cluster
t_ok "flavour: cnoe's packages rendered" test -d $o/argocd -a -d $o/metric-server -a -d $o/keycloak
t_ok "flavour: spark-operator did not render" test ! -e $o/spark-operator
t_grep "flavour: argocd got the set values" '"logging":\{"format":"json","level":"debug"\}' \
	$o/argocd/configmap.argo-cd-values.yaml
t_grep "flavour: and kept cnoe's values file, with the child's host" 'idp\.flavour\.localtest\.me' \
	$o/argocd/configmap.argo-cd-values.yaml
t_grep "flavour: gitea got its set value" '"LANDING_PAGE":"explore"' $o/gitea/configmap.gitea-values.yaml
t_grep "flavour: gitea's values file has the child's host" 'https://idp\.flavour\.localtest\.me:8443/gitea' \
	$o/gitea/configmap.gitea-values.yaml
es=$(ls $o/external-secrets/*.yaml 2>/dev/null | head -1)
t_grep "flavour: external-secrets' Application has the child's value" 'replicaCount' "${es:-/dev/null}"
t_grep "flavour: beside cnoe's installCRDs (set maps merge)" 'installCRDs' "${es:-/dev/null}"
t_grep "flavour: keycloak's manifests say the child's host" 'https://idp\.flavour\.localtest\.me:8443/keycloak' \
	$o/keycloak/configmap.keycloak-url.yaml

ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
t_ok "flavour: up against the Argo CD emulator" idpmake -C run up
t_grep "flavour: the core was applied with kubectl" '^apply --server-side .*rendered/in-cluster/argocd' kubectl.log
git -C "$bare" ls-tree -r --name-only main >tree.txt 2>&1
t_grep "flavour: the GitOps tree has external-secrets" '^in-cluster/external-secrets/' tree.txt
t_grep "flavour: and keycloak" '^in-cluster/keycloak/' tree.txt
t_nogrep "flavour: and no spark-operator" 'spark-operator' tree.txt
"$real_curl" -sS -f "$emu/requests" >req.json || t_bail "no request log"
t_ok "flavour: Argo CD synced external-secrets" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
assert any(e["method"] == "POST" and e["path"] == "/api/v1/applications/in-cluster-external-secrets/sync" for e in log)' req.json
t_ok "flavour: and never heard of spark-operator" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
assert not any("spark-operator" in json.dumps(e) for e in log)' req.json
t_ok "flavour: a second up is a no-op" idpmake -C run plan --exit-code
t_done
