#!/bin/bash
# A halted rollout resumes (fleet.md "Waves"): a wave's gate judges each sync
# of the wave against the commit that last changed that Application's folder
# (or a later one with the same folder), never against this run's commit. A
# pinned automated Application whose package did not change stays at its
# folder's commit, and the gate passes; a sync that runs for the first time
# in a later run is asked for its pin, not the run's commit (issue 20.1).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster canary=https://canary.example:6443 --cluster eu=https://eu.example:6443
reqlog() { curl -sS -f "$emu/requests" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["seq"], e["method"], e["path"])' >"$T/req.txt" || t_bail "cannot read the request log"; }
# APP FIELD: a field of an Application as Argo CD has it
app_field() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications/$1" |
		python3 -c 'import json, sys
o = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    o = o.get(k, {}) if isinstance(o, dict) else {}
print(o if o != {} else "")' "$2"
}

mkdistro d <<EOF
idpmake: 1
name: resume
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  canary: {server: "https://canary.example:6443"}
  eu: {server: "https://eu.example:6443"}
rollout:
  waves:
    - {name: first, clusters: [canary], bake: 1, check: {run: ./check.sh}}
    - {name: second, clusters: [eu]}
packages:
  base: {type: manifests, path: packages/base}
  extra: {type: manifests, path: packages/extra, sync: {automated: true}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/extra/cm.yaml ConfigMap extra
cat >d/check.sh <<'EOF'
#!/bin/sh
echo "wave=$IDPMAKE_WAVE commit=$IDPMAKE_COMMIT" >>check.log
exit "$(cat check.exit 2>/dev/null || echo 0)"
EOF
chmod +x d/check.sh
cd d || exit 1

# ---- the first wave's check fails once: the rollout halts ---------------------
echo 3 >check.exit
t_exit 1 "the check of wave first fails the run" idpmake up -j 2
t_grep "the halt names the wave and the check" "wave 'first': check exited with status 3" "$OUTPUT"
commit1=$(git --git-dir="$bare" rev-parse main)
t_eq "canary-extra is pinned to the first commit" "$commit1" "$(app_field canary-extra spec.source.targetRevision)"
t_eq "eu was not touched" "" "$(app_field eu-base metadata.name 2>/dev/null)"

# ---- the check is fixed and one package changes: the next ups resume ---------
rm check.exit
echo '  change: "2"' >>packages/base/cm.yaml
emu_reset
t_ok "the next up resumes at the halted wave" idpmake up -j 2
commit2=$(git --git-dir="$bare" rev-parse main)
[ "$commit1" != "$commit2" ]
t_report $? "it pushed the changed package"
t_nogrep "no sync is judged against this run's commit" "not at this run's commit" "$OUTPUT"
t_grep "the gate of wave first passed" 'wave wave:first: gate passed' "$OUTPUT"
t_grep "the gate of wave second passed" 'wave wave:second: gate passed' "$OUTPUT"
t_eq "canary-extra stays at its folder's commit" "$commit1" "$(app_field canary-extra status.sync.revision)"
t_eq "eu-base is Synced at the new commit" "$commit2" "$(app_field eu-base status.sync.revision)"
t_eq "eu-extra is pinned to its folder's commit, not the run's" "$commit1" \
	"$(app_field eu-extra spec.source.targetRevision)"
t_eq "... and Synced there" "$commit1" "$(app_field eu-extra status.sync.revision)"
reqlog
t_eq "canary-extra was not synced again" 0 "$(grep -c 'POST /api/v1/applications/canary-extra/sync' "$T/req.txt")"
t_grep "the check of wave first ran for the new commit" "^wave=first commit=$commit2\$" check.log

emu_reset
t_ok "and the one after has nothing to do" idpmake up -j 2
t_grep "nothing synced" ' 0 synced, 0 hooks, 11 up to date$' "$OUTPUT"

# ---- a pinned Application moved away from its folder's commit still fails ----
echo '  change3: "3"' >>packages/base/cm.yaml
emu_reset
emu_post fault '{"app": "canary-extra", "report_revision": "0123456789abcdef0123456789abcdef01234567"}'
t_exit 1 "an Application Synced at another commit than its folder's fails the gate" idpmake up -j 2
t_grep "... naming the Application and the folder's commit" \
	"application 'canary-extra' is Synced at 0123456789ab, not at ${commit1:0:12} \(the commit that last changed its folder\)" "$OUTPUT"
t_done
