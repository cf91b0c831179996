#!/bin/bash
# A sync is done at the revision idpmake pushed, or at one that comes after
# it on the branch; never at an older or unknown one.  An Application whose
# comparison keeps reporting Synced at another revision (a repo server
# answering from a stale cache, a moved tag) is waited on, named in the
# step's log, and fails the step at its timeout, recording nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd

mkdistro d <<EOF
idpmake: 1
name: rev
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, sync: {timeout: 3}}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
cd d || exit 1

t_ok "first up" idpmake up
first=$(git --git-dir="$bare" rev-parse main)

# an older revision: the first commit, reported Synced after every refresh
echo '  v: "2"' >>packages/web/cm.yaml
emu_post fault "{\"app\": \"in-cluster-web\", \"report_revision\": \"$first\"}"
t_exit 1 "up fails: Synced at an older revision is not done" idpmake up
second=$(git --git-dir="$bare" rev-parse main)
t_report "$([ "$second" != "$first" ]; echo $?)" "the change was pushed"
t_grep "the step's log names the older revision" "Synced at $first, which is not $second or a later commit with the same in-cluster/web/" .idpmake/logs/in-cluster_web_sync.log
t_grep "it timed out" "timed out" "$OUTPUT"
t_ok "plan after the failure" idpmake plan
t_grep "the sync is still to do" '^sync +in-cluster/web:sync' "$STDOUT"

# an unknown revision (not in the GitOps repository at all)
emu_post fault "{\"app\": \"in-cluster-web\", \"report_revision\": \"0123456789abcdef0123456789abcdef01234567\"}"
t_exit 1 "up fails: Synced at an unknown revision is not done" idpmake up
t_grep "the step's log says it is not known to come after" "Synced at 0123456789abcdef0123456789abcdef01234567, a commit not known here to come after $second" .idpmake/logs/in-cluster_web_sync.log

# a newer revision, pushed after ours by another hand: done
git clone -q "$bare" "$T/other" && (cd "$T/other" && mkdir -p other && echo x >other/x && git add -A &&
	git -c user.name=o -c user.email=o@example.com commit -qm other && git push -q origin HEAD:main) ||
	t_bail "the other push failed"
newer=$(git --git-dir="$bare" rev-parse main)
git --git-dir=.idpmake/repo fetch -q origin main:refs/remotes/origin/main || t_bail "fetch failed"
emu_post fault "{\"app\": \"in-cluster-web\", \"report_revision\": \"$newer\"}"
t_ok "up succeeds: Synced at a revision after ours" idpmake up
t_grep "the log says it is newer" "Synced at $newer, which comes after $second" .idpmake/logs/in-cluster_web_sync.log

# a later commit that changed the package's own folder (a hand edit): not done
(cd "$T/other" && git pull -q origin main && echo '  hand: "edit"' >>in-cluster/web/configmap.web.yaml &&
	git -c user.name=o -c user.email=o@example.com commit -qam hand && git push -q origin HEAD:main) ||
	t_bail "the hand edit was not pushed"
hand=$(git --git-dir="$bare" rev-parse main)
git --git-dir=.idpmake/repo fetch -q origin main:refs/remotes/origin/main || t_bail "fetch failed"
emu_post fault "{\"app\": \"in-cluster-web\", \"report_revision\": \"$hand\"}"
t_ok "forget the sync, so that it runs again" idpmake forget in-cluster/web:sync
t_exit 1 "up fails: Synced at a later commit that changed the folder is not done" idpmake up
t_grep "the log names the folder" "Synced at $hand, which is not $second or a later commit with the same in-cluster/web/" \
	.idpmake/logs/in-cluster_web_sync.log
emu_post fault '{"app": "in-cluster-web", "clear": true}'
# without the fault Argo CD syncs the branch head: the hand edit, still not this run's content
t_exit 1 "up again, the fault cleared: the hand edit is still not done" idpmake up
t_grep "Synced at the hand edit" "Synced at $hand, which is not $second" .idpmake/logs/in-cluster_web_sync.log
t_ok "plan shows the hand edit" idpmake plan
t_grep "naming its commit" "^drift +in-cluster/web: changed outside idpmake by ${hand:0:7} " "$STDOUT"
t_done
