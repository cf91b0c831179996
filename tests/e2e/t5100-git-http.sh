#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The GitOps repository over smart HTTP with basic auth (lighttpd + git
# http-backend): credentials from IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN, a
# wrong or missing token fails naming IDPMAKE_GIT_TOKEN and never shows the
# token, secrets never reach the state, the clone in STATE/repo is reused, and
# a no-op up makes no network call.
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

# ---- no credentials -----------------------------------------------------------
t_exit 1 "up without credentials fails (exit 1)" up
t_grep "naming IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

# ---- the right credentials ------------------------------------------------------
t_ok "up with IDPMAKE_GIT_USERNAME and IDPMAKE_GIT_TOKEN" up "${good[@]}"
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
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

# ---- a no-op up makes no network call: stop the server -----------------------------------
kill "$GIT_SRV_PID"
wait "$GIT_SRV_PID" 2>/dev/null
t_ok "a no-op up with the server down succeeds" up "${good[@]}"
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"

t_done
