#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# `pack` leaves out the files a kubeconfig names (issue 20 #5, review): a
# cluster's register.kubeconfig in the distro folder was left out, but the
# client-key, tokenFile, client-certificate and certificate-authority files
# it names beside it were packed with their contents (a private key and a
# bearer token in the archive).  pack names each one it leaves out.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

key=key-$(random_string) tok=tok-$(random_string)
git init -q --bare -b main "$T/gitops.git" || t_bail "git init failed"
mkdistro d <<DISTRO
idpmake: 1
name: kube
git: {remote: "$T/gitops.git"}
argocd: {server: argocd.invalid, repo-url: "file://$T/gitops.git"}
clusters:
  in-cluster: {server: "https://kubernetes.default.svc"}
  eu-1: {server: "https://eu-1:6443", register: {kubeconfig: creds/kubeconfig, context: eu-1}}
packages:
  web:
    type: manifests
    path: manifests
DISTRO
mkmanifest d/manifests/cm.yaml ConfigMap web default
mkdir d/creds
cat >d/creds/kubeconfig <<'KUBE'
apiVersion: v1
kind: Config
current-context: eu-1
contexts: [{name: eu-1, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://eu-1:6443", certificate-authority: ca.crt}}]
users: [{name: u, user: {client-certificate: client.crt, client-key: client.key, tokenFile: tok.txt}}]
KUBE
echo "$key" >d/creds/client.key
echo "$tok" >d/creds/tok.txt
echo cert >d/creds/client.crt
echo ca >d/creds/ca.crt

t_ok "pack" idpmake -C d pack -o "$T/b.tar"
t_grep "the client key is named" "leaving out .*/d/creds/client\\.key: .*kubeconfig:6: client-key names it" "$STDERR"
t_grep "the tokenFile" "leaving out .*/d/creds/tok\\.txt: .*kubeconfig:6: tokenFile names it" "$STDERR"
t_grep "the client certificate" "leaving out .*/d/creds/client\\.crt: .*client-certificate names it" "$STDERR"
t_grep "the CA" "leaving out .*/d/creds/ca\\.crt: .*certificate-authority names it" "$STDERR"
t_grep "counted with the kubeconfig" "\\(5 credential files left out" "$STDOUT"
t_nostring "no client key in the archive" "$key" b.tar
t_nostring "no token in the archive" "$tok" b.tar
t_ok "the distro is in it" tar -tf b.tar distro/0/distro.yaml
t_done
