#!/bin/bash
# A symlink in a package folder may point only inside that folder: one that
# points out of it (to the distro folder beside it, or anywhere else on the
# machine) is refused, and the refusal names the symlink and its target.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: links
packages:
  web: {type: manifests, path: packages/web, namespace: web}
  db: {type: manifests, path: packages/db, namespace: db}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
mkmanifest d/packages/db/cm.yaml ConfigMap db db
mkmanifest d/packages/web/sub/inner.txt ConfigMap inner web
ln -s sub/inner.txt d/packages/web/alias.yaml
cd d || exit 1

t_ok "a symlink inside the package folder is an input" idpmake render web
t_grep "its object is rendered" 'name: inner' "$STDOUT"

# out of the package folder, though still inside the distro folder
ln -s ../db/cm.yaml packages/web/db.yaml
t_exit 1 "plan refuses a symlink to another package's file" idpmake plan
t_grep "naming the symlink and where it points" \
	"packages/web/db.yaml is a symlink out of .*packages/web \\(to .*/packages/db/cm.yaml\\)" "$STDERR"
t_exit 1 "render refuses it too" idpmake render web
t_grep "naming it" 'packages/web/db.yaml is a symlink out of' "$STDERR"
t_nogrep "and prints nothing of the other package's file" 'name: db' "$STDOUT"
t_fail "up refuses it" idpmake up
t_grep "naming it" 'packages/web/db.yaml is a symlink out of' "$OUTPUT"
t_fail "nothing was pushed" git --git-dir=.idpmake/gitops.git rev-parse --verify -q main
rm packages/web/db.yaml

# out of the distro folder altogether, and a folder symlink
echo 'secret: s3cr3t' >"$T/outside.yaml"
ln -s "$T/outside.yaml" packages/db/stolen.yaml
t_exit 1 "a symlink to a file outside the distro is refused" idpmake render db
t_grep "naming it" "packages/db/stolen.yaml is a symlink out of .*packages/db \\(to $T/outside.yaml\\)" "$STDERR"
t_nogrep "its content is never printed" 's3cr3t' "$OUTPUT"
rm packages/db/stolen.yaml
mkdir -p "$T/elsewhere" && mkmanifest "$T/elsewhere/x.yaml" ConfigMap x db
ln -s "$T/elsewhere" packages/db/dir
t_exit 1 "a symlink to a folder outside is refused" idpmake render db
t_grep "naming it" "packages/db/dir is a symlink out of .*packages/db \\(to $T/elsewhere\\)" "$STDERR"
rm packages/db/dir
t_ok "without them, up" idpmake up
t_done
