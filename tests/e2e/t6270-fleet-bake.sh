#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_wait_for
# A wave's bake (fleet.md "Waves"): the gate watches, for `bake` seconds after
# its clusters are Synced at the run's commit and Healthy, that each stays so
# (one GET per Application every IDPMAKE_ARGOCD_POLL_MS, then one with a
# refresh); an Application that degrades during the bake halts the rollout at
# once, one that drifts halts it at the latest when the bake ends (exit 1,
# naming the wave, the step and the cause), before any Application of a later
# wave is touched.
# This is the bake without a watch stream (IDPMAKE_ARGOCD_WATCH=0): on the
# stream it asks nothing per poll (t6391).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
export IDPMAKE_ARGOCD_WATCH=0

start_gitops_argocd --cluster canary=https://canary.example:6443 --cluster eu=https://eu.example:6443
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"], *([e["query"]] if e.get("query") else []))' >"$T/req.txt" || t_bail "cannot read the request log"; }

mkdistro d <<EOF
idpmake: 1
name: bake
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
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
reqlog
# The interval holds: at most bake/interval looks (80), plus the sync's own
# wait; a loop that ignores IDPMAKE_ARGOCD_POLL_MS makes thousands.  No lower
# bound: a loaded machine polls less often, and that the bake looks in its
# middle is shown below (a degradation halts it "N s into the bake").
n=$(grep -cE 'GET /api/v1/applications/canary-base( |$)' "$T/req.txt")
[ "$n" -le 130 ]
t_report $? "the bake polled canary-base at most bake/interval times plus the sync's wait ($n GETs, <= 130 for 4 s / 50 ms)" "$T/req.txt"
grep -E 'GET /api/v1/applications/canary-base( |$)' "$T/req.txt" | tail -n 1 | grep -q 'refresh=normal'
t_report $? "its last look was a GET with a refresh" "$T/req.txt"

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
	"FAILED: wave:first: wave 'first': canary/base:sync [0-9.]* s into the bake of 4 s: application 'canary-base' is OutOfSync" "$T/up2.txt"
t_grep "the next wave does not run" "not run: eu/base:sync: wave:first failed" "$T/up2.txt"
reqlog
t_eq "eu's Application was not touched" 0 "$(grep -c 'eu-base' "$T/req.txt")"

# ---- an Application that degrades in the middle of the bake halts it at once --
sed -i 's/bake: 4}/bake: 30}/' distro.yaml
sed -i "s/change: \"2\"/change: \"3\"/" packages/base/cm.yaml
emu_reset
"$IDPMAKE" up -j 2 >"$T/up3.txt" 2>&1 &
pid=$!
t_wait_for 60 grep -q 'sync canary/base:sync' "$T/up3.txt"
t_report $? "canary is synced, its wave bakes 30 s" "$T/up3.txt"
# the sync's line comes when it is done: the GETs after it are the bake's looks
looks() { reqlog; grep -cE 'GET /api/v1/applications/canary-base( |$)' "$T/req.txt"; }
n0=$(looks)
more_looks() { [ "$(looks)" -ge $((n0 + 3)) ]; }
t_wait_for 120 more_looks
t_report $? "the bake looks at canary-base again and again (3 GETs after its sync)" "$T/req.txt"
emu_post fault '{"app": "canary-base", "health": "Degraded", "message": "Back-off restarting failed container", "now": true}'
wait "$pid"
t_eq "the run exits 1" 1 "$?"
# idpmake's own clock: the halt says how far into the bake it came; a bake
# that looked only at its end would say "after 30 s of bake" (or >= 30.0)
into=$(sed -n "s/.*canary\/base:sync \([0-9]*\)\.[0-9] s into the bake of 30 s.*/\1/p" "$T/up3.txt")
[ -n "$into" ] && [ "$into" -lt 30 ]
t_report $? "the run halted ${into:-?} s into the 30 s bake, not at its end" "$T/up3.txt"
t_grep "the halt names the wave, the step, the Application and what it became" \
	"FAILED: wave:first: wave 'first': canary/base:sync [0-9.]* s into the bake of 30 s: application 'canary-base' is Degraded: Back-off restarting failed container" "$T/up3.txt"
t_grep "the next wave does not run" "not run: eu/base:sync: wave:first failed" "$T/up3.txt"
reqlog
t_eq "eu's Application was not touched" 0 "$(grep -c 'eu-base' "$T/req.txt")"

# ---- max-failed applies: a tolerated Application that degrades is a warning ---
emu_reset
sed -i '/^rollout:/,/^packages:/{/^packages:/!d}' distro.yaml
sed -i 's/^packages:/rollout:\n  waves:\n    - {name: first, clusters: [canary, eu], bake: 3, max-failed: 1}\npackages:/' distro.yaml
sed -i 's/change: "3"/change: "4"/' packages/base/cm.yaml
"$IDPMAKE" up -j 2 >"$T/up4.txt" 2>&1 &
pid=$!
t_wait_for 60 grep -q 'sync canary/base:sync' "$T/up4.txt"
t_report $? "canary is synced" "$T/up4.txt"
t_wait_for 60 grep -q 'sync eu/base:sync' "$T/up4.txt"
t_report $? "eu is synced, the wave bakes 3 s" "$T/up4.txt"
emu_post fault '{"app": "canary-base", "health": "Degraded", "message": "OOMKilled", "now": true}'
wait "$pid"
t_eq "the run exits 0: max-failed 1 tolerates one cluster" 0 "$?"
t_grep "the warning names the Application and what it became" \
	"wave 'first': canary/base:sync [0-9.]* s into the bake of 3 s: application 'canary-base' is Degraded: OOMKilled \\(max-failed 1 tolerates it\\)" "$T/up4.txt"
t_grep "the gate passed after the bake" "wave wave:first: gate passed \\([0-9]{4,} ms\\)" "$T/up4.txt"
t_done
