#!/bin/bash
# Targets: `plan PKG` selects the package and what it needs, transitively;
# CLUSTER/PKG, CLUSTER/, -l KEY=VALUE; several targets; an unknown target is a
# usage error (exit 2). `up TARGET` renders and pushes only the selection.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

for p in a b c d e; do
	mkmanifest "d/packages/$p/cm.yaml" ConfigMap "$p"
done
# one: a.   two: a, b (needs a), c (needs b), d (needs one/a), e (alone).
mkdistro d <<'EOF'
idpmake: 1
name: targets
clusters:
  one: {server: https://one.example, profiles: [core]}
  two: {server: https://two.example, profiles: [core, apps]}
profiles:
  core: [a]
  apps: [b, c, d, e]
packages:
  a:
    type: manifests
    path: packages/a
    labels: {tier: core}
    hooks:
      post:
        - {name: ready, run: "true"}
  b:
    type: manifests
    path: packages/b
    needs: [a]
    labels: {tier: apps, team: web}
  c:
    type: manifests
    path: packages/c
    needs: [b]
    labels: {tier: apps}
  d:
    type: manifests
    path: packages/d
    needs: [one/a]
  e:
    type: manifests
    path: packages/e
    labels: {tier: apps, team: data}
EOF
cd d || exit 1

# plan_ids FILE ARGS...: `plan --json ARGS`, the step ids, one a line, in FILE.
plan_ids() {
	local f=$1
	shift
	t_ok "plan $* (exit 0)" idpmake plan --json "$@"
	grep -o '"id": *"[^"]*"' "$STDOUT" | sed 's/.*"\([^"]*\)"$/\1/' >"$f"
}

# ---- everything ----------------------------------------------------------------
plan_ids all.ids
t_grep "no target: every package (two/e:render)" '^two/e:render$' all.ids
t_grep "no target: one/a:post:ready" '^one/a:post:ready$' all.ids
t_eq "no target: 9 steps (6 renders, the push, 2 hooks; no Argo CD: the 6 syncs are skipped)" 9 "$(grep -c . all.ids)"

# ---- PACKAGE -----------------------------------------------------------------------
plan_ids c.ids c
t_grep "plan c: c's render" '^two/c:render$' c.ids
t_grep "plan c: c's render" '^two/c:render$' c.ids
t_grep "plan c: b (c needs b)" '^two/b:render$' c.ids
t_grep "plan c: b's render" '^two/b:render$' c.ids
t_grep "plan c: a, transitively (b needs a)" '^two/a:render$' c.ids
t_grep "plan c: a's hook" '^two/a:post:ready$' c.ids
t_grep "plan c: the push" '^push$' c.ids
t_nogrep "plan c: not e's render (unrelated)" '^two/e:render$' c.ids
t_nogrep "plan c: not e's render (unrelated)" '^two/e:' c.ids
t_nogrep "plan c: not d (unrelated)" '^two/d:' c.ids
t_nogrep "plan c: not a on cluster one (c's needs are on two)" '^one/a:' c.ids

plan_ids a.ids a
t_grep "plan a: a on cluster one" '^one/a:render$' a.ids
t_grep "plan a: and on cluster two" '^two/a:render$' a.ids
t_nogrep "plan a: not b (b needs a, not the other way)" '^two/b:' a.ids

plan_ids d.ids d
t_grep "plan d: d" '^two/d:render$' d.ids
t_grep "plan d: one/a, across clusters" '^one/a:post:ready$' d.ids
t_nogrep "plan d: not two/a" '^two/a:' d.ids

# ---- CLUSTER/PACKAGE -----------------------------------------------------------------
plan_ids twob.ids two/b
t_grep "plan two/b: two/b" '^two/b:render$' twob.ids
t_grep "plan two/b: two/a" '^two/a:render$' twob.ids
t_nogrep "plan two/b: not two/c (it needs b, not the other way)" '^two/c:' twob.ids
t_nogrep "plan two/b: not one/a" '^one/a:' twob.ids

plan_ids onea.ids one/a
t_grep "plan one/a: one/a" '^one/a:render$' onea.ids
t_nogrep "plan one/a: not two/a" '^two/a:' onea.ids

# ---- CLUSTER/ -----------------------------------------------------------------------
plan_ids one.ids one/
t_grep "plan one/: one/a" '^one/a:render$' one.ids
t_nogrep "plan one/: nothing of two" '^two/' one.ids

plan_ids two.ids two/
t_grep "plan two/: two/e" '^two/e:render$' two.ids
t_grep "plan two/: two/c" '^two/c:render$' two.ids
t_grep "plan two/: one/a, which two/d needs" '^one/a:render$' two.ids

# ---- several targets ------------------------------------------------------------------
plan_ids multi.ids e one/a
t_grep "plan e one/a: e" '^two/e:render$' multi.ids
t_grep "plan e one/a: one/a" '^one/a:render$' multi.ids
t_nogrep "plan e one/a: not b" '^two/b:' multi.ids

# ---- labels -----------------------------------------------------------------------------
plan_ids apps.ids -l tier=apps
t_grep "-l tier=apps: b" '^two/b:render$' apps.ids
t_grep "-l tier=apps: c" '^two/c:render$' apps.ids
t_grep "-l tier=apps: e" '^two/e:render$' apps.ids
t_grep "-l tier=apps: a, which b needs" '^two/a:render$' apps.ids
t_nogrep "-l tier=apps: not d (no label)" '^two/d:' apps.ids
t_nogrep "-l tier=apps: not one/a" '^one/a:' apps.ids

plan_ids web.ids -l tier=apps -l team=web
t_grep "-l tier=apps -l team=web: b" '^two/b:render$' web.ids
t_nogrep "-l tier=apps -l team=web: not e (all labels must match)" '^two/e:' web.ids
t_nogrep "-l tier=apps -l team=web: not c" '^two/c:' web.ids

t_exit 2 "-l without '=' is a usage error" idpmake plan -l tier
t_grep "saying KEY=VALUE" 'KEY=VALUE' "$STDERR"

# ---- the text plan names the same steps --------------------------------------------
t_ok "plan two/b (text)" idpmake plan two/b
t_grep "the text plan lists two/b's render" 'two/b:render' "$STDOUT"
t_nogrep "the text plan leaves out two/c" 'two/c:' "$STDOUT"
t_ok "up -n two/b is plan two/b" idpmake up -n two/b
t_nogrep "up -n leaves out two/c too" 'two/c:' "$STDOUT"
t_ok "plan wrote no GitOps commit" test ! -e .idpmake/gitops.git/refs/heads/main

# ---- unknown targets -------------------------------------------------------------------
t_exit 2 "an unknown package: exit 2" idpmake plan zzz
t_grep "the error names it" "zzz" "$STDERR"
t_exit 2 "a package not on that cluster (one/c): exit 2" idpmake plan one/c
t_grep "the error names it" "one/c" "$STDERR"
t_exit 2 "an unknown cluster (three/): exit 2" idpmake plan three/
t_grep "the error names the cluster" "three" "$STDERR"
t_exit 2 "an unknown cluster with a package (three/a): exit 2" idpmake plan three/a
t_exit 2 "a good and an unknown target: exit 2" idpmake plan a zzz
t_exit 2 "up with an unknown target: exit 2" idpmake up zzz
t_ok "and up wrote no commit" test ! -e .idpmake/gitops.git/refs/heads/main
t_exit 2 "render with an unknown target: exit 2" idpmake render zzz

# ---- up TARGET renders and pushes only the selection ------------------------------------
t_ok "up two/b" idpmake up two/b
t_ok "the GitOps repository has a commit" git --git-dir=.idpmake/gitops.git rev-parse --verify -q main
git --git-dir=.idpmake/gitops.git ls-tree -r --name-only main >tree.txt 2>&1
t_grep "it holds two/b" '^two/b/' tree.txt
# a renders alike on both linked clusters: one folder, _shared/a (fleet.md)
t_grep "and a (b needs a), in the folder the linked clusters share" '^_shared/a/' tree.txt
t_nogrep "not two/c (not selected)" '^two/c/' tree.txt
t_nogrep "not two/e (not selected)" '^two/e/' tree.txt
t_nogrep "not one/a (not selected)" '^one/a/' tree.txt
t_ok "then plan (everything)" idpmake plan --json
t_grep "the unselected packages still have work: two/e:render" '"two/e:render"' "$STDOUT"
t_nogrep "the selected ones do not: two/b:render is up to date" '"two/b:render"' "$STDOUT"

t_done
