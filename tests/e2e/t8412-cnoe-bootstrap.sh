#!/bin/bash
# Issue 24's "one command from nothing" for the built-in cnoe distro: a
# distro that `extends: cnoe` and ONE `idpmake up` from an empty state, with
# no token exported (no ARGOCD_AUTH_TOKEN, IDPMAKE_GIT_TOKEN or ARGOCD_OPTS):
# idpmake makes the kind cluster (the fake kind of lib.sh, backed by the
# Kubernetes API emulator the real kubectl talks to), the CA and certificate
# (step tls, the real openssl), applies the core (argocd, ingress-nginx,
# gitea: stand-in charts of the same names and versions, rendered by the real
# helm, applied with kubectl --server-side), runs their hooks (tls, coredns,
# argocd-tls, gitea admin, gitea repos), pushes to the GitOps remote (the
# real smart-HTTP git server of lib.sh) as Gitea's admin with the password
# the gitea-admin hook generated (git.credentials), logs in to the Argo CD
# emulator under /argocd with the password of argocd-initial-admin-secret
# (argocd.login) and syncs the rest.  Then a no-op up does nothing, and a
# change to one package runs only that package's steps.  A second scenario:
# an existing cluster (create: null, kube-context) is bootstrapped the same
# way, and kind is never called (issue 24 #5).  A third: a first up stopped
# after the certificate and Argo CD's apply, before Gitea's Secret exists, is
# finished by ONE more up, which reads git.credentials when its push needs it
# (issue 35 #4); and a no-op up, plan and diff read that Secret only for a
# fetch that asks for a login (#13).
#
# The user runs ONE idpmake command for the bootstrap (`idpmake up`); the
# test prints its wall time as a `# ` line: about 10 s on an idle machine
# (9.8 to 11 s here, most of it kubectl and helm against the emulators).  A
# no-op up logs in to Argo CD only when a request is to be made (argocd.login
# waits for one; the ownership check still asks when a render reruns).
#
# Stand-ins for the internet and for what real Argo CD and Gitea do (the
# distro's test plumbing; clusters/create, tls, argocd.login,
# git.credentials and the hooks are cnoe's, untouched):
#  - the chart repositories are vars: argo-helm, ingress-nginx-charts and
#    gitea-charts point at a local chart repository of stand-in charts;
#  - git.remote is the test git server's giteaAdmin/idpmake-gitops, plain
#    http on loopback (so IDPMAKE_GIT_ALLOW_HTTP=1, which lib.sh's
#    start_git_server exports: a permission for http, not a credential);
#  - argocd.server is the Argo CD emulator (https on loopback, argocd.ca-file the test CA), grpc-web-root-path
#    and login as cnoe sets them;
#  - the stand-in argo-cd chart holds the Secret argocd-initial-admin-secret
#    (real Argo CD makes it when it starts), so the base64 of Argo CD's
#    password is in that chart's render by construction: the checks below
#    look for the password itself;
#  - a fake curl on PATH answers Gitea's API for hooks/gitea-repos.sh: POST
#    /user/repos with the login USER:PASS in curl's config on its stdin (-K -)
#    and --cacert the state's CA makes the bare repository on the git server
#    and makes USER:PASS the git server's login (as creating the admin in
#    Gitea would); every curl's and kubectl's arguments are logged, and hold
#    no password (issue 35 #3);
#  - the reference implementation's packages whose sources need the internet
#    (keycloak, argo-workflows, backstage, backstage-templates) are removed;
#    external-secrets, metric-server and spark-operator are Helm charts Argo
#    CD renders (the emulator needs no chart).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"
command -v openssl >/dev/null 2>&1 || t_skip_rest "openssl is not installed"
real_curl=$(command -v curl) || t_skip_rest "curl is not installed"

# ---- the servers ---------------------------------------------------------
# shellcheck disable=SC2119 # no arguments
start_kube_emulator
fake_kind "$T/bin"
start_git_server
repo_dir=$T/git-srv/repos/giteaAdmin/idpmake-gitops.git
remote=$GIT_HTTP_BASE/giteaAdmin/idpmake-gitops.git
PW=argo-$(random_string)
export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
# over https (a CA of the test's: argocd.ca-file), as idpmake sends a token
# over plain http only with --plaintext in ARGOCD_OPTS
start_argocd_emulator --user "admin:$PW" --rootpath /argocd --repo-map "$remote=$repo_dir" \
	--op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--tls-cert "$T/kube-tls/server.pem" --tls-key "$T/kube-tls/server.key"
argocd_server=$ARGOCD_SERVER
emu=https://$ARGOCD_SERVER/_emu
ecurl() { "$real_curl" -fsS -m 10 --cacert "$KUBE_CA" "$@"; }
emu_reset() { ecurl -X POST -H 'Content-Type: application/json' -d '{}' "$emu/reset" >/dev/null || t_bail "cannot reset the Argo CD emulator"; }
# nothing exported: the emulator's server, options and token are the distro's business
unset ARGOCD_SERVER ARGOCD_OPTS ARGOCD_AUTH_TOKEN ARGOCD_TEST_TOKEN IDPMAKE_GIT_TOKEN IDPMAKE_GIT_USERNAME KUBECONFIG

# ---- stand-in charts -----------------------------------------------------------
cat >"$T/admin-secret.yaml" <<EOF
# what Argo CD makes when it starts
apiVersion: v1
kind: Secret
metadata:
  name: argocd-initial-admin-secret
  namespace: argocd
type: Opaque
data:
  password: $(printf %s "$PW" | base64 -w0)
EOF
mkchart argo-cd 8.5.6 "$T/admin-secret.yaml"
mkchart ingress-nginx 4.13.0
mkchart gitea 12.1.2
t_ok "the stand-in charts are packaged" test -f repo/argo-cd-8.5.6.tgz -a -f repo/ingress-nginx-4.13.0.tgz -a -f repo/gitea-12.1.2.tgz
start_chart_repo "$T/repo"

# ---- Gitea's API, for hooks/gitea-repos.sh: a fake curl ------------------------
# Children get an allowlisted environment: the paths are written in.  Anything
# but Gitea's API goes to the real curl.
cat >"$T/bin/curl" <<EOF
#!/bin/sh
T=$(t_shquote "$T")
REAL=$(t_shquote "$real_curl")
EOF
cat >>"$T/bin/curl" <<'EOF'
case "$*" in
*/gitea/api/v1/*) ;;
*) exec "$REAL" "$@" ;;
esac
# every argument as given: a password in them is what the test looks for
echo "curl $*" >>"$T/curl.log"
user='' data='' url='' wcode='' cacert=''
while [ $# -gt 0 ]; do
	case $1 in
	-u) user=$2; shift ;;
	-K)
		# curl's config on stdin (hooks/gitea-repos.sh): the line user = "USER:PASS"
		[ "$2" = - ] && user=$(sed -n 's/^user = "\(.*\)"$/\1/p' | sed 's/\\\(.\)/\1/g')
		shift ;;
	--cacert) cacert=$2; shift ;;
	--capath) shift ;;
	-k|--insecure|-[!-]*k*) echo "curl: -k: the password would go to any server" >>"$T/curl.log" ;;
	-d) data=$2; shift ;;
	-w) wcode=1; shift ;;
	-o|-H|-X) shift ;;
	-*) ;;
	*) url=$1 ;;
	esac
	shift
done
code=200
# the server's certificate checked with the CA of the step tls (hooks/gitea-repos.sh, IDPMAKE_TLS_CA)
ok=''
for st in "$T"/d*/.idpmake/tls/ca.crt; do
	[ -n "$cacert" ] && cmp -s "$cacert" "$st" && ok=1
done
case $url in
*/api/v1/version) echo '{"version":"1.24.6"}' >/dev/null ;;
*/api/v1/user/repos)
	[ -n "$ok" ] || { echo "curl: the certificate is not checked with the state's CA (--cacert '$cacert')" >>"$T/curl.log"; code=495; }
	[ -n "$user" ] || [ $code != 200 ] || code=401
	if [ $code = 200 ]; then
		name=$(printf '%s' "$data" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
		u=${user%%:*}
		dir=$T/git-srv/repos/$u/$name.git
		# the admin made in Gitea: its login is the git server's (one line per user)
		grep -v "^$u:" "$T/git-srv/users" >"$T/git-srv/users.new"
		printf '%s\n' "$user" >>"$T/git-srv/users.new"
		mv "$T/git-srv/users.new" "$T/git-srv/users"
		if [ -d "$dir" ]; then
			code=409
		else
			git init -q --bare -b main "$dir" && git -C "$dir" config http.receivepack true || code=500
			[ $code != 200 ] || code=201
		fi
	fi
	;;
*) code=404 ;;
esac
[ -z "$wcode" ] || printf '%s' "$code"
case $code in 2*) exit 0 ;; esac
[ -n "$wcode" ] && exit 0
exit 22
EOF
chmod +x "$T/bin/curl"

# ---- kubectl, idpmake's and the hooks': a wrapper that logs every call's arguments ----
# (a password in them is what the test looks for; the reads of gitea-credential are
# counted) and fails the making of Gitea's Secret once while $T/fail-gitea-admin
# exists: a first up stopped after the certificate and Argo CD's apply, before
# Gitea's Secret exists (issue 35 #4)
real_kubectl=$(command -v kubectl) || t_skip_rest "kubectl is not installed"
cat >"$T/bin/kubectl" <<EOF
#!/bin/sh
T=$(t_shquote "$T")
REAL=$(t_shquote "$real_kubectl")
EOF
cat >>"$T/bin/kubectl" <<'EOF'
echo "kubectl $*" >>"$T/kubectl.log"
case "$*" in
*"create secret generic gitea-credential"*)
	if [ -e "$T/fail-gitea-admin" ]; then
		rm -f "$T/fail-gitea-admin"
		echo "kubectl: stopped here by the test" >&2
		exit 1
	fi
	;;
esac
exec "$REAL" "$@"
EOF
chmod +x "$T/bin/kubectl"
export PATH=$T/bin:$PATH
# the reads of Gitea's Secret so far, idpmake's (git.credentials) and the hooks'
secret_reads() { grep -c 'get secret gitea-credential' "$T/kubectl.log"; }

# ---- the distro -----------------------------------------------------------------
mkdistro d <<EOF
idpmake: 1
name: my-cnoe
extends: cnoe
vars:
  argo-helm: "$REPO"
  ingress-nginx-charts: "$REPO"
  gitea-charts: "$REPO"
git:
  remote: "$remote"
argocd:
  server: "$argocd_server"
  ca-file: "$KUBE_CA"
packages:
  keycloak: null
  argo-workflows: null
  backstage: null
  backstage-templates: null
EOF
state=$T/d/.idpmake
creates() { if [ -f "$T/kind.made" ]; then wc -l <"$T/kind.made"; else echo 0; fi; }
k() { kubectl --context kind-localdev "$@"; }
logins() {
	ecurl "$emu/requests" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if e["method"] == "POST" and e["path"] == "/argocd/api/v1/session"))'
}
# the Applications the emulator holds: "NAME SYNC HEALTH", sorted
apps() {
	ecurl "$emu/apps" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d.values() if isinstance(d, dict) else d
for a in sorted(d, key=lambda a: a["metadata"]["name"]):
    st = a.get("status") or {}
    print(a["metadata"]["name"], (st.get("sync") or {}).get("status"), (st.get("health") or {}).get("status"))'
}
# the POST .../sync of the Argo CD API since the last emu_reset: "APP" per line
syncs() {
	ecurl "$emu/requests" | python3 -c '
import json, re, sys
for e in json.load(sys.stdin):
    m = re.search(r"/api/v1/applications/([^/?]+)/sync$", e["path"])
    if e["method"] == "POST" and m:
        print(m.group(1))'
}
pushes() { grep -c '^POST /giteaAdmin/idpmake-gitops.git/git-receive-pack' "$T/git-srv/access.log"; }

t_ok "validate" idpmake -C d validate
t_grep "cnoe's packages but the four removed" '6 packages' "$OUTPUT"

# ---- ONE command from nothing ------------------------------------------------------
emu_reset
start_ns=$(date +%s%N)
t_ok "idpmake up, from nothing, nothing exported" idpmake -C d up
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
cp "$OUTPUT" "$T/bootstrap.out"
cp "$STDERR" "$T/bootstrap.err"
t_grep "the platform block names what is installed: gitea" '^  gitea +https://' "$T/bootstrap.out"
t_nogrep "and not the packages the flavour removed (issue 37 #3)" '^  (keycloak|argo-workflows|backstage) +https://' "$T/bootstrap.out"
echo "# the bootstrap: 1 idpmake command, $elapsed_ms ms wall time"
head -n 1 "$STDERR" >"$T/first-line"
t_grep "the first line says the cluster and its context, before acting" 'kubectl in-cluster: kind cluster localdev, context kind-localdev' "$T/first-line"
t_nogrep "and says no error, nor asks for a token (the remote is read once git.credentials can be)" 'error:|IDPMAKE_GIT_TOKEN|ARGOCD_AUTH_TOKEN' "$T/bootstrap.err"
t_eq "kind create cluster ran once" 1 "$(creates)"
t_grep "kind made localdev with idpmake's config" '^create cluster --name localdev --config ' "$T/kind.log"
t_eq "the CA key is 0600" 600 "$(stat -c %a "$state/tls/ca.key" 2>&1)"
t_ok "the CA and certificate are there" test -s "$state/tls/ca.crt" -a -s "$state/tls/tls.crt" -a -s "$state/tls/tls.key"
t_ok "the certificate is signed by the CA" openssl verify -CAfile "$state/tls/ca.crt" "$state/tls/tls.crt"
cp "$state/tls/ca.crt" "$T/ca.crt.1"
k -n ingress-nginx get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' 2>&1 | base64 -d >"$T/ingress.crt" 2>/dev/null
t_ok "the ingress Secret ingress-nginx/idpmake-tls holds STATE/tls/tls.crt" cmp "$T/ingress.crt" "$state/tls/tls.crt"
k -n argocd get configmap argocd-tls-certs-cm -o jsonpath='{.data.cnoe\.localtest\.me}' >"$T/argocd-tls.crt" 2>&1
t_eq "argocd-tls-certs-cm holds the CA" "$(cat "$state/tls/ca.crt")" "$(cat "$T/argocd-tls.crt")"
k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}' >"$T/Corefile" 2>&1
t_grep "coredns rewrites the host" 'rewrite name cnoe.localtest.me ingress-nginx-controller' "$T/Corefile"
t_ok "the core's charts were applied (argo-cd)" k -n argocd get configmap argo-cd-values
t_ok "(ingress-nginx)" k -n ingress-nginx get configmap ingress-nginx-values
t_ok "(gitea)" k -n gitea get configmap gitea-values
GPW=$(k -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
t_ok "the gitea-admin hook made Gitea's password" test -n "$GPW"
t_grep "the gitea-repos hook made the GitOps repository through Gitea's API" 'POST|user/repos' "$T/curl.log"
t_grep "the push went as giteaAdmin (git.credentials)" '^POST /giteaAdmin/idpmake-gitops.git/git-receive-pack\? giteaAdmin$' "$T/git-srv/access.log"
git --git-dir="$repo_dir" ls-tree -d --name-only main in-cluster/ >"$T/folders" 2>&1
for p in argocd ingress-nginx gitea external-secrets metric-server spark-operator; do
	t_grep "the GitOps repository has in-cluster/$p" "^in-cluster/$p\$" "$T/folders"
done
apps >"$T/apps" 2>&1
for p in external-secrets metric-server spark-operator; do
	t_grep "Argo CD has in-cluster-$p, synced and healthy" "^in-cluster-$p Synced Healthy\$" "$T/apps"
done
t_nogrep "the core is not an Argo CD Application" '^in-cluster-(argocd|ingress-nginx|gitea) ' "$T/apps"
t_eq "one login: POST /argocd/api/v1/session" 1 "$(logins)"
t_nostring "Argo CD's password is in no output" "$PW" "$T/bootstrap.out"
t_nostring "nor the state folder" "$PW" "$state"
t_nostring "nor the GitOps repository" "$PW" "$repo_dir"
# no child was given a password in its arguments (/proc/PID/cmdline), nor told to send it unchecked (issue 35 #3)
t_nogrep "the hooks' curl checked Gitea's certificate with the state's CA, never -k" '^curl: ' "$T/curl.log"
if [ -n "$GPW" ]; then
	t_nostring "Gitea's password is in no kubectl's arguments" "$GPW" "$T/kubectl.log"
	t_nostring "nor curl's" "$GPW" "$T/curl.log"
	t_nostring "Gitea's password is in no output" "$GPW" "$T/bootstrap.out"
	t_nostring "nor the state folder" "$GPW" "$state"
	t_nostring "nor the GitOps repository" "$GPW" "$repo_dir"
	t_nostring "nor its base64" "$(printf %s "$GPW" | base64 -w0)" "$T/bootstrap.out" "$state" "$repo_dir"
fi

# ---- a no-op ----------------------------------------------------------------------
emu_reset
pushes_before=$(pushes)
reads_before=$(secret_reads)
t_ok "up again" idpmake -C d up
t_grep "nothing runs" ' 0 rendered, nothing pushed, 0 synced, 0 hooks, [0-9]+ up to date' "$STDOUT"
t_eq "no second kind cluster" 1 "$(creates)"
t_ok "no new CA (the same bytes)" cmp "$T/ca.crt.1" "$state/tls/ca.crt"
t_eq "no push" "$pushes_before" "$(pushes)"
t_eq "no sync" "" "$(syncs)"
echo "# the no-op logged in to Argo CD $(logins) time(s) (argocd.login waits for a request; the ownership check still makes one when a render reruns)"
t_nostring "the passwords in no output" "$PW" "$OUTPUT"
[ -z "$GPW" ] || t_nostring "(Gitea's)" "$GPW" "$OUTPUT"
# git.credentials is read when a fetch or a push needs it, and a no-op needs neither (issue 35 #13)
t_eq "the no-op up read no Secret gitea-credential" "$reads_before" "$(secret_reads)"
t_ok "plan" idpmake -C d plan
t_eq "plan read no Secret gitea-credential" "$reads_before" "$(secret_reads)"
fetches_before=$(grep -c '^GET /giteaAdmin/idpmake-gitops.git/info/refs?service=git-upload-pack giteaAdmin$' "$T/git-srv/access.log")
t_ok "diff" idpmake -C d diff
t_eq "diff read it once: for its fetch, which the git server asks a login for" "$((reads_before + 1))" "$(secret_reads)"
t_eq "(the fetch, as giteaAdmin)" "$((fetches_before + 1))" \
	"$(grep -c '^GET /giteaAdmin/idpmake-gitops.git/info/refs?service=git-upload-pack giteaAdmin$' "$T/git-srv/access.log")"

# ---- one package changed: only its steps run ---------------------------------------
cat >>d/distro.yaml <<'EOF'
  metric-server:
    set: {replicas: "2"}
EOF
emu_reset
t_ok "up after metric-server's value changed" idpmake -C d up
t_grep "one rendered, one synced, no hook" ' 1 rendered, .* 1 synced, 0 hooks' "$STDOUT"
t_eq "only metric-server is synced" "in-cluster-metric-server" "$(syncs | sort -u | tr '\n' ' ' | sed 's/ $//')"
t_eq "no second kind cluster" 1 "$(creates)"
t_ok "no new CA" cmp "$T/ca.crt.1" "$state/tls/ca.crt"
t_eq "one login for the change" 1 "$(logins)"
t_nostring "the passwords in no output" "$PW" "$OUTPUT"
[ -z "$GPW" ] || t_nostring "(Gitea's)" "$GPW" "$OUTPUT"

# ---- an existing cluster (issue 24 #5): create: null, kube-context -------------------
# A second cluster (a second Kubernetes emulator) reached through the context
# "mine", with its own Argo CD (a second emulator) and its own, fresh Gitea
# (the repositories on the git server removed: the gitea-repos hook makes
# them again, the gitea-admin hook a new password).  The same distro, in a
# folder of its own with an empty state, says the context and never calls kind.
first_kube=$KUBE_SERVER
# shellcheck disable=SC2119 # no arguments
start_kube_emulator
t_ok "the second cluster is another emulator" test "$KUBE_SERVER" != "$first_kube"
t_ok "a context mine reaches it" sh -c "kubectl config set-cluster mine --server '$KUBE_SERVER' --certificate-authority '$KUBE_CA' >/dev/null &&
	kubectl config set-credentials mine --token '$KUBE_TOKEN' >/dev/null &&
	kubectl config set-context mine --cluster mine --user mine >/dev/null"
# what an existing cluster holds and the coredns hook edits (kubeadm's, kind's)
cat >"$T/coredns.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa
        forward . /etc/resolv.conf
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec: {containers: [{name: coredns, image: "registry.k8s.io/coredns/coredns:v1.11.3"}]}
EOF
t_ok "the cluster's CoreDNS" kubectl --context mine apply --server-side --field-manager=kubeadm -f "$T/coredns.yaml"
rm -rf "${T:?}/git-srv/repos/giteaAdmin"
start_argocd_emulator --user "admin:$PW" --rootpath /argocd --repo-map "$remote=$repo_dir" \
	--op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--tls-cert "$T/kube-tls/server.pem" --tls-key "$T/kube-tls/server.key"
emu=https://$ARGOCD_SERVER/_emu
mkdistro d2 <<EOF
idpmake: 1
name: my-cnoe
extends: cnoe
vars:
  argo-helm: "$REPO"
  ingress-nginx-charts: "$REPO"
  gitea-charts: "$REPO"
git:
  remote: "$remote"
argocd:
  server: "$ARGOCD_SERVER"
  ca-file: "$KUBE_CA"
clusters:
  in-cluster: {create: null, kube-context: mine}
packages:
  keycloak: null
  argo-workflows: null
  backstage: null
  backstage-templates: null
EOF
unset ARGOCD_SERVER ARGOCD_OPTS ARGOCD_AUTH_TOKEN ARGOCD_TEST_TOKEN
state2=$T/d2/.idpmake
kind_calls=$(wc -l <"$T/kind.log")
emu_reset
start_ns=$(date +%s%N)
t_ok "idpmake up into the existing cluster, nothing exported" idpmake -C d2 up
elapsed2_ms=$((($(date +%s%N) - start_ns) / 1000000))
echo "# the bootstrap into an existing cluster: 1 idpmake command, $elapsed2_ms ms wall time"
head -n 1 "$STDERR" >"$T/first-line"
t_grep "the first line says the context, before acting" 'kubectl in-cluster: .*context mine' "$T/first-line"
t_nogrep "it made no cluster" 'in-cluster:kind' "$STDOUT"
t_nogrep "and says no error, nor asks for a token" 'error:|IDPMAKE_GIT_TOKEN|ARGOCD_AUTH_TOKEN' "$STDERR"
t_eq "kind was never called" "$kind_calls" "$(wc -l <"$T/kind.log")"
t_eq "no kind cluster made" 1 "$(creates)"
km() { kubectl --context mine "$@"; }
t_eq "the CA key is 0600" 600 "$(stat -c %a "$state2/tls/ca.key" 2>&1)"
km -n ingress-nginx get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' 2>&1 | base64 -d >"$T/ingress2.crt" 2>/dev/null
t_ok "the ingress Secret in mine holds this state's certificate" cmp "$T/ingress2.crt" "$state2/tls/tls.crt"
km -n argocd get configmap argocd-tls-certs-cm -o jsonpath='{.data.cnoe\.localtest\.me}' >"$T/argocd-tls2.crt" 2>&1
t_eq "argocd-tls-certs-cm in mine holds this state's CA" "$(cat "$state2/tls/ca.crt")" "$(cat "$T/argocd-tls2.crt")"
GPW2=$(km -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
t_ok "a new Gitea password" test -n "$GPW2" -a "$GPW2" != "$GPW"
t_grep "pushed as giteaAdmin" '^POST /giteaAdmin/idpmake-gitops.git/git-receive-pack\? giteaAdmin$' "$T/git-srv/access.log"
git --git-dir="$repo_dir" ls-tree -d --name-only main in-cluster/ >"$T/folders2" 2>&1
for p in argocd ingress-nginx gitea external-secrets metric-server spark-operator; do
	t_grep "the GitOps repository has in-cluster/$p" "^in-cluster/$p\$" "$T/folders2"
done
apps >"$T/apps2" 2>&1
for p in external-secrets metric-server spark-operator; do
	t_grep "the second Argo CD has in-cluster-$p, synced and healthy" "^in-cluster-$p Synced Healthy\$" "$T/apps2"
done
t_eq "one login" 1 "$(logins)"
t_nostring "Argo CD's password is in no output, state or repository" "$PW" "$OUTPUT" "$state2" "$repo_dir"
[ -z "$GPW2" ] || t_nostring "nor Gitea's" "$GPW2" "$OUTPUT" "$state2" "$repo_dir"

# ---- an interrupted bootstrap resumes (issue 35 #4) --------------------------------------
# A third cluster (create: null, as above), its own Argo CD and a fresh Gitea.  The
# first up stops after the certificate and Argo CD's apply, as Gitea's Secret is
# being made (the kubectl wrapper fails it once: where a Ctrl-C during Argo CD's
# rollout leaves a real bootstrap).  The next up is no bootstrap any more (the
# certificate is made): its gitea hooks make the Secret and the repository, and the
# push reads git.credentials then, when it needs them: ONE more up finishes.
# shellcheck disable=SC2119 # no arguments
start_kube_emulator
t_ok "a context mine3 reaches a third cluster" sh -c "kubectl config set-cluster mine3 --server '$KUBE_SERVER' --certificate-authority '$KUBE_CA' >/dev/null &&
	kubectl config set-credentials mine3 --token '$KUBE_TOKEN' >/dev/null &&
	kubectl config set-context mine3 --cluster mine3 --user mine3 >/dev/null"
t_ok "its CoreDNS" kubectl --context mine3 apply --server-side --field-manager=kubeadm -f "$T/coredns.yaml"
rm -rf "${T:?}/git-srv/repos/giteaAdmin"
start_argocd_emulator --user "admin:$PW" --rootpath /argocd --repo-map "$remote=$repo_dir" \
	--op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--tls-cert "$T/kube-tls/server.pem" --tls-key "$T/kube-tls/server.key"
emu=https://$ARGOCD_SERVER/_emu
sed -e "s|kube-context: mine}|kube-context: mine3}|" -e "s|^  server: .*|  server: \"$ARGOCD_SERVER\"|" d2/distro.yaml >"$T/d3.yaml"
mkdistro d3 <"$T/d3.yaml"
t_grep "d3 is d2 in the third cluster" "kube-context: mine3" d3/distro.yaml
unset ARGOCD_SERVER ARGOCD_OPTS ARGOCD_AUTH_TOKEN ARGOCD_TEST_TOKEN
km3() { kubectl --context mine3 "$@"; }
admin_pushes() { grep -c '^POST /giteaAdmin/idpmake-gitops.git/git-receive-pack? giteaAdmin$' "$T/git-srv/access.log"; }
admin_pushes_before=$(admin_pushes)
touch "$T/fail-gitea-admin"
t_fail "the first up stops as Gitea's Secret is made" idpmake -C d3 up
t_ok "(the test's fault stopped it)" test ! -e "$T/fail-gitea-admin"
t_ok "after the certificate" test -s "$T/d3/.idpmake/tls/ca.crt"
t_ok "and Argo CD's apply" km3 -n argocd get configmap argo-cd-values
t_fail "before Gitea's Secret" km3 -n gitea get secret gitea-credential
emu_reset
t_ok "the next up finishes the bootstrap" idpmake -C d3 up
t_nogrep "with no error, nor a word of a token" 'error:|IDPMAKE_GIT_TOKEN' "$STDERR"
t_eq "it pushed, as giteaAdmin" "$((admin_pushes_before + 1))" "$(admin_pushes)"
apps >"$T/apps3" 2>&1
for p in external-secrets metric-server spark-operator; do
	t_grep "the third Argo CD has in-cluster-$p, synced and healthy" "^in-cluster-$p Synced Healthy\$" "$T/apps3"
done
GPW3=$(km3 -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
t_ok "a third Gitea password" test -n "$GPW3" -a "$GPW3" != "$GPW2"
[ -z "$GPW3" ] || t_nostring "in no output, state or repository" "$GPW3" "$OUTPUT" "$T/d3/.idpmake" "$repo_dir"
[ -z "$GPW3" ] || t_nostring "nor any kubectl's or curl's arguments" "$GPW3" "$T/kubectl.log" "$T/curl.log"
t_ok "and then a no-op" idpmake -C d3 up
t_grep "(nothing runs)" ' 0 rendered, nothing pushed, 0 synced, 0 hooks, [0-9]+ up to date' "$STDOUT"

t_done
