#!/bin/bash
# A lying keys index line (issue 8 §5, lazycache.h) cannot borrow another
# folder's proof: the cache holding a bundle of the claimed output says
# nothing about the lying folder.
#   - dev/db holds, honestly, the output web's next version renders (out2);
#   - dev/web's line claims out2 over web's old folder;
#   - an empty state takes both; a comment in db renders db, which writes
#     out2 to the cache (its folder holds it: nothing pushed);
#   - web then changes to the version whose render is out2: idpmake must read
#     dev/web's folder, find that it does not hold out2, and push;
#   - the same when that push fails (the remote is gone): the run after
#     it, web's render up to date, must still push.
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
name: borrow
git: {remote: "$bare"}
rules: [rules/counted.yaml]
clusters:
  dev: {server: "https://dev.example:6443"}
packages:
  web: {type: counted, path: packages/web}
  db: {type: counted, path: packages/db, needs: [web]}
EOF
mkdir -p d/rules
cat >d/rules/counted.yaml <<EOF
rule: counted
description: the manifests without comments, counting each run
command: [sh, -c, 'echo "\$1" >>$rlog; if [ -f $T/unplug ]; then mv $bare $bare.off; fi; cat "\$1"/*.yaml | grep -v "^#"', sh, "\${src}"]
inputs: ["*.yaml"]
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkdir -p d/packages/db && cp d/packages/web/cm.yaml d/packages/db/cm.yaml
echo '  version: two' >>d/packages/db/cm.yaml
cd d || exit 1

t_ok "first up (web v1, db as web v2)" idpmake up
v1=$(line dev/web)
c1=$(tip)
echo '  version: two' >>packages/web/cm.yaml
t_ok "up with web v2" idpmake up
v2=$(line dev/web)
read -r _ _ out2 tree2 <<<"$v2"
read -r _ key1 _ tree1 <<<"$v1"
t_eq "db's output is web v2's" "$out2" "$(line dev/db | awk '{print $3}')"

work=$T/work
git clone -q "$bare" "$work" || t_bail "git clone failed"
git -C "$work" checkout -q "$c1" -- dev/web || t_bail "cannot restore dev/web"
sed -i "s|^dev/web .*|dev/web $key1 $out2 $tree1|" "$work/.idpmake/keys" || t_bail "no index"
git -C "$work" -c user.name=Liar -c user.email=liar@example.com commit -q -am "v1's folder, v2's output" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the lying index was not pushed"
lied=$(tip)

sed -i '/version: two/d' packages/web/cm.yaml
rm -rf .idpmake
: >"$rlog"
t_ok "empty state against the lying index" idpmake up -v
t_grep "both renders are taken from the index" '2 renders reconstructed from .idpmake/keys' "$STDERR"
t_eq "no renderer ran" 0 "$(wc -l <"$rlog")"

echo '# a comment: a new key, the same render' >>packages/db/cm.yaml
t_ok "up with a comment in db" idpmake up
t_grep "db's folder holds its output: nothing pushed" '^idpmake: 1 rendered, nothing pushed' "$STDOUT"

echo '  version: two' >>packages/web/cm.yaml
: >"$rlog"
touch "$T/unplug"	# the renderer takes the remote away: the push fails
t_exit 1 "up with web v2, the remote gone when it pushes" idpmake up
rm "$T/unplug" && mv "$bare.off" "$bare" || t_bail "the remote did not go"
t_eq "the remote's dev/web is still v1's folder" "$tree1" "$(git --git-dir="$bare" rev-parse main:dev/web)"
t_ok "up again: web up to date, its folder never received it" idpmake up
t_grep "one commit" 'idpmake: 0 rendered, 1 commit pushed' "$STDOUT"
t_eq "the remote's dev/web is v2's folder now" "$tree2" "$(git --git-dir="$bare" rev-parse main:dev/web)"

# once more, the push not refused
git --git-dir="$bare" update-ref refs/heads/main "$lied" || t_bail "cannot put the lie back"
sed -i '/version: two/d' packages/web/cm.yaml
rm -rf .idpmake
t_ok "empty state against the lying index, again" idpmake up
t_ok "a comment in db again" sh -c 'echo "# two" >>packages/db/cm.yaml'
t_ok "up with the comment in db" idpmake up
echo '  version: two' >>packages/web/cm.yaml
: >"$rlog"
t_ok "up with web v2: its render equals the claimed output, which the cache holds (db's)" idpmake up
t_eq "web rendered" 1 "$(wc -l <"$rlog")"
t_grep "dev/web did not hold it: one commit" '^idpmake: 1 rendered, 1 commit pushed' "$STDOUT"
t_eq "the remote's dev/web is v2's folder now" "$tree2" "$(git --git-dir="$bare" rev-parse main:dev/web)"
t_ok "the next up" idpmake up
t_grep "the next up is a no-op" '^idpmake: 0 rendered, nothing pushed' "$STDOUT"

# ---- the lie found in a run that overwrites a hand edit of dev/db ------
# (forgetting dev/web's record must not bring back dev/db's, which
# --overwrite set aside so that the push writes the folder again)
git --git-dir="$bare" update-ref refs/heads/main "$lied" || t_bail "cannot put the lie back"
dbtree=$(git --git-dir="$bare" rev-parse main:dev/db)
sed -i '/version: two/d' packages/web/cm.yaml
sed -i '/^# /d' packages/db/cm.yaml
rm -rf .idpmake
t_ok "empty state against the lying index, a third time" idpmake up
rm -rf "$work"
git clone -q "$bare" "$work" && echo '# by hand' >>"$work/dev/db/configmap.web.yaml" &&
	git -C "$work" -c user.name=Hand -c user.email=hand@example.com commit -q -am "a hand edit in dev/db" &&
	git -C "$work" push -q origin HEAD:main || t_bail "the hand edit was not pushed"
echo '  version: two' >>packages/web/cm.yaml
t_ok "up --overwrite db (which needs web), with web v2" idpmake up --overwrite db
t_eq "dev/web is v2's folder" "$tree2" "$(git --git-dir="$bare" rev-parse main:dev/web)"
t_eq "dev/db is its render again" "$dbtree" "$(git --git-dir="$bare" rev-parse main:dev/db)"

t_done
