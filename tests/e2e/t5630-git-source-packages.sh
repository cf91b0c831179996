#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# `git:` source packages (distro.md "Sources", engine.md "Keys"): the ref is
# resolved to a commit that is part of the render's key (explain names the
# commit's cache folder and the "git commit" input); the source is cached (a
# second package from the same URL and ref, and a render after `forget`, make
# no request to the source's server: its access log says so); a no-op `up`
# makes no network call (the server is stopped and the no-op still succeeds);
# a moved branch is seen only with --refresh, which resolves the ref again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_git_server
src=$(new_remote src) || t_bail "cannot make the source repository"
alog=$T/git-srv/access.log
export IDPMAKE_SOURCE_USERNAME=$GIT_USER IDPMAKE_SOURCE_TOKEN=$GIT_PASS

# the source: pkg/ and other/, pushed to the server
git init -q -b main "$T/work"
mkmanifest "$T/work/pkg/cm.yaml" ConfigMap from-git apps
mkmanifest "$T/work/other/cm.yaml" ConfigMap other apps
{ git -C "$T/work" add -A && git -C "$T/work" commit -q -m one &&
	git -C "$T/work" push -q "$(authurl "$src")" main 2>/dev/null; } || t_bail "cannot push the source"
c1=$(git -C "$T/work" rev-parse HEAD)

mkdistro d <<EOF
idpmake: 1
name: gitsrc
packages:
  ext:
    type: manifests
    git: {url: "$src", ref: main, path: pkg}
EOF
cd d || exit 1
requests() { [ -f "$alog" ] && wc -l <"$alog" | tr -d ' ' || echo 0; }
# the files of the GitOps repository at its head
gitops_cat() { git --git-dir=.idpmake/gitops.git show "main:$1"; }

# ---- first run: fetched, resolved, rendered ------------------------------
t_ok "up renders the git source" idpmake up
t_grep "one render" '1 rendered' "$STDOUT"
n=$(requests)
t_ok "the source's server was asked (access log: $n requests)" test "$n" -gt 0
t_grep "it was fetched with git-upload-pack" "^POST /src.git/git-upload-pack" "$alog"
t_ok "the object is in the GitOps repository" gitops_cat in-cluster/ext/configmap.from-git.yaml
t_ok "the commit's folder is in the cache" test -f ".idpmake/cache/git/src/$c1-"*/.idpmake-complete

# explain: the commit is part of the key; -v names every input
t_ok "explain -v" idpmake -v explain in-cluster/ext:render
t_grep "explain: up to date" '^in-cluster/ext:render: up to date$' "$STDOUT"
t_grep "explain -v: the git commit is an input" '^  same +git commit$' "$STDOUT"
t_grep "explain -v: the file comes from commit $c1" "^  same +\\.idpmake/cache/git/src/$c1-[0-9a-f]+/cm\\.yaml$" "$STDOUT"

# ---- the cache: a second package from the same URL and ref ---------------
before=$(requests)
cat >>distro.yaml <<EOF
  ext2:
    type: manifests
    git: {url: "$src", ref: main, path: other}
EOF
t_ok "up with a second package from the same source" idpmake up
t_grep "one render (ext2)" '1 rendered' "$STDOUT"
t_grep "ext2 rendered" 'render in-cluster/ext2:render' "$STDOUT"
t_eq "the second package made no request to the source's server" "$before" "$(requests)"
t_ok "ext2's object is in the GitOps repository" gitops_cat in-cluster/ext2/configmap.other.yaml

# ---- a no-op makes no network call ---------------------------------------
before=$(requests)
t_ok "no-op up" idpmake up
t_grep "no-op: nothing rendered" '0 rendered, nothing pushed' "$STDOUT"
t_eq "no-op: no request to the source's server" "$before" "$(requests)"

# ---- the branch moves: seen only with --refresh --------------------------
echo '  moved: "yes"' >>"$T/work/pkg/cm.yaml"
{ git -C "$T/work" commit -q -am two &&
	git -C "$T/work" push -q "$(authurl "$src")" main 2>/dev/null; } || t_bail "cannot push the second commit"
c2=$(git -C "$T/work" rev-parse HEAD)
before=$(requests)
t_ok "up without --refresh after the branch moved" idpmake up
t_grep "without --refresh: the recorded commit is kept (nothing rendered)" '0 rendered' "$STDOUT"
t_eq "without --refresh: no request" "$before" "$(requests)"
t_ok "plan --refresh" idpmake plan --refresh
t_grep "plan --refresh: ext would render again" '^render +in-cluster/ext:render' "$STDOUT"
t_ok "explain --refresh" idpmake explain --refresh in-cluster/ext:render
t_grep "explain --refresh: ext would run" '^in-cluster/ext:render: would run' "$STDOUT"
t_grep "explain --refresh: the git commit changed" '^  changed +git commit$' "$STDOUT"
t_grep "explain --refresh: the file of commit $c2 is added" "^  added +\\.idpmake/cache/git/src/$c2-[0-9a-f]+/cm\\.yaml " "$STDOUT"
t_grep "explain --refresh: the file of commit $c1 is removed" "^  removed +\\.idpmake/cache/git/src/$c1-[0-9a-f]+/cm\\.yaml$" "$STDOUT"
before=$(requests)
t_ok "up --refresh" idpmake up --refresh
t_grep "up --refresh: ext rendered again" '^\[[0-9]/3\] render in-cluster/ext:render \(' "$STDOUT"
t_grep "up --refresh: ext2 (same commit) renders to the same output" 'render in-cluster/ext2:render: output unchanged' "$STDOUT"
t_grep "up --refresh: one commit pushed" '2 rendered, 1 commit pushed' "$STDOUT"
t_ok "up --refresh asked the server" test "$(requests)" -gt "$before"
gitops_cat in-cluster/ext/configmap.from-git.yaml >"$T/ext.yaml"
t_grep "the moved branch's content was pushed" "^  moved: 'yes'\$" "$T/ext.yaml"
t_ok "explain -v after the refresh" idpmake -v explain in-cluster/ext:render
t_grep "explain -v: the file now comes from commit $c2" "^  same +\\.idpmake/cache/git/src/$c2-[0-9a-f]+/cm\\.yaml$" "$STDOUT"

# ---- the server stops: a no-op and a forgotten render still work ---------
kill "$GIT_SRV_PID" && wait "$GIT_SRV_PID" 2>/dev/null
t_eq "the git server is stopped" 000 "$(http_code "$GIT_HTTP_BASE/")"
t_ok "no-op up with the source's server stopped" idpmake up
t_grep "no-op: nothing rendered" '0 rendered, nothing pushed' "$STDOUT"
t_ok "forget ext" idpmake forget ext
t_ok "up after forget, server stopped: rendered from the cache" idpmake up
t_grep "ext rendered again from the cache" 'render in-cluster/ext:render' "$STDOUT"
t_fail "up --refresh with the server stopped fails (it does go to the network)" idpmake up --refresh
t_grep "the failure names the step and the source" '^idpmake: error: in-cluster/ext:render: cannot fetch http://127\.0\.0\.1:[0-9]+/git/src\.git: ' "$OUTPUT"
t_nostring "the source's password is in no state file" "$GIT_PASS" .idpmake
t_done
