#!/bin/bash
# Sync keys (engine.md "Keys"): a sync's key covers the Application spec
# idpmake sends (destination, project, sync options) and the Argo CD server,
# so changing only one of them re-syncs exactly the Applications it touches,
# with nothing rendered or pushed: sync.options of one package, the server
# of one cluster (destination), argocd.project, and ARGOCD_SERVER.  Counts
# are the POST .../sync requests in the emulator's log.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20 \
	--cluster c1=https://c1.example:6443 --cluster c2=https://c2.example:6443 \
	--cluster c1b=https://c1b.example:6443 --project team-a
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
port=${ARGOCD_SERVER##*:}

mkdistro d <<EOF
idpmake: 1
name: synckeys
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  c1: {server: "https://c1.example:6443"}
  c2: {server: "https://c2.example:6443"}
packages:
  a: {type: manifests, path: packages/a, namespace: apps}
  b: {type: manifests, path: packages/b, namespace: apps}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a
mkmanifest d/packages/b/cm.yaml ConfigMap b
cd d || exit 1
# synced: the Applications POSTed .../sync since the last reset, sorted, one line
synced() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, re, sys
apps = []
for e in json.load(sys.stdin):
    m = re.fullmatch(r"/api/v1/applications/([^/]+)/sync", e["path"])
    if e["method"] == "POST" and m:
        apps.append(m.group(1))
print(" ".join(sorted(apps)) or "(none)")'
}
# field APP PATH: a field of the Application as Argo CD has it
field() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://127.0.0.1:$port/api/v1/applications/$1" |
		python3 -c '
import json, sys
o = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    o = o.get(k) if isinstance(o, dict) else (o[int(k)] if isinstance(o, list) and k.isdigit() and int(k) < len(o) else None)
print("<absent>" if o is None else json.dumps(o) if isinstance(o, (list, dict)) else o)' "$2"
}
nothing_else() {
	t_grep "$1: nothing rendered or pushed" '^idpmake: 0 rendered, nothing pushed' "$STDOUT"
}

t_ok "first up" idpmake up
t_eq "first up: the four Applications synced" "c1-a c1-b c2-a c2-b" "$(synced)"
emu_reset
t_ok "no-op up" idpmake up
t_eq "no-op: no sync" "(none)" "$(synced)"

# ---- sync.options of one package ----------------------------------------
sed -i 's#  a: {type: manifests, path: packages/a, namespace: apps}#  a: {type: manifests, path: packages/a, namespace: apps, sync: {options: [CreateNamespace=true]}}#' distro.yaml
t_ok "plan after changing a's sync.options" idpmake plan
t_grep "plan: c1/a:sync would run" '^sync +c1/a:sync' "$STDOUT"
t_nogrep "plan: nothing of b" '^sync +c[12]/b:sync' "$STDOUT"
emu_reset
t_ok "up after changing a's sync.options" idpmake up
t_eq "sync.options: exactly a's Applications re-synced" "c1-a c2-a" "$(synced)"
# sync: is part of the package spec, which the render's key covers: the
# render runs again, but its output is unchanged, so nothing is pushed
t_grep "sync.options: the render's output is unchanged" '^\[[0-9]/[0-9]\] render c[12]/a:render: (.*, )?output unchanged' "$STDOUT"
t_grep "sync.options: nothing pushed" '^idpmake: [0-9]+ rendered, nothing pushed, 2 synced' "$STDOUT"
t_eq "sync.options: Argo CD has the option" '["CreateNamespace=true"]' "$(field c1-a spec.syncPolicy.syncOptions)"
emu_reset
t_ok "no-op after sync.options" idpmake up
t_eq "no-op after sync.options: no sync" "(none)" "$(synced)"

# ---- the destination: one cluster's server ------------------------------
sed -i 's#c1: {server: "https://c1.example:6443"}#c1: {server: "https://c1b.example:6443"}#' distro.yaml
emu_reset
t_ok "up after moving cluster c1 to another server" idpmake up
t_eq "destination: exactly c1's Applications re-synced" "c1-a c1-b" "$(synced)"
nothing_else "destination"
t_eq "destination: Argo CD has the new server" https://c1b.example:6443 "$(field c1-b spec.destination.server)"
emu_reset
t_ok "no-op after the destination" idpmake up
t_eq "no-op after the destination: no sync" "(none)" "$(synced)"

# ---- the project --------------------------------------------------------
sed -i "s|argocd: {repo-url: \"file://$bare\"}|argocd: {repo-url: \"file://$bare\", project: team-a}|" distro.yaml
emu_reset
t_ok "up after changing argocd.project" idpmake up
t_eq "project: every Application re-synced, once" "c1-a c1-b c2-a c2-b" "$(synced)"
nothing_else "project"
t_eq "project: Argo CD has it" team-a "$(field c2-b spec.project)"
emu_reset
t_ok "no-op after the project" idpmake up
t_eq "no-op after the project: no sync" "(none)" "$(synced)"

# ---- the server (same emulator, another name for it) ---------------------
emu_reset
t_ok "up with ARGOCD_SERVER=localhost:PORT" env ARGOCD_SERVER="localhost:$port" "$IDPMAKE" up
t_eq "server: every Application re-synced, once" "c1-a c1-b c2-a c2-b" "$(synced)"
nothing_else "server"
emu_reset
t_ok "no-op with the new server" env ARGOCD_SERVER="localhost:$port" "$IDPMAKE" up
t_eq "no-op with the new server: no sync" "(none)" "$(synced)"
t_done
