#!/bin/sh
# gitea post hook: the repositories idpmake pushes to, created through
# Gitea's API when missing: giteaAdmin/idpmake-gitops (the GitOps remote) and
# giteaAdmin/idpbuilder-localdev-backstage-templates-entities (Backstage's
# catalog; the name idpbuilder gives it, which the stacks hard-code).
#
# The admin's password goes to curl on its standard input (-K -), in no
# process's arguments; curl checks the server's certificate against the CA
# idpmake made (IDPMAKE_TLS_CA, with the distro's `tls`), else against the
# certificate the ingress serves (the tls hook's, self-signed), and against
# nothing else: --capath names an empty folder, since curl reads the system's
# CA folder (/etc/ssl/certs on Debian) beside --cacert otherwise.  Never
# against nothing: the password goes to that ingress only.
set -eu
ns=$IDPMAKE_NAMESPACE
api="https://$IDPMAKE_VAR_HOST:$IDPMAKE_VAR_PORT/gitea/api/v1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/no-cas"
if [ -n "${IDPMAKE_TLS_CA:-}" ]; then
	ca=$IDPMAKE_TLS_CA
else
	ca=$dir/ca.crt
	kubectl -n ingress-nginx get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' | base64 -d >"$ca"
fi
user=$(kubectl -n "$ns" get secret gitea-credential -o jsonpath='{.data.username}' | base64 -d)
pass=$(kubectl -n "$ns" get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
# curl's config: user = "USER:PASSWORD", quoted as curl reads it (printf and read are the shell's own)
auth() {
	printf '%s:%s' "$user" "$pass" | sed 's/[\\"]/\\&/g' | {
		IFS= read -r q || true
		printf 'user = "%s"\n' "$q"
	}
}
# Gitea answers once its pod is ready behind the ingress
i=0
until curl -sSf --cacert "$ca" --capath "$dir/no-cas" -o /dev/null "$api/version" 2>"$dir/err"; do
	i=$((i + 1))
	[ $i -lt 60 ] || { echo "gitea-repos: $api does not answer: $(cat "$dir/err")" >&2; exit 1; }
	sleep 5
done
for repo in idpmake-gitops idpbuilder-localdev-backstage-templates-entities; do
	code=$(auth | curl -s --cacert "$ca" --capath "$dir/no-cas" -K - -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		-d "{\"name\":\"$repo\",\"private\":false,\"default_branch\":\"main\"}" "$api/user/repos")
	case $code in
	201) echo "gitea-repos: created $user/$repo" ;;
	409) echo "gitea-repos: $user/$repo exists" ;;
	*) echo "gitea-repos: creating $user/$repo: HTTP $code" >&2; exit 1 ;;
	esac
done
