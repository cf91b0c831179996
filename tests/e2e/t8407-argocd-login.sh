#!/bin/bash
# argocd.login (issue 24 #3): with no token exported, idpmake reads the
# admin password from Argo CD's initial admin Secret with the real kubectl
# (from the Kubernetes API emulator, through the cluster's own kube
# context), logs in with POST /api/v1/session (the Argo CD emulator, under
# the distro's grpc-web-root-path) and uses that token for the run, in
# memory only.  A wrong password, a missing Secret and bad settings each say
# what to do; an exported token still wins; the password and the token
# reach no output, log or state.  `idpmake secrets` (issue 24 #4) shows the
# platform's Secrets from the same cluster, on request, as idpbuilder does.
# git.credentials (issue 24 #3) reads the GitOps remote's user and password
# from a Secret the same way, for pushes to the real smart-HTTP git server.
# plancheck: off (faults answer logins one at a time, for up; the check's plans would log in past them)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_kube_emulator
kubeconfig_for "$T/kubeconfig" emu
export KUBECONFIG=$T/kubeconfig
PW=pw-$(random_string)
start_gitops_argocd --user "admin:$PW" --rootpath /argocd
unset ARGOCD_AUTH_TOKEN
k() { kubectl --kubeconfig "$T/kubeconfig" "$@"; }
admin_secret() {	# PASSWORD: Argo CD's initial admin Secret, as Argo CD makes it (server-side apply)
	printf '{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "argocd-initial-admin-secret", "namespace": "argocd"}, "data": {"password": "%s"}}\n' \
		"$(printf %s "$1" | base64 -w0)" >"$T/secret.json"
	k apply --server-side --field-manager=argocd-server -f "$T/secret.json"
}
t_ok "the argocd namespace" k apply --server-side -f - <<<'{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}'
t_ok "Argo CD's initial admin Secret" admin_secret "$PW"

mkdistro d <<EOF
idpmake: 1
name: login
urls: {keycloak: "https://idp.example/keycloak"}
git: {remote: "$bare"}
argocd:
  repo-url: "file://$bare"
  grpc-web-root-path: /argocd
  login: {secret: argocd/argocd-initial-admin-secret}
clusters:
  in-cluster: {kube-context: emu}
packages:
  hello: {type: manifests, path: packages/hello, namespace: hello}
EOF
mkmanifest d/packages/hello/cm.yaml ConfigMap hello

logins() {	# the POSTs to /argocd/api/v1/session since the last emu_reset (the log keeps the root path)
	curl -fsS "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"] == "/argocd/api/v1/session"))'
}
emu_reset
t_ok "up with no token exported: it logs in" idpmake -C d up
t_grep "and syncs" '1 synced' "$STDOUT"
t_eq "one login (POST /api/v1/session, under the distro's root path)" 1 "$(logins)"
t_nostring "the password reaches no output" "$PW" "$OUTPUT"
t_nostring "nor the state or the logs" "$PW" d/.idpmake
t_nostring "nor the GitOps repository" "$PW" "$bare"
tok=$(curl -fsS "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    a = (e.get("headers") or {}).get("Authorization", "")
    if a.startswith("Bearer "):
        print(a[7:]); break')
t_ok "the syncs sent the session's token" test -n "$tok"
[ -n "$tok" ] && t_nostring "which reaches no output, state or log" "$tok" "$OUTPUT" d/.idpmake

# a render that runs again and gives the same output changes nothing in Argo CD: no login, no request
# (issue 35 #12: the ownership check asked whenever a render ran)
printf '# a comment: the same objects\n' >>d/packages/hello/cm.yaml
emu_reset
t_ok "up after a change that renders the same objects" idpmake -C d up
t_grep "the render ran again, its output unchanged" 'render in-cluster/hello:render: output unchanged' "$STDOUT"
t_grep "and nothing else ran" ' 1 rendered, nothing pushed, 0 synced' "$STDOUT"
t_eq "no login" 0 "$(logins)"
t_eq "no request to Argo CD at all" 0 "$(curl -fsS "$emu/requests" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')"
printf '  changed: "yes"\n' >>d/packages/hello/cm.yaml
emu_reset
t_ok "a change that renders other objects" idpmake -C d up
t_grep "is synced" '1 synced' "$STDOUT"
t_eq "logging in once" 1 "$(logins)"

# ---- idpmake secrets ------------------------------------------------------------
secret() {	# NS NAME LABELS-JSON KEY=VALUE...: a Secret, applied server-side
	local ns=$1 name=$2 labels=$3 kv data=
	shift 3
	for kv; do data="$data${data:+, }\"${kv%%=*}\": \"$(printf %s "${kv#*=}" | base64 -w0)\""; done
	printf '{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "%s", "namespace": "%s", "labels": %s}, "data": {%s}}\n' \
		"$name" "$ns" "$labels" "$data" >"$T/s.json"
	k apply --server-side -f "$T/s.json" >/dev/null
}
GPW=gitea-$(random_string) KPW=kc-$(random_string)
for ns in gitea keycloak other; do k apply --server-side -f - <<<"{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"$ns\"}}" >/dev/null; done
secret gitea gitea-credential '{"cnoe.io/cli-secret": "true", "cnoe.io/package-name": "gitea"}' username=giteaAdmin password="$GPW"
secret keycloak keycloak-config '{"cnoe.io/cli-secret": "true", "cnoe.io/package-name": "keycloak"}' \
	KEYCLOAK_ADMIN_PASSWORD="$KPW" USER1_PASSWORD=$'user\033]0;pwned\a' BINARY=$'ab\001' ESC_AND_BS=$'x\\x07\033' 
# (a NUL cannot be passed in a shell word: a value that is not text is made by python below)
secret other not-for-the-cli '{}' token=never-shown
t_ok "idpmake secrets" idpmake -C d secrets
t_grep "Argo CD's admin Secret" '^argocd \(Secret argocd/argocd-initial-admin-secret\)$' "$STDOUT"
t_grep "with its password, decoded" "^  password +$PW\$" "$STDOUT"
t_grep "Gitea's credential" "^  username +giteaAdmin\$" "$STDOUT"
t_grep "a cnoe.io/cli-secret Secret under its package" '^keycloak \(Secret keycloak/keycloak-config\)$' "$STDOUT"
t_grep "its value" "^  KEYCLOAK_ADMIN_PASSWORD +$KPW\$" "$STDOUT"
t_grep "and where it is served, from the distro's urls (issue 37 #3)" '^  url +https://idp.example/keycloak$' "$STDOUT"
t_grep "a control character is escaped" 'USER1_PASSWORD +user\\x1b\]0;pwned\\x07$' "$STDOUT"
t_grep "a backslash beside one is doubled, so an escape is not the same text" 'ESC_AND_BS +x\\\\x07\\x1b$' "$STDOUT"
t_nogrep "an unlabelled Secret is not shown" 'never-shown|not-for-the-cli' "$STDOUT"
t_eq "a core Secret that is labelled too is listed once" 1 "$(grep -c '^gitea (Secret gitea/gitea-credential)$' "$STDOUT")"
t_nostring "nothing of it is kept in the state or logs" "$KPW" d/.idpmake
t_nostring "nor Gitea's" "$GPW" d/.idpmake
t_ok "idpmake secrets keycloak" idpmake -C d secrets keycloak
t_nogrep "one package's only" '^(argocd|gitea) ' "$STDOUT"
t_grep "that one" '^keycloak ' "$STDOUT"
t_ok "idpmake secrets --json" idpmake -C d secrets --json
cp "$STDOUT" secrets.json
t_ok "--json: package, namespace, name and the decoded data" python3 -c '
import json, sys
d = {e["package"]: e for e in json.load(open("secrets.json"))}
assert sorted(d) == ["argocd", "gitea", "keycloak"], sorted(d)
assert d["argocd"]["data"]["password"] == sys.argv[1], d["argocd"]
assert d["gitea"]["namespace"] == "gitea" and d["gitea"]["name"] == "gitea-credential", d["gitea"]
assert d["keycloak"]["data"]["USER1_PASSWORD"] == "user\x1b]0;pwned\x07", d["keycloak"]
assert d["keycloak"]["url"] == "https://idp.example/keycloak" and "url" not in d["argocd"], d' "$PW"
python3 -c 'import base64, json; print(json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bin", "namespace": "keycloak",
    "labels": {"cnoe.io/cli-secret": "true", "cnoe.io/package-name": "keycloak"}}, "data": {"raw": base64.b64encode(b"ab\0cd\xff").decode()}}))' >"$T/bin.json"
t_ok "a Secret whose value is not text" k apply --server-side -f "$T/bin.json"
t_ok "idpmake secrets keycloak, with it" idpmake -C d secrets keycloak
t_grep "the value is not cut at its NUL: it is said to be no text" '^  raw +\(not text: --json gives its base64\)$' "$STDOUT"
t_ok "--json gives its bytes in base64" sh -c '"$IDPMAKE" -C d secrets keycloak --json | python3 -c "
import base64, json, sys
d = [e for e in json.load(sys.stdin) if e[\"name\"] == \"bin\"][0]
assert base64.b64decode(d[\"data\"][\"raw\"][\"base64\"]) == b\"ab\\0cd\\xff\", d"'

# ---- where the password may go, and what the answers may echo -----------------------
printf '  a: "1"\n' >>d/packages/hello/cm.yaml
t_fail "ARGOCD_SERVER naming another, non-loopback server" env ARGOCD_SERVER=192.0.2.1:8080 "$IDPMAKE" -C d up
t_grep "the login is refused before any connection, saying where it may go" \
	"argocd.login sends the admin password in Secret argocd/argocd-initial-admin-secret only to argocd.server \(not set\), or to a port-forward on loopback when the distro names no server or over TLS its argocd.ca-file verifies, not to 192.0.2.1:8080 from ARGOCD_SERVER" "$OUTPUT"
# the distro names its server: a loopback ARGOCD_SERVER (any local user can listen there) gets no password
git init -q --bare -b main "$T/dn.git" || t_bail "git init failed"
sed "s|^  grpc-web-root-path: /argocd\$|&\\n  server: argocd.example.invalid|; s|^git: .*|git: {remote: \"$T/dn.git\"}|; s|^  repo-url: .*|  repo-url: \"file://$T/dn.git\"|" d/distro.yaml >"$T/named.yaml"
mkdir -p dn && cp -R d/packages dn/ && cp "$T/named.yaml" dn/distro.yaml
emu_reset
# (issue 33 #1: ARGOCD_SERVER never replaces the distro's server; the run is refused before any login)
t_exit 2 "the distro names argocd.server, ARGOCD_SERVER a loopback one over plain http" idpmake -C dn up
t_grep "refused, naming both" "the distro names the Argo CD server argocd.example.invalid \(argocd.server\), and ARGOCD_SERVER names 127.0.0.1:[0-9]+: .*remove argocd.server from the distro to let ARGOCD_SERVER choose" "$OUTPUT"
t_eq "no login reached the loopback server" 0 "$(logins)"
curl -fsS "$emu/requests" >"$T/dn.req"
t_nostring "nor the password" "$PW" "$T/dn.req"
# a login answered 503 (a proxy restarting Argo CD): the password is sent once, not retried
emu_post fault '{"path_regex": "/api/v1/session$", "status": 503, "count": 10}'
t_fail "a login answered HTTP 503" idpmake -C d up
t_grep "the answer is shown" 'argocd.login: logging in as .admin. at .*: Argo CD answered HTTP 503' "$OUTPUT"
t_eq "the password was sent once" 1 "$(logins)"
emu_reset
# a port-forward of the named server over TLS its argocd.ca-file verifies gets the password
make_tls
python3 "$top/tests/argocd-emu/emulator.py" --port 0 --port-file "$T/emu2.port" --token "$(random_string)" \
	--user "admin:$PW" --rootpath /argocd --repo-map "$T/dn.git=$T/dn.git" --repo-map "file://$T/dn.git=$T/dn.git" --namespaces-exist \
	--tls-cert "$tls/server.pem" --tls-key "$tls/server.key" >"$T/emu2.log" 2>&1 &
t_pids="$t_pids $!"
t_wait_for 10 test -s "$T/emu2.port"
emu2=https://localhost:$(cat "$T/emu2.port")
sed -i "s|^  server: argocd.example.invalid\$|&\\n  ca-file: \"$tls/ca.pem\"|" dn/distro.yaml
logins2() { curl -fsS --cacert "$tls/ca.pem" "$emu2/_emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"] == "/argocd/api/v1/session"))'; }
t_exit 2 "the distro names argocd.server and its CA, ARGOCD_SERVER a loopback port-forward over TLS" \
	env -u ARGOCD_OPTS ARGOCD_SERVER="${emu2#https://}" "$IDPMAKE" -C dn up
t_grep "the environment does not replace the distro's server" "the distro names the Argo CD server argocd.example.invalid \(argocd.server\), and ARGOCD_SERVER names localhost:" "$OUTPUT"
sed -i '/^  server: argocd.example.invalid$/d' dn/distro.yaml
t_ok "the distro naming no server, its CA, ARGOCD_SERVER a loopback port-forward over TLS" \
	env -u ARGOCD_OPTS ARGOCD_SERVER="${emu2#https://}" "$IDPMAKE" -C dn up
t_grep "it logs in and syncs" '1 synced' "$STDOUT"
t_eq "one login there" 1 "$(logins2)"
sed -i '/^  ca-file: /d' dn/distro.yaml
printf '  tls: "1"\n' >>dn/packages/hello/cm.yaml
sed -i "s|^  grpc-web-root-path: /argocd\$|&\\n  server: argocd.example.invalid|" dn/distro.yaml
t_exit 2 "the same, the distro naming its server (ARGOCD_OPTS --insecure, no argocd.ca-file)" \
	env ARGOCD_SERVER="${emu2#https://}" ARGOCD_OPTS=--insecure "$IDPMAKE" -C dn up
t_grep "refused, naming both" "the distro names the Argo CD server argocd.example.invalid" "$OUTPUT"
t_eq "no second login there" 1 "$(logins2)"
# a context that gives the server: the distro's login (and root path) are not for it
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
try:
    while True:
        c, _ = s.accept(); c.settimeout(2)
        try: open(sys.argv[2], "ab").write(c.recv(65536))
        except Exception: pass
        c.close()
except Exception: pass' "$T/listener.port" "$T/heard.log" &
t_pids="$t_pids $!"
t_wait_for 10 test -s "$T/listener.port"
: >"$T/heard.log"
t_ok "a context with its own server" idpmake context add other --argocd-server "127.0.0.1:$(cat "$T/listener.port")"
t_fail "up --context other (no token for it)" env -u ARGOCD_SERVER ARGOCD_OPTS=--plaintext "$IDPMAKE" -C d --context other up
t_grep "it asks for a token: the distro's login is not the context's" 'set ARGOCD_AUTH_TOKEN' "$OUTPUT"
t_nostring "the password never reached the context's server" "$PW" "$T/heard.log"
t_ok "context rm other" idpmake context rm other
# an answer that echoes the request (a proxy's 400 page)
emu_post fault "{\"path_regex\": \"/api/v1/session\$\", \"status\": 400, \"body\": \"bad request: {\\\"password\\\":\\\"$PW\\\"}\", \"content_type\": \"text/plain\"}"
t_fail "a login answered by an echo of its body" idpmake -C d up
t_grep "the answer is shown" 'argocd.login: logging in as .admin. at .*: Argo CD answered HTTP 400: bad request: \{"password":"\*\*\*"\}' "$OUTPUT"
t_nostring "with the password masked" "$PW" "$OUTPUT"
# an answer whose token is no header's
emu_post fault '{"path_regex": "/api/v1/session$", "status": 200, "body": "{\"token\": \"abc\\u0001def\"}", "content_type": "application/json"}'
t_fail "a login answered with a control character in its token" idpmake -C d up
t_grep "refused, saying why" "Argo CD's answer to the login has no usable token" "$OUTPUT"
emu_reset

# ---- git.credentials: the remote's user and password from a Secret ------------------
start_git_server
remote=$(new_remote gitops2) || t_bail "new_remote failed"
secret gitea push-credential '{}' username="$GIT_USER" password="$GIT_PASS"
mkdistro d2 <<EOF
idpmake: 1
name: gitcreds
git:
  remote: "$remote"
  credentials: {secret: gitea/push-credential}
clusters:
  in-cluster: {kube-context: emu}
packages:
  hello:
    type: manifests
    path: packages/hello
    namespace: hello
    hooks:
      post: [{name: env, run: ./env.sh, when: always}]
EOF
mkmanifest d2/packages/hello/cm.yaml ConfigMap hello
printf '#!/bin/sh\nenv >"%s/hook-env.txt"\n' "$T" >d2/env.sh && chmod +x d2/env.sh
t_ok "up with the remote's password in a Secret, none exported" env -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN -u IDPMAKE_GIT_USERNAME "$IDPMAKE" -C d2 up
t_grep "it pushed as the Secret's user" "^POST /gitops2.git/git-receive-pack\? $GIT_USER\$" "$T/git-srv/access.log"
t_nostring "the password reaches no output, state or log" "$GIT_PASS" "$OUTPUT" d2/.idpmake
t_ok "the hook ran" test -s "$T/hook-env.txt"
t_nostring "nor a hook's environment" "$GIT_PASS" "$T/hook-env.txt"
printf '  scan: "1"\n' >>d2/packages/hello/cm.yaml
if ! why=$(heapscan_usable); then
	t_skip "the memory search: $why"
else
	heapscan_build
	t_ok "up again, its memory searched at exit (heapscan)" heapscan "$GIT_PASS" env -u GIT_PASS -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN -u IDPMAKE_GIT_USERNAME "$IDPMAKE" -C d2 up
	t_eq "no copy of the password is left in its memory (the environment's is zeroed)" "" "$(cat "$T/heapscan.out")"
fi
secret gitea push-credential '{}' username="$GIT_USER" password="wrong-$GIT_PASS"
printf '  b: "1"\n' >>d2/packages/hello/cm.yaml
t_fail "up with a password the server refuses" env -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN "$IDPMAKE" -C d2 up
t_grep "the refusal names where the password came from" "the server refused the password in Secret gitea/push-credential \(git.credentials\) for the user '$GIT_USER'" "$OUTPUT"
t_nostring "the refused password reaches no output" "wrong-$GIT_PASS" "$OUTPUT" d2/.idpmake
t_ok "an exported token wins over the Secret" env -u ARGOCD_SERVER IDPMAKE_GIT_TOKEN="$GIT_PASS" IDPMAKE_GIT_USERNAME="$GIT_USER" "$IDPMAKE" -C d2 up
sed -i 's|gitea/push-credential|gitea/nope|' d2/distro.yaml
printf '  c: "1"\n' >>d2/packages/hello/cm.yaml
t_fail "up with a Secret that is not there" env -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN "$IDPMAKE" -C d2 up
t_grep "a warning names it and what follows" 'warning: git.credentials: kubectl --namespace gitea get secret nope .*not ?found.*: the GitOps remote gets no credentials from it' "$OUTPUT"

# --kube-context reaches the Secret's read as every kubectl step's (the current context is another cluster)
cat >"$T/kc2" <<EOF
apiVersion: v1
kind: Config
current-context: elsewhere
clusters:
- {name: emu, cluster: {server: "$KUBE_SERVER", certificate-authority: "$KUBE_CA"}}
- {name: elsewhere, cluster: {server: "https://127.0.0.1:1", certificate-authority: "$KUBE_CA"}}
contexts:
- {name: emu, context: {cluster: emu, user: u}}
- {name: elsewhere, context: {cluster: elsewhere, user: u}}
users:
- {name: u, user: {token: "$KUBE_TOKEN"}}
EOF
sed -i 's|gitea/nope|gitea/push-credential|; s|in-cluster: {kube-context: emu}|in-cluster: {}|' d2/distro.yaml
secret gitea push-credential '{}' username="$GIT_USER" password="$GIT_PASS"
printf '  d: "1"\n' >>d2/packages/hello/cm.yaml
t_ok "up --kube-context emu, the current context elsewhere" env -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN KUBECONFIG="$T/kc2" \
	"$IDPMAKE" -C d2 up --kube-context emu
t_nogrep "the Secret was read through --kube-context, not the current context" 'warning: git.credentials' "$OUTPUT"
# a context that gives the Argo CD server: the distro's git credentials are not sent to it (repository:register)
t_ok "a context with its own Argo CD server" idpmake context add argo-only --argocd-server 127.0.0.1:9
t_fail "diff --context argo-only: no credentials from the Secret" env -u ARGOCD_SERVER -u IDPMAKE_GIT_TOKEN \
	"$IDPMAKE" -C d2 --context argo-only diff
t_grep "the private remote then asks for them" 'authentication failed; set IDPMAKE_GIT_TOKEN' "$OUTPUT"
t_ok "context rm argo-only" idpmake context rm argo-only
# keys are checked where they are written
sed -i 's|credentials: {secret: gitea/push-credential}|credentials: {secret: gitea/push-credential, username-key: "a b"}|' d2/distro.yaml
t_exit 2 "a Secret key with a space" idpmake -C d2 plan
t_grep "a located error" "distro.yaml:[0-9]+:[0-9]+: error: git.credentials.username-key must be a key of a Secret's data" "$STDERR"

# an exported token wins: no login
printf '  extra: "1"\n' >>d/packages/hello/cm.yaml
emu_reset
t_ok "up with ARGOCD_AUTH_TOKEN" env ARGOCD_AUTH_TOKEN="$ARGOCD_TEST_TOKEN" "$IDPMAKE" -C d up
t_eq "no login when a token is exported" 0 "$(logins)"

# the password changed since (Argo CD refuses it)
t_ok "the Secret holds an old password" admin_secret "old-$PW"
printf '  more: "2"\n' >>d/packages/hello/cm.yaml
head=$(git --git-dir="$bare" rev-parse main)
t_exit 1 "up with a refused password" idpmake -C d up
t_eq "asked once the render gave new objects, before the push: nothing pushed" "$head" "$(git --git-dir="$bare" rev-parse main)"
t_grep "and says so" "pre-flight, once the renders ran: 1 problem; nothing was pushed" "$OUTPUT"
t_grep "says Argo CD refused it, and what to do" "argocd.login: Argo CD refused user 'admin' with the password in Secret argocd/argocd-initial-admin-secret \(Invalid username or password\).*set ARGOCD_AUTH_TOKEN" "$OUTPUT"
t_nostring "the refused password reaches no output" "old-$PW" "$OUTPUT" d/.idpmake

# the Secret deleted (as the Argo CD docs advise after the first login)
t_ok "the Secret deleted" k -n argocd delete secret argocd-initial-admin-secret
t_exit 1 "up without the Secret" idpmake -C d up
t_grep "names the Secret, kubectl's word, and the way out" 'argocd.login: kubectl --namespace argocd get secret argocd-initial-admin-secret on cluster .in-cluster. \(context emu, kube-context\): .*not ?found.*set ARGOCD_AUTH_TOKEN' "$OUTPUT"

# bad settings: located errors, exit 2
sed -i 's|login: {secret: argocd/argocd-initial-admin-secret}|login: {secret: argocd-initial-admin-secret}|' d/distro.yaml
t_exit 2 "a Secret without its namespace" idpmake -C d plan
t_grep "a located error" 'distro.yaml:[0-9]+:[0-9]+: error: argocd.login.secret must be NAMESPACE/NAME' "$STDERR"
sed -i 's|login: {secret: argocd-initial-admin-secret}|login: {secret: argocd/argocd-initial-admin-secret, cluster: nope}|' d/distro.yaml
t_exit 2 "a login cluster the distro lacks" idpmake -C d plan
t_grep "a located error naming it" "distro.yaml:[0-9]+:[0-9]+: error: argocd.login reads its Secret from the cluster Argo CD runs in, 'nope'" "$STDERR"
sed -i 's|, cluster: nope}|, pasword: x}|' d/distro.yaml
t_exit 2 "an unknown key" idpmake -C d plan
t_grep "named" "unknown key 'pasword'" "$STDERR"
sed -i 's|, pasword: x}|}|; s|grpc-web-root-path: /argocd|grpc-web-root-path: "/argocd/api/v1/session?x="|' d/distro.yaml
t_exit 2 "a root path with a query in it" idpmake -C d plan
t_grep "a located error" 'distro.yaml:[0-9]+:[0-9]+: error: argocd.grpc-web-root-path must be a path such as /argocd' "$STDERR"
t_done
