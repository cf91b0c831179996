#!/bin/bash
# idpmake diff: the rendered output against what the GitOps repository holds,
# a unified diff per object, changing nothing; plan --exit-code for CI.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: diffs
packages:
  web: {type: manifests, path: packages/web, namespace: web}
  db: {type: manifests, path: packages/db, namespace: db}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
mkmanifest d/packages/db/cm.yaml ConfigMap db db
cd d || exit 1

t_ok "diff before the first up" idpmake diff
t_grep "every object is new" '^[+][+][+] b/in-cluster/web/configmap.web.yaml' "$STDOUT"
t_grep "with its lines added" '^[+]kind: ConfigMap' "$STDOUT"
t_grep "the count is said" '2 objects differ' "$STDERR"
t_fail "diff --exit-code says there is a difference" idpmake --exit-code diff
t_exit 1 "plan --exit-code: work to do" idpmake plan --exit-code
t_ok "the first up" idpmake up
t_ok "diff after it" idpmake diff
t_eq "nothing differs" "" "$(cat "$STDOUT")"
t_grep "and says so" '0 objects differ' "$STDERR"
t_ok "diff --exit-code: no difference" idpmake --exit-code diff
t_exit 0 "plan --exit-code: nothing to do" idpmake plan --exit-code

echo '  level: debug' >>packages/web/cm.yaml
commits=$(git --git-dir=.idpmake/gitops.git rev-list --count main)
t_ok "diff after a change" idpmake diff
t_grep "a unified diff of the object" '^@@ ' "$STDOUT"
t_grep "naming its file" '^--- a/in-cluster/web/configmap.web.yaml' "$STDOUT"
t_grep "with the new line" '^[+]  level: debug' "$STDOUT"
t_nogrep "and nothing of the other package" 'db' "$STDOUT"
t_ok "diff web only" idpmake diff web
t_grep "the target selects" 'configmap.web.yaml' "$STDOUT"
t_eq "diff made no commit" "$commits" "$(git --git-dir=.idpmake/gitops.git rev-list --count main)"
t_exit 1 "plan --exit-code sees the work" idpmake plan --exit-code
t_ok "up" idpmake up
t_ok "diff is clean again" idpmake --exit-code diff
rm packages/db/cm.yaml
mkmanifest packages/db/other.yaml ConfigMap other db
t_ok "diff after a file was replaced" idpmake diff
t_grep "the old object is removed" '^--- a/in-cluster/db/configmap.db.yaml' "$STDOUT"
t_grep "the new one added" '^[+][+][+] b/in-cluster/db/configmap.other.yaml' "$STDOUT"
t_done
