#!/bin/bash
# A context refuses a git remote with a token as its user name
# (https://TOKEN@host/...), as it refuses one with a password: on the
# command line (exit 2, nothing written) and in the file (located, exit 2);
# the token is never printed.  A plain user name, and ssh's git@, stay fine.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

cfg=$HOME/.config/idpmake/contexts.yaml
tok=ghp_$(random_string)$(random_string)
hex=$(random_string | tr -dc 0-9a-f | head -c 8)$(printf '%024d' 0)

t_exit 2 "context add with a GitHub token as the user name" \
	idpmake context add leak --git-remote "https://$tok@github.com/org/gitops.git"
t_grep "saying why and what to do" "a context holds no token: the user name in its git remote looks like one.*--git-token-env" "$STDERR"
t_nostring "the token is not printed" "$tok" "$OUTPUT"
t_fail "nothing was written" test -e "$cfg"
t_exit 2 "a long hex user name too" idpmake context add leak --git-remote "https://$hex@git.example.com/g.git"
t_nostring "not printed either" "$hex" "$OUTPUT"
t_ok "a user name alone is fine" idpmake context add user --git-remote "https://alice@git.example.com/gitops.git"
t_ok "and ssh's git@" idpmake context add ssh --git-remote "ssh://git@git.example.com/gitops.git"

printf 'contexts:\n- name: leak\n  git-remote: "https://%s@github.com/g.git"\n' "$tok" >"$cfg"
chmod 600 "$cfg"
mkdistro d <<EOF
idpmake: 1
name: tokuser
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
t_exit 2 "a token user name written into the file is refused" idpmake -C d plan
t_grep "at its line" "contexts.yaml:3:[0-9]+: error: a context holds no token" "$STDERR"
t_nostring "and not printed" "$tok" "$OUTPUT"

t_done
