#!/bin/bash
# idpmake diff --rev A..B (issue 8 §3): the renders of two revisions of the
# git repository that holds the distro, for every cluster and package,
# without touching the work tree, the index or the state's record of what is
# deployed; the known side costs no render; --format markdown writes a
# pull-request comment capped at 60,000 characters.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# the distro lives in a sub-folder of the repository
mkdir -p repo && git -C repo init -q -b main || t_bail "git init"
mkdistro repo/platform <<'EOF'
idpmake: 1
name: revs
# a folder per cluster, as written (linked clusters would share _shared/PKG)
git: {path: "${cluster}/${package}"}
clusters:
  dev: {}
  prod: {vars: {replicas: "3"}}
vars: {replicas: "1"}
rules: [rules/counted.yaml]
packages:
  web: {type: counted, path: packages/web, namespace: web}
  old: {type: manifests, path: packages/old, namespace: old}
  big: {type: manifests, path: packages/big, namespace: big}
EOF
mkmanifest repo/platform/packages/web/cm.yaml ConfigMap web web
mkmanifest repo/platform/packages/web/keep.yaml ConfigMap keep web
mkmanifest repo/platform/packages/old/cm.yaml ConfigMap old old
mkmanifest repo/platform/packages/big/cm.yaml ConfigMap big big
printf '.idpmake/\n' >repo/platform/.gitignore
# web renders with a rule that counts its runs in $T/renders
mkdir -p repo/platform/rules
cat >repo/platform/rules/counted.yaml <<EOF
rule: counted
description: cat, counting renders
command: [sh, -c, 'echo render >>$T/renders; for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done', sh, "\${src}"]
EOF
renders() { wc -l <"$T/renders"; }
git -C repo add -A && git -C repo commit -qm "first" || t_bail "first commit"
A=$(git -C repo rev-parse HEAD)

# the second commit: web changed and gained an object, old removed, new added
echo '  level: debug' >>repo/platform/packages/web/cm.yaml
mkmanifest repo/platform/packages/web/svc.yaml ConfigMap extra web
git -C repo rm -rq platform/packages/old
sed -i -e '/^  old:/d' repo/platform/distro.yaml
echo '  new: {type: manifests, path: packages/new, namespace: new}' >>repo/platform/distro.yaml
mkmanifest repo/platform/packages/new/cm.yaml ConfigMap fresh new
git -C repo add -A && git -C repo commit -qm "second" || t_bail "second commit"
B=$(git -C repo rev-parse HEAD)
cd repo/platform || exit 1

t_ok "up at the second commit" idpmake up
commits=$(git --git-dir=.idpmake/gitops.git rev-list --count main)
sqlite3 .idpmake/state.db 'select id, hex(key), hex(output) from step order by id' >"$T/steps.before"

n=$(renders)
t_ok "diff --rev A..B" idpmake diff --rev "$A..$B"
t_eq "A's web renders once (its key is the same on both clusters); B's is known" "$((n + 1))" "$(renders)"
t_grep "a changed object, with its cluster's folder" '^changed dev/web/configmap.web.yaml$' "$STDOUT"
t_grep "on every cluster" '^changed prod/web/configmap.web.yaml$' "$STDOUT"
t_grep "with a unified diff" '^[+]  level: debug$' "$STDOUT"
t_grep "a created object" '^created dev/web/configmap.extra.yaml$' "$STDOUT"
t_grep "the added package's objects are created" '^created prod/new/configmap.fresh.yaml$' "$STDOUT"
t_grep "the removed package's objects are deleted" '^deleted dev/old/configmap.old.yaml$' "$STDOUT"
t_grep "as a patch removing its lines" '^-kind: ConfigMap$' "$STDOUT"
t_nogrep "an unchanged object is not shown" 'configmap.keep.yaml|configmap.big.yaml' "$STDOUT"
t_grep "the counts" '4 objects created, 2 changed, 2 deleted in 3 packages on 2 clusters' "$STDERR"
t_eq "the state's record is untouched" "$(cat "$T/steps.before")" \
	"$(sqlite3 .idpmake/state.db 'select id, hex(key), hex(output) from step order by id')"
t_eq "no commit" "$commits" "$(git --git-dir=.idpmake/gitops.git rev-list --count main)"
t_eq "the work tree and the index are untouched" "" "$(git status --porcelain)"
t_nogrep "the checkouts are gone" . <(ls .idpmake/cache/rev 2>/dev/null)

cp "$STDOUT" "$T/first.diff"
t_ok "again" idpmake diff --rev "$A..$B"
cp "$STDOUT" "$T/second.diff"
t_eq "every key is known now: nothing renders" "$((n + 1))" "$(renders)"
t_ok "the same diff" diff "$T/first.diff" "$T/second.diff"

t_ok "B..A is the reverse" idpmake diff --rev "$B..$A"
t_grep "the added package is deleted" '^deleted dev/new/configmap.fresh.yaml$' "$STDOUT"

t_ok "--rev A: A against the work tree" idpmake diff --rev "$A"
t_grep "the work tree holds the second commit" '^created dev/new/configmap.fresh.yaml$' "$STDOUT"
t_grep "named in the summary" 'work tree' "$STDERR"
echo '  extra: uncommitted' >>packages/big/cm.yaml
t_ok "--rev HEAD with an uncommitted change" idpmake diff --rev HEAD big
t_grep "the uncommitted change is shown" '^[+]  extra: uncommitted$' "$STDOUT"
t_nogrep "the target selects" 'web' "$STDOUT"
git checkout -q -- packages/big/cm.yaml
t_exit 1 "--exit-code: differences" idpmake --exit-code diff --rev "$A..$B"
t_exit 0 "--exit-code: none between a commit and itself" idpmake --exit-code diff --rev "$B..$B"
t_exit 2 "an unknown revision" idpmake diff --rev nosuch..HEAD
t_grep "is named" "'nosuch..HEAD' names no revision" "$STDERR"
t_exit 2 "an unknown target" idpmake diff --rev "$A..$B" nosuch

t_ok "--json" idpmake --json diff --rev "$A..$B"
t_eq "the objects as JSON" "changed created deleted" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted({o["status"] for o in d["objects"]})))' "$STDOUT")"

t_ok "--format markdown" idpmake diff --rev "$A..$B" --format markdown
md=$STDOUT
t_grep "a summary table" '^[|] package [|] clusters [|] created [|] changed [|] deleted [|]$' "$md"
t_grep "the changed package, on both clusters" '^[|] web [|] dev, prod [|] 2 [|] 2 [|] 0 [|]$' "$md"
t_grep "the added package" '^[|] new [(]added[)] [|] dev, prod [|] 2 [|] 0 [|] 0 [|]$' "$md"
t_grep "the removed package" '^[|] old [(]removed[)] [|] dev, prod [|] 0 [|] 0 [|] 2 [|]$' "$md"
t_grep "each object in a collapsible block" '^<details><summary>changed <code>dev/web/configmap.web.yaml</code></summary>$' "$md"
t_grep "with its diff" '^```diff$' "$md"
t_eq "every block is closed" "$(grep -c '^<details>' "$md")" "$(grep -c '^</details>$' "$md")"
t_nogrep "nothing was cut" 'Cut' "$md"

# a big change: 400 objects of ~300 characters each, all changed
for i in $(seq 1 400); do
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big%03d\n  namespace: big\ndata:\n  v: "%s"\n' \
		"$i" "$(printf 'a%.0s' $(seq 1 200))" >"packages/big/cm$i.yaml"
done
git add -A && git commit -qm "big one" || t_bail "big one"
sed -i -e 's/"a/"b/' packages/big/cm*.yaml
git add -A && git commit -qm "big two" || t_bail "big two"
t_ok "markdown of a big change" idpmake diff --rev HEAD~1..HEAD --format markdown
cp "$STDOUT" "$T/big.md"
chars=$(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$T/big.md")
t_ok "is capped at 60,000 characters ($chars)" test "$chars" -le 60000
t_ok "and used most of it" test "$chars" -ge 50000
t_grep "the table counts every object on both clusters" '^[|] big [|] dev, prod [|] 0 [|] 800 [|] 0 [|]$' "$T/big.md"
t_grep "a note says what was cut" '^> [*][*]Cut:[*][*] .* the diffs of [0-9]+ of the 800 objects [(][0-9]+ characters[)] are not shown' "$T/big.md"
t_grep "naming them" 'changed <code>dev/big/configmap.big[0-9]+.yaml</code>.* and [0-9]+ more' "$T/big.md"
t_grep "and how to see them" 'Run <code>idpmake diff --rev HEAD~1..HEAD</code> to see them all' "$T/big.md"
t_eq "every shown block is closed" "$(grep -c '^<details>' "$T/big.md")" "$(grep -c '^</details>$' "$T/big.md")"
t_nogrep "no block is cut in half" '^<details>.*[^>]$' <(tail -n 5 "$T/big.md")
t_done
