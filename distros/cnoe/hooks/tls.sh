#!/bin/sh
# ingress-nginx pre hook: the certificate for ${host} and *.${host}, the
# controller's default (as idpbuilder's).  With the distro's `tls` (the
# cnoe distro sets it), it is the one idpmake made and trusts
# (IDPMAKE_TLS_CERT and IDPMAKE_TLS_KEY, in the state folder): put in the
# Secret, or put back when the Secret holds another.  Without it, a
# self-signed one is made here, kept when the Secret exists.
set -eu
host=$IDPMAKE_VAR_HOST
ns=$IDPMAKE_NAMESPACE
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply --server-side -f - >/dev/null
if [ -n "${IDPMAKE_TLS_CERT:-}" ]; then
	have=$(kubectl -n "$ns" get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' 2>/dev/null || true)
	want=$(base64 <"$IDPMAKE_TLS_CERT" | tr -d '\n')
	if [ "$have" = "$want" ]; then
		echo "tls: secret $ns/idpmake-tls holds idpmake's certificate; kept"
		exit 0
	fi
	kubectl -n "$ns" create secret tls idpmake-tls --cert "$IDPMAKE_TLS_CERT" --key "$IDPMAKE_TLS_KEY" \
		--dry-run=client -o yaml | kubectl apply --server-side --force-conflicts --field-manager=idpmake-hook -f - >/dev/null
	echo "tls: secret $ns/idpmake-tls now holds the certificate idpmake made for $host"
	exit 0
fi
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
