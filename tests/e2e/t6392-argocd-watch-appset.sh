#!/bin/bash
# Waiting for an ApplicationSet's Application on the run's watch stream
# (issue 26 §2, argoappset.c): after the element is stored, Argo CD's
# ApplicationSet controller generates the Application later (--appset-ms
# 1000 here); the step asks once, then waits for it on the stream, not with
# a GET per poll; without a stream (IDPMAKE_ARGOCD_WATCH=0) it polls, as
# before.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --appset-ms 1000 \
	--cluster a=https://a:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
emu=http://$ARGOCD_SERVER/_emu
mkdistro d <<EOF2
idpmake: 1
name: setwatch
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare", fleet: applicationset}
clusters:
  a: {server: "https://a:6443"}
packages:
  base: {type: manifests, path: packages/base}
EOF2
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1
# GETs of the generated Application a-base between the ApplicationSet's
# upsert and the sync of a-base: the wait for the controller (what
# argoappset.c asks; the sync's own wait, in argocd.c, is not counted)
gets() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
log = json.load(sys.stdin)
up = max(i for i, e in enumerate(log) if e["method"] == "POST" and e["path"] == "/api/v1/applicationsets")
sync = min(i for i, e in enumerate(log) if e["method"] == "POST" and e["path"] == "/api/v1/applications/a-base/sync")
print(sum(1 for e in log[up:sync] if e["method"] == "GET" and e["path"] == "/api/v1/applications/a-base"))' ||
	t_bail "cannot read the request log"; }
change() { sed -i '/^  v: /d' packages/base/cm.yaml; echo "  v: \"$1\"" >>packages/base/cm.yaml; }

emu_reset
t_ok "up through an ApplicationSet, on the stream" idpmake up
t_grep "the Application was generated and synced" " 1 synced" "$OUTPUT"
n=$(gets)
# polling, at 20 ms, GETs it about 50 times while the controller takes 1 s
t_ok "the wait for the generated Application did not poll it ($n GETs, <= 2)" test "$n" -le 2

emu_reset
change 2
t_ok "an element moved to a new commit, on the stream" idpmake up
n=$(gets)
t_ok "the wait for its update did not poll it ($n GETs, <= 2)" test "$n" -le 2

emu_reset
change 3
polling_up() { IDPMAKE_ARGOCD_WATCH=0 idpmake up; }
t_ok "the same without a stream (IDPMAKE_ARGOCD_WATCH=0)" polling_up
n=$(gets)
t_ok "polls the Application until it carries the element ($n GETs, > 4)" test "$n" -gt 4
t_ok "plan afterwards: all done" idpmake plan
t_grep "nothing left" '^idpmake: 0 steps would run' "$STDOUT"
t_done
