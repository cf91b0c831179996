#!/bin/bash
# An empty state folder rebuilt from the keys index (issue 8 §5) proves each
# folder by its tree in git and writes no cache bundle (lazycache.h):
# thousands of new cache files would cost more than the proof.  The renders are
# up to date all the same; a reader of the cache (diff A/ B/, a hook, an
# Application file) gets the bundle from the clone, checked against its
# hash, without rendering; and with the clone gone a missing bundle is
# rendered again, as before, never left missing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
tip() { git --git-dir="$bare" rev-parse main; }
bundles() { find .idpmake/cache -type f 2>/dev/null | wc -l; }
rlog=$T/renders.log
: >"$rlog"

mkdistro d <<EOF
idpmake: 1
name: lazy-cache
git: {remote: "$bare"}
rules: [rules/counted.yaml]
clusters:
  dev: {server: "https://dev.example:6443", vars: {env: dev}}
  prod: {server: "https://prod.example:6443", vars: {env: prod}}
packages:
  web: {type: counted, path: packages/web, rewrite: [{match: ENVNAME, replace: "\${env}"}]}
  db: {type: counted, path: packages/db}
  a1: {type: counted, path: packages/a1}
  a2: {type: counted, path: packages/a2}
  a3: {type: counted, path: packages/a3}
EOF
mkdir -p d/rules
cat >d/rules/counted.yaml <<EOF
rule: counted
description: cat the manifests, counting each run
command: [sh, -c, 'echo "\$1" >>$rlog; cat "\$1"/*.yaml', sh, "\${src}"]
inputs: ["*.yaml"]
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
echo '  env: ENVNAME' >>d/packages/web/cm.yaml
mkmanifest d/packages/db/cm.yaml ConfigMap db
# ten folders: more than the eight that -j workers prove together
for p in a1 a2 a3; do mkmanifest d/packages/$p/cm.yaml ConfigMap $p; done
cd d || exit 1

t_ok "first up renders and pushes" idpmake up
t_eq "first up: 6 renderer runs (db, a1-a3: one render for both clusters)" 6 "$(wc -l <"$rlog")"
before=$(tip)

rm -rf .idpmake
: >"$rlog"
t_ok "up with an empty state folder" idpmake up -v
t_grep "the renders were reconstructed" '10 renders reconstructed from .idpmake/keys' "$STDERR"
t_eq "no renderer ran" 0 "$(wc -l <"$rlog")"
t_eq "no new commit" "$before" "$(tip)"
t_eq "no bundle was written to the cache" 0 "$(bundles)"

t_ok "the next up" idpmake up
t_grep "the next up is a no-op" '^idpmake: 0 rendered, nothing pushed, 0 synced, 0 hooks, [0-9]+ up to date$' "$STDOUT"
t_eq "the next up: no renderer ran" 0 "$(wc -l <"$rlog")"
t_eq "the next up wrote no bundle either" 0 "$(bundles)"

t_exit 1 "diff dev/ prod/ reads the renders: web differs" idpmake --color=never diff --exit-code dev/ prod/
t_grep "web differs between the clusters" '^package web: dev and prod differ$' "$STDOUT"
t_grep "by its env field" '^\+  env: prod$' "$STDOUT"
t_nogrep "db is the same on both" '^package (db|a[123])' "$STDOUT"
t_eq "diff rendered nothing: the bundles came from the clone" 0 "$(wc -l <"$rlog")"
t_eq "six bundles are in the cache now (one for both clusters but web's)" 6 "$(bundles)"

# a lost clone: a missing bundle is rendered again, not left missing
rm -rf .idpmake
t_ok "empty state again" idpmake up
rm -rf .idpmake/repo
: >"$rlog"
t_ok "up without the clone" idpmake up
t_eq "every render whose bundle the clone held runs again" 6 "$(wc -l <"$rlog")"
t_grep "and nothing is pushed: the remote holds it" '^idpmake: 6 rendered, nothing pushed' "$STDOUT"
t_eq "no new commit after it" "$before" "$(tip)"
t_eq "the bundles are in the cache" 6 "$(bundles)"

t_done
