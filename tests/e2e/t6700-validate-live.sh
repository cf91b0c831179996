#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# validate --live (issue 8 §7): every rendered object's apiVersion and kind
# against the destination cluster's info.apiVersions as Argo CD reports them
# (group/versions and group/version/Kinds), or a CRD rendered by the package
# itself or one before it in needs order.  A mistyped kind (did you mean), a
# custom kind with no CRD anywhere, a CRD from an earlier package (fine), a
# CRD from a package that does not come before (named, with the needs to
# add), a cluster whose list lacks a group, an older Argo CD that lists no
# kinds, a cluster Argo CD does not know, no Argo CD at all.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --cluster edge=https://edge.example.com
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
# Argo CD watches a cluster (lists its API) once an Application deploys to it
# (t6246 covers one it does not watch): both clusters are watched here
emu_post cluster '{"name": "in-cluster", "watched": true}' && emu_post cluster '{"name": "edge", "watched": true}' ||
	t_bail "cannot set the clusters watched"
# GET requests for clusters the emulator has answered
cluster_gets() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "GET" and e["path"].startswith("/api/v1/clusters/")))'
}

crd() {	# crd FILE: widgets.example.com, v1 and v1beta1, kind Widget
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
EOF
}
widget() {	# widget FILE NAME [APIVERSION]
	mkdir -p "$(dirname "$1")"
	printf 'apiVersion: %s\nkind: Widget\nmetadata: {name: %s}\nspec: {size: 3}\n' "${3:-example.com/v1}" "$2" >"$1"
}
# distro DIR NEEDS_OF_APP NEEDS_OF_CRDS: packages crds (the CRD) and app (a Widget)
distro() {
	mkdistro "$1" <<EOF
idpmake: 1
name: vlive
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  crds: {type: manifests, path: packages/crds, needs: $3}
  app: {type: manifests, path: packages/app, needs: $2}
EOF
	crd "$1/packages/crds/crd.yaml"
	widget "$1/packages/app/w.yaml" big
}

# ---- t6700: a mistyped kind ---------------------------------------------------
mkdistro typo <<EOF
idpmake: 1
name: typo
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest typo/packages/web/cm.yaml ConfigMap cfg
mkmanifest typo/packages/web/dep.yaml Deployment web
sed -i 's/^kind: Deployment$/kind: Deploymnet/' typo/packages/web/dep.yaml
t_ok "plain validate does not ask the cluster: the typo passes" idpmake -C typo validate
t_eq "plain validate asked Argo CD nothing" 0 "$(cluster_gets)"
t_exit 1 "validate --live: a mistyped kind exits 1" idpmake -C typo validate --live
t_grep "the object, package and cluster are named" \
	"error: package 'web' on cluster 'in-cluster': apps/v1 Deploymnet 'web' \(in-cluster/web/[^)]*\): cluster 'in-cluster' serves apps/v1 but no kind Deploymnet in it" "$STDERR"
t_grep "did you mean the near miss" "did you mean apps/v1 Deployment\?$" "$STDERR"
t_grep "the summary counts it" "1 of 2 objects of a kind its cluster does not serve" "$STDERR"
t_nogrep "the ConfigMap is not named" "ConfigMap" "$STDERR"
t_nogrep "no success line" "is valid" "$STDOUT"
t_eq "the cluster was read from Argo CD once" 1 "$(cluster_gets)"
sed -i 's/^kind: Deploymnet$/kind: Deployment/' typo/packages/web/dep.yaml
sed -i 's|^apiVersion: apps/v1$|apiVersion: apps/v1beta2|' typo/packages/web/dep.yaml
t_exit 1 "an old group/version of a served kind" idpmake -C typo validate --live
t_grep "the cluster does not serve it" "cluster 'in-cluster' does not serve apps/v1beta2 \(Argo CD lists no such API version\)" "$STDERR"
t_grep "the served version is suggested" "did you mean apps/v1 Deployment\?$" "$STDERR"
sed -i 's|^apiVersion: apps/v1beta2$|apiVersion: apps/v1|' typo/packages/web/dep.yaml
t_ok "fixed: validate --live passes" idpmake -C typo validate --live
t_grep "the usual summary" "distro 'typo' is valid" "$STDOUT"
t_grep "what was checked" "2 objects checked against 1 cluster" "$STDERR"

# ---- t6701: a custom kind with no CRD anywhere --------------------------------
mkdistro nocrd <<EOF
idpmake: 1
name: nocrd
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  app: {type: manifests, path: packages/app}
EOF
widget nocrd/packages/app/w.yaml big
t_exit 1 "a Widget with no CRD: exit 1" idpmake -C nocrd validate --live
t_grep "named: the group is not served and no CRD renders it" \
	"package 'app' on cluster 'in-cluster': example.com/v1 Widget 'big' .*does not serve example.com/v1 .*no package before 'app' in needs order renders a CustomResourceDefinition for it$" "$STDERR"
t_nogrep "no CRD package is blamed" "is rendered by package" "$STDERR"

# ---- t6702: the CRD from an earlier package in needs, or from the package itself
distro early "[crds]" "[]"
t_ok "the CRD comes from a package app needs: valid" idpmake -C early validate --live
t_grep "all objects checked" "2 objects checked against 1 cluster" "$STDERR"
widget early/packages/app/old.yaml small example.com/v1beta1
t_ok "every version the CRD serves counts" idpmake -C early validate --live
widget early/packages/app/v2.yaml next example.com/v2
t_exit 1 "a version the CRD does not serve does not" idpmake -C early validate --live
t_grep "example.com/v2 is named" "example.com/v2 Widget 'next'.*did you mean example.com/v1 Widget\?$" "$STDERR"
rm early/packages/app/v2.yaml
distro same "[]" "[]"
crd same/packages/app/crd.yaml
t_ok "the CRD in the same package: valid (Argo CD applies CRDs first)" idpmake -C same validate --live
distro chain "[mid]" "[]"
cat >>chain/distro.yaml <<'EOF'
  mid: {type: manifests, path: packages/mid, needs: [crds]}
EOF
mkmanifest chain/packages/mid/cm.yaml ConfigMap mid
t_ok "needs order is transitive: app needs mid needs crds" idpmake -C chain validate --live

# ---- t6703: the CRD from a package that does not come before ----------------
distro late "[]" "[]"
t_exit 1 "the CRD's package is not in app's needs: exit 1" idpmake -C late validate --live
t_grep "the CRD, its package and the fix are named" \
	"package 'app' on cluster 'in-cluster': example.com/v1 Widget 'big' \(in-cluster/app/[^)]*\): its CustomResourceDefinition 'widgets.example.com' is rendered by package 'crds', which does not come before 'app' in needs order; add needs: \[crds\]$" "$STDERR"
distro reversed "[]" "[app]"
t_exit 1 "crds needs app: the CRD comes after" idpmake -C reversed validate --live
t_grep "named as too late" "is rendered by package 'crds', which does not come before 'app' in needs order" "$STDERR"
t_exit 1 "a target selects app only: the CRD package is still rendered and named" idpmake -C late validate --live app
t_grep "named with a target too" "add needs: \[crds\]$" "$STDERR"

# ---- t6704: a cluster whose API versions lack a group ---------------------------
mkdistro edge <<EOF
idpmake: 1
name: edge
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  in-cluster: {}
  edge: {server: "https://edge.example.com"}
packages:
  jobs: {type: manifests, path: packages/jobs}
EOF
mkmanifest edge/packages/jobs/job.yaml Job migrate
mkmanifest edge/packages/jobs/cm.yaml ConfigMap cfg
emu_post cluster '{"name": "edge", "api_versions": ["v1", "v1/ConfigMap", "v1/Secret", "apps/v1", "apps/v1/Deployment"]}'
t_exit 1 "a Job for a cluster without batch/v1: exit 1" idpmake -C edge validate --live
t_grep "the edge cluster is named" \
	"package 'jobs' on cluster 'edge': batch/v1 Job 'migrate' .*cluster 'edge' does not serve batch/v1 \(Argo CD lists no such API version\)" "$STDERR"
t_nogrep "in-cluster serves batch/v1: not named" "on cluster 'in-cluster'" "$STDERR"
t_grep "one of four objects" "1 of 4 objects" "$STDERR"
t_ok "selecting in-cluster only: valid" idpmake -C edge validate --live in-cluster/
# an older Argo CD lists group/versions only: a served group/version is all it can check
emu_post cluster '{"name": "edge", "api_versions": ["v1", "apps/v1", "batch/v1"]}'
t_ok "group/versions only: the Job's batch/v1 is served" idpmake -C edge validate --live
emu_post cluster '{"name": "edge", "api_versions": ["v1", "apps/v1"]}'
t_exit 1 "group/versions only: a missing group is still found" idpmake -C edge validate --live
t_grep "named from the group/version list" "cluster 'edge' does not serve batch/v1" "$STDERR"
emu_post cluster '{"name": "edge", "api_versions": []}'
t_ok "no API versions reported (cache not synced): warned, not checked" idpmake -C edge validate --live
t_grep "the warning names the cluster" "warning: could not check the kinds of cluster 'edge': Argo CD reports no API versions for it \\(connection Successful\\); its cache is not synced yet" "$STDERR"

# ---- t6705: clusters Argo CD does not know, no Argo CD ------------------------
mkdistro ghost <<EOF
idpmake: 1
name: ghost
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  ghost: {server: "https://ghost.example.com"}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest ghost/packages/web/cm.yaml ConfigMap cfg
t_exit 1 "a cluster Argo CD does not know: exit 1" idpmake -C ghost validate --live
t_grep "named" "cluster 'ghost' \(server https://ghost.example.com\) is not known to Argo CD" "$STDERR"
sed '/^argocd:/d' nocrd/distro.yaml >nocrd/noargo.yaml
no_argo() { (unset ARGOCD_SERVER ARGOCD_OPTS && idpmake "$@"); }
t_exit 2 "no Argo CD: exit 2" no_argo -C nocrd -f noargo.yaml validate --live
t_grep "says what to set" "set argocd.server or ARGOCD_SERVER" "$STDERR"
kill "$EMU_PID" && wait "$EMU_PID" 2>/dev/null
t_exit 2 "Argo CD down: exit 2" idpmake -C typo validate --live
t_grep "the cluster and the cause are named" "error: cluster 'in-cluster': " "$STDERR"

t_done
