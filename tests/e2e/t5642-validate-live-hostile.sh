#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# validate --live against a hostile (or just huge) Argo CD cluster info: an
# info.apiVersions of 300,000 entries.  Each object of an unknown kind looks
# for a near miss among them; that search allocated per entry (three arena
# strings), so memory grew with objects x entries (40 objects: 340 MB more
# than one).  Now one object or forty cost the same.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || t_skip_rest "no /usr/bin/time (the test measures the peak memory)"
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare"
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
python3 -c '
import json
v = ["v1", "apps/v1", "apps/v1/Deployment", "v1/ConfigMap"] + ["g%d.x/v1/Kind%d" % (i, i) for i in range(300000)]
v += ["x/" * 20000 + "Y", "", "/", "a/"]
print(json.dumps({"server": "https://kubernetes.default.svc", "api_versions": v}))' >"$T/big.json" ||
	t_bail "cannot write the cluster info"
t_ok "the emulator takes the huge apiVersions list" curl -sS -f -X POST --data-binary @"$T/big.json" "$emu/cluster"

# peak DIR: validate --live in DIR; its peak resident size in kB on stdout
peak() {
	/usr/bin/time -o "$T/time.txt" -f %M "$IDPMAKE" -C "$1" validate --live
	local rc=$?
	cat "$T/time.txt" >&3
	return "$rc"
}
for n in 1 40; do
	mkdistro d$n <<EOF
idpmake: 1
name: big
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
	for i in $(seq "$n"); do mkmanifest "d$n/packages/web/w$i.yaml" Widgett "w$i"; done
	mkmanifest d$n/packages/web/cm.yaml ConfigMap cfg
done
t_exit 1 "one unknown kind: exit 1" peak d1 3>"$T/peak1"
t_grep "it is named" "v1 Widgett 'w1'" "$STDERR"
t_exit 1 "forty unknown kinds: exit 1" peak d40 3>"$T/peak40"
t_grep "all forty are counted" '40 of 41 objects of a kind its cluster does not serve' "$STDERR"
one=$(tail -n 1 "$T/peak1") forty=$(tail -n 1 "$T/peak40")
t_ok "forty unknown kinds cost less than 60 MB more than one ($one kB, $forty kB)" test $((forty - one)) -lt 60000

t_done
