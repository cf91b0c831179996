#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# `pack` leaves credential files out (issue 20 #5): the distro folder's
# argocd.token and kubeconfig, and every file that a token-file, ca-file or
# kubeconfig setting names (in the distro, in the distro it extends, also
# where the child overrides it, and in a cluster's register), are not
# packed; pack names each one it leaves out, and no byte of them is in the
# archive, plain or gzip'd.  The archive still loads without them.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

tok=tok-$(random_string) kube=kube-$(random_string) ca=ca-$(random_string) base=base-$(random_string)
cert=cert-$(random_string)
mkdistro base <<'DISTRO'
idpmake: 1
name: base
git: {ca-file: base-ca.pem}
argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git", token-file: old.token}
packages:
  basens:
    type: manifests
    path: manifests
DISTRO
mkmanifest base/manifests/ns.yaml Namespace from-base
echo "$base" >base/base-ca.pem
echo "$base-old" >base/old.token
mkdistro d <<'DISTRO'
idpmake: 1
name: creds
extends: ../base
argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git", token-file: argocd.token, ca-file: certs/ca.pem}
clusters:
  in-cluster: {server: "https://kubernetes.default.svc"}
  eu-1: {server: "https://eu-1:6443", register: {kubeconfig: kubeconfig, context: eu-1}}
  eu-2: {server: "https://eu-2:6443", register: {token-env: EU2_TOKEN, ca-file: eu2-ca.crt}}
packages:
  web:
    type: manifests
    path: manifests
DISTRO
mkmanifest d/manifests/cm.yaml ConfigMap web default
echo "$tok" >d/argocd.token
printf 'apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: %s}}]\n' "$kube" >d/kubeconfig
mkdir d/certs && echo "$ca" >d/certs/ca.pem
echo "$cert" >d/eu2-ca.crt

for f in b.tar b.tar.gz; do
	t_ok "pack -o $f" idpmake -C d pack -o "$T/$f"
	t_grep "it names the token file it leaves out" "leaving out .*/d/argocd\\.token: argocd\\.token-file names it, and a credential is never packed" "$STDERR"
	t_grep "the kubeconfig" "leaving out .*/d/kubeconfig: cluster 'eu-1': register\\.kubeconfig names it" "$STDERR"
	t_grep "the Argo CD CA" "leaving out .*/d/certs/ca\\.pem: argocd\\.ca-file names it" "$STDERR"
	t_grep "a cluster's register CA" "leaving out .*/d/eu2-ca\\.crt: cluster 'eu-2': register\\.ca-file names it" "$STDERR"
	t_grep "the base's CA" "leaving out .*base-ca\\.pem: .*ca-file names it" "$STDERR"
	t_grep "the base's token file the child overrides" "leaving out .*old\\.token: .*token-file names it" "$STDERR"
	t_grep "and says so in its summary" "\\(6 credential files left out" "$STDOUT"
	mkdir "x-$f" && tar -xf "$f" -C "x-$f" || t_bail "cannot unpack $f"
	t_ok "the distro is in it" test -f "x-$f/distro/0/distro.yaml"
	for s in "$tok" "$kube" "$ca" "$cert" "$base" "$base-old"; do
		t_nostring "no credential's content in $f (${s%%-*})" "$s" "x-$f"
	done
	t_nostring "nor in the archive's bytes" "$tok" "$f"
	t_nostring "nor its name in the index" "argocd.token" "x-$f/idpmake-pack.txt"
done
mkdir off && mv b.tar off/ || t_bail "mv failed"
t_ok "the archive loads without them" idpmake -C off -f b.tar graph
t_done
