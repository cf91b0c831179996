#!/bin/bash
# Waves (fleet.md): clusters roll out in the order of rollout.waves, each
# wave gated on "synced at this run's commit AND Healthy" and its check;
# max-parallel bounds the clusters of a wave in flight; clusters no wave
# selects roll out last, in the wave `rest`, with a warning; a Degraded
# cluster halts the rollout (exit 1, naming the wave and the cluster) before
# any later wave moves, and the next up resumes at the halted wave without
# redoing what is done; a failing check halts too; max-failed tolerates.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd \
	--cluster canary=https://canary.example:6443 --cluster eu-1=https://eu-1.example:6443 \
	--cluster eu-2=https://eu-2.example:6443 --cluster us-1=https://us-1.example:6443 \
	--cluster legacy=https://legacy.example:6443
# the request log, as "SEQ METHOD PATH" lines
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"])' >"$T/req.txt" || t_bail "cannot read the request log"; }
# first and last request seq of an Application ("" when none)
span() { awk -v a="/$1" '$3 ~ a"(/|$)" || $3 ~ a"\\?" {print $1}' "$T/req.txt" | sort -n | sed -n '1p;$p' | tr '\n' ' '; }
synced() { grep -c "POST /api/v1/applications/$1/sync" "$T/req.txt"; }

mkdistro d <<EOF
idpmake: 1
name: waves
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443", labels: {ring: "0"}}
  eu-1: {server: "https://eu-1.example:6443", labels: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", labels: {region: eu}}
  us-1: {server: "https://us-1.example:6443", labels: {region: us}}
  legacy: {server: "https://legacy.example:6443"}
rollout:
  waves:
    - {name: canary, clusters: [canary]}
    - {name: eu, selector: {region: eu}, max-parallel: 1}
    - {name: us, clusters: ["us-*"], check: {run: ./check.sh, timeout: 30}}
packages:
  base: {type: manifests, path: packages/base}
  auto: {type: manifests, path: packages/auto, sync: {automated: true, self-heal: true}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/auto/cm.yaml ConfigMap auto
cat >d/check.sh <<'EOF'
#!/bin/sh
echo "wave=$IDPMAKE_WAVE clusters=$IDPMAKE_WAVE_CLUSTERS commit=$IDPMAKE_COMMIT" >>check.log
env | grep -q ARGOCD_AUTH_TOKEN && echo "check saw the token" >>check.log
exit "$(cat check.exit 2>/dev/null || echo 0)"
EOF
chmod +x d/check.sh
cd d || exit 1
bumps=0
bump() {
	bumps=$((bumps + 1))
	echo "  change$bumps: \"$bumps\"" >>packages/base/cm.yaml
	echo "  change$bumps: \"$bumps\"" >>packages/auto/cm.yaml
}
# APP FIELD: a field of an Application as Argo CD has it
app_field() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/$1" |
		python3 -c 'import json, sys
o = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    o = o.get(k, {}) if isinstance(o, dict) else {}
print(o if o != {} else "")' "$2"
}

# ---- plan and graph show the waves --------------------------------------
t_ok "plan" idpmake plan
t_grep "plan: wave canary" '^wave +canary: canary$' "$STDOUT"
t_grep "plan: wave eu with its limit" '^wave +eu: eu-1, eu-2 \(max-parallel 1\)$' "$STDOUT"
t_grep "plan: wave us" '^wave +us: us-1 \(check\)$' "$STDOUT"
t_grep "plan: unmatched cluster in the wave rest" '^wave +rest: legacy$' "$STDOUT"
t_grep "plan warns about the unmatched cluster" 'warning: 1 cluster is in no wave of rollout.waves \(legacy\)' "$STDERR"
t_ok "plan --json" idpmake plan --json
cp "$STDOUT" "$T/plan.json"
t_ok "plan --json: four waves in order" python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["waves"]
assert [x["name"] for x in w] == ["canary", "eu", "us", "rest"], w
assert w[1]["clusters"] == ["eu-1", "eu-2"] and w[1]["max_parallel"] == 1, w[1]
assert w[3]["unmatched"] is True and w[3]["clusters"] == ["legacy"], w[3]' "$T/plan.json"
t_ok "graph json" idpmake graph --format json
cp "$STDOUT" "$T/graph.json"
t_ok "graph: a node per wave, gating the next wave" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
waves = [n for n in g["nodes"] if n["kind"] == "wave"]
assert [n["id"] for n in waves] == ["wave:canary", "wave:eu", "wave:us", "wave:rest"], waves
e = {(x["from"], x["to"]) for x in g["edges"]}
assert ("canary/base:sync", "wave:canary") in e and ("wave:canary", "eu-1/base:sync") in e, e
assert ("wave:us", "legacy/base:sync") in e and ("eu-2/base:sync", "wave:eu") in e, e' "$T/graph.json"
t_ok "graph dot" idpmake graph
t_grep "graph dot: the wave node" '"wave:eu" \[shape=hexagon' "$STDOUT"

# ---- first up: in wave order --------------------------------------------
t_ok "first up" idpmake up -j 8
t_grep "ten syncs" ' 10 synced' "$OUTPUT"
commit1=$(git --git-dir="$bare" rev-parse main)
t_eq "an automated Application is pinned to the commit" "$commit1" "$(app_field us-1-auto spec.source.targetRevision)"
t_eq "its automated policy is set" "True" "$(app_field us-1-auto spec.syncPolicy.automated.selfHeal)"
t_grep "the gates passed" 'wave:us.*gate passed' "$OUTPUT"
reqlog
read -r c0 c1 <<<"$(span canary-base)"; read -r a0 a1 <<<"$(span eu-1-base)"; read -r b0 b1 <<<"$(span eu-2-base)"
read -r u0 u1 <<<"$(span us-1-base)"; read -r l0 _ <<<"$(span legacy-base)"
[ -n "$c1" ] && [ -n "$a0" ] && [ "$c1" -lt "$a0" ] && [ "$c1" -lt "$b0" ]
t_report $? "canary's last request ($c1) before eu's first ($a0, $b0)" "$T/req.txt"
[ -n "$u0" ] && [ "$a1" -lt "$u0" ] && [ "$b1" -lt "$u0" ]
t_report $? "eu done ($a1, $b1) before us starts ($u0)"
[ -n "$l0" ] && [ "$u1" -lt "$l0" ]
t_report $? "us done ($u1) before the rest wave starts ($l0)"
{ [ "$a1" -lt "$b0" ] || [ "$b1" -lt "$a0" ]; }
t_report $? "max-parallel 1: eu-1 ($a0-$a1) and eu-2 ($b0-$b1) never in flight together"
t_grep "the check ran for wave us with its clusters" '^wave=us clusters=us-1 commit=[0-9a-f]{40}$' check.log
t_nogrep "the check did not get the Argo CD token" 'saw the token' check.log

emu_post reset '{}'
t_ok "no-op up" idpmake up
reqlog
t_eq "no-op: no request" 0 "$(wc -l <"$T/req.txt")"

# ---- a Degraded cluster halts the rollout -------------------------------
emu_post reset '{}'
emu_post fault '{"app": "eu-1-base", "health": "Degraded", "message": "pods crash"}'
bump
t_exit 1 "a Degraded cluster in wave eu fails the run" idpmake up -j 8
t_grep "the halt names the wave and the cluster" "wave 'eu' halted: 1 of 2 clusters failed \(max-failed 0\): eu-1" "$OUTPUT"
reqlog
t_eq "canary was synced" 1 "$(synced canary-base)"
t_eq "us-1 was not synced" 0 "$(synced us-1-base)"
t_eq "legacy was not synced" 0 "$(synced legacy-base)"
t_eq "us-1's Application was not touched at all" "" "$(span us-1-base)"
commit2=$(git --git-dir="$bare" rev-parse main)
[ "$commit1" != "$commit2" ]
t_report $? "the halted run pushed a new commit"
t_eq "a later wave's automated Application stays pinned" "$commit1" "$(app_field us-1-auto spec.source.targetRevision)"
t_eq "... and Argo CD's automated sync did not move it" "$commit1" "$(app_field us-1-auto status.sync.revision)"
t_eq "the rest wave's automated Application stays too" "$commit1" "$(app_field legacy-auto status.sync.revision)"
t_eq "the canary's moved" "$commit2" "$(app_field canary-auto status.sync.revision)"
n=$(wc -l <check.log)

# ---- the next up resumes at the halted wave -----------------------------
emu_post fault '{"app": "eu-1-base", "clear": true}'
emu_post reset '{}'
t_ok "the next up resumes" idpmake up -j 8
reqlog
t_eq "canary is not synced again" "" "$(span canary-base)"
t_eq "eu-1 is synced" 1 "$(synced eu-1-base)"
t_eq "us-1 is synced" 1 "$(synced us-1-base)"
t_eq "legacy is synced" 1 "$(synced legacy-base)"
t_eq "us-1's automated Application moves with its wave" "$commit2" "$(app_field us-1-auto status.sync.revision)"
t_eq "the us check ran once more" $((n + 1)) "$(wc -l <check.log)"

# ---- a failing check halts the rollout ----------------------------------
emu_post reset '{}'
bump
echo 3 >check.exit
t_exit 1 "a failing check fails the run" idpmake up -j 8
t_grep "the failure names the wave and the check" "wave 'us': check exited with status 3" "$OUTPUT"
reqlog
t_eq "the rest wave did not move" 0 "$(synced legacy-base)"
emu_post reset '{}'
rm check.exit
t_ok "after the check passes, up finishes the rollout" idpmake up
reqlog
t_eq "the rest wave moves now" 1 "$(synced legacy-base)"
t_eq "us-1 is not synced again" 0 "$(synced us-1-base)"

# ---- max-failed tolerates ------------------------------------------------
sed -i 's/{name: eu, selector: {region: eu}, max-parallel: 1}/{name: eu, selector: {region: eu}, max-parallel: 1, max-failed: 50%}/' distro.yaml
emu_post reset '{}'
emu_post fault '{"app": "eu-2-base", "health": "Degraded", "message": "pods crash"}'
bump
t_exit 1 "a tolerated failure still fails the run" idpmake up -j 8
t_nogrep "no halt: 1 of 2 is within 50%" 'halted' "$OUTPUT"
reqlog
t_eq "later waves moved on" "1 1" "$(synced us-1-base) $(synced legacy-base)"
t_done
