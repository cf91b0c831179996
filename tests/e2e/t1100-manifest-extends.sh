#!/bin/bash
# Distros that extend distros: a child merges its packages into the parent's
# field by field, lists are replaced, `name: null` removes a package, paths
# resolve against the distro that wrote them, vars merge key by key; extends by
# folder, by name on IDPMAKE_DISTRO_PATH, and the built-in `default`; an extends
# cycle is an error.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# nodes_edges FILE: `graph --format json` of the last command ($STDOUT) as
# lines "node ID" and "edge FROM TO" in FILE.
nodes_edges() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for n in d["nodes"]:
    print("node", n["id"])
for e in d["edges"]:
    print("edge", e["from"], e["to"])
' <"$STDOUT" >"$1" 2>&1
}

# ---- the parent: four packages ---------------------------------------------
mkdistro base <<'EOF'
idpmake: 1
name: base
description: the parent
vars: {domain: base.example, who: parent}
packages:
  a:
    type: manifests
    path: packages/a
    namespace: ns-a
    labels: {tier: core, team: platform}
    needs: [b, c]
  b:
    type: manifests
    path: packages/b
    rewrite:
      - {match: 'WHO', replace: '${domain}/${who}'}
  c: {type: manifests, path: packages/c}
  d: {type: manifests, path: packages/d}
EOF
for p in b c d; do
	mkmanifest "base/packages/$p/cm.yaml" ConfigMap "$p"
	echo '  who: WHO' >>"base/packages/$p/cm.yaml"
done
mkmanifest base/packages/a/cm.yaml ConfigMap from-parent
t_ok "the parent validates on its own" idpmake -C base validate

# ---- the child: overrides a's path and needs, removes d ----------------------
mkdistro child <<'EOF'
idpmake: 1
name: child
extends: ../base
vars: {domain: child.example}
packages:
  a:
    path: packages/a2
    needs: [b]
    rewrite:
      - {match: 'NSHERE', replace: '${namespace}'}
  d: null
  e:
    type: manifests
    path: packages/e
EOF
mkmanifest child/packages/a2/cm.yaml ConfigMap from-child
echo '  ns: NSHERE' >>child/packages/a2/cm.yaml
mkmanifest child/packages/e/cm.yaml ConfigMap e

t_ok "the child validates" idpmake -C child validate
t_grep "validate names the child distro" "distro 'child' is valid" "$OUTPUT"
t_grep "with 4 packages (a, b, c from the parent, e of its own; d removed)" '4 packages' "$OUTPUT"

t_ok "graph --format json of the child" idpmake -C child graph --format json
nodes_edges ne.txt
t_grep "the child has the parent's package b" '^node in-cluster/b:render$' ne.txt
t_grep "and c" '^node in-cluster/c:render$' ne.txt
t_grep "and its own package e" '^node in-cluster/e:render$' ne.txt
t_nogrep "'d: null' removed the parent's package d" '^node in-cluster/d:' ne.txt
t_grep "a needs b (the child's list)" '^edge in-cluster/b:sync in-cluster/a:sync$' ne.txt
t_nogrep "lists are replaced, not appended: a no longer needs c" '^edge in-cluster/c:sync in-cluster/a:sync$' ne.txt

t_ok "render the child" idpmake -C child render -o out
t_ok "a's path is the child's (packages/a2, resolved in the child folder)" \
	test -f child/out/in-cluster/a/configmap.from-child.yaml
t_ok "not the parent's" test ! -e child/out/in-cluster/a/configmap.from-parent.yaml
t_grep "a keeps the parent's namespace (fields merge one by one)" '^  ns: ns-a$' child/out/in-cluster/a/configmap.from-child.yaml
t_ok "b's path is the parent's, resolved in the parent folder" test -f child/out/in-cluster/b/configmap.b.yaml
t_grep "vars merge key by key: the child's domain, the parent's who" '^  who: child\.example/parent$' \
	child/out/in-cluster/b/configmap.b.yaml
t_ok "e renders from the child folder" test -f child/out/in-cluster/e/configmap.e.yaml
t_ok "d does not render" test ! -e child/out/in-cluster/d

t_ok "plan -l tier=core: the parent's labels survive the merge" idpmake -C child plan -l tier=core --json
t_grep "plan -l tier=core selects a" '"in-cluster/a:render"' "$STDOUT"
t_ok "plan -l team=platform" idpmake -C child plan -l team=platform --json
t_grep "plan -l team=platform selects a" '"in-cluster/a:render"' "$STDOUT"

# A child that sets one label keeps the parent's others: maps merge key by key.
mkdistro child2 <<'EOF'
idpmake: 1
name: child2
extends: ../base
packages:
  a:
    labels: {tier: apps}
EOF
t_ok "a child that changes one label validates" idpmake -C child2 validate
t_ok "plan -l tier=apps on it" idpmake -C child2 plan -l tier=apps --json
t_grep "selects a (the child's label)" '"in-cluster/a:render"' "$STDOUT"
t_ok "plan -l team=platform on it" idpmake -C child2 plan -l team=platform --json
t_grep "selects a (the parent's other label is kept: maps merge key by key)" '"in-cluster/a:render"' "$STDOUT"

# ---- errors in a child and in a parent ---------------------------------------
mkdistro child3 <<'EOF'
idpmake: 1
name: child3
extends: ../base
packages:
  a:
    namespce: x
EOF
t_exit 2 "an unknown key in a child's package override: exit 2" idpmake -C child3 validate
t_grep "located in the child, with did you mean" "^distro\.yaml:6:5: error: .*unknown key 'namespce'.*did you mean 'namespace'" "$STDERR"

mkdistro child4 <<'EOF'
idpmake: 1
name: child4
extends: ../base
packages:
  c: null
EOF
t_exit 2 "removing a package the parent's a still needs: exit 2" idpmake -C child4 validate
t_grep "the error names the missing package c" "^[^ ]*distro\.yaml:[0-9]+:[0-9]+: error: .*'c'" "$STDERR"
t_grep "located at the child's 'c: null', naming a's needs in the parent" \
	"^distro\.yaml:5:3: error: package 'c' is removed here, but 'a' needs it \(\.\./base/distro\.yaml:11\)" "$STDERR"

# removing what the parent does not have is an error, not silently nothing
mkdistro child4b <<'EOF'
idpmake: 1
name: child4b
extends: ../base
packages:
  e: {type: manifests, path: e}
  dd: null
EOF
mkdir -p child4b/e
t_exit 2 "removing a package the parent does not have: exit 2" idpmake -C child4b validate
t_grep "located at the key, with did you mean" \
	"^distro\.yaml:6:3: error: 'dd: null' removes a package, but distro 'base' has no package 'dd'; did you mean 'd'\?" "$STDERR"
mkdistro child4c <<'EOF'
idpmake: 1
name: child4c
packages:
  x: null
EOF
t_exit 2 "'x: null' in a distro that extends nothing: exit 2" idpmake -C child4c validate
t_grep "located, saying it extends none" "^distro\.yaml:4:3: error: 'x: null' removes a package .*but it extends none" "$STDERR"

mkdistro badbase <<'EOF'
idpmake: 1
name: badbase
pakages: {}
EOF
mkdistro child5 <<'EOF'
idpmake: 1
name: child5
extends: ../badbase
EOF
t_exit 2 "an error in the parent: exit 2" idpmake -C child5 validate
t_grep "the error is located in the parent's file" "badbase/distro\.yaml:3:1: error: .*unknown key 'pakages'" "$STDERR"

mkdistro child6 <<'EOF'
idpmake: 1
name: child6
extends: ../nowhere
EOF
t_exit 2 "extends ../nowhere: exit 2" idpmake -C child6 validate
t_grep "located at the extends value" '^distro\.yaml:3:10: error: ' "$STDERR"

# ---- extends by name, through IDPMAKE_DISTRO_PATH ----------------------------
mkdir -p lib/mybase
cp -R base/packages lib/mybase/
sed 's/^name: base$/name: mybase/' base/distro.yaml >lib/mybase/distro.yaml
mkdistro byname <<'EOF'
idpmake: 1
name: byname
extends: mybase
vars: {who: byname}
EOF
t_exit 2 "extends: mybase without IDPMAKE_DISTRO_PATH: exit 2" idpmake -C byname validate
t_grep "the error names the distro and the search path" "^distro\.yaml:3:10: error: .*'mybase'.*IDPMAKE_DISTRO_PATH" "$STDERR"
t_ok "with IDPMAKE_DISTRO_PATH=lib: valid" env IDPMAKE_DISTRO_PATH="$T/lib" "$IDPMAKE" -C byname validate
t_ok "IDPMAKE_DISTRO_PATH is a colon-separated list" \
	env IDPMAKE_DISTRO_PATH="$T/nowhere:$T/lib" "$IDPMAKE" -C byname validate
t_ok "render by name" env IDPMAKE_DISTRO_PATH="$T/lib" "$IDPMAKE" -C byname render -o out
t_ok "the parent's package b renders from the library folder" test -f byname/out/in-cluster/b/configmap.b.yaml
t_grep "with the child's var who" '^  who: base\.example/byname$' byname/out/in-cluster/b/configmap.b.yaml

# A distro on the search path comes before a built-in one of the same name.
mkdir -p lib/default/packages/mine
mkmanifest lib/default/packages/mine/cm.yaml ConfigMap mine
cat >lib/default/distro.yaml <<'EOF'
idpmake: 1
name: default
packages:
  mine: {type: manifests, path: packages/mine}
EOF
mkdistro shadow <<'EOF'
idpmake: 1
name: shadow
extends: default
EOF
t_ok "IDPMAKE_DISTRO_PATH comes before the built-in distros" \
	env IDPMAKE_DISTRO_PATH="$T/lib" "$IDPMAKE" -C shadow graph --format json
nodes_edges shadow.txt
t_grep "the library's default (package mine) is used" '^node in-cluster/mine:render$' shadow.txt
t_nogrep "not the built-in one" '^node in-cluster/podinfo:' shadow.txt

# ---- the built-in default ---------------------------------------------------
mkdistro fromdefault <<'EOF'
idpmake: 1
name: fromdefault
extends: default
vars: {domain: mine.example}
packages:
  hello:
    type: manifests
    path: packages/hello
    needs: [namespaces]
    labels: {tier: apps}
EOF
mkmanifest fromdefault/packages/hello/cm.yaml ConfigMap hello
t_ok "extends: default validates" idpmake -C fromdefault validate
t_ok "graph of it" idpmake -C fromdefault graph --format json
nodes_edges default.txt
t_grep "default's package namespaces is there" '^node in-cluster/namespaces:render$' default.txt
t_grep "default's package podinfo is there" '^node in-cluster/podinfo:render$' default.txt
t_grep "the child's package hello is there" '^node in-cluster/hello:render$' default.txt
t_grep "hello needs namespaces" '^edge in-cluster/namespaces:sync in-cluster/hello:sync$' default.txt
t_ok "render it (default's packages come from inside the binary)" idpmake -C fromdefault render -o out
t_ok "default's namespaces package renders" test -d fromdefault/out/in-cluster/namespaces
t_grep "default's podinfo rewrite uses the child's domain" 'podinfo\.mine\.example' \
	"$(ls fromdefault/out/in-cluster/podinfo/ingress.*.yaml 2>/dev/null || echo none)"
t_ok "render made no commit" test ! -e fromdefault/.idpmake/gitops.git/refs/heads/main

mkdistro nodefault <<'EOF'
idpmake: 1
name: nodefault
extends: default
packages:
  podinfo: null
EOF
t_ok "extends: default with podinfo: null" idpmake -C nodefault graph --format json
nodes_edges nodefault.txt
t_nogrep "podinfo is removed" 'podinfo' nodefault.txt
t_grep "namespaces stays" '^node in-cluster/namespaces:render$' nodefault.txt

# ---- cycles -----------------------------------------------------------------
mkdistro cy1 <<'EOF'
idpmake: 1
name: cy1
extends: ../cy2
EOF
mkdistro cy2 <<'EOF'
idpmake: 1
name: cy2
extends: ../cy1
EOF
t_exit 2 "an extends cycle of two: exit 2" idpmake -C cy1 validate
t_grep "says cycle, located" "distro\.yaml:[0-9]+:[0-9]+: error: .*cycle" "$STDERR"
t_exit 2 "plan on it: exit 2" idpmake -C cy1 plan
t_exit 2 "up on it: exit 2" idpmake -C cy1 up
t_ok "and nothing is written" test ! -e cy1/.idpmake/gitops.git

mkdistro self <<'EOF'
idpmake: 1
name: self
extends: .
EOF
t_exit 2 "a distro that extends itself: exit 2" idpmake -C self validate
t_grep "says cycle" "^distro\.yaml:3:10: error: .*cycle" "$STDERR"

mkdir -p lib2/l1 lib2/l2
printf 'idpmake: 1\nname: l1\nextends: l2\n' >lib2/l1/distro.yaml
printf 'idpmake: 1\nname: l2\nextends: l1\n' >lib2/l2/distro.yaml
t_exit 2 "a cycle through the search path: exit 2" \
	env IDPMAKE_DISTRO_PATH="$T/lib2" "$IDPMAKE" -C lib2/l1 validate
t_grep "says cycle" "distro\.yaml:[0-9]+:[0-9]+: error: .*cycle" "$STDERR"

t_done
