#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A cluster someone registered in Argo CD by hand (argocd cluster add: no
# idpmake.io/distro annotation) is not idpmake's: a distro whose cluster
# has that server and register: does not register over its credentials
# (issue 19 §1: what another person owns), unless this distro's state
# records that it registered it (an older idpmake, which marked nothing) or
# --adopt takes it on purpose.  Refused before the push, nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster k=https://k.example:6443
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
kmark() {
	api clusters | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["items"] if c["server"] == "https://k.example:6443"][0].get("annotations", {}).get("idpmake.io/distro"))'
}
export K_TOKEN=k-token-value
mkdistro d <<EOF
idpmake: 1
name: platform
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  k: {server: "https://k.example:6443", register: {token-env: K_TOKEN}}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web default

t_eq "setup: Argo CD has cluster k, registered by hand (no idpmake mark)" None "$(kmark)"
emu_reset
t_exit 1 "a distro that would register k is refused" idpmake -C d up
t_grep "naming the cluster and who has it" "k:register: cluster 'k' \(https://k.example:6443\) in Argo CD belongs to .*by hand" "$STDERR"
t_grep "with --adopt as a way out" "idpmake up --adopt" "$STDERR"
t_eq "the cluster was not registered over" 0 "$(count POST '^/api/v1/clusters')"
t_eq "nothing was pushed" "" "$(git --git-dir="$bare" for-each-ref)"
t_ok "--adopt takes it on purpose" idpmake -C d up --adopt
t_eq "it is this distro's now" platform "$(kmark)"
t_ok "and the next run needs no --adopt" idpmake -C d up
t_done
