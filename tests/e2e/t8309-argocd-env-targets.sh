#!/bin/bash
# One resolution of the Argo CD server (issue 33 #1): the distro's
# argocd.server, then a context, then the environment (ARGOCD_OPTS --server,
# ARGOCD_SERVER), which fills in and never replaces: a distro naming one
# server and the environment another is refused by plan and up, naming both
# and the ways out, before any request.  A remote Argo CD cannot read (issue
# 33 #3): a local or relative git.remote with argocd.server is a validate
# error unless argocd.repo-url says where Argo CD reads it; a distro naming
# neither argocd.server nor argocd.repo-url pushing to a local repository
# (the quickstart) ignores ARGOCD_* and says so in its line, sending that
# Argo CD nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
requests() { curl -fsS -m 10 "$emu/requests" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
server=$ARGOCD_SERVER

# ---- the distro names its server, ARGOCD_SERVER another: refused ---------------
mkdistro h <<EOF
idpmake: 1
name: named-http
git: {remote: "https://git.example.invalid/gitops.git"}
argocd: {server: argocd.example.invalid}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest h/packages/app/cm.yaml ConfigMap app
emu_reset
t_exit 2 "plan of a distro naming its Argo CD, ARGOCD_SERVER exported: refused" idpmake -C h plan
t_nogrep "not redirected to ARGOCD_SERVER" "argocd $server \(ARGOCD_SERVER\)" "$STDERR"
t_exit 2 "up: refused too" idpmake -C h up
t_grep "naming both" "the distro names the Argo CD server argocd.example.invalid \(argocd.server\), and ARGOCD_SERVER names $server" "$STDERR"
t_eq "ARGOCD_SERVER's Argo CD got no request" 0 "$(requests)"
mkdistro d <<EOF
idpmake: 1
name: named
git: {remote: "$bare"}
argocd: {server: argocd.example.invalid, repo-url: "file://$bare"}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest d/packages/app/cm.yaml ConfigMap app
emu_reset
t_exit 2 "plan: the distro's server and ARGOCD_SERVER's differ" idpmake -C d plan
t_grep "naming both, and the ways out" "the distro names the Argo CD server argocd.example.invalid \(argocd.server\), and ARGOCD_SERVER names $server: refusing to guess which one.*unset ARGOCD_SERVER to use the distro's, or remove argocd.server from the distro to let ARGOCD_SERVER choose" "$STDERR"
t_exit 2 "up is refused too" idpmake -C d up
t_grep "saying the same" "the distro names the Argo CD server argocd.example.invalid" "$STDERR"
t_eq "nothing was pushed" "" "$(head_of)"
t_eq "no request reached ARGOCD_SERVER's Argo CD" 0 "$(requests)"
t_exit 2 "ARGOCD_OPTS --server naming another is refused too" \
	env -u ARGOCD_SERVER ARGOCD_OPTS="--plaintext --server $server" "$IDPMAKE" -C d up
t_grep "naming it" "and ARGOCD_OPTS --server names $server: .*remove --server from ARGOCD_OPTS" "$STDERR"
t_ok "the same server in both is no conflict" env ARGOCD_SERVER="argocd.example.invalid:443" "$IDPMAKE" -C d plan
t_grep "the distro's, said so" "argocd argocd.example.invalid \(distro\)" "$STDERR"

# ---- the distro names none: the environment fills it in -------------------------
sed 's/^argocd: .*$//' h/distro.yaml >h/d2 && mv h/d2 h/distro.yaml
t_run env ARGOCD_SERVER=$'argocd.example.invalid\x1b]0;owned\x07' "$IDPMAKE" -C h plan
t_grep "a control character in ARGOCD_SERVER reaches the line escaped" 'argocd argocd.example.invalid\\x1b]0;owned\\x07 \(ARGOCD_SERVER\)' "$STDERR"
t_nostring "not raw" $'\x1b' "$STDERR"
sed -i 's/server: argocd.example.invalid, //' d/distro.yaml
t_ok "up, ARGOCD_SERVER filling in the distro's open server" idpmake -C d up
t_grep "its line says where the server came from" "argocd $server \(ARGOCD_SERVER\)" "$STDERR"
t_grep "synced there" '1 synced' "$STDOUT"
curl -fsS "$emu/apps" >apps.json
t_ok "the Application reads argocd.repo-url" python3 -c '
import json, sys
apps = json.load(open("apps.json"))
apps = apps.get("items", apps) if isinstance(apps, dict) else apps
src = [a["spec"]["source"]["repoURL"] for a in apps]
assert src == ["file://" + sys.argv[1]], src' "$bare"

# ---- a remote Argo CD cannot read: a validate error ------------------------------
bad() {	# GIT-REMOTE [ARGOCD-KEYS]
	mkdistro v <<EOF
idpmake: 1
name: local
git: {remote: $1}
argocd: {server: argocd.example.invalid${2:-}}
packages:
  app: {type: manifests, path: packages/app}
EOF
}
mkmanifest v/packages/app/cm.yaml ConfigMap app
bad '"gitops.git"'
t_exit 2 "validate: a relative remote with Argo CD" idpmake -C v validate
t_grep "at git.remote's line and column, saying why and the way out" "^distro.yaml:3:15: error: git.remote '[^']*gitops.git' is a repository on this machine, which the Argo CD of argocd.server cannot read: .*argocd.repo-url" "$STDERR"
bad "\"$bare\""
t_exit 2 "an absolute path too" idpmake -C v validate
bad "\"file://$bare\""
t_exit 2 "a file:// URL too" idpmake -C v validate
bad "\"$bare\"" ", repo-url: \"file://$bare\""
t_ok "with argocd.repo-url it is valid (a file:// URL there is taken)" idpmake -C v validate
bad "\"$bare\"" ", repo-url: \"https://user:pw@git.example.invalid/g.git\""
t_exit 2 "a password in argocd.repo-url is refused" idpmake -C v validate
t_grep "located" "^distro.yaml:4:[0-9]+: error: argocd.repo-url must not hold a user name or password" "$STDERR"
t_nostring "not shown" "user:pw" "$OUTPUT"
bad "\"$bare\"" ", repo-url: \"ssh://git:hunter2@git.example.invalid/g.git\""
t_exit 2 "a password in an ssh:// argocd.repo-url is refused too (only a user name goes with ssh)" idpmake -C v validate
t_nostring "nor shown" "hunter2" "$OUTPUT"
bad "\"$bare\"" ", repo-url: \"git@git.example.invalid:org/g.git\""
t_ok "git@host:path, the form the error names, is taken" idpmake -C v validate
bad "\"$bare\"" ", repo-url: srv/gitops.git"
t_exit 2 "a path as argocd.repo-url is refused" idpmake -C v validate
t_grep "saying it must be a URL" "argocd.repo-url must be a URL" "$STDERR"
bad "\"$bare\"" ", repo-url: \"https://git.example.invalid/g\\e[2J.git\""
t_exit 2 "a control character in argocd.repo-url is refused (it went to the Application and the terminal)" idpmake -C v validate
t_grep "shown escaped" 'not .https://git.example.invalid/g\\x1b\[2J.git' "$STDERR"
bad '"https://git.example.invalid/g.git"'
t_ok "a git server's URL needs no repo-url" idpmake -C v validate
bad '"gitea.example.invalid:org/g.git"'
t_ok "git's host:path is no path on this machine, the distro read from another directory too" idpmake -f v/distro.yaml validate
mkdistro v <<EOF
idpmake: 1
name: local
argocd: {server: argocd.example.invalid}
packages:
  app: {type: manifests, path: packages/app}
EOF
t_exit 2 "no git.remote (the state's own repository) with Argo CD: plan refuses" idpmake -C v plan
t_grep "located at the argocd block" "^distro.yaml:3:[0-9]+: error: the GitOps repository is the state's own .idpmake/gitops.git" "$STDERR"

# ---- the quickstart in a shell with ARGOCD_SERVER and a token exported ----------
cp -R "$top/examples/quickstart" qs || t_bail "cannot copy the quickstart"
rm -rf qs/.idpmake
emu_reset
t_ok "the quickstart's up, ARGOCD_SERVER and ARGOCD_AUTH_TOKEN exported" idpmake -C qs up
t_grep "its line says ARGOCD_SERVER is ignored, and why" "argocd none \(ARGOCD_SERVER ignored: the distro names no argocd.server, and Argo CD cannot read a repository on this machine\)" "$STDERR"
t_grep "it pushed to its own repository" '1 commit pushed' "$STDOUT"
t_grep "no sync" ' 0 synced' "$STDOUT"
t_nogrep "no hint about IDPMAKE_GIT_TOKEN" 'IDPMAKE_GIT_TOKEN' "$OUTPUT"
t_eq "that Argo CD got no request" 0 "$(requests)"
t_ok "plan too" idpmake -C qs plan
t_grep "says the same" "ARGOCD_SERVER ignored" "$STDERR"
t_eq "still no request" 0 "$(requests)"

# ... and a context in use that names an Argo CD: it fills in no server for a local repository either
t_ok "context add with an Argo CD" idpmake context add work --argocd-server "$ARGOCD_SERVER" --plaintext --token-env ARGOCD_AUTH_TOKEN
t_ok "context use" idpmake context use work
printf '  more: "1"\n' >>qs/packages/hello/configmap.yaml
t_ok "the quickstart's up with the context in use (ARGOCD_SERVER unset)" env -u ARGOCD_SERVER "$IDPMAKE" -C qs up
t_grep "its line says the context's server is ignored" "argocd none \(the context 'work''s argocd-server ignored: the distro names no argocd.server" "$STDERR"
t_grep "no sync" ' 0 synced' "$STDOUT"
t_eq "that Argo CD got no request" 0 "$(requests)"
t_exit 2 "chosen for the run (IDPMAKE_CONTEXT), the context's Argo CD is refused for the quickstart" \
	env -u ARGOCD_SERVER IDPMAKE_CONTEXT=work "$IDPMAKE" -C qs plan
t_grep "saying no Argo CD could read its repository" "the context 'work' \\(IDPMAKE_CONTEXT\\) makes the run sync through the Argo CD .* which is on this machine" "$STDERR"
t_eq "and that Argo CD got no request" 0 "$(requests)"
t_ok "context rm" idpmake context rm work

t_done
