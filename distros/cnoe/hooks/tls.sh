#!/bin/sh
# ingress-nginx pre hook: a self-signed certificate for ${host} and
# *.${host}, the controller's default (as idpbuilder's), kept when it exists.
set -eu
host=$IDPMAKE_VAR_HOST
ns=$IDPMAKE_NAMESPACE
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply --server-side -f - >/dev/null
if kubectl -n "$ns" get secret idpmake-tls >/dev/null 2>&1; then
	echo "tls: secret $ns/idpmake-tls exists; kept"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$host" \
	-addext "subjectAltName=DNS:$host,DNS:*.$host" \
	-keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
kubectl -n "$ns" create secret tls idpmake-tls --cert "$dir/tls.crt" --key "$dir/tls.key"
echo "tls: made a self-signed certificate for $host and *.$host"
