#!/bin/bash
# Any runner, any state folder (issue 8 §5): every commit carries the keys
# index .idpmake/keys (folder, render key, output hash, tree); an up with an
# empty state folder against an up-to-date GitOps repository and Argo CD
# renders nothing, pushes nothing and syncs nothing: it proves what is done
# from the index, the folders' content and the Applications' synced revision
# and health, and records it.  A change after that redoes only its package;
# a folder edited by hand is not trusted (it renders, and up refuses to
# write over it, as drift); a hostile index is ignored.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd \
	--cluster dev=https://dev.example:6443 --cluster prod=https://prod.example:6443
# syncs in the emulator's request log since the last reset
syncs() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"].endswith("/sync")))' ||
		t_bail "cannot read the request log"
}
tip() { git --git-dir="$bare" rev-parse main; }
# the renderer invocations: a rule that counts them in a file outside the state
rlog=$T/renders.log
: >"$rlog"

mkdistro d <<EOF
idpmake: 1
name: any-runner
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
rules: [rules/counted.yaml]
clusters:
  dev: {server: "https://dev.example:6443", vars: {env: dev}}
  prod: {server: "https://prod.example:6443", vars: {env: prod}}
packages:
  web: {type: counted, path: packages/web, rewrite: [{match: ENVNAME, replace: "\${env}"}]}
  db: {type: counted, path: packages/db, rewrite: [{match: ENVNAME, replace: "\${env}"}]}
  cache: {type: counted, path: packages/cache, rewrite: [{match: ENVNAME, replace: "\${env}"}]}
EOF
mkdir -p d/rules
cat >d/rules/counted.yaml <<EOF
rule: counted
description: cat the manifests, counting each run
command: [sh, -c, 'echo "\$1" >>$rlog; cat "\$1"/*.yaml', sh, "\${src}"]
inputs: ["*.yaml"]
EOF
for p in web db cache; do
	mkmanifest d/packages/$p/cm.yaml ConfigMap $p
	echo '  env: ENVNAME' >>d/packages/$p/cm.yaml
done
cd d || exit 1

t_ok "first up renders, pushes and syncs everything" idpmake up
t_grep "first up: 6 synced" ' 6 synced' "$STDOUT"
t_eq "first up: 6 renders ran" 6 "$(wc -l <"$rlog")"
t_ok "the commit carries the keys index" git --git-dir="$bare" cat-file -p main:.idpmake/keys
t_grep "the index names every folder with its key, output and tree" \
	'^dev/web [0-9a-f]{32} [0-9a-f]{32} [0-9a-f]{40}$' "$STDOUT"
t_eq "the index has a header and 6 lines" 7 "$(wc -l <"$STDOUT")"
t_eq "the index lists dev/web's tree" \
	"$(git --git-dir="$bare" rev-parse main:dev/web)" "$(awk '$1 == "dev/web" {print $4}' "$STDOUT")"

# ---- a lost state folder, an up-to-date remote -------------------------
before=$(tip)
rm -rf .idpmake
: >"$rlog"
emu_reset
t_ok "up with an empty state folder" idpmake up -v
t_eq "empty state: no renderer ran" 0 "$(wc -l <"$rlog")"
t_grep "empty state: the summary says 0 rendered, nothing pushed, 0 synced" \
	'^idpmake: 0 rendered, nothing pushed, 0 synced' "$STDOUT"
t_eq "empty state: no new commit on the remote" "$before" "$(tip)"
t_eq "empty state: no sync request reached Argo CD" 0 "$(syncs)"
t_grep "empty state: -v says the renders were reconstructed" '6 renders reconstructed from .idpmake/keys' "$STDERR"
t_ok "explain: dev/web's render is recorded" idpmake explain dev/web:render
t_ok "status after the empty-state up" idpmake status
emu_reset
t_ok "the next up" idpmake up
t_grep "the next up is a no-op" '^idpmake: 0 rendered, nothing pushed, 0 synced, 0 hooks, [0-9]+ up to date$' "$STDOUT"
t_eq "the next up: no renderer ran" 0 "$(wc -l <"$rlog")"
t_eq "the next up: no sync" 0 "$(syncs)"

# ---- one change after the empty-state up: only that package ------------
echo '  changed: "1"' >>packages/db/cm.yaml
emu_reset
t_ok "up with a change to db" idpmake up
t_eq "only db renders (on its two clusters)" 2 "$(wc -l <"$rlog")"
t_grep "db: one commit, 2 syncs" '^idpmake: 2 rendered, 1 commit pushed .*, 2 synced' "$STDOUT"
t_eq "only db's Applications were synced" 2 "$(syncs)"
t_ok "the index after the change" git --git-dir="$bare" cat-file -p main:.idpmake/keys
t_eq "the index still has 6 lines" 7 "$(wc -l <"$STDOUT")"
t_eq "the index follows dev/db's new tree" \
	"$(git --git-dir="$bare" rev-parse main:dev/db)" "$(awk '$1 == "dev/db" {print $4}' "$STDOUT")"

# ---- Argo CD out of date: what is not proven is synced -----------------
rm -rf .idpmake
: >"$rlog"
emu_reset
emu_post fault '{"app": "prod-cache", "out_of_sync": true}'
t_ok "empty state, prod-cache OutOfSync in Argo CD" idpmake up
t_eq "no renderer ran" 0 "$(wc -l <"$rlog")"
t_grep "only prod-cache is synced, nothing pushed" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_eq "one sync request" 1 "$(syncs)"

# ---- a folder edited by hand is not trusted ----------------------------
work=$T/work
git clone -q "$bare" "$work" || t_bail "git clone failed"
sed -i 's/name: web/name: web-by-hand/' "$work/prod/web/configmap.web.yaml" || t_bail "no prod/web/configmap.web.yaml"
git -C "$work" -c user.name=Hand -c user.email=hand@example.com commit -q -am "hand edit of prod/web" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the hand edit was not pushed"
edited=$(tip)
rm -rf .idpmake
: >"$rlog"
emu_reset
t_exit 1 "empty state, prod/web edited by hand: up refuses" idpmake up
t_grep "the refusal names the folder" 'prod/web' "$STDERR"
t_grep "and the way out" 'idpmake up --overwrite prod/web' "$STDERR"
t_eq "only prod/web rendered: its folder is not trusted" "1" "$(wc -l <"$rlog")"
t_grep "the renderer ran for web" 'packages/web$' "$rlog"
t_eq "the hand edit is still on the remote" "$edited" "$(tip)"
t_eq "nothing synced" 0 "$(syncs)"
t_ok "plan shows the drift" idpmake plan
t_grep "plan: drift in prod/web, naming the hand edit's commit" '^drift +prod/web: changed outside idpmake by [0-9a-f]{7} .*"hand edit of prod/web"' "$STDOUT"
t_ok "up --overwrite prod/web" idpmake up --overwrite prod/web
git --git-dir="$bare" show main:prod/web/configmap.web.yaml >"$T/web.yaml" || t_bail "no prod/web on the remote"
t_nogrep "the render replaced the hand edit" 'web-by-hand' "$T/web.yaml"

# ---- a hostile index is not trusted ------------------------------------
rm -rf "$work"
git clone -q "$bare" "$work" || t_bail "git clone failed"
idx=$work/.idpmake/keys
good=$(awk '$1 == "dev/db"' "$idx")
{
	echo "idpmake-keys 1"
	# dev/db named twice, paths that escape, a garbage line, a long line
	echo "$good"
	echo "$good"
	echo "../evil ${good#dev/db }"
	echo "/abs ${good#dev/db }"
	echo "dev/.git/x ${good#dev/db }"
	echo "garbage"
	head -c 100000 /dev/zero | tr '\0' 'a'
	echo
	awk '$1 != "dev/db"' "$idx" | tail -n +2
} >"$idx.new" && mv "$idx.new" "$idx"
git -C "$work" -c user.name=Hand -c user.email=hand@example.com commit -q -am "a hostile index" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the hostile index was not pushed"
rm -rf .idpmake
: >"$rlog"
emu_reset
t_ok "empty state, a hostile index" idpmake up
t_eq "only dev/db renders (named twice in the index)" 1 "$(wc -l <"$rlog")"
t_grep "the renderer ran for db" 'packages/db$' "$rlog"
t_ok "the remote's files" git --git-dir="$bare" ls-tree -r --name-only main
t_grep "they hold dev/db" '^dev/db/' "$STDOUT"
t_nogrep "no folder named by the index was created" '^(\.\./evil|abs)' "$STDOUT"
t_eq "db rendered what the remote holds: no commit" "hostile" \
	"$(git --git-dir="$bare" log -1 --format=%s main | sed 's/^a hostile index$/hostile/')"
# the next commit that changes content rewrites the index from what it can trust
echo '  more: "1"' >>packages/db/cm.yaml
t_ok "up after a change to db" idpmake up
t_ok "the index after the run" git --git-dir="$bare" cat-file -p main:.idpmake/keys
t_nogrep "the index lost the hostile lines" 'evil|abs|\.git|garbage|aaaa' "$STDOUT"
t_eq "the index: a header and 6 lines" 7 "$(wc -l <"$STDOUT")"

t_done
