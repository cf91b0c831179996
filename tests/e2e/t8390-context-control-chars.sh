#!/bin/bash
# A hand-edited contexts file is read as hostile text (issue 19 #2, #3): what
# it holds is printed on the "acting on" line of up and plan and by `context
# list`, so a control character in any value (a terminal escape in a name,
# a server or a remote) is refused at file:line:col, exit 2, never printed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

cfg=$HOME/.config/idpmake/contexts.yaml
mkdir -p "$HOME/.config/idpmake"
mkdistro d <<EOF
idpmake: 1
name: esc
git: {remote: "$T/r.git"}
argocd: {repo-url: "file://$T/r.git"}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app

printf 'contexts:\n- name: "p\\e]0;pwned\\aq"\ncurrent: "p\\e]0;pwned\\aq"\n' >"$cfg"
t_exit 2 "plan with an escape in a context's name" idpmake -C d plan
t_grep "located" "contexts.yaml:2:9: error: 'name' has a control character in it" "$STDERR"
t_nogrep "the escape never reaches the terminal" $'\e' "$OUTPUT"
t_exit 2 "context list too" idpmake context list
t_nogrep "nor from context list" $'\e' "$OUTPUT"

printf 'contexts:\n- name: ok\n  argocd-server: "h\\e[2J.example.com"\n  git-remote: "https://h.example.com/r\\e[31m.git"\ncurrent: ok\n' >"$cfg"
t_exit 2 "plan with escapes in a server and a remote" idpmake -C d plan
t_grep "the server, located" "contexts.yaml:3:18: error: 'argocd-server' has a control character in it" "$STDERR"
t_grep "the remote, located" "contexts.yaml:4:15: error: 'git-remote' has a control character in it" "$STDERR"
t_nogrep "no escape printed" $'\e' "$OUTPUT"
t_nogrep "and no 'acting on' line" "acting on" "$OUTPUT"

printf 'contexts:\n- name: ok\n  argocd-server: "argocd.example.com"\ncurrent: ok\n' >"$cfg"
# read, and the Argo CD it names used: with no token here plan says what it could not check
t_ok "a clean file still works" idpmake -C d plan
t_grep "its Argo CD is the one plan would ask, with no token here" 'plan: not checked: what Argo CD holds: no Argo CD token here' "$STDERR"
t_grep "and says what it acts on" "acting on .*context ok \(context use\)" "$OUTPUT"
t_done
