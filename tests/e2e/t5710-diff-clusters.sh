#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff CLUSTER_A/ CLUSTER_B/ [PACKAGE...] (issue 8 §2): the renders of two
# clusters package by package; packages on one side only are listed as
# such; identical packages are not shown; Secret values are never printed
# (a differing value is marked); offline from the state's cache (no render
# when the keys are known), rendering only what is missing; --exit-code,
# --json, -o and --from; unknown clusters and packages are errors.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p d/rules d/packages/app d/packages/same d/packages/only1 d/packages/only2
cd d || exit 1
# a renderer that notes each run in render.log
cat >rules/logcat.yaml <<EOF
rule: logcat
description: cat the yaml files, noting the run
command: [sh, -c, 'echo run >>$T/render.log; for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done', sh, "\${src}"]
version: [sh, -c, 'echo logcat 1']
inputs: ["*.yaml"]
EOF
cat >distro.yaml <<'EOF'
idpmake: 1
name: clusters
rules: [rules/logcat.yaml]
clusters:
  c1: {server: "https://c1.example:6443", profiles: [base, extra], vars: {replicas: "1", pw: hunter2-Zq7}}
  c2: {server: "https://c2.example:6443", profiles: [base, other], vars: {replicas: "3", pw: swordfish-Zq7}}
profiles:
  base: [app, same]
  extra: [only1]
  other: [only2]
packages:
  app:
    type: logcat
    path: packages/app
    rewrite: [{match: REPLICAS, replace: '${replicas}'}, {match: PASSWORD, replace: '${pw}'}]
  same: {type: logcat, path: packages/same}
  only1: {type: logcat, path: packages/only1}
  only2: {type: logcat, path: packages/only2}
EOF
mkmanifest packages/app/dep.yaml Deployment web
sed -i 's/replicas: 1/replicas: REPLICAS/' packages/app/dep.yaml
cat >packages/app/secret.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-Zq7, password: PASSWORD}
EOF
mkmanifest packages/same/cm.yaml ConfigMap same
mkmanifest packages/only1/cm.yaml ConfigMap one
mkmanifest packages/only2/cm.yaml ConfigMap two

t_ok "setup: up renders everything into the cache" idpmake up
rm -f "$T/render.log"

t_exit 1 "diff c1/ c2/ --exit-code: they differ" idpmake --color=never diff --exit-code c1/ c2/
cp "$STDOUT" text.out
t_eq "from the cache: nothing rendered" no "$(test -e "$T/render.log" && echo yes || echo no)"
t_grep "a package only on c1" '^package only1: only on c1$' "$STDOUT"
t_grep "a package only on c2" '^package only2: only on c2$' "$STDOUT"
t_grep "app differs" '^package app: c1 and c2 differ$' "$STDOUT"
t_grep "the changed object" '^change +apps\.deployment\.web\.yaml$|^change +[Dd]eployment\.web\.yaml$' "$STDOUT"
t_grep "labelled by cluster" '^--- c1/[^ ]*eployment\.web\.yaml$' "$STDOUT"
t_grep "the field: c1" '^-  replicas: 1$' "$STDOUT"
t_grep "the field: c2" '^\+  replicas: 3$' "$STDOUT"
t_nogrep "an identical package is not shown" '^package same' "$STDOUT"
t_grep "a differing Secret value is marked" '^\+  password: \(hidden, differs\)$' "$STDOUT"
t_nogrep "an equal Secret value is not a difference" '^[-+]  user:' "$STDOUT"
t_nostring "never a Secret value: c1" hunter2-Zq7 text.out
t_nostring "never a Secret value: c2" swordfish-Zq7 text.out
t_nostring "never a Secret value: the equal one" admin-Zq7 text.out
t_grep "the summary" '4 objects differ between c1 and c2' "$STDERR"

t_ok "PACKAGE operands restrict it" idpmake diff c1/ c2/ app
t_grep "app shown" '^package app: c1 and c2 differ$' "$STDOUT"
t_nogrep "only1 not shown" 'only1' "$STDOUT"
t_exit 0 "same with --exit-code: nothing differs" idpmake diff --exit-code c1/ c2/ same
t_grep "summary: 0" '0 objects differ between c1 and c2' "$STDERR"
t_exit 0 "a cluster against itself: nothing differs" idpmake diff --exit-code c1/ c1/

t_ok "--json" idpmake diff --json c1/ c2/
cp "$STDOUT" c.json
t_ok "--json lists one-sided packages and statuses" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["package"]: x for x in d["packages"]}
assert p["only1"]["only"] == "c1" and p["only2"]["only"] == "c2", p
assert [o["status"] for o in p["app"]["objects"]] == ["change", "change"], p["app"]
assert p["same"]["objects"] == [], p["same"]
assert d["differ"] == 4 and (d["a"], d["b"]) == ("c1", "c2"), d' c.json
t_nostring "never a Secret value in --json" swordfish-Zq7 c.json

# ---- what is missing is rendered ----------------------------------------------
sed -i 's/name: web/name: web2/' packages/app/dep.yaml
t_ok "after an edit, diff c1/ c2/ app" idpmake diff c1/ c2/ app
t_eq "renders exactly the two missing renders" 2 "$(wc -l <"$T/render.log")"
t_grep "and shows the new render" 'name: web2' "$STDOUT"

# ---- save and --from ----------------------------------------------------------
t_ok "-o FILE" idpmake diff -o cl.json c1/ c2/
t_exit 1 "--from FILE --exit-code" idpmake diff --from cl.json --exit-code
t_grep "--from shows it" '^package only1: only on c1$' "$STDOUT"

# ---- errors --------------------------------------------------------------------
t_exit 2 "an unknown package: exit 2" idpmake diff c1/ c2/ nope
t_grep "named" "no package 'nope'" "$STDERR"
t_exit 2 "an unknown cluster: exit 2" idpmake diff c1/ c9/

t_done
