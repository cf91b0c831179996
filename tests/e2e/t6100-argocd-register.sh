#!/bin/bash
# Registration in Argo CD (fleet.md "Clusters", issue 11 "Repository
# credentials"): CLUSTER:register for a token cluster and a kubeconfig
# cluster (one upsert, labels and all), a no-op up makes
# no request, a label change makes exactly the PUT, a name-only cluster Argo
# CD does not know fails its syncs (looked up once per run) while the others
# sync, a missing token variable is named, --prune unregisters only the
# clusters idpmake registered, repository:register makes a private
# repository usable (argocd.repository: registered makes no request), and no
# credential reaches the state, the logs, -v output or graph json.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
url0=$(new_remote gitops0) || t_bail "new_remote failed"
bare=$T/git-srv/repos/gitops.git
bare0=$T/git-srv/repos/gitops0.git
export IDPMAKE_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER

ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
# private repositories: a sync from one Argo CD has no credentials for fails
start_argocd_emulator --repo-map "$url=$bare" --repo-map "$url0=$bare0" --require-repo-creds \
	--repo-creds "$url=$GIT_USER:$GIT_PASS" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu
api=http://$ARGOCD_SERVER/api/v1

emu_post() { curl -s -f -X POST -H 'Content-Type: application/json' -d "$2" "$emu/$1" >/dev/null; }
emu_reset() { emu_post reset '{}'; }
# clusters PYTHON-EXPR: EXPR over `cl` (GET /api/v1/clusters items by server)
clusters() {
	curl -s -f -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" "$api/clusters" >"$T/clusters.json"
	python3 - "$T/clusters.json" "$1" <<'EOF'
import json, sys
cl = {c["server"]: c for c in json.load(open(sys.argv[1]))["items"]}
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, list) else r)
EOF
}
# requests PYTHON-EXPR [HOST]: EXPR over `log` (the emulator's request log);
# with HOST, `b` is the body of the cluster upsert of https://HOST... and `t` its TLS config
requests() {
	curl -s -f "$emu/requests" >"$T/requests.json"
	python3 - "$T/requests.json" "$1" "${2:-}" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))
def lines(pred=lambda e: True):
    return [e["method"] + " " + e["path"] + ("?" + e["query"] if e["query"] else "") for e in log if pred(e)]
def cbody(host):
    return [e["body"] for e in log if e["path"] == "/api/v1/clusters" and e["method"] == "POST" and e["body"]["server"].startswith("https://" + host)][0]
def repos():
    return [e for e in log if e["path"] == "/api/v1/repositories" and e["method"] != "GET"]
def body(method, path, i=0):
    return [e["body"] for e in log if e["method"] == method and e["path"] == path][i]
if sys.argv[3]:
    b = cbody(sys.argv[3])
    t = b["config"]["tlsClientConfig"]
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, list) else r)
EOF
}
b64() { base64 -w0 <"$1"; }

# ---- a private repository that Argo CD is said to have: the sync fails ----
mkdistro d0 <<EOF
idpmake: 1
name: zero
git: {remote: "$url0"}
argocd: {repository: registered}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
mkmanifest d0/packages/base/cm.yaml ConfigMap base base
cd d0 || exit 1
t_exit 1 "argocd.repository: registered, and Argo CD has no credentials: the sync fails" idpmake up
t_grep "because the repository is not accessible" "in-cluster/base:sync: .*repository not accessible.*authentication required" "$OUTPUT"
t_eq "no repository request was made" "" "$(requests 'lines(lambda e: "repositories" in e["path"])')"
t_nogrep "there is no repository:register step" "repository:register" "$OUTPUT"
cd "$T" || exit 1

EAST_TOKEN="east-$(random_string)$(random_string)"
export EAST_TOKEN

# ---- server text that quotes a credential is masked -------------------------
mkdistro d1 <<EOF
idpmake: 1
name: one
git: {remote: "$url0"}
argocd: {}
clusters:
  south: {server: "https://south.k8s.example", register: {token-env: EAST_TOKEN}}
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
mkmanifest d1/packages/base/cm.yaml ConfigMap base base
emu_reset
emu_post fault "[{\"path_regex\": \"^/api/v1/repositories\$\", \"method\": \"POST\", \"status\": 400, \"code\": 3, \"message\": \"bad credentials $GIT_USER:$GIT_PASS\"},
	{\"path_regex\": \"^/api/v1/clusters\$\", \"method\": \"POST\", \"status\": 400, \"code\": 3, \"message\": \"bad token $EAST_TOKEN\"}]" ||
	t_bail "cannot set the faults"
cd d1 || exit 1
t_exit 1 "refused registrations fail" idpmake up -v
t_grep "the repository's, with the server's text" "repository:register: registering repository $url0: Argo CD answered HTTP 400: bad credentials $GIT_USER:\*\*\*" "$OUTPUT"
t_grep "the cluster's" "south:register: registering cluster 'south' \(https://south.k8s.example\): Argo CD answered HTTP 400: bad token \*\*\*" "$OUTPUT"
t_nogrep "the password is masked everywhere" "$GIT_PASS" "$OUTPUT"
t_nogrep "and the token" "$EAST_TOKEN" "$OUTPUT"
t_eq "also in the state and the logs" "" "$(grep -r -a -l -F -e "$GIT_PASS" -e "$EAST_TOKEN" .idpmake)"
cd "$T" || exit 1

# ---- the fleet --------------------------------------------------------------
WEST_TOKEN="west-$(random_string)$(random_string)"
# PEM shapes (idpmake takes only PEM certificates and keys), random contents
pem() { printf -- '-----BEGIN %s-----\n%s\n-----END %s-----\n' "$1" "$2" "$1"; }
WEST_KEY=$(pem "PRIVATE KEY" "$(random_string)" | base64 -w0)
WEST_CERT=$(pem CERTIFICATE "$(random_string)" | base64 -w0)
mkdir -p d/kube d/certs
pem CERTIFICATE "$(random_string)" >d/certs/east.pem
pem CERTIFICATE "$(random_string)" >d/kube/west-ca.pem
cat >d/kube/config <<EOF
apiVersion: v1
kind: Config
current-context: other
clusters:
  - name: west-cluster
    cluster:
      server: https://west.k8s.example:6443
      certificate-authority: west-ca.pem
  - name: other-cluster
    cluster: {server: https://elsewhere.example}
contexts:
  - name: other
    context: {cluster: other-cluster, user: nobody}
  - name: west
    context: {cluster: west-cluster, user: west-admin}
users:
  - name: west-admin
    user:
      token: $WEST_TOKEN
      client-certificate-data: $WEST_CERT
      client-key-data: $WEST_KEY
EOF
write_distro() {
	# write_distro EAST-RING WITH-WEST(yes/no) [EAST-TOKEN-VARIABLE]
	{
		cat <<EOF
idpmake: 1
name: fleet
git: {remote: "$url"}
argocd: {}
clusters:
  east:
    server: https://east.k8s.example:6443
    labels: {env: prod, ring: "$1"}
    register: {token-env: ${3:-EAST_TOKEN}, ca-file: certs/east.pem}
  legacy:
    name: legacy-argo
EOF
		[ "$2" = yes ] && cat <<EOF
  west:
    server: https://west.k8s.example:6443
    labels: {env: staging}
    register: {kubeconfig: kube/config, context: west, insecure: true}
EOF
		cat <<EOF
packages:
  base: {type: manifests, path: packages/base, namespace: base}
  web: {type: manifests, path: packages/web, namespace: web}
EOF
	} >"$T/d/distro.yaml"
}
write_distro 0 yes
mkmanifest d/packages/base/cm.yaml ConfigMap base base
mkmanifest d/packages/web/cm.yaml ConfigMap web web
cd d || exit 1
emu_reset

# ---- first up: registered; legacy, unknown to Argo CD, fails alone --------
t_exit 1 "first up: the unknown name-only cluster fails the run" idpmake up -v -j 4 -k 0
cp "$OUTPUT" "$T/first.out"
t_grep "its syncs fail naming it" "legacy/base:sync: cluster 'legacy' is not known to Argo CD \(destination.name 'legacy-argo'\)" "$OUTPUT"
t_grep "both of them" "legacy/web:sync: cluster 'legacy' is not known to Argo CD" "$OUTPUT"
t_eq "looked up once for both syncs" "GET /api/v1/clusters/legacy-argo?id.type=name" \
	"$(requests 'lines(lambda e: e["path"].startswith("/api/v1/clusters/legacy"))')"
t_eq "and no Application of legacy was created" 0 \
	"$(requests 'len([e for e in log if e["path"] == "/api/v1/applications" and e["method"] == "POST" and e["body"]["metadata"]["name"].startswith("legacy")])')"
t_grep "the other clusters synced" " 4 synced" "$OUTPUT"
t_grep "insecure: true is warned about" "cluster 'west' registers with insecure: true" "$OUTPUT"
t_eq "each registered cluster: one upsert, which sets the labels too" \
	"POST /api/v1/clusters?upsert=true" \
	"$(requests 'lines(lambda e: e["method"] != "GET" and "east" in (e["path"] + str((e["body"] or {}).get("server"))) and "/clusters" in e["path"])')"
t_eq "the token cluster's bearer token, CA and TLS settings" "True True False east" \
	"$(requests '[b["config"]["bearerToken"] == "'"$EAST_TOKEN"'", t["caData"] == "'"$(b64 certs/east.pem)"'", t["insecure"], b["name"]]' east)"
t_eq "the kubeconfig cluster's token, client certificate, CA (from the context, not current-context)" "True True True True True" \
	"$(requests '[b["config"]["bearerToken"] == "'"$WEST_TOKEN"'", t["keyData"] == "'"$WEST_KEY"'", t["certData"] == "'"$WEST_CERT"'", t["caData"] == "'"$(b64 kube/west-ca.pem)"'", t["insecure"]]' west)"
t_eq "every register comes before the syncs to its cluster" True \
	"$(requests 'max(e["seq"] for e in log if "/clusters" in e["path"] and e["method"] != "GET") < min(e["seq"] for e in log if e["path"].endswith("/sync"))')"
t_eq "Argo CD holds the labels and idpmake's mark" "prod 0 east|staging None west" \
	"$(clusters '"|".join("%s %s %s" % (cl[s]["labels"]["env"], cl[s]["labels"].get("ring"), cl[s]["annotations"]["idpmake.io/cluster"]) for s in ("https://east.k8s.example:6443", "https://west.k8s.example:6443"))')"
t_eq "the repository was registered once, with the credentials, before any sync" "1 $GIT_USER True git True" \
	"$(requests '[len(repos()), repos()[0]["body"]["username"], repos()[0]["body"]["password"] == "'"$GIT_PASS"'", repos()[0]["body"]["type"], repos()[0]["seq"] < min(e["seq"] for e in log if e["path"].endswith("/sync"))]')"
t_eq "with the URL the Applications use, without credentials" "$url" "$(requests 'body("POST", "/api/v1/repositories")["repo"]')"
t_grep "-v shows the repository password masked" '"password":"\*\*\*"' "$OUTPUT"
t_grep "and the bearer token" '"bearerToken":"\*\*\*"' "$OUTPUT"

# ---- Argo CD learns legacy: the next up syncs it, one lookup ----------------
curl -s -f -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" \
	-d '{"server": "https://legacy.k8s.example", "name": "legacy-argo"}' "$api/clusters" >/dev/null ||
	t_bail "cannot add legacy-argo to the emulator"
emu_reset
t_ok "once Argo CD knows legacy-argo, up syncs legacy" idpmake up -j 4
t_grep "both packages" " 2 synced" "$OUTPUT"
t_eq "after one lookup" 1 "$(requests 'len(lines(lambda e: "id.type=name" in e["query"]))')"
t_grep "insecure: true is warned about on every run" "cluster 'west' registers with insecure: true" "$OUTPUT"

# ---- a no-op up makes no request ------------------------------------------
emu_reset
t_ok "a no-op up" idpmake up
t_eq "makes no request" 0 "$(requests 'len(log)')"

# ---- a label change: exactly the PUT ---------------------------------------
write_distro 1 yes
emu_reset
t_ok "up after changing east's ring label" idpmake up
t_eq "makes exactly the ownership check's list, then the PUT" "GET /api/v1/clusters PUT /api/v1/clusters/https%3A%2F%2Feast.k8s.example%3A6443?updatedFields=labels&updatedFields=annotations" \
	"$(requests 'lines(lambda e: e["path"] != "/api/version")')"
t_eq "which carries no credential" "None" "$(requests '[e for e in log if e["method"] == "PUT"][0]["body"].get("config")')"
t_eq "and Argo CD has the new label" "1" "$(clusters 'cl["https://east.k8s.example:6443"]["labels"]["ring"]')"

# ---- a missing token variable is named, not its value ----------------------
write_distro 1 yes EAST_TOKEN2
t_exit 1 "with the token in a variable that is not set, the pre-flight fails" idpmake up
t_grep "naming the variable" "east:register: cluster 'east': the variable EAST_TOKEN2 \(register.token-env\) is not set or empty" "$OUTPUT"
t_grep "and nothing runs" "pre-flight: 1 problem; nothing was rendered, pushed, synced or registered" "$OUTPUT"
export EAST_TOKEN2=$EAST_TOKEN
emu_reset
t_ok "with it set, east registers again" idpmake up
t_eq "the whole registration (the credential's source changed): the ownership list and the upsert" "GET POST" \
	"$(requests '[e["method"] for e in log if "/clusters" in e["path"]]')"

# ---- no credential anywhere it must not be ---------------------------------
t_ok "graph --format json" idpmake graph --format json
cp "$STDOUT" "$T/graph.json"
for secret in "$EAST_TOKEN" "$WEST_TOKEN" "$WEST_KEY" "$GIT_PASS"; do
	t_nogrep "a credential is not in the -v output of the first up" "$secret" "$T/first.out"
	t_nogrep "nor in graph json" "$secret" "$T/graph.json"
	t_eq "nor in the state or the logs" "" "$(grep -r -a -l -F -e "$secret" .idpmake)"
done

# ---- --prune unregisters only what idpmake registered ----------------------
curl -s -f -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_TEST_TOKEN" \
	-d '{"server": "https://other.k8s.example", "name": "other"}' "$api/clusters" >/dev/null ||
	t_bail "cannot add another cluster to the emulator"
write_distro 1 no EAST_TOKEN2
emu_reset
t_ok "up without west" idpmake up
t_grep "reports west as still registered" "cluster west is gone from the distro; idpmake registered it in Argo CD, where it remains \(--prune unregisters it\)" "$OUTPUT"
t_eq "and deletes nothing" "" "$(requests 'lines(lambda e: e["method"] == "DELETE")')"
emu_reset
t_ok "up --prune" idpmake up --prune
t_grep "unregisters west" "unregistered cluster 'west' from Argo CD" "$OUTPUT"
t_eq "with one DELETE of its server (after its Applications)" \
	"DELETE /api/v1/clusters/https%3A%2F%2Fwest.k8s.example%3A6443" \
	"$(requests 'lines(lambda e: e["method"] == "DELETE" and "/clusters" in e["path"])')"
t_eq "Argo CD keeps every other cluster" "https://east.k8s.example:6443 https://kubernetes.default.svc https://legacy.k8s.example https://other.k8s.example" \
	"$(clusters 'sorted(cl)')"
emu_reset
t_ok "the next up --prune" idpmake up --prune
t_eq "touches no cluster" "" "$(requests 'lines()')"

t_done
