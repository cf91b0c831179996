#!/bin/bash
# Changes made outside idpmake in a folder it owns (issue 8 §6): plan and
# diff show them (the folder, the commit, its author); up refuses to write
# over them, naming the two ways out; reverting the change is one, and
# `up --overwrite TARGET` the other: it replaces the change with the render,
# in a commit that names the commits it overwrote.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: drift
packages:
  web: {type: manifests, path: packages/web, namespace: web}
  db: {type: manifests, path: packages/db, namespace: db}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
mkmanifest d/packages/db/cm.yaml ConfigMap db db
cd d || exit 1
remote=$PWD/.idpmake/gitops.git

t_ok "up" idpmake up
t_ok "plan: no drift yet" idpmake plan
t_nogrep "none is shown" 'drift|outside idpmake' "$OUTPUT"

# a hand edit, pushed with plain git by someone else
hand_edit() { # FOLDER-FILE SUBJECT
	rm -rf "$T/hand" && git clone -q "$remote" "$T/hand" &&
		echo '  edited: by-hand' >>"$T/hand/$1" &&
		GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com git -C "$T/hand" commit -qam "$2" &&
		git -C "$T/hand" push -q origin main &&
		git -C "$T/hand" rev-parse HEAD
}
edit1=$(hand_edit in-cluster/web/configmap.web.yaml "tweak web by hand") || t_bail "the hand edit failed"

t_exit 1 "diff --exit-code sees the hand edit" idpmake --exit-code diff
t_grep "as a patch removing it" '^-  edited: by-hand' "$STDOUT"
t_grep "diff names the folder, the commit and its author" \
	"drift  in-cluster/web: changed outside idpmake by ${edit1:0:7} Alice <alice@example.com> \"tweak web by hand\"" "$STDERR"
t_nogrep "and no other folder" 'in-cluster/db: changed' "$STDERR"
t_grep "and what up does about it" \
	'up will not write over it: revert the change in the GitOps repository, or replace it with the render: idpmake up --overwrite in-cluster/web' "$STDERR"
t_ok "plan shows it too (from the clone diff fetched)" idpmake plan
t_grep "plan names the folder, the commit and its author" \
	"drift  in-cluster/web: changed outside idpmake by ${edit1:0:7} Alice <alice@example.com>" "$STDOUT"
t_ok "plan --json" idpmake --json plan
cp "$STDOUT" plan.json
t_ok "carries it as data" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["drift"]
assert len(d) == 1, d
assert d[0]["folder"] == "in-cluster/web" and d[0]["target"] == "in-cluster/web", d
assert d[0]["commits"][0]["id"] == sys.argv[2] and d[0]["commits"][0]["author"] == "Alice <alice@example.com>", d
' plan.json "$edit1"

t_ok "up with no change to web leaves the edit alone" idpmake up
t_eq "no commit made" "$edit1" "$(git --git-dir="$remote" rev-parse main)"

echo '  level: debug' >>packages/web/cm.yaml
t_exit 1 "up of a change to web refuses to write over the edit" idpmake up
t_grep "naming the folder" "changed in-cluster/web, which this run also changes" "$OUTPUT"
t_grep "the commit and its author" "in-cluster/web: ${edit1:0:7} Alice <alice@example.com> \"tweak web by hand\"" "$OUTPUT"
t_grep "and the two ways out" \
	"revert those changes in the GitOps repository, or replace them with this run's render: idpmake up --overwrite in-cluster/web" "$OUTPUT"
t_eq "the remote is unchanged" "$edit1" "$(git --git-dir="$remote" rev-parse main)"
t_exit 1 "and again on the next up: the edit is still there" idpmake up
t_grep "with the same ways out" 'idpmake up --overwrite in-cluster/web' "$OUTPUT"

t_exit 2 "--overwrite needs a target" idpmake up --overwrite
t_grep "and says so" '--overwrite needs targets' "$STDERR"
t_ok "up --overwrite web replaces the edit with the render" idpmake up --overwrite web
t_eq "the folder holds the render" "$(idpmake render web | sed 1,2d)" \
	"$(git --git-dir="$remote" show main:in-cluster/web/configmap.web.yaml)"
msg=$(git --git-dir="$remote" log -1 --format=%B main)
t_ok "the commit names the commit it overwrote, in full" grep -q "in-cluster/web: $edit1 Alice <alice@example.com> \"tweak web by hand\"" <<<"$msg"
t_ok "under a line saying so" grep -q '^Overwrites changes made outside idpmake' <<<"$msg"
t_ok "its trailer stays last" sh -c 'tail -1 | grep -q "^Idpmake-Run: "' <<<"$msg"
t_eq "the commit sits on the edit" "$edit1" "$(git --git-dir="$remote" rev-parse main^)"
t_ok "plan afterwards" idpmake plan
t_nogrep "shows no drift" 'drift|outside idpmake' "$OUTPUT"
t_ok "diff --exit-code: nothing differs" idpmake --exit-code diff

# an up-to-date package: --overwrite writes its folder again
edit2=$(hand_edit in-cluster/db/configmap.db.yaml "db by hand") || t_bail "the hand edit failed"
t_ok "plan --refresh fetches and shows it" idpmake --refresh plan
t_grep "naming the folder and commit" "drift  in-cluster/db: changed outside idpmake by ${edit2:0:7} Alice" "$STDOUT"
t_ok "up --overwrite db, whose render did not change" idpmake up --overwrite db
t_ok "the edit is gone" sh -c "! git --git-dir='$remote' show main:in-cluster/db/configmap.db.yaml | grep -q by-hand"
t_ok "named in the commit" sh -c "git --git-dir='$remote' log -1 --format=%B main | grep -q '$edit2'"

# the other way out: revert the edit
edit3=$(hand_edit in-cluster/db/configmap.db.yaml "db by hand again") || t_bail "the hand edit failed"
echo '  level: debug' >>packages/db/cm.yaml
t_exit 1 "up refuses" idpmake up
git -C "$T/hand" revert --no-edit "$edit3" >/dev/null && git -C "$T/hand" push -q origin main || t_bail "revert failed"
t_ok "after the edit is reverted, plan --refresh" idpmake --refresh plan
t_nogrep "shows no drift" 'drift' "$STDOUT"
t_ok "and up goes through" idpmake up
t_ok "with db's change" sh -c "git --git-dir='$remote' show main:in-cluster/db/configmap.db.yaml | grep -q 'level: debug'"
t_done
