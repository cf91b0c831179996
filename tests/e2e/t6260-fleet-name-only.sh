#!/bin/bash
# A cluster named only by `name` (fleet.md "Clusters"): one Argo CD does not
# know fails its steps, naming it, before anything is synced, even when its
# wave comes last; the clusters of other waves still roll out. It is looked
# up once per run that syncs to it: a run that syncs only other clusters, and
# a no-op run, make no lookup.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443
api=http://$ARGOCD_SERVER/api/v1
# the request log, as "SEQ METHOD PATH?QUERY" lines
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"] + ("?" + e["query"] if e["query"] else ""))' >"$T/req.txt" ||
	t_bail "cannot read the request log"; }
first() { awk -v p="$1" '$0 ~ p {print $1; exit}' "$T/req.txt"; }

mkdistro d <<EOF
idpmake: 1
name: names
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
profiles:
  all: [base]
  more: [extra]
clusters:
  canary: {server: "https://canary.example:6443", profiles: [all, more]}
  legacy: {name: legacy-argo, profiles: [all]}
rollout:
  waves:
    - {name: first, clusters: [canary]}
    - {name: last, clusters: [legacy]}
packages:
  base: {type: manifests, path: packages/base}
  extra: {type: manifests, path: packages/extra}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/extra/cm.yaml ConfigMap extra
cd d || exit 1

# ---- unknown: legacy's steps fail before canary (an earlier wave) syncs ----
# stdout and stderr in one stream, in the order they were written
# shellcheck disable=SC2016 # $1 is the inner shell's
t_exit 1 "an unknown name-only cluster fails the run" sh -c '"$1" up -j 1 2>&1' sh "$IDPMAKE"
t_grep "its sync fails naming it" "FAILED: legacy/base:sync: cluster 'legacy' is not known to Argo CD \(destination.name 'legacy-argo'\)" "$OUTPUT"
t_grep "with the lookup in its log" "GET .*/api/v1/clusters/legacy-argo\?id.type=name .*-> 403" "$OUTPUT"
t_grep "its wave halts, naming it" "wave 'last' halted: 1 of 1 cluster failed \(max-failed 0\): legacy" "$OUTPUT"
t_grep "canary, in the first wave, is synced" "sync canary/base:sync" "$OUTPUT"
fail_at=$(grep -n "FAILED: legacy/base:sync" "$OUTPUT" | head -n 1 | cut -d: -f1)
sync_at=$(grep -n "sync canary/.*:sync" "$OUTPUT" | head -n 1 | cut -d: -f1)
[ -n "$fail_at" ] && [ -n "$sync_at" ] && [ "$fail_at" -lt "$sync_at" ]
t_report $? "legacy's failure (line $fail_at) is shown before canary's first sync (line $sync_at)" "$OUTPUT"
reqlog
look=$(first 'id.type=name')
sync=$(first '/sync')
[ -n "$look" ] && [ -n "$sync" ] && [ "$look" -lt "$sync" ]
t_report $? "the lookup (request $look) comes before the first sync request ($sync)" "$T/req.txt"
t_eq "legacy is looked up once" 1 "$(grep -c 'id.type=name' "$T/req.txt")"
t_eq "no Application of legacy is made" 0 "$(grep -c 'applications.*legacy-' "$T/req.txt")"

# ---- Argo CD learns legacy: the next up syncs it, one lookup -----------------
curl -s -f -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" \
	-d '{"server": "https://legacy.example:6443", "name": "legacy-argo"}' "$api/clusters" >/dev/null ||
	t_bail "cannot add legacy-argo to the emulator"
emu_reset
t_ok "once Argo CD knows legacy-argo, up syncs it" idpmake up -j 1
t_grep "its package only" " 1 synced" "$OUTPUT"
reqlog
t_eq "after one lookup" 1 "$(grep -c 'id.type=name' "$T/req.txt")"

# ---- a run that syncs only canary, and a no-op, look nothing up --------------
echo '  more: "1"' >>packages/extra/cm.yaml
emu_reset
t_ok "a change only canary has" idpmake up -j 1
t_grep "syncs canary alone" " 1 synced" "$OUTPUT"
reqlog
t_eq "and does not look legacy up" 0 "$(grep -c 'id.type=name' "$T/req.txt")"
emu_reset
t_ok "a no-op up" idpmake up
reqlog
t_eq "makes no request" 0 "$(wc -l <"$T/req.txt")"

# ---- without waves: -k 1 (the default) stops before anything syncs ---------
mkdistro "$T/k" <<EOF
idpmake: 1
name: nowaves
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
  ghost: {name: ghost-argo}
packages:
  solo: {type: manifests, path: packages/solo}
EOF
mkmanifest "$T/k/packages/solo/cm.yaml" ConfigMap solo
cd "$T/k" || exit 1
emu_reset
t_exit 1 "an unknown name-only cluster, no waves, -k 1" idpmake up -j 1
t_grep "its sync fails" "FAILED: ghost/solo:sync: cluster 'ghost' is not known to Argo CD" "$OUTPUT"
t_grep "canary's sync is stopped, not started" "not run: canary/solo:sync: stopped after failures \(-k\)" "$OUTPUT"
reqlog
t_eq "the pre-flight's GET /api/version, the ownership check's list and the lookup are the only requests" \
	"GET /api/version|GET /api/v1/applications?appNamespace=argocd|GET /api/v1/clusters/ghost-argo?id.type=name" \
	"$(cut -d' ' -f2- "$T/req.txt" | paste -sd'|')"
emu_reset
t_exit 1 "with -k 0" idpmake up -j 1 -k 0
t_grep "canary syncs" "sync canary/solo:sync" "$OUTPUT"
t_grep "ghost fails" "FAILED: ghost/solo:sync: cluster 'ghost' is not known to Argo CD" "$OUTPUT"

t_done
