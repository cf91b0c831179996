#!/bin/bash
# up --plan binds what a wave's check runs (issue 20 item 4): the wave's key
# covers the script its check names, so an edit to checks/slo.sh after
# `plan -o` makes `up --plan` refuse with exit 2 before anything is pushed,
# synced or run; with the script as planned the plan applies.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster c2=https://c2.example:6443
mkdistro d <<EOF
idpmake: 1
name: checked
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  in-cluster: {server: "https://kubernetes.default.svc"}
  c2: {server: "https://c2.example:6443"}
rollout:
  waves:
    - {name: first, clusters: [in-cluster], check: {run: ./checks/slo.sh, timeout: 30}}
    - {name: second, clusters: [c2]}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
mkdir d/checks
printf '#!/bin/sh\necho "check v1" >>%s/ran\n' "$T" >d/checks/slo.sh
chmod +x d/checks/slo.sh
cd d || exit 1
: >"$T/ran"
tip() { git --git-dir="$bare" rev-parse main; }

t_ok "the first up" idpmake up
t_grep "the check ran" '^check v1$' "$T/ran"

echo '  level: debug' >>packages/web/cm.yaml
t_ok "plan -o plan.json" idpmake plan -o plan.json
t_grep "the plan runs the wave" 'wave:first' "$STDOUT"
c0=$(tip)
printf '#!/bin/sh\necho "check EDITED" >>%s/ran\n' "$T" >checks/slo.sh
emu_reset
t_exit 2 "up --plan after the check's script was edited: refused" idpmake up --plan plan.json
t_grep "naming the wave and its check's script" \
	"refused: wave:first: its key differs from the plan's: the wave, the script its check runs" "$STDERR"
t_nogrep "the edited check did not run" 'EDITED' "$T/ran"
t_eq "nothing was pushed" "$c0" "$(tip)"
t_eq "nothing was synced" 0 "$(emu_posts .)"

printf '#!/bin/sh\necho "check v1" >>%s/ran\n' "$T" >checks/slo.sh
t_ok "up --plan with the check as planned" idpmake up --plan plan.json
t_eq "the check ran as planned" 2 "$(grep -c '^check v1$' "$T/ran")"
t_done
