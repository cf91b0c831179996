#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Secret values never printed by the diffs of renders, whatever the
# Secret's shape: a data or stringData that is not a map (a string, a list),
# a value kept in kubectl's last-applied-configuration annotation, a Secret
# in a List (a file that does not parse: t-objdiff.c test_mask).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p repo/packages/app && git -C repo init -q -b main || t_bail "git init"
mkdistro repo <<'EOF'
idpmake: 1
name: secrets
packages:
  app: {type: manifests, path: packages/app, namespace: app}
EOF
cat >repo/packages/app/s.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata:
  name: str
stringData: "strOLD-Zq5"
---
apiVersion: v1
kind: Secret
metadata:
  name: seq
data: [seqOLD-Zq5]
---
apiVersion: v1
kind: Secret
metadata:
  name: applied
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","stringData":{"p":"appOLD-Zq5"}}'
stringData: {p: appOLD-Zq5}
---
apiVersion: v1
kind: List
metadata: {name: l}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: inlist}
  stringData: {p: listOLD-Zq5}
EOF
printf '.idpmake/\n' >repo/.gitignore
cd repo || exit 1
git add -A && git -c user.name=t -c user.email=t@t commit -qm first || t_bail "first commit"
t_ok "setup: up" idpmake up
sed -i 's/OLD-Zq5/NEW-Zq5/g' packages/app/s.yaml
git -c user.name=t -c user.email=t@t commit -qam second || t_bail "second commit"

never() { # DESC FILE
	local v
	for v in strOLD-Zq5 strNEW-Zq5 seqOLD-Zq5 seqNEW-Zq5 appOLD-Zq5 appNEW-Zq5 listOLD-Zq5 listNEW-Zq5; do
		t_nostring "$1: no Secret value ($v)" "$v" "$2"
	done
}
t_exit 1 "diff --rev HEAD~1..HEAD" idpmake --color=never --exit-code diff --rev HEAD~1..HEAD
cp "$STDOUT" rev.out
never "diff --rev" rev.out
t_ok "diff --rev --json" idpmake --json diff --rev HEAD~1..HEAD
cp "$STDOUT" rev.json
never "diff --rev --json" rev.json
t_ok "diff --rev --format markdown" idpmake diff --rev HEAD~1..HEAD --format markdown
cp "$STDOUT" rev.md
never "markdown" rev.md
t_ok "plain diff" idpmake --color=never diff
cp "$STDOUT" plain.out
never "plain diff" plain.out
t_done
