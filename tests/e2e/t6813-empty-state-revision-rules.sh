#!/bin/bash
# An empty state's proof of a source in another repository resolves its
# targetRevision as Argo CD does (util/git/client.go lsRemote, lsremote.c),
# or not at all:
#   range    "1.x" is a version range to Argo CD (its highest matching tag,
#            1.5.0 here), never the literal tag named "1.x": not proven
#   short    "feature/x", where the repository has refs/feature/x as well as
#            the branch feature/x: Argo CD takes the first whose name or
#            short name it is, in the server's order, refs/feature/x; an
#            Application reported at the branch's commit is not proven done,
#            one at refs/feature/x's is
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

ext=$T/ext.git
git init -q --bare -b main "$ext" || t_bail "git init failed"
# shellcheck disable=SC2119 # emulator arguments follow
start_gitops_argocd --repo-map "file://$ext=$ext"

work=$T/ext-work
mkdir -p "$work/app"
mkmanifest "$work/app/cm.yaml" ConfigMap ext
gitw() { git -C "$work" -c user.name=T -c user.email=t@example.com "$@"; }
gitw init -q -b main && gitw add -A && gitw commit -q -m one || t_bail "cannot commit"
c1=$(gitw rev-parse HEAD)
echo '# two' >>"$work/app/cm.yaml"
gitw commit -q -am two || t_bail "cannot commit"
c2=$(gitw rev-parse HEAD)
# the literal tag "1.x" at c1, the version 1.5.0 at c2; branch feature/x at c1, refs/feature/x at c2
gitw tag 1.x "$c1" && gitw tag 1.5.0 "$c2" && gitw branch feature/x "$c1" &&
	gitw push -q "$ext" main 1.x 1.5.0 feature/x &&
	git --git-dir="$ext" update-ref refs/feature/x "$c2" || t_bail "cannot fill the other repository"

mkdistro d <<EOF
idpmake: 1
name: revision-rules
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  range: {type: argocd-app, path: stacks/range}
  short: {type: argocd-app, path: stacks/short}
EOF
cd d || exit 1
mkdir -p stacks/range stacks/short
for a in range:1.x short:feature/x; do
	cat >"stacks/${a%%:*}/app.yaml" <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: from-${a%%:*}, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: ${a%%:*}}
  source: {repoURL: "file://$ext", targetRevision: "${a#*:}", path: app}
EOF
done
t_ok "first up syncs both" idpmake up
t_grep "2 synced" ' 2 synced' "$STDOUT"

# the emulator resolves as git rev-parse: "1.x" the literal tag (c1), "feature/x" refs/feature/x (c2)
rm -rf .idpmake
emu_reset
t_ok "empty state" idpmake up -v
t_grep "only the range syncs" '^idpmake: 0 rendered, nothing pushed, 1 synced' "$STDOUT"
t_grep "it is the range's" 'range-from-range:sync' "$STDOUT"
t_grep "-v: the range is not proven" 'range:sync: not proven done in Argo CD' "$STDERR"
t_nogrep "-v: refs/feature/x's commit is proven" 'short:sync: not proven done' "$STDERR"

# Argo CD reports the branch feature/x's commit: refs/feature/x names another now
rm -rf .idpmake
emu_reset
emu_post fault "{\"app\": \"in-cluster-short-from-short\", \"report_revision\": \"$c1\"}"
t_ok "empty state, Argo CD at the branch feature/x's commit" idpmake up -v
t_grep "-v: not proven" 'short:sync: not proven done in Argo CD' "$STDERR"
t_grep "it syncs" 'short-from-short:sync' "$STDOUT"

t_done
