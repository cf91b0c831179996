#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A created cluster's CA is the only one idpmake trusts for its API (issue 35 #2):
# CLUSTER:register talks to the new cluster over libcurl with the kubeconfig
# Secret's CA (CURLOPT_CAINFO_BLOB), and libcurl reads its CA folder (CApath,
# /etc/ssl/certs on Debian) beside it unless told not to.  The emulated clusters'
# server certificate is signed by a CA the system trusts for the script's length
# (system_trust, root only), and the kubeconfig Secrets name another CA: the
# register step fails on the certificate, and the Secret's credential reaches
# no request to the workload cluster.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || t_skip_rest "openssl missing: run ./configure --install-deps (openssl)"
make_tls IP:127.0.0.1 "$T/kube-tls"	# start_kube_emulator's CA, made first: its stranger is the Secrets' CA
start_capi_emulators --capi-ms 50 --ca-cert "$T/kube-tls/stranger.pem"
capi_clusterctl_init true
system_trust "$T/kube-tls/ca.pem" "${KUBE_SERVER#https://}"
idpmake() { timeout -k 5 180 "$IDPMAKE" "$@"; }
t_ok "set-up: curl trusts the clusters with the system's CAs alone" curl -fsS -m 10 -o /dev/null "$kemu/state"

mkdir -p "$T/d" || exit 1
cp -R "$top/examples/capi/packages" "$T/d/packages" || t_bail "cannot copy examples/capi/packages"
cd "$T/d" || exit 1
cat >distro.yaml <<ZZDISTRO
idpmake: 1
name: capi-ca
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  mgmt:
    server: https://kubernetes.default.svc
    kube-context: mgmt
    profiles: [management]
  w1:
    profiles: [workload]
    create:
      management: mgmt
      namespace: fleet
      class: {package: capi-classes, name: quick-start}
      version: v1.33.2
      control-plane: {replicas: 1}
      workers: {md-0: {class: default-worker, replicas: 1}}
      vars: {imageRepository: registry.k8s.io}
      timeout: 20
profiles:
  management: [capi-classes]
  workload: [podinfo]
packages:
  capi-classes: {type: manifests, path: packages/capi-classes, namespace: fleet, sync: {options: [CreateNamespace=true]}}
  podinfo: {type: manifests, path: packages/podinfo, sync: {options: [CreateNamespace=true]}}
ZZDISTRO

t_exit 1 "up: w1's Secret names another CA than the one that signed its API" idpmake up
t_grep "w1:register fails" 'w1:register' "$OUTPUT"
t_grep "... on the certificate" 'certificate|SSL' "$OUTPUT"
curl -fsS -m 10 --cacert "$KUBE_CA" "$kemu/requests" | python3 -c 'import json, sys
print(sum(1 for e in json.load(sys.stdin) if "argocd-manager" in e["path"]))' >"$T/n"
t_eq "no request for argocd-manager reached w1's API (its credential was not sent)" 0 "$(cat "$T/n")"
curl -fsS -m 10 -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/clusters" >"$T/clusters.json"
t_nogrep "w1 is not registered in Argo CD" '"name": *"w1"' "$T/clusters.json"
t_done
