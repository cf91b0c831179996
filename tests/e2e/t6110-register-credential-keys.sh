#!/bin/bash
# Register steps that cannot get stuck (issue 19 §4): the key of
# repository:register covers whether a credential is given and for whom
# (never the credential), so a run with IDPMAKE_GIT_TOKEN after a run without
# it registers the repository; `up --refresh` asks Argo CD (one list of
# clusters, one of repositories) whether it still has what idpmake
# registered, and registers again what it lost; the errors name the real way
# out (up --refresh, forget, IDPMAKE_GIT_TOKEN).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
# a private repository: Argo CD reads it only with the credentials registered
start_argocd_emulator --repo-map "$url=$bare" --require-repo-creds --repo-creds "$url=$GIT_USER:$GIT_PASS" \
	--op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api=http://$ARGOCD_SERVER/api/v1
EAST_TOKEN="east-$(random_string)$(random_string)"
export EAST_TOKEN

# lines [RE]: the emulator's request log, one "METHOD PATH?QUERY" a line, paths matching RE
lines() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, re, sys
for e in json.load(sys.stdin):
    if re.search(sys.argv[1], e["path"]):
        print(e["method"], e["path"] + ("?" + e["query"] if e["query"] else ""))' "${1:-.}" ||
		t_bail "cannot read the request log"
}
argo() { curl -sS -f -X "$1" -H "Content-Type: application/json" -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/$2"; }

# the push takes its credentials from the URL; Argo CD gets them only from repository:register
mkdistro d <<EOF
idpmake: 1
name: keys
git: {remote: "$(authurl "$url")"}
argocd: {}
clusters:
  east:
    server: https://east.k8s.example:6443
    register: {token-env: EAST_TOKEN}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base base
cd d || exit 1

# ---- without IDPMAKE_GIT_TOKEN: nothing to register, and the sync says what to do ----
t_exit 1 "without IDPMAKE_GIT_TOKEN, Argo CD cannot read the private repository" idpmake up
t_grep "the sync fails on Argo CD's answer" "east/base:sync: .*authentication required" "$OUTPUT"
t_grep "naming the way out: IDPMAKE_GIT_TOKEN and repository:register" \
	"east/base:sync: .*set IDPMAKE_GIT_TOKEN .*repository:register" "$OUTPUT"
t_eq "no repository was registered" "" "$(lines '^/api/v1/repositories')"

# ---- with the token: repository:register runs, though it was done without one ----
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
t_ok "plan with the token" idpmake plan
t_grep "says repository:register runs" "register repository:register: never run" "$OUTPUT"
emu_reset
t_ok "up with IDPMAKE_GIT_TOKEN registers the repository and syncs" idpmake up
# (after the ownership check's one list: whose is the repository Argo CD may have, owner.c)
t_eq "one repository upsert" "GET /api/v1/repositories POST /api/v1/repositories?upsert=true" \
	"$(lines '^/api/v1/repositories' | tr '\n' ' ' | sed 's/ $//')"
t_grep "and the sync succeeds" " 1 synced" "$OUTPUT"
t_eq "no credential in the state or the logs" "" "$(grep -r -a -l -F -e "$GIT_PASS" -e "$EAST_TOKEN" .idpmake)"

emu_reset
t_ok "a no-op up" idpmake up
t_eq "makes no request" "" "$(lines)"
t_ok "another user name for the token" env IDPMAKE_GIT_USERNAME=other "$IDPMAKE" plan
t_grep "registers again (whom the credential is for)" "repository:register: .*credential given changed" "$OUTPUT"

# ---- Argo CD loses the cluster and the repository: --refresh registers them again ----
argo DELETE "clusters/https%3A%2F%2Feast.k8s.example%3A6443" >/dev/null || t_bail "cannot delete the cluster"
argo DELETE "repositories/$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$url")" \
	>/dev/null || t_bail "cannot delete the repository"
echo "  more: x" >>packages/base/cm.yaml
emu_reset
t_exit 1 "a sync to the cluster Argo CD lost fails" idpmake up
t_grep "naming the way out that works: up --refresh" \
	"east/base:sync: .*cluster 'east' .*idpmake registered.*idpmake up --refresh" "$OUTPUT"
t_nogrep "not the advice to add register: it has it" "give it .register. in the distro" "$OUTPUT"
emu_reset
t_ok "plan --refresh says both register again" idpmake plan --refresh
t_grep "the cluster" "east:register: drift: Argo CD no longer has cluster 'east'" "$OUTPUT"
t_grep "the repository" "repository:register: drift: Argo CD no longer has the repository $url" "$OUTPUT"
emu_reset
t_ok "up --refresh registers what Argo CD lost, then syncs" idpmake up --refresh
# --refresh's check and the ownership check before the push share one list of clusters (owner.c)
t_eq "one list of repositories, and one of clusters for both --refresh and ownership" \
	"GET /api/v1/clusters GET /api/v1/repositories" \
	"$(lines '^/api/v1/(clusters|repositories)$' | grep '^GET' | sort | tr '\n' ' ' | sed 's/ $//')"
t_eq "then the cluster and the repository are registered" \
	"POST /api/v1/clusters?upsert=true POST /api/v1/repositories?upsert=true" \
	"$(lines '^/api/v1/(clusters|repositories)$' | grep '^POST' | sort | tr '\n' ' ' | sed 's/ $//')"
t_grep "and the sync succeeds" " 1 synced" "$OUTPUT"
t_ok "Argo CD has the cluster again" argo GET "clusters/https%3A%2F%2Feast.k8s.example%3A6443"

emu_reset
t_ok "up --refresh when Argo CD has everything" idpmake up --refresh
t_eq "registers nothing" "" "$(lines '^/api/v1/(clusters|repositories)' | grep -v '^GET')"

t_done
