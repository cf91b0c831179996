#!/bin/sh
# gitea pre hook: the admin giteaAdmin and a random password in the secret
# gitea/gitea-credential (idpbuilder's name; keycloak's ClusterSecretStore
# `gitea` reads it), made once and kept.
set -eu
ns=$IDPMAKE_NAMESPACE
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply --server-side -f - >/dev/null
if kubectl -n "$ns" get secret gitea-credential >/dev/null 2>&1; then
	echo "gitea-admin: secret $ns/gitea-credential exists; kept"
	exit 0
fi
pass=$(openssl rand -hex 16)
kubectl -n "$ns" create secret generic gitea-credential \
	--from-literal=username=giteaAdmin --from-literal=password="$pass"
echo "gitea-admin: made $ns/gitea-credential (user giteaAdmin)"
