#!/bin/bash
# idpmake against the stricter emulator: an operation that starts late
# (`operation` before `operationState`), a re-comparison that lags the end of
# the operation, finishedAt in the second of the comparison before it, and the
# live objects read back through managed-resources from idpmake's own output.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 0 --health-ms 100 --reconcile-ms 1500 \
	--start-ms 300 --same-second
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu
api() {
	curl -s -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"
}

mkdistro d <<EOF
idpmake: 1
name: strict
git: {remote: "$url"}
argocd: {}
packages:
  a: {type: manifests, path: packages/a}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a a
mkmanifest d/packages/a/deploy.yaml Deployment web a
cd d || exit 1

t_ok "up against a late-starting, late-comparing Argo CD" idpmake up
t_grep "the Application is synced" ' 1 synced' "$OUTPUT"
head=$(git -C "$bare" rev-parse main)
t_eq "Argo CD reports it Synced at the pushed commit" "Synced $head" \
	"$(api applications/in-cluster-a | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a["status"]["sync"]["status"], a["status"]["sync"]["revision"])')"
t_eq "the live objects are idpmake's rendered files" "ConfigMap:a Deployment:web" \
	"$(api applications/in-cluster-a/managed-resources | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
assert all(i["liveState"] != "null" and not i.get("modified") for i in items), items
print(" ".join(sorted("%s:%s" % (i["kind"], i["name"]) for i in items)))')"
t_eq "the ConfigMap's data as rendered" '{"name": "a"}' \
	"$(api 'applications/in-cluster-a/managed-resources?kind=ConfigMap' | python3 -c 'import json,sys; print(json.dumps(json.loads(json.load(sys.stdin)["items"][0]["liveState"])["data"]))')"

# a changed package: the sync is requested while the last comparison is stale
mkmanifest packages/a/cm2.yaml ConfigMap b a
t_ok "up with a second object" idpmake up
t_grep "synced again" ' 1 synced' "$OUTPUT"
t_eq "both ConfigMaps live" "a b" \
	"$(api 'applications/in-cluster-a/managed-resources?kind=ConfigMap' | python3 -c 'import json,sys; print(" ".join(sorted(i["name"] for i in json.load(sys.stdin)["items"] if i["liveState"] != "null")))')"
t_done
