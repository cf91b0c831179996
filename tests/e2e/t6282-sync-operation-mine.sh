#!/bin/bash
# A sync waits for the operation it started (issue 20, "op_done does not tie a
# finished operation to this run's sync"): a finished operation whose state
# is the one the Application had before idpmake's POST .../sync (that sync
# was dropped before it ran), or one at another revision, is not this run's
# sync finishing: idpmake neither takes its failure nor its success as its
# own, and waits for its own until sync.timeout, saying so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443
mkdistro d <<EOF
idpmake: 1
name: mine
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
packages:
  base: {type: manifests, path: packages/base, sync: {timeout: 60}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1

# ---- a sync fails: the Application's last operation is Failed ------------------
emu_post fault '{"app": "canary-base", "sync_fail": "one or more objects failed to apply: the old failure"}'
t_exit 1 "a failed sync fails the run" idpmake up
t_grep "with Argo CD's message" "sync of application 'canary-base' failed: one or more objects failed to apply: the old failure" "$OUTPUT"

# ---- the next sync is accepted but never runs ----------------------------------
emu_post fault '{"app": "canary-base", "clear": true}'
emu_post fault '{"app": "canary-base", "drop_sync": true}'
sed -i 's/timeout: 60/timeout: 5/' distro.yaml
t_exit 1 "a sync that never ran fails the run" idpmake up
t_nogrep "the earlier operation's failure is not taken for this run's" "the old failure" "$OUTPUT"
t_grep "it waited for its own sync and says so" \
	"timed out after 5 s waiting for the sync idpmake started on application 'canary-base': Argo CD shows no operation of it" "$OUTPUT"
t_grep "its log names the earlier operation" "its last operation \(Failed, started .*\) is not the sync idpmake started" \
	.idpmake/logs/canary_base_sync.log

# ---- an earlier success is not taken for this run's either -----------------------
sed -i 's/timeout: 5/timeout: 60/' distro.yaml
t_ok "the sync runs when Argo CD runs it" idpmake up
emu_post fault '{"app": "canary-base", "drop_sync": true}'
t_ok "forget the sync" idpmake forget canary/base
sed -i 's/timeout: 60/timeout: 5/' distro.yaml
t_exit 1 "a sync that never ran does not pass on the Application's earlier success" idpmake up
t_grep "it waited for its own sync" "waiting for the sync idpmake started on application 'canary-base'" "$OUTPUT"
sed -i 's/timeout: 5/timeout: 60/' distro.yaml
t_ok "and the next up syncs" idpmake up
t_grep "one sync" ' 1 synced' "$OUTPUT"
t_done
