#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Keys: a step runs when its key changed, and only then. A second `up` runs
# nothing and commits nothing; an edit re-renders exactly the package edited;
# touch, adding and removing files, a changed spec; a no-op `up` reads no file
# content (the stat cache) and does not open the GitOps repository.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: keys
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
  cache:
    type: manifests
    path: packages/cache
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/web/svc.yaml Service web
mkmanifest d/packages/db/cm.yaml ConfigMap db
mkmanifest d/packages/db/sub/more.yaml ConfigMap db-more
mkmanifest d/packages/cache/deploy.yaml Deployment cache

bare=$T/d/.idpmake/gitops.git
commits() { git -C "$bare" rev-list --count main 2>/dev/null || echo 0; }
up() { idpmake -C "$T/d" up "$@"; }

# ---- first and second up --------------------------------------------------
t_ok "first up succeeds" up
t_grep "first up renders all three packages" '^idpmake: 3 rendered' "$STDOUT"
t_eq "first up makes one commit" 1 "$(commits)"

t_ok "second up succeeds" up
t_grep "second up renders nothing" '^idpmake: 0 rendered' "$STDOUT"
t_grep "second up pushes nothing" 'nothing pushed' "$STDOUT"
t_nogrep "second up names no render step" ':render' "$STDOUT"
t_eq "second up makes no commit" 1 "$(commits)"

# ---- an edit to one file of one package ---------------------------------
sed -i 's/replicas: 1/replicas: 3/' d/packages/web/deploy.yaml
t_ok "up after editing web/deploy.yaml" up
t_grep "exactly one package re-rendered" '^idpmake: 1 rendered' "$STDOUT"
t_grep "it is web" 'in-cluster/web:render' "$STDOUT"
t_nogrep "db and cache are not re-rendered" 'in-cluster/(db|cache):render' "$STDOUT"
t_eq "the edit makes one commit" 2 "$(commits)"
t_ok "the commit holds the edit" sh -c "git -C '$bare' show main:in-cluster/web/deployment.web.yaml | grep -q 'replicas: 3'"
t_eq "the commit touches only web's folder" "in-cluster/web/deployment.web.yaml" \
	"$(git -C "$bare" diff --name-only main~1 main -- . ":!.idpmake")"

t_ok "up right after the edit" up
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"

# ---- touch: same content, new mtime ---------------------------------------
touch d/packages/db/cm.yaml d/packages/cache/deploy.yaml
t_ok "up after touch" up
t_grep "touch re-renders nothing" '^idpmake: 0 rendered' "$STDOUT"
t_nogrep "touch runs no render step" ':render' "$STDOUT"
t_eq "touch makes no commit" 2 "$(commits)"
touch -d '-1 min' d/packages/web/svc.yaml
t_ok "up after touch -d into the past" up
t_grep "an older mtime re-renders nothing" '^idpmake: 0 rendered' "$STDOUT"

# ---- adding and removing a file --------------------------------------------
mkmanifest d/packages/cache/svc.yaml Service cache
t_ok "up after adding a file to cache" up
t_grep "adding a file re-renders one package" '^idpmake: 1 rendered' "$STDOUT"
t_grep "it is cache" 'in-cluster/cache:render' "$STDOUT"
t_nogrep "not web nor db" 'in-cluster/(web|db):render' "$STDOUT"
t_eq "adding a file makes a commit" 3 "$(commits)"
t_ok "the new object is in the repository" git -C "$bare" cat-file -e main:in-cluster/cache/service.cache.yaml

rm d/packages/cache/svc.yaml
t_ok "up after removing the file" up
t_grep "removing a file re-renders one package" '^idpmake: 1 rendered' "$STDOUT"
t_grep "it is cache" 'in-cluster/cache:render' "$STDOUT"
t_eq "removing a file makes a commit" 4 "$(commits)"
t_fail "the object is gone from the repository" git -C "$bare" cat-file -e main:in-cluster/cache/service.cache.yaml

# a file in a subfolder
rm d/packages/db/sub/more.yaml
t_ok "up after removing a file in a subfolder" up
t_grep "re-renders db" 'in-cluster/db:render' "$STDOUT"
t_grep "and only db" '^idpmake: 1 rendered' "$STDOUT"

# ---- the package's spec ---------------------------------------------------
sed -i '/^  db:/,/namespace/ s/namespace: data/namespace: data2/' d/distro.yaml
t_ok "up after changing db's namespace" up
t_grep "a spec change re-renders db" 'in-cluster/db:render' "$STDOUT"
t_grep "and only db" '^idpmake: 1 rendered' "$STDOUT"
t_nogrep "cache (same namespace before) is not re-rendered" 'in-cluster/(cache|web):render' "$STDOUT"

# ---- a no-op up reads no content --------------------------------------------
# Every file safely older than the run, then one up to record the stat cache
# without the racy flag, then the traced no-op.
find d/packages d/distro.yaml -type f -exec touch -d '-1 min' {} +
sleep 2.2
t_ok "up after the mtimes moved to the past" up
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"
before=$(commits)
if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace: no leak check for the traced run
	t_ok "the traced no-op up succeeds" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -e trace=openat,open -o "$T/strace.log" "$IDPMAKE" -C "$T/d" up
	t_grep "the traced up renders nothing" '^idpmake: 0 rendered' "$STDOUT"
	grep -E '"[^"]*packages/(web|db|cache)/[^"]*"' "$T/strace.log" | grep -v O_DIRECTORY >"$T/pkgopens.log"
	t_nogrep "a no-op up opens no file of a package" . "$T/pkgopens.log"
	grep -E '"[^"]*gitops\.git[^"]*"' "$T/strace.log" >"$T/gitopens.log"
	t_nogrep "a no-op up opens nothing under .idpmake/gitops.git" . "$T/gitopens.log"
	t_grep "the trace did record the state being opened" 'state\.db' "$T/strace.log"
else
	t_skip "strace missing: no check that a no-op up opens no package file (run ./configure --install-deps)"
fi
t_eq "the no-op ups make no commit" "$before" "$(commits)"

t_done
