#!/bin/bash
# Two steps that expand to one Application name are a located validate
# error (issue 19 §1): clusters `a` and `a-b`, packages `b-c` and `c` both
# give a-b-c under the default app-name; the error points at the package
# (the default) or at argocd.app-name (when set).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkmanifest d/packages/x/cm.yaml ConfigMap x default
mkdistro d <<'EOF'
idpmake: 1
name: names
argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git"}
clusters:
  a: {server: "https://a.example:6443"}
  a-b: {server: "https://a-b.example:6443"}
packages:
  b-c: {type: manifests, path: packages/x}
  c: {type: manifests, path: packages/x}
EOF
t_exit 2 "validate refuses two packages with one Application name" idpmake -C d validate
t_grep "located at the package, naming both and the name" \
	"distro.yaml:9:[0-9]+: error: argocd.app-name \"\\$\{cluster\}-\\$\{package\}\" gives a/b-c and a-b/c the same Application name 'a-b-c'" "$STDERR"
t_exit 2 "up refuses it too, before anything runs" idpmake -C d up
t_ok "nothing was rendered" test ! -e d/.idpmake/gitops.git

sed -i 's|argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git"}|argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git", app-name: "${package}"}|' d/distro.yaml
t_exit 2 "app-name \${package} with two clusters" idpmake -C d validate
t_grep "located at argocd.app-name" "distro.yaml:3:[0-9]+: error: argocd.app-name \"\\$\{package\}\" gives a/b-c and a-b/b-c the same Application name 'b-c'" "$STDERR"

sed -i 's/app-name: "${package}"/app-name: "${cluster}--${package}"/' d/distro.yaml
t_ok "a template that tells them apart validates" idpmake -C d validate

t_done
