#!/bin/bash
# argocd.fleet: applicationset with argocd.namespace other than Argo CD's own
# (apps in any namespace): the ApplicationSet lives in argocd.namespace, and
# every read of it names that namespace (appsetNamespace). Without it Argo CD
# looks in its own namespace, finds nothing, and the write-back keeps only
# the writing cluster's element: the other clusters' Applications are deleted
# while up says it synced. A namespace Argo CD does not serve is an error.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --appset-ms 200 \
	--app-namespace gitops --cluster a=https://a:6443 --cluster b=https://b:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
mkdistro d <<EOF
idpmake: 1
name: nsets
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", namespace: gitops, fleet: applicationset}
clusters:
  a: {server: "https://a:6443"}
  b: {server: "https://b:6443"}
packages:
  base: {type: manifests, path: packages/base, sync: {timeout: 60}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1
# the clusters of the ApplicationSet's elements, and the generated Applications that exist
elements() { api "applicationsets/base?appsetNamespace=gitops" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join(sorted(e["cluster"] for e in s["spec"]["generators"][0]["list"]["elements"])))'; }
apps() {
	local out='' c
	for c in a b; do
		api "applications/$c-base?appNamespace=gitops" >/dev/null 2>&1 && out="$out $c-base"
	done
	echo "${out# }"
}
synced_rev() { api "applications/$1?appNamespace=gitops" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["sync"]["revision"][:12])'; }

t_ok "up through an ApplicationSet in namespace gitops" idpmake up
t_eq "an element per cluster" "a b" "$(elements)"
t_eq "both generated Applications exist" "a-base b-base" "$(apps)"

emu_reset
echo '  v: "2"' >>packages/base/cm.yaml
t_ok "a change" idpmake up
c2=$(git --git-dir="$bare" rev-parse main | cut -c1-12)
t_eq "still an element per cluster" "a b" "$(elements)"
t_eq "still both Applications" "a-base b-base" "$(apps)"
t_eq "a-base synced at the new commit" "$c2" "$(synced_rev a-base)"
t_eq "b-base synced at the new commit" "$c2" "$(synced_rev b-base)"
n=$(emu_posts '^/api/v1/applicationsets$')
[ "$n" -gt 0 ]
t_report $? "the ApplicationSet was written ($n POSTs)"
# the reads of the set: how many, and those that do not name its namespace
curl -sS -f "$emu/requests" | python3 -c 'import json, sys
from urllib.parse import parse_qs
gets = [r for r in json.load(sys.stdin) if r["method"] == "GET" and r["path"].startswith("/api/v1/applicationsets/")]
print(len(gets), " ".join(r["path"] + "?" + r["query"] for r in gets
                          if parse_qs(r["query"]).get("appsetNamespace") != ["gitops"]))' >"$T/gets"
read -r ngets bad <"$T/gets"
[ "$ngets" -gt 0 ]
t_report $? "the set was read ($ngets GETs)"
t_eq "every read of the set names its namespace" "" "$bad"

# a namespace Argo CD does not serve: refused, nothing deleted
sed -i 's/namespace: gitops/namespace: elsewhere/' distro.yaml
echo '  v2: "3"' >>packages/base/cm.yaml
t_exit 1 "a namespace Argo CD does not serve fails up" idpmake up
t_grep "the error names the namespace" "elsewhere" "$OUTPUT"
t_eq "the Applications in gitops are untouched" "a-base b-base" "$(apps)"
t_done
