#!/bin/bash
# The fake kind (lib.sh fake_kind) that the one-command bootstrap of the cnoe
# distro is tested with: `kind create cluster` records a cluster, copies its
# --config, merges a kube context kind-NAME reaching the Kubernetes API
# emulator into the kubeconfig and seeds what a fresh kind cluster holds
# (kube-system/coredns: kind's Corefile and the Deployment); `get clusters`,
# `get kubeconfig`, `delete cluster` and the "docker is not running" fault as
# kind has them.  Then every kubectl command the cnoe hooks run, and the real
# hooks themselves (distros/cnoe/hooks/tls.sh, gitea-admin.sh, coredns.sh,
# argocd-tls.sh, with the allowlisted environment idpmake gives them), against
# the emulator with the real kubectl: what they make is read back with kubectl
# get.  kubectl create sends protobuf (tests/kube-emu/proto.py).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || t_skip_rest "openssl is not installed"
start_kube_emulator
fake_kind "$T/bin"
t_ok "fake_kind writes an executable kind" test -x "$T/bin/kind"
export PATH=$T/bin:$PATH
HOST=cnoe.localtest.me
SVC=ingress-nginx-controller.ingress-nginx.svc.cluster.local

# a kubeconfig that holds another cluster already; KUBECONFIG names two files
kubeconfig_for "$T/kc" other
export KUBECONFIG=$T/kc:$T/kc-second
k() { kubectl --request-timeout=20s "$@"; }
# a hook as idpmake runs it: an allowlisted environment, no custom variables
# but the hook's own
hook() {
	env -i PATH="$PATH" HOME="$HOME" KUBECONFIG="$KUBECONFIG" TMPDIR="${TMPDIR:-/tmp}" LANG=C.UTF-8 \
		IDPMAKE_VAR_HOST="$HOST" IDPMAKE_NAMESPACE="$1" sh "$top/distros/cnoe/hooks/$2"
}
b64d() { base64 -d; }

# ---- get clusters, create cluster, the fault ----------------------------
t_ok "kind get clusters with none" kind get clusters
t_eq "prints no cluster on stdout" "" "$(cat "$STDOUT")"
t_grep "says so on stderr, as kind" '^No kind clusters found\.$' "$STDERR"

cat >cfg.yaml <<'EOF'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    extraPortMappings: [{containerPort: 443, hostPort: 8443, protocol: TCP}]
EOF
echo 'ERROR: failed to create cluster: failed to get docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >kind.fail-create
t_exit 1 "with kind.fail-create, create cluster fails" kind create cluster --name idp --config cfg.yaml
t_grep "with the fault's text on stderr" 'Cannot connect to the Docker daemon' "$STDERR"
t_fail "and no config is copied" test -e kind-config-idp.yaml
t_fail "and no kubeconfig is written" test -e "$T/kc-second"
t_nogrep "and the kubeconfig is untouched" 'kind-idp' "$T/kc"
t_ok "kind get clusters after the fault" kind get clusters
t_eq "still none" "" "$(cat "$STDOUT")"
rm kind.fail-create

t_ok "kind create cluster" kind create cluster --name idp --config cfg.yaml --wait 90s --image kindest/node:v1.32.2 --retain
t_grep "says Creating cluster" '^Creating cluster "idp" \.\.\.$' "$STDERR"
t_grep "says Set kubectl context" '^Set kubectl context to "kind-idp"$' "$STDERR"
t_ok "the --config is copied to kind-config-idp.yaml" cmp cfg.yaml kind-config-idp.yaml
t_ok "kind get clusters" kind get clusters
t_eq "lists idp" "idp" "$(cat "$STDOUT")"
t_eq "the current context is kind-idp" "kind-idp" "$(k config current-context)"
t_eq "merged into the first file of KUBECONFIG: the other context is kept" "kind-idp other" \
	"$(k --kubeconfig "$T/kc" config get-contexts -o name | sort | tr '\n' ' ' | sed 's/ $//')"
t_fail "the second file of KUBECONFIG is not written" test -e "$T/kc-second"
t_eq "cluster kind-idp reaches the emulator" "$KUBE_SERVER" \
	"$(k config view -o jsonpath='{.clusters[?(@.name=="kind-idp")].cluster.server}')"
t_ok "the other context still works" k --context other get namespace default
t_exit 1 "kind create cluster again fails" kind create cluster --name idp --config cfg.yaml
t_grep "node(s) already exist" '^ERROR: failed to create cluster: node\(s\) already exist for a cluster with the name "idp"$' "$STDERR"
t_grep "kind.log has each call's argv" '^create cluster --name idp --config cfg\.yaml --wait 90s --image kindest/node:v1\.32\.2 --retain$' kind.log
t_eq "kind.log has a line per call" 6 "$(wc -l <kind.log | tr -d ' ')"

# ---- what a fresh kind cluster holds -------------------------------------
t_ok "kube-system exists" k get namespace kube-system
t_ok "the coredns ConfigMap's Corefile" k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}'
cp "$STDOUT" corefile.0
t_grep "is kind's: .:53 {" '^\.:53 \{$' corefile.0
t_grep "with a ready line" '^    ready$' corefile.0
t_grep "and the kubernetes plugin" '^    kubernetes cluster\.local in-addr\.arpa ip6\.arpa \{$' corefile.0
t_ok "the coredns Deployment" k -n kube-system get deployment coredns -o jsonpath='{.spec.template.spec.containers[0].image}'
t_grep "runs coredns" '^registry\.k8s\.io/coredns/coredns:' "$STDOUT"

t_ok "kind get kubeconfig" kind get kubeconfig --name idp
cp "$STDOUT" idp.kubeconfig
t_ok "whose kubeconfig reaches the emulator" k --kubeconfig idp.kubeconfig get namespace kube-system
t_exit 1 "kind get kubeconfig of no cluster fails" kind get kubeconfig --name nope

# ---- the commands the cnoe hooks run, one by one ---------------------------
t_ok "create namespace --dry-run=client | apply --server-side" \
	sh -c 'kubectl create namespace scratch --dry-run=client -o yaml | kubectl apply --server-side -f -'
t_ok "the namespace exists" k get namespace scratch
t_exit 1 "get secret of an absent secret exits 1" k -n scratch get secret s
t_grep "NotFound" 'secrets "s" not found' "$STDERR"
t_ok "create secret generic (a POST, protobuf)" k -n scratch create secret generic s --from-literal=a=b --from-literal=password=pw-1
t_ok "get secret of a present one" k -n scratch get secret s
t_eq "get secret -o jsonpath={.data.password}" "pw-1" "$(k -n scratch get secret s -o jsonpath='{.data.password}' | b64d)"
t_eq "the secret is Opaque" "Opaque" "$(k -n scratch get secret s -o jsonpath='{.type}')"
t_exit 1 "create secret generic again fails" k -n scratch create secret generic s --from-literal=a=c
t_grep "AlreadyExists" 'secrets "s" already exists' "$STDERR"
t_eq "and changes nothing" "b" "$(k -n scratch get secret s -o jsonpath='{.data.a}' | b64d)"
t_exit 1 "create secret in a missing namespace fails" k -n nope create secret generic s --from-literal=a=b
t_grep "namespace NotFound" 'namespaces "nope" not found' "$STDERR"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=x -keyout x.key -out x.crt 2>/dev/null
t_ok "create secret tls" k -n scratch create secret tls t --cert x.crt --key x.key
t_eq "its type" "kubernetes.io/tls" "$(k -n scratch get secret t -o jsonpath='{.type}')"
t_eq "its tls.crt" "$(cat x.crt)" "$(k -n scratch get secret t -o 'jsonpath={.data.tls\.crt}' | b64d)"
t_ok "create namespace (a POST, protobuf)" k create namespace argocd
t_ok "create configmap (a POST, protobuf)" k -n scratch create configmap c --from-literal=k=v
t_eq "its data" "v" "$(k -n scratch get configmap c -o jsonpath='{.data.k}')"

# ---- the cnoe hooks --------------------------------------------------------
t_ok "tls.sh" hook ingress-nginx tls.sh
t_grep "made a certificate" "^tls: made a self-signed certificate for $HOST" "$STDOUT"
t_eq "ingress-nginx/idpmake-tls is a TLS secret" "kubernetes.io/tls" \
	"$(k -n ingress-nginx get secret idpmake-tls -o jsonpath='{.type}')"
k -n ingress-nginx get secret idpmake-tls -o 'jsonpath={.data.tls\.crt}' | b64d >tls.crt
openssl x509 -in tls.crt -noout -ext subjectAltName >san.txt 2>&1
t_grep "for the host and its subdomains" "DNS:$HOST, DNS:\*\.$HOST" san.txt
rv=$(k -n ingress-nginx get secret idpmake-tls -o jsonpath='{.metadata.resourceVersion}')
t_ok "tls.sh again" hook ingress-nginx tls.sh
t_grep "keeps it" '^tls: secret ingress-nginx/idpmake-tls exists; kept$' "$STDOUT"
t_eq "unchanged" "$rv" "$(k -n ingress-nginx get secret idpmake-tls -o jsonpath='{.metadata.resourceVersion}')"

t_ok "gitea-admin.sh" hook gitea gitea-admin.sh
t_grep "made the credential" '^gitea-admin: made gitea/gitea-credential' "$STDOUT"
t_eq "user giteaAdmin" "giteaAdmin" "$(k -n gitea get secret gitea-credential -o jsonpath='{.data.username}' | b64d)"
pw=$(k -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | b64d)
printf '%s\n' "$pw" >pw.txt
t_grep "a random password" '^[0-9a-f]{32}$' pw.txt
t_ok "gitea-admin.sh again" hook gitea gitea-admin.sh
t_grep "keeps it" '^gitea-admin: secret gitea/gitea-credential exists; kept$' "$STDOUT"
t_eq "the same password" "$pw" "$(k -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | b64d)"

t_eq "coredns has not been restarted yet" "" \
	"$(k -n kube-system get deployment coredns -o 'jsonpath={.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}')"
t_ok "coredns.sh" hook ingress-nginx coredns.sh
t_grep "says what it did" "^coredns: $HOST and \*\.$HOST now resolve to $SVC$" "$STDOUT"
k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}' >corefile.1
t_grep "the Corefile rewrites the host" "^    rewrite name $HOST $SVC$" corefile.1
t_grep "and its subdomains" "^    rewrite name regex \(\.\*\)\\\\\.cnoe\\\\\.localtest\\\\\.me $SVC answer auto$" corefile.1
t_eq "before ready, the rest kept" "$(sed '/^    ready$/i\
    rewrite name '"$HOST $SVC"'\
    rewrite name regex (.*)\\.cnoe\\.localtest\\.me '"$SVC"' answer auto' corefile.0)" "$(cat corefile.1)"
k -n kube-system get configmap coredns --show-managed-fields -o jsonpath='{.metadata.managedFields[*].manager}' >managers.txt
t_grep "applied by the field manager idpmake-hook" 'idpmake-hook' managers.txt
k -n kube-system get deployment coredns -o 'jsonpath={.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}' >restarted.txt
t_grep "the coredns Deployment is restarted" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' restarted.txt
t_ok "coredns.sh again" hook ingress-nginx coredns.sh
t_grep "does nothing" "^coredns: already rewrites $HOST$" "$STDOUT"
t_ok "the Corefile is unchanged" cmp corefile.1 <(k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}')

t_ok "argocd-tls.sh" hook ingress-nginx argocd-tls.sh
t_grep "says so" "^argocd-tls: Argo CD trusts the certificate of $HOST$" "$STDOUT"
t_ok "argocd-tls-certs-cm holds the host's certificate" cmp tls.crt \
	<(k -n argocd get configmap argocd-tls-certs-cm -o "jsonpath={.data.cnoe\.localtest\.me}"; echo)

# the last two commands by hand: apply over the Corefile, rollout restart
cf=$(k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}')
# shellcheck disable=SC2016 # $1 is the inner shell's
t_ok "create configmap --dry-run | apply --server-side --force-conflicts --field-manager" sh -c \
	'kubectl -n kube-system create configmap coredns --from-literal=Corefile="$1" --dry-run=client -o yaml |
	kubectl apply --server-side --force-conflicts --field-manager=idpmake-hook -f -' sh "$cf
# by hand"
k -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}' >corefile.2
t_grep "the Corefile changed" '^# by hand$' corefile.2
gen=$(k -n kube-system get deployment coredns -o jsonpath='{.metadata.generation}')
t_ok "rollout restart deployment coredns" k -n kube-system rollout restart deployment coredns
t_eq "a new generation of the Deployment" "$((gen + 1))" \
	"$(k -n kube-system get deployment coredns -o jsonpath='{.metadata.generation}')"
t_ok "rollout status" k -n kube-system rollout status deployment coredns --timeout=30s

# ---- delete ------------------------------------------------------------------
t_ok "kind delete cluster" kind delete cluster --name idp
t_grep "says Deleting cluster" '^Deleting cluster "idp" \.\.\.$' "$STDERR"
t_ok "kind get clusters after the delete" kind get clusters
t_eq "lists none" "" "$(cat "$STDOUT")"
t_grep "says so" '^No kind clusters found\.$' "$STDERR"
t_nogrep "the kubeconfig has no kind-idp left" 'kind-idp' "$T/kc"
t_eq "the other context is kept" "other" "$(k --kubeconfig "$T/kc" config get-contexts -o name)"
t_ok "kind delete cluster of no cluster exits 0" kind delete cluster --name idp
t_grep "as kind" '^Deleting cluster "idp" \.\.\.$' "$STDERR"

# ---- where the kubeconfig goes -----------------------------------------------
t_ok "--kubeconfig FILE" kind create cluster --name three --config cfg.yaml --kubeconfig "$T/kc3"
t_eq "is written" "kind-three" "$(k --kubeconfig "$T/kc3" config current-context)"
t_nogrep "and KUBECONFIG's file is not" 'kind-three' "$T/kc"
t_ok "without KUBECONFIG" env -u KUBECONFIG kind create cluster --name=two --config=cfg.yaml
t_eq "\$HOME/.kube/config is written" "kind-two" "$(k --kubeconfig "$HOME/.kube/config" config current-context)"
t_ok "and reaches the emulator" k --kubeconfig "$HOME/.kube/config" get namespace kube-system
t_ok "kind get clusters" kind get clusters
t_eq "lists both" "three two" "$(tr '\n' ' ' <"$STDOUT" | sed 's/ $//')"
t_ok "delete three (--kubeconfig)" kind delete cluster --name three --kubeconfig "$T/kc3"
t_nogrep "kind-three is gone from its file" 'kind-three' "$T/kc3"
t_ok "delete two" env -u KUBECONFIG kind delete cluster --name two
t_nogrep "kind-two is gone from \$HOME/.kube/config" 'kind-two' "$HOME/.kube/config"
t_exit 1 "an unknown command fails" kind load docker-image x
t_grep "naming it" 'unknown command "load docker-image x"' "$STDERR"

t_done
