#!/bin/bash
# Hostile text from the GitOps repository does not reach the terminal as
# control sequences (issue 20 item 9): a hand edit whose commit author and
# summary hold colour and title-setting escapes (ESC [ 31 m, ESC ] 0 ; ... BEL,
# and the C1 CSI U+009B), and a file whose name holds ESC [ 2 J, are shown by
# plan, diff and up with each control character escaped as \xHH (in a
# patch's lines too; libgit2 quotes the file's name); no raw ESC,
# BEL or C1 byte is printed, and the author's name cannot end a line early.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: escapes
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
cd d || exit 1
remote=$PWD/.idpmake/gitops.git
# no raw control character (ESC, BEL, CSI, a CR) in FILE
raw() { LC_ALL=C grep -c $'[\x1b\x07\r]\|\xc2\x9b' "$1"; }

t_ok "up" idpmake up
rm -rf "$T/hand" && git clone -q "$remote" "$T/hand" || t_bail "clone failed"
echo '  edited: by-hand' >>"$T/hand/in-cluster/web/configmap.web.yaml"
cp "$T/hand/in-cluster/web/configmap.web.yaml" "$T/hand/in-cluster/web/"$'\e[2Jx.yaml'
printf '  evil: "\e]0;title\a"\n' >>"$T/hand/in-cluster/web/configmap.web.yaml"
git -C "$T/hand" add -A &&
	GIT_AUTHOR_NAME=$'Eve\e]0;pwned\aX' GIT_AUTHOR_EMAIL=eve@example.com \
		git -C "$T/hand" commit -qm $'\e[31mred\e[0m \xc2\x9b2J summary' &&
	git -C "$T/hand" push -q origin main || t_bail "the hand edit failed"
edit=$(git -C "$T/hand" rev-parse --short=7 HEAD)

t_ok "diff" idpmake diff
t_eq "diff printed no raw control character" 0 "$(raw "$OUTPUT")"
t_grep "the author, escaped" "by $edit Eve\\\\x1b\]0;pwned\\\\x07X <eve@example.com>" "$STDERR"
t_grep "the summary, escaped (C1 too)" '"\\x1b\[31mred\\x1b\[0m \\xc2\\x9b2J summary"' "$STDERR"
# YAML has no raw control characters: such a file does not parse, and is hidden whole (objdiff.c)
t_grep "a file whose content holds a control character is not shown" '^-# \(hidden: does not parse as YAML' "$STDOUT"
t_grep "the file's name, quoted, in the patch" '^--- "a/in-cluster/web/\\033\[2Jx\.yaml"$' "$STDOUT"
t_ok "plan" idpmake plan
t_eq "plan printed no raw control character" 0 "$(raw "$OUTPUT")"
t_grep "plan shows the author and summary escaped" \
	"drift  in-cluster/web: changed outside idpmake by $edit Eve\\\\x1b\]0;pwned\\\\x07X <eve@example.com> \"\\\\x1b\[31mred" "$STDOUT"
t_ok "plan --json" idpmake --json plan
t_eq "plan --json holds no raw control character" 0 "$(raw "$OUTPUT")"
echo '  level: debug' >>packages/web/cm.yaml
t_exit 1 "up refuses to write over the hand edit" idpmake up
t_eq "up printed no raw control character" 0 "$(raw "$OUTPUT")"
t_grep "naming the commit, escaped" "$edit Eve\\\\x1b\]0;pwned\\\\x07X" "$OUTPUT"
t_done
