#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff --live never prints a Secret's values,
# whatever its shape: kubectl's last-applied-configuration annotation on a
# Secret, a Secret inside a List (printed whole before), in the text, in
# --json, in the -o file and again from it with --from.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: secrets
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  app: {type: manifests, path: packages/app, namespace: app}
EOF
mkdir -p d/packages/app
secrets() { # SUFFIX
	cat <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: applied
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","stringData":{"p":"app$1-Zq5"}}'
stringData: {p: app$1-Zq5}
---
apiVersion: v1
kind: List
metadata: {name: l}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: inlist}
  stringData: {p: list$1-Zq5}
EOF
}
secrets OLD >d/packages/app/s.yaml
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
t_ok "setup: up in-cluster" idpmake up app
secrets NEW >packages/app/s.yaml

never() { # DESC FILE
	local v
	for v in appOLD-Zq5 appNEW-Zq5 listOLD-Zq5 listNEW-Zq5; do
		t_nostring "$1: no Secret value ($v)" "$v" "$2"
	done
}
t_exit 1 "diff --live --exit-code" idpmake --color=never diff --live --exit-code app
cp "$STDOUT" live.out
t_grep "the List is compared" 'List app/l' live.out
never "diff --live" live.out
t_ok "diff --live --json" idpmake --json diff --live app
cp "$STDOUT" live.json
never "diff --live --json" live.json
t_ok "diff --live -o" idpmake diff --live -o saved.json app
never "the saved diff" saved.json
t_ok "diff --from" idpmake --color=never diff --from saved.json
cp "$STDOUT" from.out
never "diff --from" from.out
t_done
