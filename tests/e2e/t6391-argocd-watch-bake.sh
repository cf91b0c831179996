#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_wait_for
# A wave's bake on the run's watch stream (issue 26 §2, rollout.c): the gate
# asks Argo CD nothing while a quiet wave bakes (no GET per Application per
# poll: it looks at an Application only when the stream shows it leaving
# Synced and Healthy), then once with a refresh at the end; an Application
# that degrades in the middle of the bake still halts the rollout at once;
# without a stream (404) the bake polls, as before.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443 --cluster eu=https://eu.example:6443
mkdistro d <<EOF2
idpmake: 1
name: bakewatch
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
  eu: {server: "https://eu.example:6443"}
rollout:
  waves:
    - {name: first, clusters: [canary], bake: 3}
    - {name: second, clusters: [eu]}
packages:
  base: {type: manifests, path: packages/base}
EOF2
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1
# GETs of canary-base since the last reset, and how many asked for a refresh
gets() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
g = [e for e in json.load(sys.stdin) if e["method"] == "GET" and e["path"] == "/api/v1/applications/canary-base"]
print(len(g), sum(1 for e in g if "refresh" in e["args"]))' || t_bail "cannot read the request log"; }
change() { sed -i '/^  v: /d' packages/base/cm.yaml; echo "  v: \"$1\"" >>packages/base/cm.yaml; }

# ---- a quiet bake on the stream: no poll -----------------------------------
t_ok "up with a bake of 3 s, on the stream" idpmake up -j 2
t_grep "the gate passed after the bake" "wave wave:first: gate passed \\([0-9]{4,} ms\\)" "$OUTPUT"
read -r n refresh <<<"$(gets)"
# polling, at 50 ms, would GET it about 60 times in 3 s (below: > 10)
t_ok "the bake did not poll canary-base: $n GETs in all (its sync's first look, the bake's first and last looks), <= 4" \
	test "$n" -le 4
t_eq "its last look asked for a refresh" 1 "$refresh"

# ---- the same without a stream: the bake polls ------------------------------
emu_reset
change 2
emu_post fault '{"path_regex": "^/api/v1/stream/applications$", "status": 404, "count": -1}'
t_ok "up with a bake of 3 s, no stream (404)" idpmake up -j 2
t_grep "warns, and polls" "warning: argocd: Argo CD answered the watch stream with HTTP 404; waiting by polling" "$STDERR"
read -r n refresh <<<"$(gets)"
t_ok "the bake polled canary-base ($n GETs, > 10)" test "$n" -gt 10
emu_reset

# ---- a degradation in the middle of a streamed bake halts it at once --------
sed -i 's/bake: 3}/bake: 60}/' distro.yaml
change 3
"$IDPMAKE" up -j 2 >"$T/up3.txt" 2>&1 &
pid=$!
t_wait_for 60 grep -q 'sync canary/base:sync' "$T/up3.txt"
t_report $? "canary is synced, its wave bakes 60 s" "$T/up3.txt"
emu_post fault '{"app": "canary-base", "health": "Degraded", "message": "Back-off restarting failed container", "now": true}'
wait "$pid"
t_eq "the run exits 1" 1 "$?"
into=$(sed -n "s/.*canary\/base:sync \([0-9]*\)\.[0-9] s into the bake of 60 s.*/\1/p" "$T/up3.txt")
[ -n "$into" ] && [ "$into" -lt 60 ]
t_report $? "the run halted ${into:-?} s into the 60 s bake, not at its end" "$T/up3.txt"
t_grep "the halt names the Application and what it became" \
	"application 'canary-base' is Degraded: Back-off restarting failed container" "$T/up3.txt"
t_grep "the next wave does not run" "not run: eu/base:sync: wave:first failed" "$T/up3.txt"
t_done
