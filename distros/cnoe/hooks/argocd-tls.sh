#!/bin/sh
# ingress-nginx post hook: Argo CD trusts the certificate of ${host}
# (argocd-tls-certs-cm), so it can fetch from Gitea through the ingress, as
# idpbuilder sets it up: the CA idpmake made (IDPMAKE_TLS_CA, with the
# distro's `tls`), else the certificate in the ingress Secret.
set -eu
host=$IDPMAKE_VAR_HOST
if [ -n "${IDPMAKE_TLS_CA:-}" ]; then
	crt=$(cat "$IDPMAKE_TLS_CA")
else
	crt=$(kubectl -n "$IDPMAKE_NAMESPACE" get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' | base64 -d)
fi
kubectl -n argocd create configmap argocd-tls-certs-cm --from-literal="$host=$crt" --dry-run=client -o yaml |
	# a field manager of no distro's: deploy: kubectl counts idpmake and idpmake/NAME as owners
	kubectl apply --server-side --force-conflicts --field-manager=idpmake-hook -f -
echo "argocd-tls: Argo CD trusts the certificate of $host"
