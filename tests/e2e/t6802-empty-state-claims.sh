#!/bin/bash
# An empty state takes the keys index's word for a folder's output once the
# folder's tree is the one the index line names (issue 8 §5, lazycache.h):
# it reads no file of the folder.  The word is checked where it is used:
#   - an index that lies, giving dev/web's line the output of a later
#     version of web over the old version's folder, is taken (no render, no
#     commit); when web then changes to that later version, the render comes
#     out equal to the claimed output, idpmake reads the folder, finds that it
#     does not hold it, and pushes;
#   - an honest line checks out the same way, and a render equal to it pushes
#     nothing;
#   - a folder with a name idpmake never writes (a link, .git in any of the
#     forms git takes for it) is not taken, even when the line names its tree.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
tip() { git --git-dir="$bare" rev-parse main; }
line() { git --git-dir="$bare" show main:.idpmake/keys | awk -v f="$1" '$1 == f'; }
rlog=$T/renders.log
: >"$rlog"

mkdistro d <<EOF
idpmake: 1
name: claims
git: {remote: "$bare"}
rules: [rules/counted.yaml]
clusters:
  dev: {server: "https://dev.example:6443"}
packages:
  web: {type: counted, path: packages/web}
  db: {type: counted, path: packages/db}
EOF
mkdir -p d/rules
# comments are not output: a comment changes the key, not the render
cat >d/rules/counted.yaml <<EOF
rule: counted
description: the manifests without comments, counting each run
command: [sh, -c, 'echo "\$1" >>$rlog; cat "\$1"/*.yaml | grep -v "^#"', sh, "\${src}"]
inputs: ["*.yaml"]
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkmanifest d/packages/db/cm.yaml ConfigMap db
cd d || exit 1

# ---- web v1, then v2: the two outputs ----------------------------------
t_ok "first up (web v1)" idpmake up
v1=$(line dev/web)
c1=$(tip)
echo '  version: two' >>packages/web/cm.yaml
t_ok "up with web v2" idpmake up
v2=$(line dev/web)
read -r _ _ out2 tree2 <<<"$v2"
read -r _ key1 _ tree1 <<<"$v1"
t_ok "v1 and v2 differ" [ -n "$out2" ] && [ "$tree1" != "$tree2" ]

# ---- a lying index: v1's folder and key, v2's output --------------------
work=$T/work
git clone -q "$bare" "$work" || t_bail "git clone failed"
git -C "$work" checkout -q "$c1" -- web 2>/dev/null || git -C "$work" checkout -q "$c1" -- dev/web ||
	t_bail "cannot restore dev/web"
sed -i "s|^dev/web .*|dev/web $key1 $out2 $tree1|" "$work/.idpmake/keys" || t_bail "no index"
git -C "$work" -c user.name=Liar -c user.email=liar@example.com commit -q -am "v1's folder, v2's output" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the lying index was not pushed"
t_eq "the tip holds v1's folder" "$tree1" "$(git --git-dir="$bare" rev-parse main:dev/web)"
lied=$(tip)

sed -i '/version: two/d' packages/web/cm.yaml
rm -rf .idpmake
: >"$rlog"
t_ok "empty state against the lying index" idpmake up -v
t_grep "both renders are taken from the index" '2 renders reconstructed from .idpmake/keys' "$STDERR"
t_eq "no renderer ran" 0 "$(wc -l <"$rlog")"
t_eq "no commit" "$lied" "$(tip)"

echo '  version: two' >>packages/web/cm.yaml
: >"$rlog"
t_ok "up with web v2: its render equals the claimed output" idpmake up
t_eq "web rendered" 1 "$(wc -l <"$rlog")"
t_grep "the folder did not hold the claimed output: one commit" '^idpmake: 1 rendered, 1 commit pushed' "$STDOUT"
t_eq "the remote's dev/web is v2's folder now" "$tree2" "$(git --git-dir="$bare" rev-parse main:dev/web)"
t_eq "and the index says so" "$v2" "$(line dev/web)"
t_ok "the next up" idpmake up
t_grep "the next up is a no-op" '^idpmake: 0 rendered, nothing pushed' "$STDOUT"

# ---- an honest index: a render equal to its output pushes nothing ------
rm -rf .idpmake
: >"$rlog"
t_ok "empty state against the honest index" idpmake up -v
t_grep "both renders are taken from the index" '2 renders reconstructed from .idpmake/keys' "$STDERR"
before=$(tip)
echo '# a comment: a new key, the same render' >>packages/web/cm.yaml
t_ok "up with a comment in web" idpmake up
t_eq "web rendered" 1 "$(wc -l <"$rlog")"
t_grep "its output is the folder's: nothing pushed" '^idpmake: 1 rendered, nothing pushed' "$STDOUT"
t_eq "no commit" "$before" "$(tip)"

# ---- a name idpmake never writes: the line is not taken ----------------
# (without the comment, whose key made no commit, web's key is its line's)
sed -i '/^# a comment/d' packages/web/cm.yaml
rm -rf "$work"
git clone -q "$bare" "$work" || t_bail "git clone failed"
ln -s /etc/passwd "$work/dev/db/link.yaml"
git -C "$work" add dev/db/link.yaml || t_bail "cannot add the link"
tree=$(git -C "$work" write-tree) || t_bail "git write-tree failed"
dbtree=$(git -C "$work" rev-parse "$tree:dev/db")
sed -i "s|^\(dev/db [0-9a-f]* [0-9a-f]*\) [0-9a-f]*$|\1 $dbtree|" "$work/.idpmake/keys" || t_bail "no index"
git -C "$work" add .idpmake/keys &&
	git -C "$work" -c user.name=Hand -c user.email=hand@example.com commit -q -m "a link in dev/db" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the link was not pushed"
t_eq "the index names the folder with the link" "$dbtree" "$(line dev/db | awk '{print $4}')"
rm -rf .idpmake
: >"$rlog"
t_ok "empty state, a link in dev/db" idpmake up -v
t_grep "only web is taken from the index" '1 render reconstructed from .idpmake/keys' "$STDERR"
t_eq "db rendered" 1 "$(wc -l <"$rlog")"
t_grep "the renderer ran for db" 'packages/db$' "$rlog"
t_ok "the remote's files" git --git-dir="$bare" ls-tree -r --name-only main
t_nogrep "the link is gone: db's render replaced the folder" 'link\.yaml' "$STDOUT"

# ---- a ".git" entry (any case; git itself will not add one) -----------
mktree() {	# mktree TREE NAME MODE TYPE ID: the id of TREE with entry NAME set to MODE TYPE ID
	{ git --git-dir="$bare" ls-tree "$1" | awk -F '\t' -v n="$2" '$2 != n'
	  printf '%s %s %s\t%s\n' "$3" "$4" "$5" "$2"; } | git --git-dir="$bare" mktree
}
for name in .GIT 'git~1' '.git. '; do
	blob=$(printf 'gitdir: elsewhere\n' | git --git-dir="$bare" hash-object -w --stdin) || t_bail "no blob"
	db=$(mktree main:dev/db "$name" 100644 blob "$blob") && dev=$(mktree main:dev db 040000 tree "$db") &&
		keys=$(git --git-dir="$bare" show main:.idpmake/keys | sed "s|^\(dev/db [0-9a-f]* [0-9a-f]*\) [0-9a-f]*$|\1 $db|" |
			git --git-dir="$bare" hash-object -w --stdin) &&
		idx=$(mktree main:.idpmake keys 100644 blob "$keys") &&
		root=$(mktree "main^{tree}" dev 040000 tree "$dev") && root=$(mktree "$root" .idpmake 040000 tree "$idx") &&
		c=$(git --git-dir="$bare" commit-tree "$root" -p main -m "$name in dev/db") &&
		git --git-dir="$bare" update-ref refs/heads/main "$c" || t_bail "cannot make the commit with $name"
	t_eq "$name: the index names the folder holding it" "$db" "$(line dev/db | awk '{print $4}')"
	rm -rf .idpmake
	: >"$rlog"
	t_ok "empty state, $name in dev/db" idpmake up -v
	t_grep "$name: only web is taken from the index" '1 render reconstructed from .idpmake/keys' "$STDERR"
	t_eq "$name: db rendered" 1 "$(wc -l <"$rlog")"
done

t_done
