#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# ApplicationSets inside argocd-app packages (distro.md "Package types"):
# the CNOE corpus's vcluster-multi-env stack (an ApplicationSet with a list
# generator whose template's source is cnoe://, path vcluster).  idpmake
# pushes the cnoe:// folder, rewrites the template's source to the GitOps
# repository, and upserts the ApplicationSet, named as Applications are
# (argocd.app-name: in-cluster-vm-vclusters) (no sync of its own: Argo CD's
# ApplicationSet controller, which the emulator models, makes the
# Applications staging-vcluster and production-vcluster).  Go template
# placeholders ({{.name}}) reach Argo CD untouched.  The same stack with the
# ApplicationSet's file sorting before the rendered one ("00-...yaml") must
# send the rewritten ApplicationSet, not the file as written.  A package
# with a cluster generator makes one Application per cluster Argo CD knows.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

stack=$(require_shared corpus/cnoe-stacks/vcluster-multi-env) ||
	t_skip_rest "../shared/corpus (the CNOE corpus) is absent: vcluster-multi-env not tested"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--cluster edge=https://edge.example:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

# api PATH: GET from Argo CD into $T/api.json
api() { curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/$1" >"$T/api.json"; }
# checked PATH PYTHON ARGS...: GET PATH, then PYTHON holds for it (sys.argv[1] the answer's file).  Argo CD's
# ApplicationSet controller generates the Applications some time after up stored the set (the emulator's
# --appset-ms): waited on with t_wait_for, never read once right after up.
# shellcheck disable=SC2317 # run through t_wait_for
checked() { api "$1" && python3 -c "$2" "$T/api.json" "${@:3}"; }
# posts RE: how many POSTs since the last reset have a path matching RE
posts() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and re.search(sys.argv[1], e["path"])))' "$1"
}

# check_stack LABEL FOLDER: the ApplicationSet and its Applications in Argo CD
check_stack() {
	local l=$1 dir=$2
	t_ok "$l: vclusters' template points at the GitOps repository, folder $dir/vcluster" \
		t_wait_for 20 checked applicationsets '
import json, sys
items = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))["items"]}
assert list(items) == ["in-cluster-vm-vclusters"], list(items)
a = items["in-cluster-vm-vclusters"]
src = a["spec"]["template"]["spec"]["source"]
assert src["repoURL"] == sys.argv[2], src["repoURL"]
assert src["path"] == sys.argv[3] + "/vcluster", src["path"]
assert a["spec"]["goTemplate"] is True, a["spec"]
assert a["spec"]["template"]["metadata"]["name"] == "{{.name}}-vcluster", a["spec"]["template"]["metadata"]
assert a["spec"]["generators"] == [{"list": {"elements": [{"name": "staging"}, {"name": "production"}]}}], a["spec"]["generators"]
cond = {c["type"]: c for c in a["status"]["conditions"]}
assert cond["ErrorOccurred"]["status"] == "False", cond' "file://$bare" "$dir"
	t_ok "$l: staging-vcluster and production-vcluster, made by the ApplicationSet" \
		t_wait_for 20 checked applications '
import json, sys
apps = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))["items"]}
assert sorted(apps) == ["production-vcluster", "staging-vcluster"], sorted(apps)
for env in ("staging", "production"):
    a = apps[env + "-vcluster"]
    owners = a["metadata"].get("ownerReferences") or []
    assert [o["kind"] + "/" + o["name"] for o in owners] == ["ApplicationSet/in-cluster-vm-vclusters"], owners
    src = a["spec"]["source"]
    assert src["repoURL"] == sys.argv[2] and src["path"] == sys.argv[3] + "/vcluster", src
    assert a["spec"]["destination"]["namespace"] == env + "-vcluster", a["spec"]["destination"]
    hosts = [p["patch"] for p in src["kustomize"]["patches"] if "/spec/rules/0/host" in p["patch"]]
    assert hosts and env + "-vcluster.cnoe.localtest.me" in hosts[0], hosts' "file://$bare" "$dir"
}

{ mkdir -p d/stacks && cp -r "$stack" d/stacks/vm; } || t_bail "cannot copy the stack"
mkdistro d <<EOF
idpmake: 1
name: appsets
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  vm: {type: argocd-app, path: stacks/vm}
EOF
cd d || exit 1

t_ok "up with the vcluster-multi-env stack" idpmake up
t_grep "one package step synced (the ApplicationSet)" ' 1 synced' "$STDOUT"
t_nogrep "no error printed (its README is not YAML)" 'error' "$STDERR"
git --git-dir="$bare" ls-tree -r --name-only main >"$T/tree.txt"
for f in kustomization.yaml ingress.yaml application-vcluster.yaml; do
	t_grep "the cnoe:// folder is pushed: vcluster/$f" "^in-cluster/vm-vclusters/vcluster/$f\$" "$T/tree.txt"
done
t_eq "the ApplicationSet was upserted once" 1 "$(posts '^/api/v1/applicationsets$')"
t_eq "idpmake synced none of its Applications (they are Argo CD's)" 0 "$(posts '/sync$')"
check_stack "corpus" in-cluster/vm-vclusters

emu_reset
t_ok "no-op up" idpmake up
t_eq "no-op: no upsert" 0 "$(posts '^/api/v1/applicationsets$')"

echo "# a comment" >>stacks/vm/vcluster/ingress.yaml
emu_reset
t_ok "up after a change in the cnoe:// folder" idpmake up
t_grep "the change is pushed" '1 commit pushed' "$STDOUT"
t_eq "the ApplicationSet upserted again" 1 "$(posts '^/api/v1/applicationsets$')"
check_stack "after the change" in-cluster/vm-vclusters

# ---- the file as written sorts before the rendered one --------------------
{ mkdir -p "$T/e/stacks" && cp -r "$stack" "$T/e/stacks/vm2" &&
	mv "$T/e/stacks/vm2/vclusters.yaml" "$T/e/stacks/vm2/00-vclusters.yaml"; } || t_bail "cannot copy the stack"
# and an ApplicationSet with a cluster generator (one Application per
# cluster Argo CD knows: in-cluster and the emulator's --cluster edge)
mkdir -p "$T/e/stacks/fleet/guestbook"
mkmanifest "$T/e/stacks/fleet/guestbook/cm.yaml" ConfigMap guestbook
cat >"$T/e/stacks/fleet/guestbook.yaml" <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook, namespace: argocd}
spec:
  goTemplate: true
  generators:
    - clusters: {}
  template:
    metadata: {name: '{{.name}}-guestbook'}
    spec:
      project: default
      source: {repoURL: "cnoe://guestbook", targetRevision: HEAD, path: "."}
      destination: {server: '{{.server}}', namespace: guestbook}
EOF
mkdistro "$T/e" <<EOF
idpmake: 1
name: appsets2
git: {remote: "$bare", path: "other/\${package}"}
argocd: {repo-url: "file://$bare"}
packages:
  vm2: {type: argocd-app, path: stacks/vm2}
  fleet: {type: argocd-app, path: stacks/fleet}
EOF
curl -sS -f -X POST -d '{"apps": true}' "$emu/reset" >/dev/null || t_bail "cannot reset the emulator"
curl -sS -f "$emu/apps" >/dev/null || t_bail "the emulator does not answer"
cd "$T/e" || exit 1
t_ok "up with the ApplicationSet file named 00-vclusters.yaml" idpmake up
t_grep "00-: synced (both ApplicationSets)" ' 2 synced' "$STDOUT"
t_ok "00-: the ApplicationSets" api applicationsets
t_ok "00-: Argo CD got the rewritten template, not cnoe://" python3 -c '
import json, sys
items = [a for a in json.load(open(sys.argv[1]))["items"] if a["metadata"]["name"] == "in-cluster-vm2-vclusters"]
assert items, "no ApplicationSet in-cluster-vm2-vclusters"
src = items[0]["spec"]["template"]["spec"]["source"]
assert src["repoURL"] == sys.argv[2] and src["path"] == "other/vm2-vclusters/vcluster", src' "$T/api.json" "file://$bare"
t_ok "00-: both Applications made, and one per cluster by the cluster generator" \
	t_wait_for 20 checked applications '
import json, sys
apps = {a["metadata"]["name"]: a for a in json.load(open(sys.argv[1]))["items"]}
assert sorted(apps) == ["edge-guestbook", "in-cluster-guestbook", "production-vcluster", "staging-vcluster"], sorted(apps)
assert apps["edge-guestbook"]["spec"]["destination"]["server"] == "https://edge.example:6443", apps["edge-guestbook"]["spec"]
src = apps["edge-guestbook"]["spec"]["source"]
assert src["repoURL"] == sys.argv[2] and src["path"].startswith("other/fleet-guestbook"), src' "file://$bare"
git --git-dir="$bare" ls-tree -r --name-only main >"$T/tree2.txt"
t_grep "the cluster generator's cnoe:// folder is pushed" '^other/fleet-guestbook/.*cm\.yaml$' "$T/tree2.txt"
t_done
