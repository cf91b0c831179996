#!/bin/bash
# A linked fleet's _shared folder is one folder (issue 19 §7): a hand edit
# in it is one drift report naming the clusters it serves, with an
# --overwrite command that works as printed (and with any of its clusters'
# targets); plain diff shows its patch once; diff --rev (text, --json,
# markdown) lists each of its files once, with the clusters, and counts files.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: shared-once
clusters:
  canary: {server: https://canary:6443}
  us-1: {server: https://us-1:6443}
  eu-1: {server: https://eu-1:6443}
packages:
  rbac: {type: manifests, path: packages/rbac, namespace: rbac}
  web: {type: manifests, path: packages/web, namespace: web}
EOF2
mkmanifest d/packages/rbac/a.yaml ConfigMap a rbac
mkmanifest d/packages/rbac/b.yaml ConfigMap b rbac
mkmanifest d/packages/web/w.yaml ConfigMap w web
cd d || exit 1
git init -q . && echo .idpmake/ >.gitignore && git add -A && git -c user.name=t -c user.email=t@t commit -qm one ||
	t_bail "cannot commit the distro"
remote=$PWD/.idpmake/gitops.git

t_ok "up" idpmake up
t_ok "rbac is one _shared folder" git --git-dir="$remote" cat-file -e main:_shared/rbac/configmap.a.yaml

rm -rf "$T/hand" && git clone -q "$remote" "$T/hand" &&
	echo '  edited: by-hand' >>"$T/hand/_shared/rbac/configmap.a.yaml" &&
	GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com git -C "$T/hand" commit -qam "rbac by hand" &&
	git -C "$T/hand" push -q origin main || t_bail "the hand edit failed"
edit=$(git --git-dir="$remote" rev-parse main)

t_exit 1 "diff --exit-code sees the edit" idpmake --exit-code diff
t_eq "one drift report, not one per cluster" 1 "$(grep -c '^drift  _shared/rbac' "$STDERR")"
t_grep "naming the clusters it serves" '^drift  _shared/rbac \(for canary, us-1, eu-1\): changed outside idpmake by' "$STDERR"
t_grep "one folder counted" 'idpmake: 1 folder changed outside idpmake' "$STDERR"
t_grep "the patch is shown once" '^idpmake: 1 object differs from the GitOps repository' "$STDERR"
t_eq "one patch" 1 "$(grep -c '^diff --git a/_shared/rbac/configmap.a.yaml' "$STDOUT")"
t_ok "plan --json" idpmake --json plan
cp "$STDOUT" plan.json
t_ok "carries one drift entry with its clusters" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["drift"]
assert len(d) == 1, d
assert d[0]["folder"] == "_shared/rbac" and d[0]["clusters"] == ["canary", "us-1", "eu-1"], d
' plan.json

echo '  level: debug' >>packages/rbac/a.yaml
t_exit 1 "up of a change to rbac refuses to write over the edit" idpmake up
t_eq "the remote is unchanged" "$edit" "$(git --git-dir="$remote" rev-parse main)"
cmd=$(grep -o 'idpmake up --overwrite.*' "$OUTPUT" | tail -n 1)
t_eq "the suggested command names the folder once" "idpmake up --overwrite canary/rbac" "$cmd"

# a second edit, so that a cluster other than the first can overwrite it
t_ok "the suggested command works as printed" $cmd
t_ok "the folder holds the render" sh -c "git --git-dir='$remote' show main:_shared/rbac/configmap.a.yaml | grep -q 'level: debug'"
git -C "$T/hand" pull -q && echo '  again: by-hand' >>"$T/hand/_shared/rbac/configmap.b.yaml" &&
	git -C "$T/hand" commit -qam "again" && git -C "$T/hand" push -q origin main || t_bail "the second edit failed"
echo '  level: info' >>packages/rbac/b.yaml
t_exit 1 "up refuses the second edit" idpmake up
t_ok "--overwrite with another cluster's target writes the shared folder" idpmake up --overwrite us-1/rbac
t_nogrep "no conflict" 'changed outside idpmake|FAILED' "$OUTPUT"
t_ok "plan afterwards" idpmake plan
t_nogrep "shows no drift" 'drift|outside idpmake' "$OUTPUT"

# diff --rev: each file of the _shared folder once, for its clusters
git add -A && git -c user.name=t -c user.email=t@t commit -qm two || t_bail "commit"
sed -i 's/level: debug/level: warn/' packages/rbac/a.yaml
sed -i 's/level: info/level: warn/' packages/rbac/b.yaml
t_ok "diff --rev HEAD" idpmake diff --rev HEAD
t_eq "each file once" 1 "$(grep -c '^changed _shared/rbac/configmap.a.yaml' "$STDOUT")"
t_grep "with the clusters it is for" '^changed _shared/rbac/configmap.b.yaml \(for canary, eu-1, us-1\)$' "$STDOUT"
t_grep "files counted" '0 objects created, 2 changed, 0 deleted in 1 package on 3 clusters' "$STDERR"
t_ok "diff --rev --json" idpmake --json diff --rev HEAD
cp "$STDOUT" rev.json
t_ok "counts files, names the clusters" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["changed"] == 2 and len(d["objects"]) == 2, d
for o in d["objects"]:
    assert o["clusters"] == ["canary", "eu-1", "us-1"], o
' rev.json
t_ok "diff --rev --format markdown" idpmake diff --rev HEAD --format markdown
t_grep "the PR comment counts files" '^0 objects created, 2 changed, 0 deleted in 1 package\.$' "$STDOUT"
t_grep "and its table the clusters" '^\| rbac \| canary, eu-1, us-1 \| 0 \| 2 \| 0 \|$' "$STDOUT"
t_eq "each file's diff once" 1 "$(grep -c '<summary>changed <code>_shared/rbac/configmap.a.yaml</code> (for 3 clusters)' "$STDOUT")"
t_done
