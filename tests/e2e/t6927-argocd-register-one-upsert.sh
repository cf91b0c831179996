#!/bin/bash
# CLUSTER:register is one upsert: Argo CD's create compares labels and
# annotations too (Cluster.Equals) and updates the cluster where they
# differ, so the POST sets them, with no PUT after it; a labels-only change
# since the last registration is the PUT alone.  (issue 21: argoreg.c said
# create ignores label-only changes, and sent a PUT after every upsert.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
export TOK="tok-$(random_string)"
write_distro() {
	mkdistro d <<EOF
idpmake: 1
name: one
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", repository: registered}
clusters:
  east: {server: "https://east.example:6443", labels: {env: $1}, register: {token-env: ${2:-TOK}}}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
}
write_distro prod
mkmanifest d/packages/web/cm.yaml ConfigMap web
# methods: the cluster requests since the last emu_reset
methods() { curl -s -f "$emu/requests" | python3 -c '
import json, sys
print(" ".join(e["method"] for e in json.load(sys.stdin) if e["path"].startswith("/api/v1/clusters")))'; }
labels() { curl -s -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters/https%3A%2F%2Feast.example%3A6443" |
	python3 -c 'import json, sys; c = json.load(sys.stdin); print(c.get("labels", {}).get("env"), c.get("annotations", {}).get("idpmake.io/cluster"))'; }

emu_reset
t_ok "first up registers" idpmake -C d up
t_eq "the registration is one upsert (after the ownership check's list)" "GET POST" "$(methods)"
t_eq "which set the labels and idpmake's mark" "prod east" "$(labels)"

write_distro staging TOK2
export TOK2=$TOK
emu_reset
t_ok "the credential's source and the labels changed: registered again" idpmake -C d up
t_eq "the upsert alone (after the ownership check's list)" "GET POST" "$(methods)"
t_eq "Argo CD compared the labels and took them" "staging east" "$(labels)"

write_distro dev TOK2
emu_reset
t_ok "only the labels changed" idpmake -C d up
t_eq "the PUT alone (after the ownership check's list)" "GET PUT" "$(methods)"
t_eq "with the new labels" "dev east" "$(labels)"
t_done
