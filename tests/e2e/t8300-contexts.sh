#!/bin/bash
# Contexts (issue 9 #6): `context add|use|list|rm` keep named Argo CD servers
# and GitOps remotes in $XDG_CONFIG_HOME/idpmake/contexts.yaml (mode 0600,
# no token in it: a token file's path or a variable's name).  The default
# context (`context use`) fills in what the distro leaves out; one chosen for
# the run (--context, IDPMAKE_CONTEXT) goes over the distro (issue 19 #2);
# flags win over environment variables; `version`, -v and the "acting on"
# line say which context is in use.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10

# two GitOps repositories: the distro's and the context's
git init -q --bare -b main "$T/distro.git" || t_bail "git init failed"
git init -q --bare -b main "$T/ctx.git" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$T/ctx.git=$T/ctx.git" --repo-map "$T/distro.git=$T/distro.git" --repo-map "file://$T/distro.git=$T/distro.git" \
	--op-ms 20 --health-ms 20 --reconcile-ms 10
server=$ARGOCD_SERVER
emu=http://$server/_emu
unset ARGOCD_SERVER		# ARGOCD_OPTS=--plaintext stays: it names no server
printf '%s\n' "$ARGOCD_TEST_TOKEN" >"$T/token"

mkdistro d <<EOF
idpmake: 1
name: ctx
git: {remote: "$T/distro.git"}
argocd: {server: "127.0.0.1:9", repo-url: "file://$T/distro.git"}
clusters: {in-cluster: {}}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
nsyncs() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"].endswith("/sync")))'; }
cfg=$HOME/.config/idpmake/contexts.yaml

# ---- no context: the distro's server (unreachable here) ------------------
t_ok "version without a context" idpmake version
t_grep "says none" '^context: none' "$STDOUT"
t_ok "context list, empty" idpmake context list
t_grep "says there is none" '^no contexts' "$STDOUT"
t_fail "up with the distro's server" env ARGOCD_AUTH_TOKEN="$ARGOCD_TEST_TOKEN" "$IDPMAKE" -C d up
t_grep "which is 127.0.0.1:9" '127\.0\.0\.1:9' "$OUTPUT"
idpmake -C d forget >/dev/null 2>&1
distro_main=$(git --git-dir="$T/distro.git" rev-parse -q --verify main)
emu_reset

# ---- add: the file -------------------------------------------------------
t_exit 2 "a token is refused on the command line" idpmake context add bad --argocd-server x --token "$ARGOCD_TEST_TOKEN"
t_grep "saying why" 'never holds a token' "$STDERR"
t_exit 2 "add needs a server or a remote" idpmake context add bad
t_ok "context add prod" idpmake context add prod --argocd-server "$server" --git-remote "$T/ctx.git" --token-file "$T/token"
t_grep "the first one is in use" "context 'prod' added, and in use" "$STDOUT"
t_ok "context add dev (token from a variable)" idpmake context add dev --argocd-server "$server" --token-env DEV_ARGOCD_TOKEN
t_eq "the file is ~/.config/idpmake/contexts.yaml, mode 0600" 600 "$(stat -c %a "$cfg" 2>&1)"
t_nostring "the token is not in the file" "$ARGOCD_TEST_TOKEN" "$HOME/.config/idpmake"
t_grep "the token file's path is" "token-file: .*$T/token" "$cfg"
t_grep "the variable's name is" 'token-env: .*DEV_ARGOCD_TOKEN' "$cfg"
t_ok "context list" idpmake context list
t_grep "marks prod in use" '^\* prod$' "$STDOUT"
t_grep "lists dev" '^  dev$' "$STDOUT"
t_ok "context list --json" idpmake --json context list
cp "$STDOUT" list.json
t_ok "json names both, prod current" python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))}
assert set(c) == {"prod", "dev"} and c["prod"]["current"] and not c["dev"]["current"], c
assert c["dev"]["token-env"] == "DEV_ARGOCD_TOKEN" and "token" not in c["dev"], c' list.json

# ---- the default context fills in, it never redirects (issue 19 #2) --------
t_ok "version names the context" idpmake version
t_grep "prod, from context use" "^context: prod \(from context use" "$STDOUT"
t_fail "a plain up keeps the distro's own server" env ARGOCD_AUTH_TOKEN="$ARGOCD_TEST_TOKEN" "$IDPMAKE" -C d up
t_grep "which is 127.0.0.1:9" '127\.0\.0\.1:9' "$OUTPUT"
t_grep "and says so, with the context that fills in nothing" \
	"^acting on gitops $T/distro.git branch main \(distro\), argocd 127\.0\.0\.1:9 \(distro\), context prod \(context use, fills in nothing here\)" "$STDERR"
t_eq "nothing was pushed to the context's remote" "" "$(git --git-dir="$T/ctx.git" rev-parse -q --verify main)"
t_eq "no sync reached the context's server" 0 "$(nsyncs 2>&1)"
idpmake -C d forget >/dev/null 2>&1

# ---- chosen for the run, the context goes over the distro -----------------
t_ok "up --context prod" idpmake -v --context prod -C d up
t_grep "-v names the context" "context 'prod' \(from --context" "$STDERR"
t_grep "the line names the context's remote and server" \
	"^acting on gitops $T/ctx.git branch main \(context 'prod'\), argocd $server \(context 'prod'\), context prod \(--context\)" "$STDERR"
t_grep "synced through the context's server" '1 synced' "$STDOUT"
t_ok "pushed to the context's remote" git --git-dir="$T/ctx.git" rev-parse -q --verify main
t_eq "not to the distro's" "$distro_main" "$(git --git-dir="$T/distro.git" rev-parse -q --verify main)"
t_eq "one sync" 1 "$(nsyncs 2>&1)"

# ---- environment and the context -------------------------------------------
idpmake -C d forget >/dev/null 2>&1
t_exit 2 "ARGOCD_SERVER naming another server than --context's is refused" \
	env ARGOCD_SERVER=127.0.0.1:9 "$IDPMAKE" --context prod -C d up
t_grep "naming both" "ARGOCD_SERVER names the Argo CD server 127\.0\.0\.1:9, and the context 'prod' \(--context\) names $server" "$STDERR"
t_exit 2 "so is it under IDPMAKE_CONTEXT" env ARGOCD_SERVER=127.0.0.1:9 IDPMAKE_CONTEXT=prod "$IDPMAKE" -C d up
t_ok "the same server in ARGOCD_SERVER is no conflict" env ARGOCD_SERVER="http://$server/" "$IDPMAKE" --context prod -C d plan
idpmake -C d forget >/dev/null 2>&1
# a server and its credential come from the same place: the context's token file, not ARGOCD_AUTH_TOKEN
t_ok "the context's token file wins over ARGOCD_AUTH_TOKEN (a token for another server)" \
	env ARGOCD_AUTH_TOKEN=eyJhbGciOiJIUzI1NiJ9.bad.bad "$IDPMAKE" --context prod -C d up
t_nogrep "Argo CD was not handed the environment's token" 'does not accept the token' "$OUTPUT"

# ---- flags over the environment ------------------------------------------
idpmake -C d forget >/dev/null 2>&1
t_ok "ARGOCD_OPTS --server wins over ARGOCD_SERVER" \
	env ARGOCD_SERVER=127.0.0.1:9 ARGOCD_OPTS="--plaintext --server $server" "$IDPMAKE" --context prod -C d up
t_grep "synced" '1 synced' "$STDOUT"

# ---- which context: --context > IDPMAKE_CONTEXT > context use -------------
t_ok "IDPMAKE_CONTEXT" env IDPMAKE_CONTEXT=dev "$IDPMAKE" version
t_grep "picks dev" "^context: dev \(from IDPMAKE_CONTEXT" "$STDOUT"
t_ok "--context over IDPMAKE_CONTEXT" env IDPMAKE_CONTEXT=dev "$IDPMAKE" --context prod version
t_grep "picks prod" "^context: prod \(from --context" "$STDOUT"
t_exit 2 "an unknown context is a usage error" idpmake --context nope -C d plan
t_grep "naming it" "no context 'nope'" "$STDERR"

# ---- a token from the variable the context names --------------------------
t_ok "context use dev" idpmake context use dev
idpmake -C d forget >/dev/null 2>&1
t_fail "dev's variable unset" env IDPMAKE_CONTEXT=dev "$IDPMAKE" -C d up
t_grep "names the variable" 'DEV_ARGOCD_TOKEN, which is not set' "$OUTPUT"
idpmake -C d forget >/dev/null 2>&1
# (one emulator plays both servers: the Application another remote's run made is taken over on purpose, t6431)
t_ok "dev's variable set" env IDPMAKE_CONTEXT=dev DEV_ARGOCD_TOKEN="$ARGOCD_TEST_TOKEN" "$IDPMAKE" -C d up --adopt
t_grep "synced" '1 synced' "$STDOUT"
curl -sS -f "$emu/apps" >apps.json
t_grep "dev has no remote: the Application reads the distro's" '"repoURL": "file://[^"]*/distro.git"|"repoURL": "[^"]*/distro.git"' apps.json

# ---- XDG_CONFIG_HOME, rm, a token written into the file by hand ------------
t_ok "context rm dev" idpmake context rm dev
t_ok "context list" idpmake context list
t_nogrep "dev is gone" 'dev' "$STDOUT"
t_ok "version: none in use after removing the current one" idpmake version
t_grep "none" '^context: none' "$STDOUT"
mkdir -p "$T/xdg"
t_ok "XDG_CONFIG_HOME is honoured" env XDG_CONFIG_HOME="$T/xdg" "$IDPMAKE" context add x --argocd-server "$server"
t_eq "there, mode 0600" 600 "$(stat -c %a "$T/xdg/idpmake/contexts.yaml" 2>&1)"
printf 'contexts:\n- name: leak\n  token: abc\ncurrent: leak\n' >"$T/xdg/idpmake/contexts.yaml"
chmod 600 "$T/xdg/idpmake/contexts.yaml"
t_exit 2 "a token in the file is refused" env XDG_CONFIG_HOME="$T/xdg" "$IDPMAKE" -C d plan
t_grep "at its line" 'contexts.yaml:3:[0-9]+: error: a context holds no token' "$STDERR"

t_done
