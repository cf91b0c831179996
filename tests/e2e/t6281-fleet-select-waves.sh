#!/bin/bash
# Selecting under waves (issue 19 §5): -l or a target that matches nothing is
# a usage error (exit 2) naming it, with "did you mean" over the known labels,
# clusters and packages; under rollout.waves, -l and targets move only the
# clusters they select (never a cluster of an earlier wave that the
# selection leaves out), and a selection that is a wave runs that wave's gate
# and check; one across waves keeps their order.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd \
	--cluster canary=https://canary.example:6443 --cluster eu-1=https://eu-1.example:6443 \
	--cluster eu-2=https://eu-2.example:6443 --cluster us-1=https://us-1.example:6443
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"])' >"$T/req.txt" || t_bail "cannot read the request log"; }
# the clusters whose Applications got a sync request, sorted, one line
synced() { sed -n 's#.* POST /api/v1/applications/\(.*\)-[a-z]*/sync.*#\1#p' "$T/req.txt" | sort -u | tr '\n' ' '; }
# first request seq of an Application
first() { awk -v a="/$1" '$3 ~ a"(/|$|\\?)" {print $1; exit}' "$T/req.txt"; }

mkdistro d <<EOF
idpmake: 1
name: selwaves
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443", labels: {ring: "0"}}
  eu-1: {server: "https://eu-1.example:6443", labels: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", labels: {region: eu}}
  us-1: {server: "https://us-1.example:6443", labels: {region: us}}
rollout:
  waves:
    - {name: canary, clusters: [canary], check: {run: ./check.sh}}
    - {name: eu, selector: {region: eu}, check: {run: ./check.sh}}
    - {name: us, selector: {region: us}, check: {run: ./check.sh}}
packages:
  base: {type: manifests, path: packages/base}
  web: {type: manifests, path: packages/web, labels: {tier: apps}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/web/cm.yaml ConfigMap web
cat >d/check.sh <<'EOF'
#!/bin/sh
echo "wave=$IDPMAKE_WAVE" >>check.log
EOF
chmod +x d/check.sh
cd d || exit 1
bumps=0
bump() {
	bumps=$((bumps + 1))
	echo "  change$bumps: \"$bumps\"" >>packages/base/cm.yaml
	echo "  change$bumps: \"$bumps\"" >>packages/web/cm.yaml
}

# ---- a selection that matches nothing is exit 2, naming it ------------------
t_exit 2 "plan -l with a misspelt key" idpmake plan -l regoin=eu
t_grep "it names the label and suggests the known one" \
	"error: -l regoin=eu: no cluster or package has this label; did you mean 'region=eu'\?" "$STDERR"
t_nogrep "no plan is printed" 'steps would run' "$OUTPUT"
t_exit 2 "plan -l with an unknown value" idpmake plan -l region=antarctica
t_grep "it names the key's values" "error: -l region=antarctica: no cluster or package has this label; 'region' has the values eu, us" "$STDERR"
t_exit 2 "plan -l with a misspelt key and an unknown value" idpmake plan -l teir=backend
t_grep "the key is suggested" "error: -l teir=backend: no cluster or package has this label; did you mean 'tier' \(with the values apps\)\?" "$STDERR"
t_exit 2 "plan -l with nothing like it" idpmake plan -l datacenter=x
t_grep "it lists the known labels" "error: -l datacenter=x: no cluster or package has this label; known labels: ring=0, region=eu, region=us, tier=apps" "$STDERR"
t_exit 2 "up -l with a typo" idpmake up -l regoin=eu
t_ok "... and up pushed nothing" test -z "$(git --git-dir="$bare" for-each-ref)"
t_exit 2 "labels that each exist but never together" idpmake plan -l region=eu -l ring=0
t_grep "it says none has all of them" "error: -l region=eu -l ring=0: no package on a cluster has all of these labels" "$STDERR"
t_exit 2 "a misspelt cluster" idpmake plan eu1/
t_grep "did you mean the cluster" "unknown target 'eu1/': no cluster named 'eu1'; did you mean 'eu-1'\?" "$STDERR"
t_exit 2 "a misspelt package" idpmake plan bse
t_grep "did you mean the package" "unknown target 'bse': no such package; did you mean 'base'\?" "$STDERR"
t_exit 2 "a cluster given as a package" idpmake plan canary
t_grep "did you mean the cluster's target" "unknown target 'canary': no such package; did you mean 'canary/' \(the cluster\)\?" "$STDERR"
t_exit 2 "a misspelt package on a cluster" idpmake plan us-1/wbe
t_grep "did you mean, on that cluster" "unknown target 'us-1/wbe': no such package on cluster 'us-1'; did you mean 'web'\?" "$STDERR"

# ---- everything at the first commit ------------------------------------------
t_ok "first up" idpmake up -j 4
commit1=$(git --git-dir="$bare" rev-parse main)
rm -f check.log

# ---- -l region=us moves us-1 only, with its wave's gate and check -------------
bump
t_ok "plan -l region=us" idpmake plan -l region=us
t_nogrep "the plan does not sync canary" 'canary/[a-z]*:sync' "$STDOUT"
t_nogrep "the plan does not sync eu" 'eu-[12]/[a-z]*:sync' "$STDOUT"
t_grep "the plan runs wave us's gate" 'wave:us' "$STDOUT"
emu_reset
t_ok "up -l region=us" idpmake up -j 4 -l region=us
reqlog
t_eq "only us-1 was synced" "us-1 " "$(synced)"
t_grep "wave us's gate ran" 'wave wave:us: gate passed' "$OUTPUT"
t_grep "wave us's check ran" '^wave=us$' check.log
t_nogrep "no other wave's check ran" '^wave=(canary|eu)$' check.log
t_eq "canary's Application was not touched" "" "$(first canary-base)"
commit2=$(git --git-dir="$bare" rev-parse main)

# ---- a selection that is exactly a wave runs its gate and check ---------------
rm -f check.log
emu_reset
t_ok "up -l region=eu" idpmake up -j 4 -l region=eu
reqlog
t_eq "only eu-1 and eu-2 were synced" "eu-1 eu-2 " "$(synced)"
t_grep "wave eu's gate ran" 'wave wave:eu: gate passed' "$OUTPUT"
t_eq "wave eu's check ran, and only it" "wave=eu" "$(cat check.log)"

# ---- a selection across waves keeps their order -------------------------------
rm -f check.log
bump
emu_reset
t_ok "up -l tier=apps (web on every cluster)" idpmake up -j 4 -l tier=apps
reqlog
t_eq "every cluster's web was synced" "canary eu-1 eu-2 us-1 " "$(synced)"
t_eq "base was not synced anywhere" 0 "$(grep -c -- '-base/sync' "$T/req.txt")"
c=$(first canary-web) e=$(first eu-1-web) u=$(first us-1-web)
[ -n "$c" ] && [ -n "$e" ] && [ -n "$u" ] && [ "$c" -lt "$e" ] && [ "$e" -lt "$u" ]
t_report $? "canary ($c) before eu ($e) before us ($u)" "$T/req.txt"
t_eq "each wave's check ran, in order" "wave=canary wave=eu wave=us" "$(tr '\n' ' ' <check.log | sed 's/ $//')"

# ---- two waves with one left out between them ---------------------------------
rm -f check.log
bump
emu_reset
t_ok "up canary/ us-1/" idpmake up -j 4 canary/ us-1/
reqlog
t_eq "only canary and us-1 were synced" "canary us-1 " "$(synced)"
c=$(first canary-base) u=$(first us-1-base)
[ -n "$c" ] && [ -n "$u" ] && [ "$c" -lt "$u" ]
t_report $? "canary ($c) before us ($u)" "$T/req.txt"
t_eq "the checks of their waves ran, not eu's" "wave=canary wave=us" "$(tr '\n' ' ' <check.log | sed 's/ $//')"

# ---- a full up finishes the rollout -------------------------------------------
rm -f check.log
emu_reset
t_ok "up" idpmake up -j 4
reqlog
t_eq "the clusters left behind are synced now" "eu-1 eu-2 " "$(synced)"
t_eq "only wave eu's gate had anything new to judge" "wave=eu" "$(cat check.log)"
[ "$commit1" != "$commit2" ]
t_report $? "the selected runs pushed"
t_done
