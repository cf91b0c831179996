#!/bin/bash
# argocd.fleet: applicationset (fleet.md "ApplicationSets"): one
# ApplicationSet per package, whose list generator has an element per
# cluster (name, server, folder, revision); waves hold by moving the
# elements wave by wave: a halted rollout leaves the later waves' elements,
# and so their generated Applications, at the old commit; the next up moves
# them. Argo CD's ApplicationSet controller generates the Applications
# some time after the set is stored (--appset-ms 300): a step waits for its
# Application to carry the element before it syncs. Prints the Argo CD
# requests a one-package change costs per cluster in this mode and with
# Applications.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --appset-ms 300 \
	--cluster a=https://a:6443 --cluster b=https://b:6443 --cluster c=https://c:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
mkdistro d <<EOF
idpmake: 1
name: sets
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", fleet: applicationset}
clusters:
  a: {server: "https://a:6443"}
  b: {server: "https://b:6443"}
  c: {server: "https://c:6443"}
rollout:
  waves:
    - {name: first, clusters: [a]}
    - {name: second, clusters: [b]}
    - {name: third, clusters: [c]}
packages:
  base: {type: manifests, path: packages/base}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1
# elements: "cluster=revision ..." of the ApplicationSet base
elements() { api applicationsets/base | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join(sorted("%s=%s" % (e["cluster"], e["revision"][:12]) for e in s["spec"]["generators"][0]["list"]["elements"])))'; }
synced_rev() { api "applications/$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"]["sync"]["revision"][:12])'; }

t_ok "up through an ApplicationSet" idpmake up
c1=$(git --git-dir="$bare" rev-parse main | cut -c1-12)
t_eq "one element per cluster, at the commit" "a=$c1 b=$c1 c=$c1" "$(elements)"
t_ok "the ApplicationSet is the package's" sh -c "api() { curl -sS -f -H 'Authorization: Bearer $ARGOCD_AUTH_TOKEN' http://$ARGOCD_SERVER/api/v1/\$1; }; api applicationsets/base | grep -q '\"goTemplate\": *true'"
for c in a b c; do
	t_eq "the generated Application $c-base is synced at the commit" "$c1" "$(synced_rev "$c-base")"
done
t_ok "the generated Applications are the ApplicationSet's" sh -c "curl -sS -f -H 'Authorization: Bearer $ARGOCD_AUTH_TOKEN' http://$ARGOCD_SERVER/api/v1/applications/c-base | grep -q '\"kind\": *\"ApplicationSet\"'"

emu_reset
echo '  v: "2"' >>packages/base/cm.yaml
emu_post fault '{"app": "b-base", "health": "Degraded", "message": "crashing"}'
t_exit 1 "a Degraded cluster halts the rollout" idpmake up
t_grep "the halt names the wave" "wave 'second' halted: 1 of 1 cluster failed" "$OUTPUT"
c2=$(git --git-dir="$bare" rev-parse main | cut -c1-12)
t_eq "the first wave's element moved, the third's did not" "a=$c2 b=$c2 c=$c1" "$(elements)"
t_eq "c-base is still synced at the old commit" "$c1" "$(synced_rev c-base)"

emu_post fault '{"app": "b-base", "clear": true}'
emu_reset
t_ok "the next up resumes" idpmake up
t_eq "every element at the new commit" "a=$c2 b=$c2 c=$c2" "$(elements)"
t_eq "c-base synced at the new commit" "$c2" "$(synced_rev c-base)"

# what a one-package change costs: requests per cluster, ApplicationSet mode and Applications mode
count() { curl -sS -f "http://$ARGOCD_SERVER/_emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
emu_reset
echo '  v2: "3"' >>packages/base/cm.yaml
t_ok "a one-package change (ApplicationSet)" idpmake up
n_set=$(count)
sed -i 's/, fleet: applicationset//' distro.yaml
emu_post reset '{"apps": true}'
t_ok "to Applications" idpmake up
emu_reset
echo '  v3: "4"' >>packages/base/cm.yaml
t_ok "a one-package change (Applications)" idpmake up
n_app=$(count)
echo "# requests for a one-package change on 3 clusters: ApplicationSet $n_set, Applications $n_app"
[ "$n_set" -gt 0 ] && [ "$n_app" -gt 0 ]
t_report $? "both modes made requests ($n_set, $n_app)"
t_done
