#!/bin/bash
# helm packages: by default an application.yaml with a Helm source (chart,
# version, values inline, ${var} expanded, `set` applied); `render: local`
# without helm installed fails that package alone, saying so.
# argocd-app packages: real idpbuilder packages from the corpus, consumed
# unmodified: cnoe:// folders pushed beside the Applications, sources rewritten.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: charts
vars: {domain: idp.example.com}
packages:
  ingress:
    type: helm
    chart: {repo: https://kubernetes.github.io/ingress-nginx, name: ingress-nginx, version: 4.10.1}
    values: [values/ingress.yaml]
    set: {controller.service.type: NodePort}
    namespace: ingress-nginx
  local-chart:
    type: helm
    render: local
    chart: {repo: https://charts.example.com, name: thing, version: 1.0.0}
  plain: {type: manifests, path: packages/plain}
EOF
mkdir -p d/values
cat >d/values/ingress.yaml <<'EOF'
controller:
  ingressClass: nginx
  host: "ingress.${domain}"
EOF
mkmanifest d/packages/plain/cm.yaml ConfigMap plain plain
cd d || exit 1

# a PATH without helm (but with kubectl and the shell tools)
mkdir -p "$T/bin"
for tool in sh cat git; do ln -sf "$(command -v $tool)" "$T/bin/$tool"; done
t_exit 1 "up -k 0 without helm: the local chart fails" env PATH="$T/bin" "$IDPMAKE" -k 0 up
t_grep "the failure names helm and the package" "local-chart.*'helm' is not installed" "$OUTPUT"
t_grep "and says what else to do" "remove 'render: local'" "$OUTPUT"
t_grep "the other packages still render" '2 rendered' "$OUTPUT"
t_grep "nothing is pushed while a render failed" 'nothing pushed' "$OUTPUT"
t_ok "up of the other two" env PATH="$T/bin" "$IDPMAKE" up ingress plain
app=.idpmake/gitops.git
t_ok "the chart rendered by Argo CD is pushed" git --git-dir=$app show main:in-cluster/ingress/application.yaml
a=$(git --git-dir=$app show main:in-cluster/ingress/application.yaml)
t_ok "it is one Application" grep -q '^kind: Application$' <<<"$a"
t_ok "with the chart's repo" grep -q 'repoURL: https://kubernetes.github.io/ingress-nginx' <<<"$a"
t_ok "name and version" sh -c 'grep -q "chart: ingress-nginx" && true' <<<"$a"
t_ok "the version" grep -q "targetRevision: 4.10.1" <<<"$a"
t_ok "values inline, variables expanded" grep -q 'host: ingress.idp.example.com' <<<"$a"
t_ok "set applied on top" grep -q 'type: NodePort' <<<"$a"
t_ok "destination namespace" grep -q 'namespace: ingress-nginx' <<<"$a"
t_eq "the folder holds only application.yaml" "application.yaml" "$(git --git-dir=$app ls-tree --name-only main:in-cluster/ingress)"
sed -i 's/4.10.1/4.11.0/' distro.yaml
t_ok "plan after a chart version change" idpmake plan
t_grep "re-renders the chart" 'in-cluster/ingress:render' "$OUTPUT"
t_nogrep "and not the other" 'in-cluster/plain:render' "$OUTPUT"

# ---- argocd-app: the corpus, unmodified ----------------------------------
# The corpus is read from ../shared (SHARED): where it is absent, as in a
# fresh clone, the rest of the script is a skip, not a failure.
corpus=$(require_shared corpus/cnoe-stacks/ref-implementation) ||
	t_skip_rest "the CNOE corpus is absent (no ${SHARED:-../shared}/corpus/cnoe-stacks): the argocd-app corpus checks did not run"
corpus=$(dirname "$corpus")
mkdir -p "$T/c" && cp -R "$corpus" "$T/c/stacks" && cd "$T/c" || exit 1
mkdistro . <<'EOF'
idpmake: 1
name: cnoe
packages:
  ref: {type: argocd-app, path: stacks/ref-implementation}
  backup: {type: argocd-app, path: stacks/local-backup}
  basic: {type: argocd-app, path: stacks/basic/package1}
EOF
t_ok "the graph has one package per Application file" idpmake graph --format json
cp "$STDOUT" graph.json
t_ok "ref-implementation's seven Applications, local-backup's two, basic's one" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
renders = sorted(n["package"] for n in g["nodes"] if n["kind"] == "render")
want = sorted(["ref-" + a for a in ["argo-workflows", "backstage", "backstage-templates", "external-secrets",
                                    "keycloak", "metric-server", "spark-operator"]] +
              ["backup-minio", "backup-velero", "basic-my-app"])
assert renders == want, renders' graph.json
t_ok "a target naming the package selects all its Applications" idpmake plan ref
t_grep "ref's backstage" 'in-cluster/ref-backstage:render' "$OUTPUT"
t_nogrep "not the other packages" 'backup-' "$OUTPUT"
t_ok "up on three corpus packages" idpmake up
repo=.idpmake/gitops.git
files=$(git --git-dir=$repo ls-tree -r --name-only main)
t_ok "each Application is pushed to its own folder" grep -q '^in-cluster/ref-backstage/application.backstage.yaml$' <<<"$files"
t_ok "its cnoe:// folder beside it" grep -q '^in-cluster/ref-backstage/backstage/manifests/' <<<"$files"
t_ok "keycloak's folder is its own" grep -q '^in-cluster/ref-keycloak/keycloak/manifests/' <<<"$files"
t_nogrep "no Application holds another's folder" '^in-cluster/ref-backstage/keycloak/' <(echo "$files")
t_ok "a kustomize overlay keeps its base" grep -q '^in-cluster/ref-argo-workflows/argo-workflows/manifests/base/install.yaml$' <<<"$files"
t_nogrep "the Go-templated kind.yaml is skipped, as idpbuilder does" 'kind.yaml' <(echo "$files")
b=$(git --git-dir=$repo show main:in-cluster/ref-backstage/application.backstage.yaml)
t_nogrep "no cnoe:// URL is left" 'cnoe://' <(echo "$b")
t_ok "the source points at the GitOps repository" grep -q "repoURL: file://$PWD/.idpmake/gitops.git" <<<"$b"
t_ok "at the Application's folder" grep -q 'path: in-cluster/ref-backstage/backstage/manifests' <<<"$b"
m=$(git --git-dir=$repo show main:in-cluster/backup-minio/application.minio.yaml)
t_ok "a ref source's \$values files follow it" grep -q 'values/in-cluster/backup-minio/minio/helm/values.yaml' <<<"$m"
t_ok "a chart source is left alone" grep -q 'repoURL: https://charts.min.io' <<<"$m"
t_ok "a second up is a no-op" idpmake up
t_grep "nothing rendered" ' 0 rendered' "$OUTPUT"
t_done
