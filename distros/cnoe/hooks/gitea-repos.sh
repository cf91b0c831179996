#!/bin/sh
# gitea post hook: the repositories idpmake pushes to, created through
# Gitea's API when missing: giteaAdmin/idpmake-gitops (the GitOps remote) and
# giteaAdmin/idpbuilder-localdev-backstage-templates-entities (Backstage's
# catalog; the name idpbuilder gives it, which the stacks hard-code).
set -eu
ns=$IDPMAKE_NAMESPACE
api="https://$IDPMAKE_VAR_HOST:$IDPMAKE_VAR_PORT/gitea/api/v1"
user=$(kubectl -n "$ns" get secret gitea-credential -o jsonpath='{.data.username}' | base64 -d)
pass=$(kubectl -n "$ns" get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
# Gitea answers once its pod is ready behind the ingress
i=0
until curl -ksf -o /dev/null "$api/version"; do
	i=$((i + 1))
	[ $i -lt 60 ] || { echo "gitea-repos: $api does not answer" >&2; exit 1; }
	sleep 5
done
for repo in idpmake-gitops idpbuilder-localdev-backstage-templates-entities; do
	code=$(curl -ks -o /dev/null -w '%{http_code}' -u "$user:$pass" -H 'Content-Type: application/json' \
		-d "{\"name\":\"$repo\",\"private\":false,\"default_branch\":\"main\"}" "$api/user/repos")
	case $code in
	201) echo "gitea-repos: created $user/$repo" ;;
	409) echo "gitea-repos: $user/$repo exists" ;;
	*) echo "gitea-repos: creating $user/$repo: HTTP $code" >&2; exit 1 ;;
	esac
done
