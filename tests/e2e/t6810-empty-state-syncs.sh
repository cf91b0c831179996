#!/bin/bash
# Any runner, any state folder (issue 8 §5), for the syncs idpmake does not
# send as a plain Application: an up with an empty state folder, against an
# up-to-date GitOps repository and Argo CD, proves each of these done in
# Argo CD and makes no request that changes anything (no sync, no upsert, no
# commit):
#   chart    a helm chart Argo CD renders (chart source, revision = version)
#   app      an argocd-app package's Application (cnoe:// rewritten)
#   multi    an argocd-app Application with two sources (a cnoe:// folder
#            and a chart): status.sync.revisions, by position
#   set      an argocd-app package's ApplicationSet and the Applications
#            its controller generated
#   fleet    sync.fleet: applicationset (this cluster's list element pinned
#            to the folder's commit, the generated Application Synced there)
# and, for each kind, an Argo CD that differs (OutOfSync, a hand-changed
# spec) makes it sync (or upsert) again, and only it.  A chart at a version
# range is never proven (a newer chart may match it): it syncs again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no emulator arguments
start_gitops_argocd
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1"; }
tip() { git --git-dir="$bare" rev-parse main; }

mkdistro d <<EOF
idpmake: 1
name: kinds
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  chart:
    type: helm
    chart: {repo: https://charts.example.com, name: podinfo, version: 6.5.0}
    set: {ui.message: hello}
    sync: {wait: synced}
  app: {type: argocd-app, path: stacks/app}
  multi: {type: argocd-app, path: stacks/multi}
  set: {type: argocd-app, path: stacks/set}
  fleet: {type: manifests, path: packages/fleet, sync: {fleet: applicationset}}
EOF
cd d || exit 1
mkdir -p stacks/app/manifests stacks/multi/manifests stacks/set/envs packages/fleet
cat >stacks/app/app.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: my-app, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: my-app}
  source: {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
  syncPolicy: {syncOptions: [CreateNamespace=true]}
EOF
cat >stacks/multi/app.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: two, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: two}
  sources:
    - {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
    - {repoURL: "https://charts.example.com", chart: redis, targetRevision: 18.1.0}
EOF
cat >stacks/set/set.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs, namespace: argocd}
spec:
  goTemplate: true
  generators:
    - list: {elements: [{name: staging}, {name: production}]}
  template:
    metadata: {name: '{{.name}}-env'}
    spec:
      project: default
      source: {repoURL: "cnoe://envs", targetRevision: HEAD, path: "."}
      destination: {server: "https://kubernetes.default.svc", namespace: '{{.name}}'}
      syncPolicy: {automated: {prune: true}}
EOF
mkmanifest stacks/app/manifests/cm.yaml ConfigMap app my-app
mkmanifest stacks/multi/manifests/cm.yaml ConfigMap multi two
mkmanifest stacks/set/envs/cm.yaml ConfigMap env
mkmanifest packages/fleet/cm.yaml ConfigMap fleet

t_ok "first up renders, pushes and syncs every kind" idpmake up
t_grep "first up: 5 synced" ' 5 synced' "$STDOUT"
# all_there: every Application, the ApplicationSets' too (Argo CD's controller generates them some time
# after up stored the set, the emulator's --appset-ms: waited on)
# shellcheck disable=SC2317 # run through t_wait_for
all_there() {
	api applications >"$T/apps.json" && python3 -c '
import json, sys
names = {a["metadata"]["name"] for a in json.load(open(sys.argv[1]))["items"]}
assert {"staging-env", "production-env", "in-cluster-fleet", "in-cluster-chart", "in-cluster-app-my-app",
        "in-cluster-multi-two"} <= names, names' "$T/apps.json"
}
t_ok "staging-env, production-env and the fleet's Application are there" t_wait_for 20 all_there
# the ApplicationSet's Applications sync themselves (automated): Argo CD's, not idpmake's
# shellcheck disable=SC2317 # run through t_wait_for
synced() { api "applications/$1" | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["status"]["sync"]["status"] != "Synced")'; }
t_ok "Argo CD syncs staging-env and production-env" t_wait_for 20 eval 'synced staging-env && synced production-env'

# up -v with an empty state folder: LABEL
empty_up() {
	rm -rf .idpmake
	emu_reset
	t_ok "$1: up with an empty state folder" idpmake up -v
}

# ---- an up-to-date Argo CD: nothing to do, for every kind --------------
before=$(tip)
empty_up "up to date"
t_grep "up to date: 0 rendered, nothing pushed, 0 synced" '^idpmake: 0 rendered, nothing pushed, 0 synced' "$STDOUT"
t_eq "up to date: no new commit" "$before" "$(tip)"
t_eq "up to date: no sync request" 0 "$(emu_posts '/sync$')"
t_eq "up to date: no Application or ApplicationSet upserted" 0 "$(emu_posts '^/api/v1/application(set)?s$')"
t_nogrep "up to date: -v names no sync as unproven" 'not proven done in Argo CD' "$STDERR"
t_nogrep "up to date: nothing is synced" ':sync' "$STDOUT"
emu_reset
t_ok "the next up" idpmake up
t_grep "the next up is a no-op" '^idpmake: 0 rendered, nothing pushed, 0 synced' "$STDOUT"
t_eq "the next up: no request that changes anything" 0 "$(emu_posts .)"

# ---- per kind, an Argo CD that differs: that kind, only, syncs ---------
# KIND FAULT-APP RE: an out_of_sync fault on FAULT-APP (after emu_reset, which clears faults);
# the POSTs of the up all match RE
for k in "chart in-cluster-chart (^/api/v1/applications|/in-cluster-chart/sync)$" \
	"app-my-app in-cluster-app-my-app (^/api/v1/applications|/in-cluster-app-my-app/sync)$" \
	"multi-two in-cluster-multi-two (^/api/v1/applications|/in-cluster-multi-two/sync)$" \
	"set-envs staging-env ^/api/v1/applicationsets$" \
	"fleet in-cluster-fleet (^/api/v1/applicationsets|/in-cluster-fleet/sync)$"; do
	# shellcheck disable=SC2086 # three words
	set -- $k
	rm -rf .idpmake
	emu_reset
	emu_post fault "{\"app\": \"$2\", \"out_of_sync\": true}"
	t_ok "$1 OutOfSync: up" idpmake up -v
	t_grep "$1 OutOfSync: one package synced, nothing pushed" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
	t_grep "$1 OutOfSync: the summary names it" "in-cluster/$1:sync" "$STDOUT"
	t_grep "$1 OutOfSync: -v names it" "^idpmake: in-cluster/$1:sync: not proven done in Argo CD" "$STDERR"
	t_eq "$1 OutOfSync: no new commit" "$before" "$(tip)"
	n=$(emu_posts "$3")
	t_ok "$1 OutOfSync: it made requests" test "$n" -ge 1
	t_eq "$1 OutOfSync: its requests only" "$(emu_posts .)" "$n"
	emu_post fault "{\"app\": \"$2\", \"out_of_sync\": false}"
done

# ---- a hand-changed spec: the fields idpmake sends are compared --------
api applications/in-cluster-app-my-app >"$T/app.json" || t_bail "cannot read in-cluster-app-my-app"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
a["spec"]["syncPolicy"]["syncOptions"] = ["CreateNamespace=false"]
print(json.dumps({"metadata": a["metadata"], "spec": a["spec"]}))' "$T/app.json" >"$T/changed.json"
curl -sS -f -X POST -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" -H 'Content-Type: application/json' \
	-d @"$T/changed.json" "http://$ARGOCD_SERVER/api/v1/applications?upsert=true" >/dev/null ||
	t_bail "cannot change in-cluster-app-my-app by hand"
empty_up "a hand-changed Application"
t_grep "a hand-changed Application: it syncs" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_eq "a hand-changed Application: its upsert restored the spec" 1 "$(emu_posts '^/api/v1/applications$')"

api applicationsets/in-cluster-set-envs >"$T/set.json" || t_bail "cannot read the ApplicationSet"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
a["spec"]["generators"][0]["list"]["elements"].append({"name": "qa"})
print(json.dumps({"metadata": {k: a["metadata"][k] for k in ("name", "namespace", "labels") if k in a["metadata"]},
                  "spec": a["spec"]}))' "$T/set.json" >"$T/changed.json"
curl -sS -f -X POST -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" -H 'Content-Type: application/json' \
	-d @"$T/changed.json" "http://$ARGOCD_SERVER/api/v1/applicationsets?upsert=true" >/dev/null ||
	t_bail "cannot change the ApplicationSet by hand"
empty_up "a hand-changed ApplicationSet"
t_grep "a hand-changed ApplicationSet: it is upserted again" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_eq "a hand-changed ApplicationSet: one upsert, nothing else" "1 1" \
	"$(emu_posts '^/api/v1/applicationsets$') $(emu_posts .)"

# ---- a chart at a version range is never proven ------------------------
sed -i 's/version: 6.5.0/version: "^6.5.0"/' distro.yaml
t_ok "the chart at a range" idpmake up
empty_up "a chart at a range"
t_grep "a chart at a range: it syncs again" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_eq "a chart at a range: its sync only" "1 1" "$(emu_posts 'in-cluster-chart/sync$') $(emu_posts '/sync$')"

t_done
