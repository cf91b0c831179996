#!/bin/sh
# backstage-templates post hook: the templates and entities of
# cnoe-io/stacks' ref-implementation/backstage-templates/entities at the
# pinned commit, with ${host}:${port} for cnoe.localtest.me:8443, pushed to
# giteaAdmin/idpbuilder-localdev-backstage-templates-entities (what
# idpbuilder does for cnoe://backstage-templates/entities); a push only when
# the content changed.
#
# The admin's password reaches git as an Authorization header in git's
# configuration from the environment (GIT_CONFIG_COUNT, scoped to Gitea's
# URL), in no process's arguments; git checks the server's certificate
# against the CA idpmake made (IDPMAKE_TLS_CA), else against the
# certificate the ingress serves, and against nothing else: http.sslCAPath
# names an empty folder, since git's libcurl reads the system's CA folder
# (/etc/ssl/certs on Debian) beside http.sslCAInfo otherwise.  Never against
# nothing.
set -eu
stacks=https://github.com/cnoe-io/stacks
commit=4571105512777e7dc4e8aed3ce2811afac9e68e2
host=$IDPMAKE_VAR_HOST port=$IDPMAKE_VAR_PORT
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/no-cas"
if [ -n "${IDPMAKE_TLS_CA:-}" ]; then
	ca=$IDPMAKE_TLS_CA
else
	ca=$dir/ca.crt
	kubectl -n ingress-nginx get secret idpmake-tls -o jsonpath='{.data.tls\.crt}' | base64 -d >"$ca"
fi
user=$(kubectl -n gitea get secret gitea-credential -o jsonpath='{.data.username}' | base64 -d)
git init -q "$dir/stacks"
git -C "$dir/stacks" fetch -q --depth 1 "$stacks" "$commit"
git -C "$dir/stacks" checkout -q FETCH_HEAD
base="https://$host:$port/gitea/"
url="$base$user/idpbuilder-localdev-backstage-templates-entities.git"
# for the clone and the push only: Gitea's login, to Gitea's URL only, over TLS checked with the CA alone
basic=$(kubectl -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d |
	{ IFS= read -r p || true; printf '%s:%s' "$user" "$p"; } | base64 -w0)
gitea() {
	GIT_CONFIG_COUNT=3 \
		GIT_CONFIG_KEY_0="http.${base}.extraHeader" GIT_CONFIG_VALUE_0="Authorization: Basic $basic" \
		GIT_CONFIG_KEY_1="http.${base}.sslCAInfo" GIT_CONFIG_VALUE_1="$ca" \
		GIT_CONFIG_KEY_2="http.${base}.sslCAPath" GIT_CONFIG_VALUE_2="$dir/no-cas" \
		git "$@"
}
gitea clone -q "$url" "$dir/repo" 2>/dev/null || git init -q -b main "$dir/repo"
find "$dir/repo" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
cp -R "$dir/stacks/ref-implementation/backstage-templates/entities/." "$dir/repo/"
grep -rl 'cnoe\.localtest\.me' "$dir/repo" --exclude-dir=.git | while read -r f; do
	sed -i "s/cnoe\.localtest\.me:8443/$host:$port/g; s/cnoe\.localtest\.me/$host/g" "$f"
done
git -C "$dir/repo" add -A
if git -C "$dir/repo" diff --cached --quiet 2>/dev/null && git -C "$dir/repo" rev-parse -q --verify HEAD >/dev/null; then
	echo "backstage-templates: $url is up to date"
	exit 0
fi
git -C "$dir/repo" -c user.name=idpmake -c user.email=idpmake@localhost commit -q -m "backstage templates from $stacks@$commit"
gitea -C "$dir/repo" push -q "$url" HEAD:main
echo "backstage-templates: pushed to $url"
