#!/bin/bash
# up --prune in ApplicationSet mode (fleet.md "ApplicationSets", issue 33
# #6): Argo CD's ApplicationSet controller owns the Applications it
# generates and makes one deleted while its element is still in the list
# generator again (applicationset_controller.go: Owns(Application)), and,
# automated, it deploys again. So a prune takes the element out of the
# generator, the controller deletes the Application, and it stays gone: a
# cluster leaving a package (its element goes, the set stays with the
# others), then the package leaving the distro (the set goes). Each time,
# after several controller delays (--appset-ms 150), the Application is
# still gone, and the Applications that stay were not made nor synced again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --appset-ms 150 \
	--delete-ms 100 --cluster a=https://a:6443 --cluster b=https://b:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api() { curl -sS -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
code() { curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
	"http://$ARGOCD_SERVER/api/v1/$1"; }
distro() {
	mkdistro "$T/d" <<EOF2
idpmake: 1
name: sets
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", fleet: applicationset}
profiles: {core: [base], all: [base, extra]}
clusters:
  a: {server: "https://a:6443", profiles: [$1]}
  b: {server: "https://b:6443", profiles: [$2]}
packages:
  base: {type: manifests, path: packages/base}
$3
EOF2
}
extra='  extra: {type: manifests, path: packages/extra}'
distro all all "$extra"
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/extra/cm.yaml ConfigMap extra
cd d || exit 1
# "uid startedAt" of an Application: made again, or synced again, changes it
ident() { api "applications/$1?project=default" | python3 -c 'import json, sys
a = json.load(sys.stdin)
print(a["metadata"]["uid"], a["status"]["operationState"]["startedAt"])'; }
elements() { api "applicationsets/$1" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join(sorted(e["cluster"] for e in s["spec"]["generators"][0]["list"]["elements"])))'; }
# absent NAME: the Application is gone, and still gone over 2 s (about 13 controller delays)
# shellcheck disable=SC2317 # called through t_ok
absent() {
	local i
	for i in $(seq 20); do
		[ "$(code "applications/$1?project=default")" = 404 ] || { echo "$1 exists (check $i)"; return 1; }
		sleep 0.1
	done
}

t_ok "up through ApplicationSets" idpmake up
t_eq "the set extra has both clusters' elements" "a b" "$(elements extra)"
id_a_base=$(ident a-base)
id_b_base=$(ident b-base)
id_a_extra=$(ident a-extra)
t_ok "the three Applications were synced (uid and startedAt read)" test -n "$id_a_base" -a -n "$id_b_base" -a -n "$id_a_extra"

# a cluster leaves the package: its element goes, the set and the other element stay
distro all core "$extra"
t_ok "up --prune: b leaves extra" idpmake up --prune
t_grep "says the element went" "deleted Application 'b-extra' of removed package b/extra \\(its element removed from ApplicationSet 'extra'\\)" "$OUTPUT"
t_eq "the set extra keeps a's element only" "a" "$(elements extra)"
t_ok "b-extra is gone and the controller does not make it again" absent b-extra
# (a-extra is synced again: the push moved the commit its element pins, and the sync step follows it)
t_eq "a-extra was not made again" "${id_a_extra% *}" "$(ident a-extra | cut -d' ' -f1)"
t_eq "a-base was not made nor synced again" "$id_a_base" "$(ident a-base)"
t_eq "b-base was not made nor synced again" "$id_b_base" "$(ident b-base)"
t_ok "plan: nothing left to prune" idpmake plan
t_nogrep "plan deletes nothing more" "^delete |Application.*to delete" "$OUTPUT"

# the package leaves the distro: its set goes, and with it its last Application
distro all core ""
sed -i 's/all: \[base, extra\]/all: [base]/' distro.yaml
t_nogrep "extra is in the distro no more" extra distro.yaml
t_ok "up --prune: extra leaves the distro" idpmake up --prune
t_eq "the ApplicationSet extra is deleted" 404 "$(code applicationsets/extra)"
t_ok "a-extra is gone and not made again" absent a-extra
t_ok "b-extra is still gone" absent b-extra
t_eq "a-base was not made nor synced again" "$id_a_base" "$(ident a-base)"
t_eq "b-base was not made nor synced again" "$id_b_base" "$(ident b-base)"
t_eq "the set base keeps both elements" "a b" "$(elements base)"
t_done
