#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Ownership beyond Applications (issue 19 §1): a second distro with a
# package `web` under argocd.fleet: applicationset is refused before the
# push instead of rewriting the first distro's ApplicationSet `web`; a
# cluster another distro registered (annotation idpmake.io/distro) is not
# registered over; --adopt takes them; up --prune of the first distro then
# leaves the cluster the second one registered.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

git init -q --bare -b main "$T/second.git" || t_bail "git init failed"
start_gitops_argocd --cluster a=https://a:6443 --repo-map "$T/second.git=$T/second.git" --repo-map "file://$T/second.git=$T/second.git"
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
export K_TOKEN=k-token-value

# distro NAME DIR REMOTE EXTRA-ARGOCD CLUSTERS
distro() {
	mkdistro "$2" <<EOF
idpmake: 1
name: $1
git: {remote: "$3"}
argocd: {repo-url: "file://$3", fleet: applicationset$4}
clusters:
  a: {server: "https://a:6443"}
$5
packages:
  web: {type: manifests, path: packages/web}
EOF
	mkmanifest "$2/packages/web/cm.yaml" ConfigMap web default
}
distro first one "$bare" "" "  k: {server: \"https://k.example:6443\", register: {token-env: K_TOKEN}}"
t_ok "the first distro's up" idpmake -C one up
t_eq "its ApplicationSet web carries its label" first \
	"$(api applicationsets/web | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["labels"]["idpmake.io/distro"])')"
t_eq "its cluster k carries its annotation" first \
	"$(api clusters | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["items"] if c["server"] == "https://k.example:6443"][0]["annotations"]["idpmake.io/distro"])')"

# the second distro: Application names of its own, the same package and cluster k
distro second two "$T/second.git" ', app-name: "two-${cluster}-${package}"' \
	"  k: {server: \"https://k.example:6443\", register: {token-env: K_TOKEN}}"
emu_reset
t_exit 1 "the second distro's up is refused" idpmake -C two up
t_grep "the ApplicationSet is named with its owner" \
	"a/web:sync: ApplicationSet 'web' in Argo CD belongs to distro 'first', not to distro 'second'" "$STDERR"
t_grep "the cluster too" "k:register: cluster 'k' \(https://k.example:6443\) in Argo CD belongs to distro 'first'" "$STDERR"
t_grep "with the way out for a cluster" "drop register: here.*idpmake up --adopt" "$STDERR"
t_eq "nothing was pushed" "" "$(git --git-dir="$T/second.git" for-each-ref)"
t_eq "the ApplicationSet was not rewritten" 0 "$(count POST '^/api/v1/applicationsets')"
t_eq "the cluster was not registered over" 0 "$(count POST '^/api/v1/clusters')"
t_eq "one list per kind" "1 1" "$(count GET '^/api/v1/applicationsets$') $(count GET '^/api/v1/clusters$')"

t_ok "up --adopt" idpmake -C two up --adopt
t_grep "says what it adopts" "adopting ApplicationSet 'web', which belongs to distro 'first'" "$OUTPUT"
t_eq "the ApplicationSet is the second distro's now" second \
	"$(api applicationsets/web | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["labels"]["idpmake.io/distro"])')"
t_grep "says what it adopts" "adopting cluster 'k' \(https://k.example:6443\), which belongs to distro 'first'" "$OUTPUT"
t_eq "the cluster is the second distro's now" second \
	"$(api clusters | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["items"] if c["server"] == "https://k.example:6443"][0]["annotations"]["idpmake.io/distro"])')"
t_grep "and sums it up by kind at the end (issue 35 #14)" \
	'^idpmake: adopted \(--adopt\): 1 ApplicationSet \(web\), 1 cluster registration \(k\)$' "$STDOUT"

# the first distro drops k: --prune leaves what the second registered
distro first one "$bare" "" ""
t_ok "the first distro's up --prune after k left it" idpmake -C one up --prune --adopt
t_grep "k is left alone" "cluster 'k' in Argo CD is registered by another distro now" "$OUTPUT"
t_ok "Argo CD still has k" sh -c "curl -sS -f -H 'Authorization: Bearer $ARGOCD_AUTH_TOKEN' http://$ARGOCD_SERVER/api/v1/clusters | grep -q k.example"

t_done
