#!/bin/sh
# gitea pre hook: the admin giteaAdmin and a random password in the secret
# gitea/gitea-credential (idpbuilder's name; keycloak's ClusterSecretStore
# `gitea` reads it), made once and kept.  The password goes from openssl to
# kubectl in a file only this hook can read (--from-file): it is in no
# process's arguments, where another user could read it (/proc/PID/cmdline).
set -eu
ns=$IDPMAKE_NAMESPACE
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply --server-side -f - >/dev/null
if kubectl -n "$ns" get secret gitea-credential >/dev/null 2>&1; then
	echo "gitea-admin: secret $ns/gitea-credential exists; kept"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(umask 077 && openssl rand -hex 16 | tr -d '\n' >"$dir/password")
[ -s "$dir/password" ] || { echo "gitea-admin: openssl made no password" >&2; exit 1; }
kubectl -n "$ns" create secret generic gitea-credential \
	--from-literal=username=giteaAdmin --from-file=password="$dir/password"
echo "gitea-admin: made $ns/gitea-credential (user giteaAdmin)"
