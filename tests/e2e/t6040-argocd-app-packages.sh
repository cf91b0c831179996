#!/bin/bash
# argocd-app packages against the Argo CD emulator: each Application file of
# an idpbuilder package (from the corpus, unmodified) becomes an Application
# of its own, with its sources rewritten to the GitOps repository, its own
# destination namespace and sync policy; a package that needs the group waits
# for all of its Applications; a change to one cnoe:// folder syncs only that
# Application.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
# The corpus is read from ../shared (SHARED): where it is absent, as in a
# fresh clone, the script is a skip, not a failure.
corpus=$(require_shared corpus/cnoe-stacks/basic/package1) ||
	t_skip_rest "the CNOE corpus is absent (no ${SHARED:-../shared}/corpus/cnoe-stacks): argocd-app packages against the emulator did not run"
corpus=${corpus%/basic/package1}

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$url=$bare" --op-ms 100 --health-ms 100 --reconcile-ms 50
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu

mkdir -p d/stacks && cp -R "$corpus/basic" d/stacks/basic
mkdistro d <<EOF
idpmake: 1
name: stacks
git: {remote: "$url"}
argocd: {}
packages:
  basic: {type: argocd-app, path: stacks/basic/package1}
  after: {type: manifests, path: packages/after, needs: [basic]}
EOF
mkmanifest d/packages/after/cm.yaml ConfigMap after after
cd d || exit 1

t_ok "up" idpmake up
t_grep "the Application and the dependent synced" ' 2 synced' "$OUTPUT"
curl -s -f "$emu/requests" >requests.json
t_ok "the Application sent is the package's own, rewritten" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
posts = [e for e in log if e["method"] == "POST" and e["path"] == "/api/v1/applications"]
app = next(e["body"] for e in posts if e["body"]["metadata"]["name"] == "in-cluster-basic-my-app")
src = app["spec"]["source"]
assert src["repoURL"] == sys.argv[2], src
assert src["path"] == "in-cluster/basic-my-app/manifests", src
assert src["targetRevision"] == "main", src
assert app["spec"]["destination"]["namespace"] == "my-app", app["spec"]["destination"]
assert app["spec"]["syncPolicy"]["automated"]["selfHeal"] is True, app["spec"]["syncPolicy"]
assert "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]
' requests.json "$url"
t_ok "the dependent syncs after the group" python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
seq = {e["path"].split("/")[4]: e["seq"] for e in log if e["method"] == "POST" and e["path"].endswith("/sync")}
assert seq["in-cluster-basic-my-app"] < seq["in-cluster-after"], seq
' requests.json
t_ok "the cnoe:// folder is in the repository" sh -c "git --git-dir='$bare' ls-tree -r --name-only main | grep -q '^in-cluster/basic-my-app/manifests/'"

emu_post reset '{}'
t_ok "a no-op up" idpmake up
t_eq "makes no request" "[]" "$(curl -s -f "$emu/requests" | tr -d ' \n')"
f=$(find stacks/basic/package1/manifests -name '*.yaml' | head -1)
printf '\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n' >>"$f"
t_ok "up after a change in the cnoe:// folder" idpmake up
t_grep "one Application synced" ' 1 synced' "$OUTPUT"
t_grep "the package's" 'in-cluster/basic-my-app:sync' "$OUTPUT"
t_nogrep "not its dependent" 'in-cluster/after:sync' "$OUTPUT"
t_done
