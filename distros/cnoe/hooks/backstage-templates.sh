#!/bin/sh
# backstage-templates post hook: the templates and entities of
# cnoe-io/stacks' ref-implementation/backstage-templates/entities at the
# pinned commit, with ${host}:${port} for cnoe.localtest.me:8443, pushed to
# giteaAdmin/idpbuilder-localdev-backstage-templates-entities (what
# idpbuilder does for cnoe://backstage-templates/entities); a push only when
# the content changed.
set -eu
stacks=https://github.com/cnoe-io/stacks
commit=4571105512777e7dc4e8aed3ce2811afac9e68e2
host=$IDPMAKE_VAR_HOST port=$IDPMAKE_VAR_PORT
user=$(kubectl -n gitea get secret gitea-credential -o jsonpath='{.data.username}' | base64 -d)
pass=$(kubectl -n gitea get secret gitea-credential -o jsonpath='{.data.password}' | base64 -d)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git init -q "$dir/stacks"
git -C "$dir/stacks" fetch -q --depth 1 "$stacks" "$commit"
git -C "$dir/stacks" checkout -q FETCH_HEAD
url="https://$host:$port/gitea/$user/idpbuilder-localdev-backstage-templates-entities.git"
auth="https://$user:$pass@$host:$port/gitea/$user/idpbuilder-localdev-backstage-templates-entities.git"
git -c http.sslVerify=false clone -q "$auth" "$dir/repo" 2>/dev/null || git init -q -b main "$dir/repo"
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
git -C "$dir/repo" -c http.sslVerify=false push -q "$auth" HEAD:main
echo "backstage-templates: pushed to $url"
