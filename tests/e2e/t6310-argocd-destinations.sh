#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Destinations (distro.md "clusters", "argocd"): a cluster given by `name`
# (a cluster registered in Argo CD) becomes destination.name, never
# destination.server; a cluster given by `server` becomes destination.server;
# `argocd.project` other than default is the Application's spec.project (and
# the project Argo CD is asked about); a name Argo CD does not know, and a
# project it does not have, fail the sync with a clear error.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--cluster edge-prod=https://edge.example:6443 --project team-a
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

mkdistro d <<EOF
idpmake: 1
name: dest
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", project: team-a}
clusters:
  edge: {name: edge-prod}
  hub: {server: "https://kubernetes.default.svc"}
packages:
  a: {type: manifests, path: packages/a, namespace: apps}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a
cd d || exit 1
# app NAME: the Application as Argo CD has it, in $T/app.json
app() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
		"http://$ARGOCD_SERVER/api/v1/applications/$1" >"$T/app.json"
}
field() { python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    o = o.get(k) if isinstance(o, dict) else None
print("<absent>" if o is None else o)' "$T/app.json" "$1"; }

t_ok "up: a cluster by name, a cluster by server, project team-a" idpmake up
t_grep "both synced" ' 2 synced' "$STDOUT"
t_ok "the edge Application exists" app edge-a
t_eq "edge: destination.name" edge-prod "$(field spec.destination.name)"
t_eq "edge: no destination.server" "<absent>" "$(field spec.destination.server)"
t_eq "edge: destination.namespace" apps "$(field spec.destination.namespace)"
t_eq "edge: spec.project" team-a "$(field spec.project)"
t_eq "edge: Synced" Synced "$(field status.sync.status)"
t_ok "the hub Application exists" app hub-a
t_eq "hub: destination.server" https://kubernetes.default.svc "$(field spec.destination.server)"
t_eq "hub: no destination.name" "<absent>" "$(field spec.destination.name)"
t_eq "hub: spec.project" team-a "$(field spec.project)"
t_ok "requests name the project team-a, never default" python3 -c '
import json, sys, urllib.request
log = json.load(urllib.request.urlopen(sys.argv[1] + "/requests"))
qs = [e for e in log if "project" in e["args"]]
assert qs, "no request carries ?project="
assert all(e["args"]["project"] == ["team-a"] for e in qs), [(e["path"], e["args"]["project"]) for e in qs]
ups = [e for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications"]
assert ups and all(e["body"]["spec"]["project"] == "team-a" for e in ups), ups' "$emu"
t_ok "no-op up" idpmake up
t_grep "no-op: nothing synced" ' 0 synced' "$STDOUT"

# an unknown cluster name and an unknown project fail clearly
sed -i 's/edge: {name: edge-prod}/edge: {name: edge-nowhere}/' distro.yaml
t_exit 1 "a cluster name Argo CD does not know: up fails" idpmake up
t_grep "the error names the step" '^FAILED: edge/a:sync' "$STDERR"
t_grep "the error names the cluster" 'edge-nowhere' "$STDERR"
t_nogrep "the hub's Application is unaffected" '^FAILED: hub/' "$STDERR"
sed -i 's/edge: {name: edge-nowhere}/edge: {name: edge-prod}/; s/project: team-a/project: team-b/' distro.yaml
t_exit 1 "a project Argo CD does not have: up fails" idpmake up
t_grep "the error names the project" "team-b" "$STDERR"
t_done
