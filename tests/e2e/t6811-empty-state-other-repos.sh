#!/bin/bash
# Any runner, any state folder (issue 8 §5), for Applications whose sources
# are not folders idpmake pushed: an up with an empty state folder proves
# them done when Argo CD reports them Synced at what their targetRevision
# names now (lsremote.c, remotesync.c):
#   branch   another repository's branch: the commit git ls-remote gives
#   tag      another repository's annotated tag: the tag or its commit
#   values   a multi-source Application: a cnoe:// folder, and a ref-only
#            source of the GitOps repository at its branch (the tip idpmake
#            fetched)
# and syncs again what it cannot prove: an Application Argo CD reports at an
# older commit of the branch than the branch's now, one whose ref-only
# source Argo CD reports at an older tip of the GitOps branch, one whose
# repository cannot be listed.  (A version range of tags is not resolved either, as
# for charts in t6810; the emulator resolves no tag range.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

ext=$T/ext.git
git init -q --bare -b main "$ext" || t_bail "git init failed"
start_gitops_argocd --repo-map "file://$ext=$ext" --repo-map "https://ext.invalid/ext.git=$ext"
tip() { git --git-dir="$bare" rev-parse main; }

# the other repository: app/ on main, tagged v1 (annotated)
work=$T/ext-work
mkdir -p "$work/app"
mkmanifest "$work/app/cm.yaml" ConfigMap ext
git -C "$work" init -q -b main && git -C "$work" add -A &&
	git -C "$work" -c user.name=T -c user.email=t@example.com commit -q -m one &&
	git -C "$work" -c user.name=T -c user.email=t@example.com tag -a -m v1 v1 &&
	git -C "$work" push -q "$ext" main v1 || t_bail "cannot fill the other repository"
c1=$(git -C "$work" rev-parse HEAD)

mkdistro d <<EOF
idpmake: 1
name: other-repos
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  branch: {type: argocd-app, path: stacks/branch}
  tag: {type: argocd-app, path: stacks/tag}
  values: {type: argocd-app, path: stacks/values}
EOF
cd d || exit 1
mkdir -p stacks/branch stacks/tag stacks/values/manifests
app() {	# app NAME SOURCE-YAML: an argocd-app Application with that source
	cat <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: $1, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: $1}
  $2
EOF
}
app from-branch "source: {repoURL: \"file://$ext\", targetRevision: main, path: app}" >stacks/branch/app.yaml
app from-tag "source: {repoURL: \"file://$ext\", targetRevision: v1, path: app}" >stacks/tag/app.yaml
app with-values "sources: [{repoURL: \"cnoe://manifests\", targetRevision: HEAD, path: \".\"}, {repoURL: \"file://$bare\", targetRevision: main, ref: values}]" \
	>stacks/values/app.yaml
mkmanifest stacks/values/manifests/cm.yaml ConfigMap values with-values

t_ok "first up syncs the three" idpmake up
t_grep "first up: 3 synced" ' 3 synced' "$STDOUT"

# up -v with an empty state folder: LABEL
empty_up() {
	rm -rf .idpmake
	emu_reset
	t_ok "$1: up with an empty state folder" idpmake up -v
}

# ---- up to date: every source proven -----------------------------------
before=$(tip)
empty_up "up to date"
t_grep "up to date: 0 rendered, nothing pushed, 0 synced" '^idpmake: 0 rendered, nothing pushed, 0 synced' "$STDOUT"
t_eq "up to date: no request that changes anything" 0 "$(emu_posts .)"
t_eq "up to date: no new commit" "$before" "$(tip)"
t_nogrep "up to date: -v names no sync as unproven" 'not proven done in Argo CD' "$STDERR"
t_grep "-v lists the other repository once" "^idpmake: git ls-remote file://$ext\$" "$STDERR"
t_eq "once for both of its Applications" 1 "$(grep -c 'git ls-remote' "$STDERR")"

# ---- the GitOps branch moved, Argo CD reports its ref source at the old tip
gw=$T/gitops-work
git clone -q "$bare" "$gw" && echo hand >"$gw/README" && git -C "$gw" add README &&
	git -C "$gw" -c user.name=H -c user.email=h@example.com commit -q -m readme &&
	git -C "$gw" push -q origin HEAD:main || t_bail "cannot move the GitOps branch"
rm -rf .idpmake
emu_reset
emu_post fault "{\"app\": \"in-cluster-values-with-values\", \"report_revisions\": [\"$(tip)\", \"$before\"]}"
t_ok "values at the old tip: up with an empty state folder" idpmake up -v
t_grep "values at the old tip: only that Application syncs" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_grep "it is with-values" 'in-cluster/values-with-values:sync' "$STDOUT"
t_grep "-v says it was not proven" 'values:sync: not proven done in Argo CD' "$STDERR"
emu_post fault '{"app": "in-cluster-values-with-values", "clear": true}'

# ---- the branch moved, Argo CD still reports the old commit ------------
echo '# two' >>"$work/app/cm.yaml"
git -C "$work" -c user.name=T -c user.email=t@example.com commit -q -am two &&
	git -C "$work" push -q "$ext" main || t_bail "cannot push to the other repository"
rm -rf .idpmake
emu_reset
emu_post fault "{\"app\": \"in-cluster-branch-from-branch\", \"report_revision\": \"$c1\"}"
t_ok "branch moved: up with an empty state folder" idpmake up -v
t_grep "branch moved: only that Application syncs" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_grep "it is the branch's" 'in-cluster/branch-from-branch:sync' "$STDOUT"
t_grep "-v says it was not proven" 'branch:sync: not proven done in Argo CD' "$STDERR"
t_eq "one sync request" 1 "$(emu_posts '/sync$')"
emu_post fault '{"app": "in-cluster-branch-from-branch", "clear": true}'

# ---- a repository idpmake cannot list: it syncs ------------------------
# (Argo CD reaches it by a name this machine cannot resolve)
sed -i "s|file://$ext|https://ext.invalid/ext.git|" stacks/branch/app.yaml
t_ok "the branch's Application names the repository by another URL" idpmake up
t_grep "that one Application is updated" '^idpmake: 1 rendered, 1 commit pushed .*, 1 synced' "$STDOUT"
empty_up "a repository that cannot be listed"
# with-values syncs too: its values source is the GitOps branch, which that
# commit moved (Argo CD compares it at the new tip: OutOfSync)
t_grep "cannot be listed: two Applications sync" '^idpmake: 0 rendered, nothing pushed, 2 synced' "$STDOUT"
t_grep "the branch's" 'in-cluster/branch-from-branch:sync' "$STDOUT"
t_grep "and with-values, at the moved tip" 'in-cluster/values-with-values:sync' "$STDOUT"
t_nogrep "not the tag's: its repository is listed" 'tag-from-tag:sync' "$STDOUT"
t_grep "-v says why" '^idpmake: cannot list https://ext.invalid/ext.git: ' "$STDERR"

t_done
