#!/bin/bash
# A context fills in, it never redirects (issue 19 #2): `context add emu
# --git-remote qs.git`, made for one distro, becomes the remote of a distro
# that names none; a distro that names its own git.remote keeps it on a plain
# `up`.  Chosen for the run (--context NAME, IDPMAKE_CONTEXT), the context goes
# over the distro.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10
git init -q --bare -b main "$T/qs.git" || t_bail "git init failed"
git init -q --bare -b main "$T/other.git" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$T/qs.git=$T/qs.git" --repo-map "$T/other.git=$T/other.git" --repo-map "file://$T/other.git=$T/other.git" \
	--op-ms 20 --health-ms 20 --reconcile-ms 10
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
head_of() { git --git-dir="$1" rev-parse -q --verify main; }

mkdistro qs <<EOF
idpmake: 1
name: quickstart
argocd: {server: "$ARGOCD_SERVER"}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest qs/packages/web/cm.yaml ConfigMap web
mkdistro other <<EOF
idpmake: 1
name: other
git: {remote: "$T/other.git"}
argocd: {server: "$ARGOCD_SERVER", repo-url: "file://$T/other.git"}
packages:
  api: {type: manifests, path: packages/api}
EOF
mkmanifest other/packages/api/cm.yaml ConfigMap api

t_ok "context add emu, for the quickstart's remote" idpmake context add emu --git-remote "$T/qs.git"
t_grep "it is the default" "context 'emu' added, and in use" "$STDOUT"

# ---- a distro that names no remote: the context fills it in ------------------
t_ok "up in the quickstart (no git.remote)" idpmake -C qs up
t_grep "its line names the context's remote, and why" \
	"^acting on gitops $T/qs.git branch main \(context 'emu'\), .*context emu \(context use\)" "$STDERR"
t_ok "pushed into the context's remote" head_of "$T/qs.git"
qs_main=$(head_of "$T/qs.git")

# ---- a distro with its own remote keeps it ----------------------------------
t_ok "a plain up in the other distro" idpmake -C other up
t_grep "its line names its own remote" \
	"^acting on gitops $T/other.git branch main \(distro\), .*context emu \(context use, fills in nothing here\)" "$STDERR"
t_eq "the quickstart's remote is untouched" "$qs_main" "$(head_of "$T/qs.git")"
t_ok "the other distro's remote has its commit" head_of "$T/other.git"
curl -sS -f "$emu/apps" >apps.json
t_ok "its Application reads its own remote" python3 -c '
import json, sys
apps = json.load(open("apps.json"))
apps = apps.get("items", apps) if isinstance(apps, dict) else apps
src = [a["spec"]["source"]["repoURL"] for a in apps if a["metadata"]["name"].endswith("-api")]
assert src and all(u.rstrip("/").endswith("/other.git") for u in src), src'

# ---- chosen for the run: over the distro -------------------------------------
idpmake -C other forget >/dev/null 2>&1
# its Applications push to other.git: the same name at another remote is another owner (t6431)
t_exit 1 "up --context emu in the other distro, over its own Applications, is refused" idpmake --context emu -C other up
t_grep "naming the remote they read" "Application 'in-cluster-api' in Argo CD belongs to distro 'other' pushing to file://$T/other at path" "$STDERR"
t_ok "up --context emu --adopt in the other distro" idpmake --context emu -C other up --adopt
t_grep "says it was chosen with --context" \
	"^acting on gitops $T/qs.git branch main \(context 'emu'\), .*context emu \(--context\)" "$STDERR"
t_fail "now the quickstart's remote has the other distro's commit" test "$qs_main" = "$(head_of "$T/qs.git")"
idpmake -C other forget >/dev/null 2>&1
t_ok "IDPMAKE_CONTEXT chooses it too" env IDPMAKE_CONTEXT=emu "$IDPMAKE" -C other plan
t_grep "saying so" "context emu \(IDPMAKE_CONTEXT\)" "$STDERR"

# ---- context use changes the default filler, not a distro's remote ----------
t_ok "context add spare" idpmake context add spare --git-remote "$T/qs.git"
t_ok "context use spare" idpmake context use spare
# its Applications now push to qs.git (the --adopt above): plan says up would refuse, as up does
t_exit 3 "plan in the other distro" idpmake -C other plan
t_grep "still its own remote, spare fills in nothing" \
	"gitops $T/other.git branch main \(distro\), .*context spare \(context use, fills in nothing here\)" "$STDERR"

t_done
