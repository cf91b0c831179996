#!/bin/bash
# What a context holds (issue 19 #2): what the argocd CLI's contexts hold
# (plaintext, grpc-web-root-path, insecure, a CA file), `context set` and
# `context unset` to change it, `context list --json`; never a password in
# git-remote, neither from the command line nor written into the file.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10
cfg=$HOME/.config/idpmake/contexts.yaml
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
printf '%s\n' "$ARGOCD_TEST_TOKEN" >"$T/token"

# ---- a password in --git-remote is refused -----------------------------------
secret=pw$(random_string)
t_exit 2 "context add with a password in --git-remote" \
	idpmake context add leak --git-remote "https://user:$secret@git.example.com/gitops.git"
t_grep "saying why and what to do" "a context holds no password: .*--git-token-env" "$STDERR"
t_nostring "the password is not printed" "$secret" "$OUTPUT"
t_fail "nothing was written" test -e "$cfg"
t_ok "a user name alone is fine" idpmake context add user --git-remote "https://user@git.example.com/gitops.git"
mkdir -p "$HOME/.config/idpmake"
printf 'contexts:\n- name: leak\n  git-remote: "https://user:%s@git.example.com/g.git"\n' "$secret" >"$cfg"
chmod 600 "$cfg"
mkdistro d <<EOF
idpmake: 1
name: settings
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
t_exit 2 "a password written into the file is refused" idpmake -C d plan
t_grep "at its line" "contexts.yaml:3:[0-9]+: error: a context holds no password" "$STDERR"
t_nostring "and not printed" "$secret" "$OUTPUT"
rm -f "$cfg"
t_ok "context add user, again" idpmake context add user --git-remote "https://user@git.example.com/gitops.git"

# ---- plaintext and grpc-web-root-path, as the argocd CLI's contexts -----------
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10 --rootpath /argocd
rooted=$ARGOCD_SERVER
unset ARGOCD_SERVER ARGOCD_OPTS
t_ok "context add rooted --plaintext --grpc-web-root-path /argocd" \
	idpmake context add rooted --argocd-server "$rooted" --plaintext --grpc-web-root-path /argocd --token-file "$T/token"
t_ok "context use rooted" idpmake context use rooted
t_ok "up with it" idpmake -C d up
t_grep "synced" '1 synced' "$STDOUT"
t_eq "every request went under /argocd, over http" True \
	"$(curl -s "http://$rooted/_emu/requests" | python3 -c 'import json,sys; l=json.load(sys.stdin); print(bool(l) and all(e["path"].startswith("/argocd/api/") for e in l))')"
t_ok "context unset rooted plaintext" idpmake context unset rooted plaintext
t_nogrep "gone from the file" 'plaintext' "$cfg"
idpmake -C d forget >/dev/null 2>&1
t_fail "without plaintext it speaks https to an http server" idpmake -C d up
t_grep "the failure names https" "https://$rooted" "$OUTPUT"

# ---- a CA file, and insecure -----------------------------------------------------
make_tls DNS:localhost,IP:127.0.0.1
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10 \
	--tls-cert "$tls/server.pem" --tls-key "$tls/server.key"
port=${ARGOCD_SERVER##*:}
unset ARGOCD_SERVER ARGOCD_OPTS
t_ok "context add tls --ca-file" \
	idpmake context add tls --argocd-server "localhost:$port" --ca-file "$tls/ca.pem" --token-file "$T/token"
idpmake -C d forget >/dev/null 2>&1
t_ok "up through the context's CA" idpmake --context tls -C d up
t_grep "synced" '1 synced' "$STDOUT"
t_ok "context set tls --ca-file (a CA that signed nothing here)" idpmake context set tls --ca-file "$tls/stranger.pem"
idpmake -C d forget >/dev/null 2>&1
t_fail "the certificate is refused" idpmake --context tls -C d up
t_grep "a certificate error" "certificate|SSL" "$OUTPUT"
t_ok "context unset tls ca-file; set --insecure" sh -c '"$IDPMAKE" context unset tls ca-file && "$IDPMAKE" context set tls --insecure'
idpmake -C d forget >/dev/null 2>&1
t_ok "up with insecure" idpmake --context tls -C d up
t_grep "warned, naming the context" 'TLS verification is off \(insecure in the context\)' "$STDERR"

# ---- list --json, and what unset refuses --------------------------------------
t_ok "context list --json" idpmake context list --json
cp "$STDOUT" list.json
t_ok "it holds each context's settings" python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open("list.json"))}
assert set(c) == {"user", "rooted", "tls"}, c
assert c["rooted"]["grpc-web-root-path"] == "/argocd" and c["rooted"]["plaintext"] is False, c["rooted"]
assert c["tls"]["insecure"] is True and "ca-file" not in c["tls"], c["tls"]
assert c["user"]["git-remote"] == "https://user@git.example.com/gitops.git", c["user"]'
t_exit 2 "a token with no server to go with" idpmake context set user --token-env USER_TOKEN
t_grep "saying why" "the token and TLS settings go with --argocd-server" "$STDERR"
t_exit 2 "unset of the last target" idpmake context unset tls argocd-server
t_exit 2 "an unknown key" idpmake context unset tls nope
t_ok "a context with a git remote, its token variable, and a server" \
	idpmake context add both --git-remote https://git.example.com/g.git --git-token-env G_TOKEN --argocd-server a.example.com
t_exit 2 "unset of the git remote alone" idpmake context unset both git-remote
t_grep "unset says, in its own words, what else to unset" \
	"both: without git-remote, git-token-env goes with no remote: unset it too \(idpmake context unset both git-remote git-token-env\)" "$STDERR"
t_nogrep "not add's words" "--git-token-env goes with --git-remote" "$STDERR"
t_ok "unset of both, as it says" idpmake context unset both git-remote git-token-env
t_ok "context rm both" idpmake context rm both
t_exit 2 "set of a context that does not exist" idpmake context set nope --insecure

t_done
