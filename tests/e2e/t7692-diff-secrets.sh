#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Secret values never printed by the diffs of renders (issue 8 §3, as §1
# and §2 already do): diff --rev A..B (text, --json, --format markdown, the
# pull-request comment CI posts) and plain diff (render against the GitOps
# repository) show a Secret's data and stringData keys with "(hidden)", and
# "(hidden, differs)" on the new side where the value changed; the value
# comes here from a renderer that reads it outside the repository (as a
# SOPS-decrypting rule would), so nothing else in the review shows it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p repo/rules repo/packages/app && git -C repo init -q -b main || t_bail "git init"
printf 'vaultOLD-Zq5' >"$T/vault"
cat >repo/rules/sops.yaml <<EOF
rule: sops
description: the package's files, and a Secret whose password the vault holds
command: [sh, -c, 'for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done; printf -- "---\\napiVersion: v1\\nkind: Secret\\nmetadata: {name: db}\\nstringData: {password: %s, user: admin-Zq5}\\ndata: {token: %s}\\n" "\$(cat $T/vault)" "\$(base64 <$T/vault)"', sh, "\${src}"]
EOF
mkdistro repo <<'EOF'
idpmake: 1
name: secrets
rules: [rules/sops.yaml]
packages:
  app: {type: sops, path: packages/app, namespace: app}
EOF
mkmanifest repo/packages/app/cm.yaml ConfigMap cfg app
printf '.idpmake/\n' >repo/.gitignore
cd repo || exit 1
git add -A && git -c user.name=t -c user.email=t@t commit -qm first || t_bail "first commit"
t_ok "setup: up" idpmake up
old64=$(base64 <"$T/vault")

# the vault's value changes with the commit that bumps the ConfigMap
printf 'vaultNEW-Zq5' >"$T/vault"
new64=$(base64 <"$T/vault")
echo '  level: debug' >>packages/app/cm.yaml
git -c user.name=t -c user.email=t@t commit -qam second || t_bail "second commit"

never() { # DESC FILE
	local v
	for v in vaultOLD-Zq5 vaultNEW-Zq5 admin-Zq5 "$old64" "$new64"; do
		t_nostring "$1: no Secret value ($v)" "$v" "$2"
	done
}
t_ok "plain diff: the render against the GitOps repository" idpmake --color=never diff
cp "$STDOUT" plain.out
t_grep "the Secret is shown changed" '^\+\+\+ b/in-cluster/app/secret\.db\.yaml$' plain.out
t_grep "the changed value is marked" '^\+  password: \(hidden, differs\)$' plain.out
t_grep "the old side hidden" '^-  password: \(hidden\)$' plain.out
t_grep "an equal value is context, hidden" '^   user: \(hidden\)$' plain.out
never "plain diff" plain.out

t_exit 1 "diff --rev HEAD~1..HEAD --exit-code" idpmake --color=never --exit-code diff --rev HEAD~1..HEAD
cp "$STDOUT" rev.out
t_grep "the Secret is changed" '^changed in-cluster/app/secret\.db\.yaml$' rev.out
t_grep "its data value marked" '^\+  token: \(hidden, differs\)$' rev.out
t_grep "the ConfigMap's change shown as it is" '^\+  level: debug$' rev.out
never "diff --rev" rev.out
t_ok "diff --rev --json" idpmake --json diff --rev HEAD~1..HEAD
cp "$STDOUT" rev.json
never "diff --rev --json" rev.json
t_ok "diff --rev --format markdown" idpmake diff --rev HEAD~1..HEAD --format markdown
cp "$STDOUT" rev.md
t_grep "the markdown names the Secret" 'changed <code>in-cluster/app/secret\.db\.yaml</code>' rev.md
t_grep "with the marked value" '^\+  password: \(hidden, differs\)$' rev.md
never "the pull-request comment" rev.md
t_done
