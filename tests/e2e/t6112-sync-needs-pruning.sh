#!/bin/bash
# A sync that Argo CD reports as needing pruning while the package's prune is
# off (issue 19 §6): the operation succeeds, with "PruneSkipped: ignored
# (requires pruning)" for what the render dropped, and the application stays
# OutOfSync with those resources marked requiresPruning.  The step fails at
# once, naming the resources and the ways out (prune: true, or delete them),
# instead of waiting out sync.timeout; with prune: true the next up prunes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url0=$(new_remote gitops) || t_bail "new_remote failed"
url=$(authurl "$url0")
bare=$T/git-srv/repos/gitops.git
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url0=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

write_distro() {
	# write_distro PRUNE
	cat >"$T/d/distro.yaml" <<EOF
idpmake: 1
name: prunes
git: {remote: "$url"}
argocd: {}
packages:
  base: {type: manifests, path: packages/base, namespace: base, sync: {timeout: 60, prune: $1}}
EOF
}
mkdir -p d
write_distro false
mkmanifest d/packages/base/keep.yaml ConfigMap keep base
mkmanifest d/packages/base/gone.yaml ConfigMap gone base
mkmanifest d/packages/base/old.yaml ConfigMap old base
cd d || exit 1
t_ok "first up syncs three ConfigMaps" idpmake up

# ---- the render drops two of them; prune is off --------------------------------
rm packages/base/gone.yaml packages/base/old.yaml
t_exit 1 "a sync that leaves resources needing pruning fails" idpmake up
t_grep "at once, saying so" "in-cluster/base:sync: application 'in-cluster-base' needs pruning: 2 resources the render no longer has are still live" "$OUTPUT"
t_grep "naming them" "\(ConfigMap/base/gone, ConfigMap/base/old\)" "$OUTPUT"
t_grep "and the ways out" "set sync: \{prune: true\} on package base to let Argo CD delete them, or delete them yourself" "$OUTPUT"
t_nogrep "it did not wait out sync.timeout" "timed out" "$OUTPUT"
t_grep "the step's log shows Argo CD's OutOfSync after the operation" "operation Succeeded, sync OutOfSync" .idpmake/logs/in-cluster_base_sync.log

# ---- prune: true: the next up prunes them ---------------------------------------
write_distro true
t_ok "with prune: true, up syncs" idpmake up
t_grep "one sync" " 1 synced" "$OUTPUT"
t_eq "Argo CD no longer lists them" "ConfigMap/keep" \
	"$(curl -sS -f -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/in-cluster-base" |
		python3 -c 'import json, sys; print(" ".join("%s/%s" % (r["kind"], r["name"]) for r in json.load(sys.stdin)["status"]["resources"]))')"

t_done
