#!/bin/bash
# The built-in cnoe distro, extended: its core packages (argocd, then
# ingress-nginx, then gitea) are Helm charts rendered by a real helm and,
# being `deploy: kubectl`, applied with `kubectl apply --server-side` as steps
# of the graph, before the push; a recording kubectl on PATH shows what ran.
# The charts are stand-ins with the same names and versions, served by
# lighttpd as a chart repository (the distro's chart repositories are vars).
# A kubectl package's apply is keyed like a sync: an unchanged render is not
# applied again, a changed one is.  With ../shared, the reference
# implementation's packages render from a local copy of cnoe-io/stacks and
# the graph has their needs (keycloak before backstage, external-secrets
# before the components whose secrets it provides).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"
real_kubectl=$(command -v kubectl || true)

# ---- stand-in charts -----------------------------------------------------
# the stand-ins (lib.sh mkchart) also hold a CRD and a Deployment
cat >"$T/more.yaml" <<'EOF2'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.{{ .Chart.Name }}.example.com
spec:
  group: {{ .Chart.Name }}.example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Chart.Name }}-server
  namespace: {{ .Release.Namespace }}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: x, image: example/x}]}
EOF2
mkchart argo-cd 8.5.6 "$T/more.yaml"
mkchart ingress-nginx 4.13.0 "$T/more.yaml"
mkchart gitea 12.1.2 "$T/more.yaml"
t_ok "the stand-in charts are packaged" test -f repo/argo-cd-8.5.6.tgz -a -f repo/gitea-12.1.2.tgz

start_chart_repo "$T/repo"

# ---- a recording kubectl (and curl, for gitea's hook) -----------------------
# Children get an allowlisted environment: the log's path is written in.
mkdir -p bin
cat >bin/kubectl <<EOF2
#!/bin/sh
case \$1 in
kustomize|version) exec "$real_kubectl" "\$@" ;;
esac
echo "\$*" >>"$T/kubectl.log"
for a in "\$@"; do
	case \$a in -f) : ;; *.yaml) [ -f "\$a" ] && echo "file \$a" >>"$T/kubectl.log" ;; esac
done
case "\$*" in
*" get "*jsonpath*) printf 'dGVzdA==' ;;
*" get "*) exit 1 ;;
esac
[ -t 0 ] || cat >/dev/null
exit 0
EOF2
cat >bin/curl <<EOF2
#!/bin/sh
echo "curl \$*" >>"$T/curl.log"
case "\$*" in *http_code*) printf 201 ;; esac
exit 0
EOF2
chmod +x bin/kubectl bin/curl
export PATH=$T/bin:$PATH

git init -q --bare gitops.git
mkdistro d <<EOF2
idpmake: 1
name: my-cnoe
extends: cnoe
vars:
  argo-helm: "$REPO"
  ingress-nginx-charts: "$REPO"
  gitea-charts: "$REPO"
  host: idp.test
git: {remote: "$T/gitops.git"}
argocd: {server: null}
# the cluster is there (this recording kubectl's): not one idpmake makes
clusters: {in-cluster: {create: null}}
EOF2

t_ok "validate the distro that extends cnoe" idpmake -C d validate
t_grep "cnoe's packages are there" '10 packages' "$OUTPUT"

t_ok "up the core (tier=core) with kubectl" idpmake -C d -l tier=core up
cp kubectl.log kubectl.1
grep '^apply --server-side' kubectl.1 | grep -n '' >applies.1
t_grep "kubectl apply --server-side ran" '^1:apply --server-side --force-conflicts --field-manager=idpmake' applies.1
t_grep "argocd is applied first: its namespace (a field manager of no distro's)" "^1:.*--field-manager=idpmake-namespace .*rendered/in-cluster/argocd\\.namespace\\.yaml" applies.1
t_grep "then its CRDs" "^2:.*customresourcedefinition" applies.1
t_grep "then the rest of argocd: without a namespace, in its own" "^[3-4]:apply --server-side .* -n argocd -f [^ ]*rendered/in-cluster/argocd/configmap" applies.1
ingress_line=$(grep -n 'rendered/in-cluster/ingress-nginx' applies.1 | head -1 | cut -d: -f1)
gitea_line=$(grep -n 'rendered/in-cluster/gitea' applies.1 | head -1 | cut -d: -f1)
t_ok "ingress-nginx after argocd, gitea after ingress-nginx" test "${ingress_line:-0}" -gt 2 -a "${gitea_line:-0}" -gt "${ingress_line:-0}"
t_grep "the CRDs are waited for" '^wait --for condition=established' kubectl.1
t_grep "the hooks apply with a field manager of no distro's" '^apply --server-side --force-conflicts --field-manager=idpmake-hook -f -$' kubectl.1
t_grep "the Deployments' rollout is waited for" '^rollout status -n argocd -f .*deployment\.argo-cd-server' kubectl.1
t_grep "gitea's admin hook ran (kubectl create secret)" 'create secret generic gitea-credential' kubectl.1
t_grep "the values files applied, with \${host}" 'server.basehref.*argocd|idp\.test' "$(ls d/.idpmake/rendered/in-cluster/argocd/configmap.argo-cd-values.yaml)"
t_grep "gitea's values have \${host}:\${port}" 'https://idp.test:8443/gitea' d/.idpmake/rendered/in-cluster/gitea/configmap.gitea-values.yaml
t_ok "the push came after: the GitOps repository holds argocd's folder" \
	git -C gitops.git cat-file -e main:in-cluster/argocd/configmap.argo-cd-values.yaml
t_ok "status records argocd's sync" idpmake -C d status argocd
t_grep "argocd's sync is ok" '^ok +in-cluster/argocd:sync' "$OUTPUT"

# keyed like a sync: nothing changed, nothing applied
: >kubectl.log
t_ok "up again" idpmake -C d -l tier=core up
t_nogrep "an unchanged render is not applied again" '^apply' kubectl.log

# a changed value: argocd alone is applied again
sed -i 's/host: idp.test/host: idp2.test/' d/distro.yaml
t_ok "plan after a var changed" idpmake -C d -l tier=core plan
t_grep "argocd's kubectl sync would run" 'in-cluster/argocd:sync' "$OUTPUT"
: >kubectl.log
t_ok "up after the change" idpmake -C d -l tier=core up
t_grep "argocd is applied again" 'rendered/in-cluster/argocd/' kubectl.log

# cnoe's Argo CD server kept, no token yet: the kubectl core still goes in
# (it is what brings Argo CD up); the rest asks for the token
git init -q --bare gitops2.git
mkdistro d2 <<EOF2
idpmake: 1
name: bootstrap
extends: cnoe
vars: {argo-helm: "$REPO", ingress-nginx-charts: "$REPO", gitea-charts: "$REPO"}
git: {remote: "$T/gitops2.git"}
argocd: {repo-url: "file://$T/gitops2.git"}
clusters: {in-cluster: {create: null}}
# (their sources are on the internet)
packages: {keycloak: null, argo-workflows: null, backstage: null, backstage-templates: null}
EOF2
: >kubectl.log
t_ok "up argocd with an Argo CD server and no token" env -u ARGOCD_AUTH_TOKEN "$IDPMAKE" -C d2 up argocd
t_grep "argocd was applied" 'rendered/in-cluster/argocd/' kubectl.log
t_exit 1 "up of everything needs the token" env -u ARGOCD_AUTH_TOKEN "$IDPMAKE" -C d2 up
t_grep "and says so" 'ARGOCD_AUTH_TOKEN' "$OUTPUT"

# deploy: kubectl on an argocd-app package is refused
mkdistro bad <<'EOF2'
idpmake: 1
name: bad
packages:
  apps: {type: argocd-app, path: apps, deploy: kubectl}
  x: {type: manifests, path: x, deploy: helm}
EOF2
mkdir -p bad/apps bad/x
t_exit 2 "deploy: kubectl on argocd-app is refused" idpmake -C bad validate
t_grep "with the place and the reason" "distro.yaml:4:.*'deploy: kubectl' applies manifests" "$OUTPUT"
t_grep "an unknown deploy is refused" "distro.yaml:5:.*deploy must be 'argocd' or 'kubectl', not 'helm'" "$OUTPUT"

# a git source whose folder has subfolders (as cnoe's), with the state
# folder relative to -C: libgit2 was given a relative checkout folder and
# failed on the first nested file
mkdir -p nested/a/b && git -C nested init -q -b main
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n' >nested/a/b/deep.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: top}\n' >nested/a/top.yaml
git -C nested add -A && git -C nested commit -q -m nested
mkdistro g <<EOF2
idpmake: 1
name: g
packages:
  p: {type: manifests, git: {url: "file://$T/nested", ref: main, path: a}}
EOF2
t_ok "a git source with nested folders renders with a relative state folder" idpmake -C g plan
t_grep "its render would run" 'in-cluster/p:render' "$OUTPUT"

# ---- the reference implementation, from a local cnoe-io/stacks ---------------
if stacks=$(require_shared corpus/cnoe-stacks); then
	mkdir -p stacks && cp -R "$stacks/." stacks/ && git -C stacks init -q -b main &&
		git -C stacks add -A && git -C stacks commit -q -m stacks
	rev=$(git -C stacks rev-parse HEAD)
	for p in keycloak argo-workflows backstage; do
		printf '  %s: {git: {url: "file://%s/stacks", ref: %s}}\n' "$p" "$T" "$rev"
	done >overrides
	{ cat d/distro.yaml; echo "packages:"; cat overrides
	  echo "  backstage-templates: {hooks: {post: []}}"; } >d/distro2.yaml
	mv d/distro2.yaml d/distro.yaml
	t_ok "plan everything" idpmake -C d plan
	t_grep "keycloak renders" 'in-cluster/keycloak:render' "$OUTPUT"
	t_grep "backstage renders" 'in-cluster/backstage:render' "$OUTPUT"
	t_ok "up everything (Argo CD syncs skipped: no server)" idpmake -C d up
	t_ok "keycloak's manifests were pushed" git -C gitops.git ls-tree -r --name-only main in-cluster/keycloak
	git -C gitops.git ls-tree -r --name-only main in-cluster/keycloak >kc.files
	t_grep "keycloak's Deployment is in its folder" 'deployment\.keycloak' kc.files
	git -C gitops.git grep -h 'idp2\.test' main -- in-cluster/keycloak >kc.host 2>&1
	t_grep "the host was rewritten in keycloak's manifests" 'idp2\.test' kc.host
	idpmake -C d graph --format json >graph.json
	edge() { python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); sys.exit(0 if any(e["from"]==sys.argv[2] and e["to"]==sys.argv[3] for e in g["edges"]) else 1)' graph.json "$1" "$2"; }
	t_ok "keycloak before backstage" edge in-cluster/keycloak:sync in-cluster/backstage:sync
	t_ok "external-secrets before keycloak" edge in-cluster/external-secrets:sync in-cluster/keycloak:sync
	t_ok "external-secrets before argo-workflows" edge in-cluster/external-secrets:sync in-cluster/argo-workflows:sync
	t_ok "external-secrets before backstage" edge in-cluster/external-secrets:sync in-cluster/backstage:sync
	t_ok "the kubectl core before the push" edge in-cluster/gitea:post:repos push
else
	t_skip "../shared is absent: the reference implementation's packages are not rendered"
fi
t_done
