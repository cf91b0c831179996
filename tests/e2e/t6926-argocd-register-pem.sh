#!/bin/bash
# CLUSTER:register takes only PEM: a certificate where a certificate is
# expected (register.ca-file, a kubeconfig's certificate-authority and
# client-certificate, as files or -data), a PEM private key only as the
# client-key.  A private key's path given as a certificate is refused, naming
# the setting and file, and its contents are in no output, -v line, log, state
# or request; good certificates register, and -v shows none of their
# contents either.  (Found in review: a key given as certificate-authority
# was read, uploaded and logged whole.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
make_tls
KEYTEXT=$(sed -n 2p "$tls/server.key")	# one line of the private key's body
[ -n "$KEYTEXT" ] || t_bail "no key body"
CATEXT=$(sed -n 2p "$tls/ca.pem")
CERT64=$(base64 -w0 <"$tls/server.pem")
KEY64=$(base64 -w0 <"$tls/server.key")
NOTPEM="not-pem-$(random_string)"
mkdir -p d/kube d/certs
cp "$tls/server.key" d/kube/key.pem
cp "$tls/ca.pem" d/kube/ca.pem
cp "$tls/server.pem" d/kube/cert.pem
printf '%s\n' "$NOTPEM" >d/certs/notpem.pem
cp "$tls/server.key" d/certs/key.pem

# kubeconfig CONTEXT-NAME... : one cluster and user per context, from the lines given
{
	echo "apiVersion: v1"
	echo "kind: Config"
	echo "clusters:"
	echo "- {name: c-cakey, cluster: {server: 'https://k.example:6443', certificate-authority: key.pem}}"
	echo "- {name: c-cadata, cluster: {server: 'https://k.example:6443', certificate-authority-data: $KEY64}}"
	echo "- {name: c-good, cluster: {server: 'https://k.example:6443', certificate-authority: ca.pem}}"
	echo "contexts:"
	echo "- {name: cakey, context: {cluster: c-cakey, user: u-good}}"
	echo "- {name: cadata, context: {cluster: c-cadata, user: u-good}}"
	echo "- {name: certkey, context: {cluster: c-good, user: u-certkey}}"
	echo "- {name: keycert, context: {cluster: c-good, user: u-keycert}}"
	echo "- {name: good, context: {cluster: c-good, user: u-good}}"
	echo "users:"
	echo "- {name: u-good, user: {client-certificate: cert.pem, client-key: key.pem}}"
	echo "- {name: u-certkey, user: {client-certificate: key.pem, client-key: key.pem}}"
	echo "- {name: u-keycert, user: {client-certificate-data: $CERT64, client-key: cert.pem}}"
} >d/kube/config
mkdistro d <<EOF
idpmake: 1
name: pem
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", repository: registered}
clusters:
  cakey: {server: "https://cakey.example:6443", register: {kubeconfig: kube/config, context: cakey}}
  cadata: {server: "https://cadata.example:6443", register: {kubeconfig: kube/config, context: cadata}}
  certkey: {server: "https://certkey.example:6443", register: {kubeconfig: kube/config, context: certkey}}
  keycert: {server: "https://keycert.example:6443", register: {kubeconfig: kube/config, context: keycert}}
  cafile: {server: "https://cafile.example:6443", register: {token-env: TOK, ca-file: certs/key.pem}}
  notpem: {server: "https://notpem.example:6443", register: {token-env: TOK, ca-file: certs/notpem.pem}}
  good: {server: "https://good.example:6443", register: {kubeconfig: kube/config, context: good}}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
export TOK="tok-$(random_string)"
emu_reset

t_exit 1 "up: the registrations with what is not a PEM certificate fail" idpmake -C d up -v -k 0
t_grep "a private key as certificate-authority: named, with why" "cakey:register: the kubeconfig's certificate-authority '(.*/)?kube/key.pem' holds a private key, not \(only\) certificates" "$OUTPUT"
t_grep "a private key as certificate-authority-data" "cadata:register: the kubeconfig's certificate-authority-data holds a private key" "$OUTPUT"
t_grep "a private key as client-certificate" "certkey:register: the kubeconfig's client-certificate '(.*/)?kube/key.pem' holds a private key" "$OUTPUT"
t_grep "a certificate as client-key" "keycert:register: the kubeconfig's client-key '(.*/)?kube/cert.pem' holds a certificate, not a private key" "$OUTPUT"
t_grep "a private key as register.ca-file" "cafile:register: register.ca-file '.*certs/key.pem' holds a private key" "$OUTPUT"
t_grep "a file that is no PEM" "notpem:register: register.ca-file '.*certs/notpem.pem' is not a PEM certificate" "$OUTPUT"
cp "$OUTPUT" "$T/first.out"
t_eq "the pre-flight refuses them before anything is sent" 0 "$(emu_posts '^/api/v1/clusters$')"
t_ok "up of the good cluster alone" idpmake -C d up -v good/
t_grep "the good cluster registered and synced" "good/web:sync" "$OUTPUT"
t_eq "only the good cluster was sent to Argo CD" 1 "$(emu_posts '^/api/v1/clusters$')"
t_grep "-v shows the CA as ***" '"caData":"\*\*\*"' "$OUTPUT"
t_grep "and the client certificate" '"certData":"\*\*\*"' "$OUTPUT"
t_nostring "the private key's contents are not in the output" "$KEYTEXT" "$OUTPUT" "$T/first.out"
t_nostring "nor its base64" "${KEY64:40:40}" "$OUTPUT" "$T/first.out"
t_nostring "nor a certificate's contents (file contents stay out of the logs)" "$CATEXT" "$OUTPUT" "$T/first.out"
t_nostring "nor the base64 the good cluster uploaded" "$(base64 -w0 <"$tls/ca.pem" | cut -c 40-80)" "$OUTPUT" "$T/first.out"
t_nostring "nor the file that is no PEM" "$NOTPEM" "$OUTPUT" "$T/first.out"
t_nostring "no private key in the state, logs or cache" "$KEYTEXT" d/.idpmake
t_nostring "nor its base64" "${KEY64:40:40}" d/.idpmake
t_nostring "nor the file that is no PEM" "$NOTPEM" d/.idpmake
curl -s -f "$emu/requests" >"$T/requests.json" || t_bail "cannot read the request log"
t_nostring "no request carried the refused files" "$NOTPEM" "$T/requests.json"
t_done
