#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Ownership (issue 19 §1): the owner's name in a refusal comes from Argo CD
# (a registered cluster's annotation idpmake.io/distro, which Kubernetes
# does not restrict as it does a label), hostile input: control characters never reach
# the terminal, and a huge value is cut short.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
qs=$(new_remote qs-gitops) || t_bail "new_remote failed"
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$qs=$T/git-srv/repos/qs-gitops.git" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api=http://$ARGOCD_SERVER/api/v1

export K_TOKEN=k-token-value
mkmanifest qs/packages/hello/cm.yaml ConfigMap hello default
mkdistro qs <<EOF
idpmake: 1
name: quickstart
git: {remote: "$qs"}
argocd: {app-name: "qs-\${cluster}-\${package}"}
clusters:
  k: {server: "https://k.example:6443", register: {token-env: K_TOKEN}}
packages:
  hello: {type: manifests, path: packages/hello}
EOF

# an annotation's value, unlike a label's, may hold anything
owner=$(python3 -c 'import json; print(json.dumps("evil\u001b[2J\u001b]0;pwned\u0007\r\nidpmake: forged line" + "x" * 20000))')
t_ok "setup: a cluster whose owner annotation is hostile" curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/clusters" -d "{\"server\": \"https://k.example:6443\", \"name\": \"k\",
	\"annotations\": {\"idpmake.io/distro\": $owner, \"idpmake.io/cluster\": \"k\"}, \"config\": {\"bearerToken\": \"t\"}}"

t_exit 1 "up is refused" idpmake -C qs up
t_grep "naming the owner" "k:register: cluster 'k' \\(https://k.example:6443\\) in Argo CD belongs to distro 'evil" "$STDERR"
# ctl FILE: the control characters in FILE other than its newlines
ctl() { python3 -c 'import sys; print(sum(1 for b in open(sys.argv[1], "rb").read() if (b < 32 and b != 10) or b == 127))' "$1"; }
t_eq "no escape, bell or carriage return reaches the terminal" 0 "$(ctl "$STDERR")"
t_nogrep "the annotation cannot forge a line of its own" "^idpmake: forged line" "$STDERR"
t_nogrep "the owner's name is cut short" "x{2000}" "$STDERR"

t_done
