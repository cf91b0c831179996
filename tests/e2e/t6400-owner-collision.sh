#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Ownership (issue 19 §1): an Application another distro made (label
# idpmake.io/distro), or one idpmake did not make (no label), is refused
# before the push: exit 1, nothing pushed, the object, its owner and the
# ways out named; --adopt takes it over on purpose.  A run with nothing to
# do asks Argo CD nothing, and one that does asks with a single list.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
qs=$(new_remote qs-gitops) || t_bail "new_remote failed"
other=$(new_remote other-gitops) || t_bail "new_remote failed"
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$qs=$T/git-srv/repos/qs-gitops.git" \
	--repo-map "$other=$T/git-srv/repos/other-gitops.git" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu
api=http://$ARGOCD_SERVER/api/v1

# count METHOD PATH-REGEX: requests since the last reset that match
count() {
	curl -s -f "$emu/requests" | python3 -c '
import json, re, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == sys.argv[1] and re.search(sys.argv[2], e["path"])))' "$1" "$2"
}
# app NAME EXPR: EXPR over the Application `a` as Argo CD has it
app() {
	curl -s -f -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/applications/$1" | python3 -c '
import json, sys
a = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$2"
}

for d in qs other; do
	for p in namespaces hello; do mkmanifest "$d/packages/$p/cm.yaml" ConfigMap "$p" default; done
done
mkdistro qs <<EOF
idpmake: 1
name: quickstart
git: {remote: "$qs"}
argocd: {}
packages:
  namespaces: {type: manifests, path: packages/namespaces}
  hello: {type: manifests, path: packages/hello}
EOF
mkdistro other <<EOF
idpmake: 1
name: my-idp
git: {remote: "$other"}
argocd: {}
packages:
  namespaces: {type: manifests, path: packages/namespaces}
  hello: {type: manifests, path: packages/hello}
EOF

t_ok "the quickstart's up" idpmake -C qs up
t_eq "its Application carries its distro" quickstart "$(app in-cluster-hello 'a["metadata"]["labels"]["idpmake.io/distro"]')"

# plan predicts it, with up's words and its own exit status (issue 32 #1)
t_exit 3 "plan: the second distro's up would be refused (exit 3)" idpmake -C other plan
t_grep "plan: the collision as up says it" \
	"in-cluster/hello:sync: Application 'in-cluster-hello' in Argo CD belongs to distro 'quickstart', not to distro 'my-idp'" "$STDERR"
t_grep "plan: up would refuse before the push" 'plan: up would refuse before the push: 2 objects in Argo CD are not this distro' "$STDERR"
t_exit 3 "plan --json: exit 3 too" idpmake -C other plan --json
t_eq "plan --json: the refusals counted" 2 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["refusals"])' "$STDOUT")"
t_ok "the quickstart's own plan refuses nothing" idpmake -C qs plan
t_nogrep "and checks what it could" 'not checked' "$STDERR"

emu_reset
t_exit 1 "a second distro with the same package names is refused" idpmake -C other up
t_grep "it names the object and its owner" \
	"in-cluster/hello:sync: Application 'in-cluster-hello' in Argo CD belongs to distro 'quickstart', not to distro 'my-idp'" "$STDERR"
t_grep "every collision, not only the first" "Application 'in-cluster-namespaces' in Argo CD belongs to distro 'quickstart'" "$STDERR"
t_grep "it says nothing was pushed" "refused before the push: 2 objects .* nothing was pushed" "$STDERR"
t_grep "and the ways out" 'argocd.app-name, e.g. "my-idp-\$\{cluster\}-\$\{package\}".*idpmake up --adopt' "$STDERR"
t_nogrep "no timeout was waited out" "timed out" "$OUTPUT"
t_eq "nothing was pushed to its remote" "" "$(git ls-remote "$(authurl "$other")" 2>&1)"
t_eq "no Application was created or updated" 0 "$(count POST '^/api/v1/applications')"
t_eq "one list request found them" 1 "$(count GET '^/api/v1/applications$')"
t_eq "no GET per Application" 0 "$(count GET '^/api/v1/applications/')"
t_eq "the quickstart's Application keeps its label" quickstart \
	"$(app in-cluster-hello 'a["metadata"]["labels"]["idpmake.io/distro"]')"
t_eq "and its source" "$qs" "$(app in-cluster-hello 'a["spec"]["source"]["repoURL"]')"

emu_reset
t_ok "the quickstart's no-op up" idpmake -C qs up
t_eq "asks Argo CD nothing" 0 "$(count GET '^/api/v1/')"

# names of its own: no collision
sed -i 's/argocd: {}/argocd: {app-name: "my-idp-${cluster}-${package}"}/' other/distro.yaml
t_ok "with app-name of its own, the second distro's up" idpmake -C other up
t_eq "makes its own Application" my-idp "$(app my-idp-in-cluster-hello 'a["metadata"]["labels"]["idpmake.io/distro"]')"
t_eq "and leaves the quickstart's" quickstart "$(app in-cluster-hello 'a["metadata"]["labels"]["idpmake.io/distro"]')"

# --adopt: taken over on purpose
sed -i 's/argocd: {app-name: "my-idp-${cluster}-${package}"}/argocd: {}/' other/distro.yaml
t_ok "up --adopt takes them over" idpmake -C other up --adopt
t_grep "and says so" "adopting Application 'in-cluster-hello', which belongs to distro 'quickstart' \(--adopt\)" "$OUTPUT"
t_grep "summed up by kind at the end (issue 35 #14)" \
	'^idpmake: adopted \(--adopt\): 2 Applications \(in-cluster-hello, in-cluster-namespaces\)$' "$STDOUT"
t_eq "the Application is now the second distro's" my-idp "$(app in-cluster-hello 'a["metadata"]["labels"]["idpmake.io/distro"]')"
head=$(git ls-remote "$(authurl "$qs")" refs/heads/main)
mkmanifest qs/packages/hello/cm.yaml ConfigMap hello2 default
emu_reset
t_exit 1 "now the quickstart's up, with a change to hello, is refused in turn" idpmake -C qs up
t_eq "its push did not happen" "$head" "$(git ls-remote "$(authurl "$qs")" refs/heads/main)"
t_grep "asked once the render gave new objects (issue 35 #12), before the push" "1 rendered, nothing pushed" "$OUTPUT"
t_eq "with one list request" 1 "$(count GET '^/api/v1/applications$')"
t_eq "and nothing created or updated" 0 "$(count POST '^/api/v1/applications')"
t_grep "naming the new owner" "Application 'in-cluster-hello' in Argo CD belongs to distro 'my-idp'" "$STDERR"

# an Application idpmake did not make (no idpmake labels)
t_ok "setup: an Application made by hand" curl -fsS -X POST -H 'Content-Type: application/json' \
	-H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications" -d "{\"metadata\": {\"name\": \"in-cluster-extra\"},
	\"spec\": {\"project\": \"default\", \"source\": {\"repoURL\": \"$qs\", \"path\": \"in-cluster/hello\", \"targetRevision\": \"main\"},
	\"destination\": {\"server\": \"https://kubernetes.default.svc\", \"namespace\": \"default\"}}}"
mkmanifest other/packages/extra/cm.yaml ConfigMap extra default
cat >>other/distro.yaml <<'EOF'
  extra: {type: manifests, path: packages/extra}
EOF
t_exit 1 "an Application idpmake did not make is refused" idpmake -C other up
t_grep "naming it as such" "Application 'in-cluster-extra' in Argo CD belongs to nobody: idpmake did not make it" "$STDERR"
t_ok "up --adopt --json takes it" idpmake -C other up --adopt --json
cp "$STDOUT" adopt.jsonl
t_ok "an adopted event names it, whose it was and the step, before the summary" python3 -c '
import json
ev = [json.loads(l) for l in open("adopt.jsonl") if l.strip()]
ad = [e for e in ev if e["event"] == "adopted"]
assert ad == [{"event": "adopted", "kind": "Application", "name": "in-cluster-extra",
               "from": "nobody: idpmake did not make it (no idpmake.io/distro label)", "step": "in-cluster/extra:sync"}], ad
assert ev[-1]["event"] == "summary", ev[-1]'
t_eq "it now carries the distro's label" my-idp "$(app in-cluster-extra 'a["metadata"]["labels"]["idpmake.io/distro"]')"

# a change that may leave the output as it is: plan asks Argo CD no sooner than up would (preflight_late)
printf '# a comment\n' >>other/packages/hello/cm.yaml
emu_reset
t_ok "plan after a comment in a manifest" idpmake -C other plan
t_grep "says when up asks Argo CD" 'plan: not checked: what Argo CD holds: up asks it only if a render.s output changes' "$STDERR"
t_eq "and asks it nothing itself" 0 "$(count GET '^/api/')"
t_ok "up: the output is the same" idpmake -C other up
t_eq "up asks nothing either" 0 "$(count GET '^/api/')"

t_done
