#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The GitOps repository over smart HTTP with basic auth (lighttpd + git
# http-backend): credentials from IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN, a
# wrong or missing token fails naming IDPMAKE_GIT_TOKEN and never shows the
# token, secrets never reach the state, the clone in STATE/repo is reused, and
# a no-op up makes no network call.  Credentials go over plain http only with
# IDPMAKE_GIT_ALLOW_HTTP=1 (start_git_server sets it), with a warning each
# run; a password holding '#' (written %23) never shows and is never saved.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
srv=$T/git-srv/repos/gitops.git
commits() { git -C "$srv" rev-list --count main 2>/dev/null || echo 0; }

mkdistro d <<EOF
idpmake: 1
name: githttp
git:
  remote: $url
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db

# up [ENV=VALUE...]: one run, bounded in time so a credential loop cannot hang
# the script (timeout exits 124, which no t_exit here expects).
up() { env "$@" timeout 30 "$IDPMAKE" -C "$T/d" up; }
good=(IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$GIT_PASS")

# ---- plain http: credentials only with IDPMAKE_GIT_ALLOW_HTTP=1 ----------------------
t_exit 1 "up over plain http without IDPMAKE_GIT_ALLOW_HTTP fails (exit 1)" \
	up -u IDPMAKE_GIT_ALLOW_HTTP "${good[@]}"
t_grep "naming IDPMAKE_GIT_ALLOW_HTTP" 'plain http.*IDPMAKE_GIT_ALLOW_HTTP=1' "$OUTPUT"
t_nogrep "not showing the token" "$GIT_PASS" "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"
t_exit 1 "nor IDPMAKE_GIT_ALLOW_HTTP=yes (only 1 opts in)" up IDPMAKE_GIT_ALLOW_HTTP=yes "${good[@]}"
t_grep "naming IDPMAKE_GIT_ALLOW_HTTP" 'IDPMAKE_GIT_ALLOW_HTTP=1' "$OUTPUT"

# ---- no credentials -----------------------------------------------------------
t_exit 1 "up without credentials fails (exit 1)" up
t_grep "naming IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- the right credentials ------------------------------------------------------
t_ok "up with IDPMAKE_GIT_USERNAME and IDPMAKE_GIT_TOKEN" up "${good[@]}"
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
t_grep "warning that the token went over plain http" 'warning: sending .* to 127\.0\.0\.1 over plain http' "$STDERR"
t_eq "the remote has one commit" 1 "$(commits)"
t_ok "with web's object" git -C "$srv" cat-file -e main:in-cluster/web/deployment.web.yaml
t_ok "and db's" git -C "$srv" cat-file -e main:in-cluster/db/configmap.db.yaml
t_nogrep "the token is not shown" "$GIT_PASS" "$OUTPUT"
t_ok "the clone is in STATE/repo" test -d d/.idpmake/repo

# mark the clone, to see that the next run reuses it
echo marker >d/.idpmake/repo/idpmake-test-marker
ino=$(stat -c %i d/.idpmake/repo)

t_ok "a no-op up with the credentials" up "${good[@]}"
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"
t_eq "makes no commit" 1 "$(commits)"

# ---- a wrong token ------------------------------------------------------------------
wrong=wrongtoken$(random_string)
printf '  extra: "yes"\n' >>d/packages/db/cm.yaml
t_exit 1 "up with a wrong token fails (exit 1)" up IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$wrong"
cp "$OUTPUT" "$T/wrong.out"
t_grep "naming IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$T/wrong.out"
t_nogrep "never printing the token" "$wrong" "$T/wrong.out"
t_eq "the remote is unchanged" 1 "$(commits)"
t_exit 1 "the same with the token but no user name" up IDPMAKE_GIT_TOKEN="$wrong"
t_grep "naming IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$OUTPUT"
t_nogrep "never printing the token" "$wrong" "$OUTPUT"
t_exit 1 "the same with -v" env IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$wrong" \
	timeout 30 "$IDPMAKE" -v -C "$T/d" up
t_nogrep "-v does not print the token either" "$wrong" "$OUTPUT"
t_exit 1 "and with --json" env IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$wrong" \
	timeout 30 "$IDPMAKE" --json -C "$T/d" up
t_nogrep "--json does not print the token either" "$wrong" "$OUTPUT"

# ---- the right token again: the change goes through -----------------------------------
t_ok "up with the right token after the failures" up "${good[@]}"
t_eq "the remote has the change" 2 "$(commits)"
t_ok "the db object has the change" sh -c "git -C '$srv' show main:in-cluster/db/configmap.db.yaml | grep -q extra"

# ---- the clone is reused ---------------------------------------------------------
t_ok "the marker in STATE/repo is still there: fetched, not re-cloned" test -f d/.idpmake/repo/idpmake-test-marker
t_eq "the clone's folder is the same folder (inode)" "$ino" "$(stat -c %i d/.idpmake/repo)"
t_eq "the clone has the pushed commit" "$(git -C "$srv" rev-parse main)" \
	"$(git -C d/.idpmake/repo rev-parse --verify -q "$(git -C "$srv" rev-parse main)^{commit}" 2>&1)"

# ---- no secret in the state ---------------------------------------------------------------
t_nostring "no file under .idpmake holds the token" "$GIT_PASS" "$T/d/.idpmake"
t_nostring "nor the wrong one" "$wrong" "$T/d/.idpmake"

# ---- credentials in the URL are not written to the clone's config --------------------------
sed -i "s#remote: .*#remote: $(authurl "$url")#" d/distro.yaml
mkmanifest d/packages/web/svc.yaml Service web
t_ok "up with the user and password in the URL" up
t_eq "the remote has the change" 3 "$(commits)"
t_nostring "no file under .idpmake holds the password" "$GIT_PASS" "$T/d/.idpmake"
t_nogrep "nor does the output" "$GIT_PASS" "$OUTPUT"

# ---- a password with '#' in it ---------------------------------------------------------------
# lighttpd reads its user file on each request: a second user, whose password has a '#'
hash_pw="s3cr#t$(random_string)"
enc_pw=${hash_pw//#/%23}
printf 'bob:%s\n' "$hash_pw" >>"$T/git-srv/users"
host_path=${url#http://}
sed -i "s|remote: .*|remote: http://bob:$hash_pw@$host_path|" d/distro.yaml
mkmanifest d/packages/web/cm.yaml ConfigMap web
t_exit 1 "a raw '#' in the URL's password: not a URL, up fails (exit 1)" up
t_grep "saying to write it as %23" 'not a valid URL.*%23' "$OUTPUT"
t_nogrep "without showing the password" "${hash_pw#s3cr#}" "$OUTPUT"
t_nogrep "not even its start" 's3cr' "$OUTPUT"
t_ok "nor saving it in the clone" sh -c "! grep -r -a -F -q -e '${hash_pw#s3cr#}' '$T/d/.idpmake'"
sed -i "s|remote: .*|remote: http://bob:$enc_pw@$host_path|" d/distro.yaml
t_ok "the password written with %23 works" up
t_eq "the remote has the change" 4 "$(commits)"
t_nogrep "the password is not shown" "${hash_pw#s3cr#}" "$OUTPUT"
t_ok "not saved under .idpmake in either form" sh -c "! grep -r -a -F -q -e '${hash_pw#s3cr#}' '$T/d/.idpmake'"
t_eq "remote.origin.url is the URL without the password" "http://bob@$host_path" \
	"$(git -C d/.idpmake/repo config remote.origin.url)"
printf '  more: "x"\n' >>d/packages/web/cm.yaml
sed -i "s|remote: .*|remote: http://bob:${enc_pw}x@$host_path|" d/distro.yaml
t_exit 1 "a wrong %23 password fails (exit 1)" env timeout 30 "$IDPMAKE" -v -C "$T/d" up
t_nogrep "without showing it, with -v" "${hash_pw#s3cr#}" "$OUTPUT"
t_grep "the URL masked" 'bob:\*\*\*@' "$OUTPUT"
sed -i "s|remote: .*|remote: http://bob:$enc_pw@$host_path|" d/distro.yaml
t_ok "the right password again" up
t_ok "no file under .idpmake holds any of the passwords" \
	sh -c "! grep -r -a -F -q -e '${hash_pw#s3cr#}' '$T/d/.idpmake'"

# ---- a no-op up makes no network call: stop the server -----------------------------------
kill "$GIT_SRV_PID"
wait "$GIT_SRV_PID" 2>/dev/null
t_ok "a no-op up with the server down succeeds" up "${good[@]}"
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"

t_done
