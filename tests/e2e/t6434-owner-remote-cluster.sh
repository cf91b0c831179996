#!/bin/bash
# shellcheck disable=SC2317,SC2016 # functions run through t_ok and friends; ${cluster} is the distro's
# A registered cluster belongs to the distro's name with the remote it
# pushes to (issue 19 §1): its annotations carry idpmake.io/gitops-remote
# and idpmake.io/gitops-path; a distro of the same name pushing to another
# remote does not register over it (refused before the push, naming the
# owner's remote), and once it took the cluster over (--adopt), the first
# one's up --prune leaves it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

git init -q --bare -b main "$T/second.git" || t_bail "git init failed"
start_gitops_argocd --repo-map "$T/second.git=$T/second.git" --repo-map "file://$T/second.git=$T/second.git"
export K_TOKEN=k-token-value
# cluster EXPR: EXPR over the cluster k `c` as Argo CD has it ("gone" when it has none)
cluster() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters" | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["items"] if c["server"] == "https://k.example:6443"]
print(eval(sys.argv[1], {"c": c[0]}) if c else "gone")' "$1"
}

# distro DIR REMOTE CLUSTER-K
distro() {
	mkdistro "$1" <<EOF
idpmake: 1
name: fleet
git: {remote: "$2"}
argocd: {repo-url: "file://$2"}
clusters:
$3
packages:
  web: {type: manifests, path: packages/web}
EOF
	mkmanifest "$1/packages/web/cm.yaml" ConfigMap web default
}
k='  k: {server: "https://k.example:6443", register: {token-env: K_TOKEN}}'
distro one "$bare" "$k"
t_ok "the first fleet's up registers k" idpmake -C one up
t_eq "k's annotations name its remote and path" "file://$T/gitops \${cluster}/\${package}" \
	"$(cluster 'c["annotations"]["idpmake.io/gitops-remote"] + " " + c["annotations"]["idpmake.io/gitops-path"]')"

distro two "$T/second.git" "$k"
sed -i 's/argocd: {\(repo-url: [^}]*\)}/argocd: {\1, app-name: "two-${cluster}-${package}"}/' two/distro.yaml
emu_reset
t_exit 1 "a fleet of the same name at another remote is refused" idpmake -C two up
t_grep "naming the owner's remote" \
	"k:register: cluster 'k' \(https://k.example:6443\) in Argo CD belongs to distro 'fleet' pushing to file://$T/gitops at path" "$STDERR"
t_eq "k was not registered over" 0 "$(emu_posts '^/api/v1/clusters')"
t_eq "nothing was pushed" "" "$(git --git-dir="$T/second.git" for-each-ref)"

t_ok "up --adopt takes k over" idpmake -C two up --adopt
t_eq "k now names the second remote" "file://$T/second" "$(cluster 'c["annotations"]["idpmake.io/gitops-remote"]')"

distro one "$bare" ""
t_ok "the first fleet drops k: up --prune" idpmake -C one up --prune
t_grep "k is left alone" "cluster 'k' in Argo CD is registered by another distro now" "$OUTPUT"
t_eq "Argo CD still has k" "https://k.example:6443" "$(cluster 'c["server"]')"

t_done
