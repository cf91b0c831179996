#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff --live (issue 8 §1): the new render against what Argo CD reports live
# (managed-resources): create, change and prune ("would be deleted" only
# with sync.prune); drift that counts (a field the render sets) and drift
# that does not (an extra label, a field only live, status, a field the
# Application's ignoreDifferences names, a cluster-scoped object's
# namespace); Secrets (keys added and removed, never a value); an
# Application that does not exist yet; --json, --exit-code, colour; -o FILE
# saved with the commit and keys, shown by --from with the emulator stopped.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api=http://$ARGOCD_SERVER/api/v1/applications
# requests that change something, so far
writes() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] != "GET"))'
}

mkdistro d <<EOF
idpmake: 1
name: live
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, sync: {prune: true}}
  keep: {type: manifests, path: packages/keep}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
mkmanifest d/packages/web/old.yaml ConfigMap old
mkmanifest d/packages/web/dep.yaml Deployment web
mkmanifest d/packages/web/ns.yaml Namespace extra
cat >d/packages/web/secret.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-Zq7, password: s3cretVALUE-Zq7}
EOF
mkmanifest d/packages/keep/cm.yaml ConfigMap kept
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"

t_ok "setup: up" idpmake up
t_grep "setup: both synced" ' 2 synced' "$OUTPUT"

# ---- nothing to do ----------------------------------------------------------
t_exit 0 "diff --live --exit-code right after up: nothing differs" idpmake diff --live --exit-code
t_grep "the summary says so" '0 objects differ from what Argo CD reports live' "$STDERR"
t_grep "a Secret's values cannot be compared: said so" 'values may differ \(Argo CD masks them\): password, user' "$STDOUT"
t_nogrep "no create, change or prune" '^(create|change|prune) ' "$STDOUT"

# ---- drift that does not count -----------------------------------------------
emu_post live '{"app": "in-cluster-web", "kind": "ConfigMap", "name": "cfg", "labels": {"added-by": "another-controller"}}'
emu_post live '{"app": "in-cluster-web", "kind": "Deployment", "name": "web", "set": {"spec.paused": true, "status.replicas": 5}}'
emu_post live '{"app": "in-cluster-web", "kind": "Namespace", "name": "extra", "set": {"metadata.labels": {"kubernetes.io/metadata.name": "extra"}}}'
t_exit 0 "an extra label, a field only live and status do not count" idpmake diff --live --exit-code
t_nogrep "no object listed as changed" '^change ' "$STDOUT"

# ---- a Secret value changed live: Argo CD's masks differ, the value is never shown
emu_post live '{"app": "in-cluster-web", "kind": "Secret", "name": "creds", "set": {"data.user": "b3RoZXItWnE3"}}'
t_exit 1 "a Secret value changed live counts" idpmake diff --live --exit-code
t_grep "the key is named" 'live values differ from Argo CD.s target: user$' "$STDOUT"
t_grep "the line is marked, without the value" "^-  user: \\(hidden, differs from Argo CD's target\\)$" "$STDOUT"
t_nostring "the live value is not shown" b3RoZXItWnE3 "$STDOUT"
emu_post live "{\"app\": \"in-cluster-web\", \"kind\": \"Secret\", \"name\": \"creds\", \"set\": {\"data.user\": \"$(printf admin-Zq7 | base64)\"}}"
t_exit 0 "the value set back: nothing differs" idpmake diff --live --exit-code

# ---- drift that counts, then is ignored by ignoreDifferences ------------------
emu_post live '{"app": "in-cluster-web", "kind": "ConfigMap", "name": "cfg", "set": {"data.name": "edited-live"}}'
t_exit 1 "a field the render sets, changed live, counts" idpmake diff --live --exit-code
t_grep "the ConfigMap is a change" '^change +ConfigMap web/cfg$' "$STDOUT"
t_grep "live value removed" '^-  name: edited-live$' "$STDOUT"
t_grep "render value added" '^\+  name: cfg$' "$STDOUT"
t_nogrep "the label only live is not shown" 'added-by' "$STDOUT"
t_nogrep "status is not shown" 'replicas: 5' "$STDOUT"
t_nogrep "the cluster-scoped Namespace shows no namespace noise" 'Namespace' "$STDOUT"
spec=$(curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/in-cluster-web" | python3 -c '
import json, sys
s = json.load(sys.stdin)["spec"]
s["ignoreDifferences"] = [{"group": "", "kind": "ConfigMap", "name": "cfg", "jsonPointers": ["/data/name"]}]
print(json.dumps(s))')
t_ok "setup: the Application ignores /data/name of cfg" curl -sS -f -X PUT -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" -d "$spec" "$api/in-cluster-web/spec"
t_exit 0 "ignoreDifferences jsonPointers are honoured" idpmake diff --live --exit-code
t_nogrep "cfg is not a change any more" '^change +ConfigMap web/cfg' "$STDOUT"

# ---- create, change, prune, Secrets, an Application not there yet --------------
rm packages/web/old.yaml packages/keep/cm.yaml
mkmanifest packages/keep/cm2.yaml ConfigMap kept2
sed -i 's/replicas: 1/replicas: 2/' packages/web/dep.yaml
sed -i 's/password: s3cretVALUE-Zq7/token: NEWtoken-Zq7/' packages/web/secret.yaml
mkmanifest packages/fresh/cm.yaml ConfigMap fresh
cat >>distro.yaml <<'EOF'
  fresh: {type: manifests, path: packages/fresh}
EOF
emu_post live '{"app": "in-cluster-keep", "kind": "ConfigMap", "name": "kept", "delete": true}'
emu_post live '{"app": "in-cluster-keep", "kind": "ConfigMap", "name": "kept", "create": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept", "namespace": "keep"}, "data": {"name": "kept"}}}'
before=$(writes)
t_exit 1 "diff --live --exit-code with changes: exit 1" idpmake --color=never diff --live --exit-code
cp "$STDOUT" text.out
t_grep "a changed field: create of the new ConfigMap" '^create +ConfigMap keep/kept2$' "$STDOUT"
t_grep "change of the Deployment" '^change +apps/Deployment web/web$' "$STDOUT"
t_grep "field-level: replicas -" '^-  replicas: 1$' "$STDOUT"
t_grep "field-level: replicas +" '^\+  replicas: 2$' "$STDOUT"
t_grep "unified diff headers" '^--- live apps/Deployment web/web$' "$STDOUT"
t_grep "hunk header" '^@@ -[0-9]+,[0-9]+ \+[0-9]+,[0-9]+ @@' "$STDOUT"
t_grep "prune with sync.prune: would be deleted" '^prune +ConfigMap web/old \(would be deleted\)$' "$STDOUT"
t_grep "prune without sync.prune: kept" '^prune +ConfigMap keep/kept \(kept: the package syncs without prune\)$' "$STDOUT"
t_grep "the Secret: a data key added" 'data keys added: token$' "$STDOUT"
t_grep "the Secret: a data key removed" 'data keys removed: password$' "$STDOUT"
t_grep "the Secret: values may differ" 'values may differ \(Argo CD masks them\): user$' "$STDOUT"
t_grep "the Secret's keys in the diff, hidden" '^\+  token: \(hidden\)$' "$STDOUT"
t_grep "an Application not there yet" '^application in-cluster-fresh \(in-cluster/fresh\): does not exist yet$' "$STDOUT"
t_grep "everything it holds is create" '^create +ConfigMap fresh/fresh$' "$STDOUT"
t_grep "the summary" '6 objects differ from what Argo CD reports live \(2 to create, 2 to change, 2 to prune\)' "$STDERR"
t_nogrep "no colour with --color=never" $'\x1b' "$STDOUT"
t_eq "diff --live changes nothing in Argo CD" "$before" "$(writes)"
t_exit 0 "without --exit-code: exit 0" idpmake diff --live

t_ok "--color=always" idpmake --color=always diff --live
t_grep "removed lines red" $'^\x1b\\[31m-  replicas: 1' "$STDOUT"
t_grep "added lines green" $'^\x1b\\[32m\\+  replicas: 2' "$STDOUT"
t_grep "hunk headers cyan" $'^\x1b\\[36m@@' "$STDOUT"
t_ok "NO_COLOR with --color=auto" env NO_COLOR=1 "$IDPMAKE" diff --live
t_nogrep "NO_COLOR: no colour" $'\x1b' "$STDOUT"

t_ok "--json" idpmake diff --live --json
cp "$STDOUT" live.json
t_ok "--json is JSON with the statuses" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
st = {(o["kind"], o["name"]): o["status"] for a in d["applications"] for o in a["objects"]}
assert st[("ConfigMap", "kept2")] == "create", st
assert st[("Deployment", "web")] == "change", st
assert st[("ConfigMap", "old")] == "prune", st
assert [o["deleted"] for a in d["applications"] for o in a["objects"] if o["name"] == "old"] == [True]
assert [a["exists"] for a in d["applications"] if a["name"] == "in-cluster-fresh"] == [False]
assert (d["create"], d["change"], d["prune"]) == (2, 2, 2), d' live.json

# ---- never a Secret value ------------------------------------------------------
t_ok "-o FILE saves the diff" idpmake diff --live -o saved.json
for v in admin-Zq7 s3cretVALUE-Zq7 NEWtoken-Zq7 "$(printf admin-Zq7 | base64)" "$(printf s3cretVALUE-Zq7 | base64)" \
	"$(printf NEWtoken-Zq7 | base64)"; do
	t_nostring "no Secret value ($v) in the text, JSON or the saved diff" "$v" text.out saved.json
done
idpmake diff --live --json >json.out 2>&1
t_nostring "no Secret value in --json" s3cretVALUE-Zq7 json.out
t_nostring "no base64 Secret value in --json" "$(printf NEWtoken-Zq7 | base64)" json.out

# ---- save and --from -----------------------------------------------------------
t_ok "the saved diff names the distro's commit and the keys" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["commit"] == sys.argv[2], d["commit"]
assert all(len(a["key"]) == 32 for a in d["applications"]), d' saved.json "$(git rev-parse HEAD)"
kill "$EMU_PID" && wait "$EMU_PID" 2>/dev/null
t_fail "with the emulator stopped, diff --live fails" idpmake diff --live
t_exit 2 "... with exit 2" idpmake diff --live --exit-code
t_exit 1 "diff --from FILE --exit-code works without the network: exit 1" idpmake diff --from saved.json --exit-code
t_grep "--from shows the saved diff" '^change +apps/Deployment web/web$' "$STDOUT"
t_grep "--from: the prune" '^prune +ConfigMap web/old \(would be deleted\)$' "$STDOUT"
t_grep "--from names the commit" "diff saved from commit $(git rev-parse HEAD)" "$STDERR"
t_ok "--from from another folder, without a distro" sh -c "cd / && '$IDPMAKE' diff --from '$PWD/saved.json' --json >'$T/from.json'"
t_ok "--from --json is the saved document" python3 -c '
import json, sys
assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' "$T/from.json" saved.json
echo '{"not": "a diff"}' >bad.json
t_exit 2 "--from a file that is not a saved diff: exit 2" idpmake diff --from bad.json
t_exit 2 "plain diff -o FILE is a usage error" idpmake diff -o x.json

t_done
