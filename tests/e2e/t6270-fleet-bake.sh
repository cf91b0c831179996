#!/bin/bash
# A wave's bake (fleet.md "Waves"): the gate waits `bake` seconds after its
# clusters are Synced at the run's commit and Healthy, then checks that each
# still is; an Application that drifts during the bake halts the rollout
# (exit 1, naming the wave, the step and the cause) before any Application
# of a later wave is touched.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443 --cluster eu=https://eu.example:6443
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"])' >"$T/req.txt" || t_bail "cannot read the request log"; }

mkdistro d <<EOF
idpmake: 1
name: bake
git: {remote: "$bare"}
argocd: {server: argocd.invalid}
clusters:
  canary: {server: "https://canary.example:6443"}
  eu: {server: "https://eu.example:6443"}
rollout:
  waves:
    - {name: first, clusters: [canary], bake: 4}
    - {name: second, clusters: [eu]}
packages:
  base: {type: manifests, path: packages/base}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
cd d || exit 1

# ---- a quiet bake: the gate passes after the bake -----------------------------
t_ok "up with a bake of 4 s" idpmake up -j 2
ms=$(sed -n 's/.*wave wave:first: gate passed (\([0-9]*\) ms).*/\1/p' "$OUTPUT")
[ -n "$ms" ] && [ "$ms" -ge 4000 ]
t_report $? "the gate of wave first took the bake (${ms:-?} ms >= 4000)" "$OUTPUT"
t_grep "then the next wave synced" " 2 synced" "$OUTPUT"

# ---- drift during the bake halts the rollout ---------------------------------
echo '  change: "2"' >>packages/base/cm.yaml
emu_reset
"$IDPMAKE" up -j 2 >"$T/up2.txt" 2>&1 &
pid=$!
t_wait_for 60 grep -q 'sync canary/base:sync' "$T/up2.txt"
t_report $? "canary is synced, its wave bakes" "$T/up2.txt"
emu_post live '{"app": "canary-base", "kind": "ConfigMap", "name": "base", "delete": true}'
wait "$pid"
t_eq "the run exits 1" 1 "$?"
t_grep "the halt names the wave, the step and the cause" \
	"FAILED: wave:first: wave 'first': canary/base:sync after 4 s of bake: application 'canary-base' is OutOfSync" "$T/up2.txt"
t_grep "the next wave does not run" "not run: eu/base:sync: wave:first failed" "$T/up2.txt"
reqlog
t_eq "eu's Application was not touched" 0 "$(grep -c 'eu-base' "$T/req.txt")"
t_done
