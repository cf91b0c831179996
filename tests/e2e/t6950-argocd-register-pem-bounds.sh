#!/bin/bash
# CLUSTER:register's PEM check reads only what a -data setting decodes to:
# base64 of a BEGIN line with no closing dashes, or of a block ending in a
# bare "-----END" with no newline, is refused as malformed, naming the
# setting, never reading past the decoded bytes (the sanitizer build caught
# strstr running off the end of the unterminated buffer).  Base64 that Argo
# CD would not take (a character outside the alphabet, a last group without
# its padding) is "not base64".  (Found in review of the PEM checks.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
b64() { printf '%s' "$1" | base64 -w0; }
OPEN=$(b64 "-----BEGIN CERTIFICATE")		# no closing "-----", no newline
TAIL=$(b64 $'-----BEGIN CERTIFICATE-----\nQUJD\n-----END')	# the END line cut short, no newline
mkdir -p d/kube
{
	echo "apiVersion: v1"
	echo "kind: Config"
	echo "clusters:"
	echo "- {name: c-open, cluster: {server: 'https://k.example:6443', certificate-authority-data: '$OPEN'}}"
	echo "- {name: c-tail, cluster: {server: 'https://k.example:6443', certificate-authority-data: '$TAIL'}}"
	echo "- {name: c-junk, cluster: {server: 'https://k.example:6443', certificate-authority-data: 'QUJD*QUJD'}}"
	echo "- {name: c-pad, cluster: {server: 'https://k.example:6443', certificate-authority-data: 'QUJ'}}"
	echo "contexts:"
	for c in open tail junk pad; do echo "- {name: $c, context: {cluster: c-$c, user: u-tok}}"; done
	echo "users:"
	echo "- {name: u-tok, user: {token: kube-token}}"
} >d/kube/config
mkdistro d <<EOF
idpmake: 1
name: pembounds
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", repository: registered}
clusters:
  open: {server: "https://open.example:6443", register: {kubeconfig: kube/config, context: open}}
  tail: {server: "https://tail.example:6443", register: {kubeconfig: kube/config, context: tail}}
  junk: {server: "https://junk.example:6443", register: {kubeconfig: kube/config, context: junk}}
  pad: {server: "https://pad.example:6443", register: {kubeconfig: kube/config, context: pad}}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
emu_reset

t_exit 1 "up: every registration fails, none reads past its data" idpmake -C d up -k 0
t_grep "a BEGIN line without its closing dashes" "open:register: the kubeconfig's certificate-authority-data has a malformed PEM BEGIN line" "$OUTPUT"
t_grep "an END line cut short" "tail:register: the kubeconfig's certificate-authority-data has a PEM (END line that does not match its BEGIN|block whose body is not base64)" "$OUTPUT"
t_grep "a character outside base64" "junk:register: the kubeconfig's certificate-authority-data is not base64" "$OUTPUT"
t_grep "a last group of three without its padding" "pad:register: the kubeconfig's certificate-authority-data is not base64" "$OUTPUT"
t_eq "nothing was sent to Argo CD" 0 "$(emu_posts '^/api/v1/clusters')"
t_done
