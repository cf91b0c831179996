#!/bin/bash
# A git source whose host cannot be reached (issue 25 traps): plan goes on
# with the commit the source resolved to before, saying so, instead of
# failing whole; up does not (it needs the source); with nothing resolved
# before, plan fails, naming the source.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

git init -q -b main work
mkmanifest work/pkg/cm.yaml ConfigMap from-git apps
{ git -C work add -A && git -C work commit -q -m one; } || t_bail "cannot commit the source"
git clone -q --bare work src.git || t_bail "cannot make the source repository"
c1=$(git -C work rev-parse HEAD)
mkdistro d <<EOF
idpmake: 1
name: unreach
packages:
  ext:
    type: manifests
    git: {url: "file://$T/src.git", ref: main, path: pkg}
  local: {type: manifests, path: packages/local}
EOF
mkmanifest d/packages/local/cm.yaml ConfigMap local apps
cd d || exit 1

t_ok "up resolves the source" idpmake up
mv "$T/src.git" "$T/gone.git"
t_ok "plan --refresh with the source gone: goes on" idpmake plan --refresh
t_grep "saying so, with the commit it uses" "warning: .*going on with ${c1:0:12}, the commit 'main' resolved to before \\(up needs the source\\)" "$STDERR"
mkmanifest packages/local/cm2.yaml ConfigMap local2 apps
t_ok "plan --refresh still plans the rest" idpmake plan --refresh
t_grep "the local package's change" 'in-cluster/local:render' "$STDOUT"
t_exit 1 "up --refresh: fails, it needs the source" idpmake up --refresh
t_grep "naming it" 'gone|src\.git|failed to resolve|could not find' "$STDERR"

# nothing resolved before: nothing to fall back to
rm -rf .idpmake
t_exit 1 "plan with the source gone and no commit resolved before: fails" idpmake plan
t_grep "naming the package" 'in-cluster/ext:render' "$STDERR"
t_done
