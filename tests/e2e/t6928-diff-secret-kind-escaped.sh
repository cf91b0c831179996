#!/bin/bash
# Plain diff hides a Secret's values by the parsed kind, never by the text:
# a hand edit in the GitOps repository that writes the kind as
# "\x53ecret", puts the Secret in a List or in a second document, or quotes
# apiVersion, still shows "(hidden)"; a file that does not parse is hidden
# whole.  (Found in review: kind: "\x53ecret" printed a password in diff.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init"
mkdistro d <<EOF
idpmake: 1
name: kinds
git: {remote: "$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
cat >d/packages/web/secret.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: rendered-Zq5}
EOF
t_ok "setup: up" idpmake -C d up

# hand edits, pushed to the GitOps repository
git clone -q "$bare" w || t_bail "clone"
f=w/in-cluster/web
[ -f $f/secret.db.yaml ] || t_bail "no rendered Secret at $f/secret.db.yaml: $(ls $f)"
cat >$f/secret.db.yaml <<'EOF'
apiVersion: "\x76\x31"
kind: "\x53ecret"
metadata: {name: db}
stringData: {password: escaped-Zq5}
EOF
cat >$f/list.yaml <<'EOF'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: "\u0053ecret", metadata: {name: other, namespace: web}, data: {token: bGlzdC1acTU=, pw: list-Zq5}}
EOF
cat >$f/two.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: web}
data: {shown: visible-Zq5}
---
apiVersion: 'v1'
kind: "Se\
  cret"
metadata: {name: second, namespace: web}
stringData: {pw: second-Zq5}
EOF
printf 'apiVersion: v1\nkind: "\\x53ecret"\nmetadata: {name: bad}\nstringData: {pw: broken-Zq5, q: [\n' >$f/broken.yaml
git -C w add -A && git -C w -c user.name=t -c user.email=t@t commit -qm "hand edit" && git -C w push -q origin main ||
	t_bail "push of the hand edit"

t_ok "diff runs" idpmake -C d --color=never diff
cp "$OUTPUT" "$T/diff.out"
t_grep "the escaped Secret is listed" 'secret\.db\.yaml' "$T/diff.out"
t_grep "its value hidden, marked as differing" '^\+  password: \(hidden, differs\)$' "$T/diff.out"
t_grep "the ConfigMap in the second file shown as it is" 'visible-Zq5' "$T/diff.out"
for v in escaped-Zq5 rendered-Zq5 list-Zq5 bGlzdC1acTU= second-Zq5 broken-Zq5; do
	t_nostring "no Secret value in diff ($v)" "$v" "$T/diff.out"
done
t_grep "the file that does not parse is hidden whole" 'hidden: does not parse as YAML' "$T/diff.out"
t_ok "diff --json runs" idpmake -C d --json diff
for v in escaped-Zq5 list-Zq5 second-Zq5 broken-Zq5; do
	t_nostring "no Secret value in diff --json ($v)" "$v" "$OUTPUT"
done
t_done
