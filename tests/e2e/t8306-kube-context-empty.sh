#!/bin/bash
# --kube-context "" is a usage error (exit 2) instead of being ignored, for
# every command; and promote, which acts like up, says what it acts on
# before it acts (targets.c).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF
idpmake: 1
name: kctx
git: {remote: "$bare"}
clusters:
  live: {server: "https://live:6443"}
  snap: {server: "https://snap:6443", mode: cloned}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web

for cmd in plan up; do
	t_exit 2 "$cmd --kube-context ''" idpmake -C d --kube-context "" $cmd
	t_grep "says it needs a name" "kube-context needs a kube context's name" "$STDERR"
done
t_exit 2 "--kube-context= too" idpmake -C d --kube-context= plan
t_eq "nothing was pushed" "" "$(git --git-dir="$bare" for-each-ref)"

t_ok "up" idpmake -C d up
mkmanifest d/packages/web/cm2.yaml ConfigMap web2
t_ok "promote snap" idpmake -C d promote snap
t_grep "names what it acts on" "^acting on gitops $bare branch main \(distro\), argocd none" "$STDERR"
t_eq "first, before any step" "acting on" "$(head -1 "$STDERR" | cut -c1-9)"
t_grep "and then acts" "snap/web:render" "$STDOUT"

t_done
