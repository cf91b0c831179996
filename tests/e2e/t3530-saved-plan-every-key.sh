#!/bin/bash
# up --plan checks every step's key, not only the renders' (issue 21 item 9,
# savedplan.c step 6): what changed after `plan -o` though no render and no
# byte of distro.yaml did is refused with exit 2, naming the step, before
# anything is pushed, registered, synced or run:
#   a hook's input file (`inputs:`)     the hook
#   the Argo CD server (ARGOCD_SERVER)  the sync
# and with everything as planned, the plan applies.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster c2=https://c2.example:6443
mkdistro d <<EOF
idpmake: 1
name: keyed
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  in-cluster: {server: "https://kubernetes.default.svc"}
packages:
  web:
    type: manifests
    path: packages/web
    namespace: web
    hooks:
      post:
        - {name: smoke, run: 'cat smoke.conf >>$T/ran', inputs: [smoke.conf]}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
echo "smoke v1" >d/smoke.conf
cd d || exit 1
: >"$T/ran"
tip() { git --git-dir="$bare" rev-parse main; }

t_ok "the first up" idpmake up
t_grep "the hook ran" '^smoke v1$' "$T/ran"

echo '  level: debug' >>packages/web/cm.yaml
t_ok "plan -o plan.json (a change: render, push, sync, hook)" idpmake plan -o plan.json
t_grep "the plan runs the hook" 'in-cluster/web:post:smoke' "$STDOUT"
c0=$(tip)
# refused DESC REGEX: exit 2 naming REGEX; nothing pushed, no POST to Argo CD, no hook run
refused() {
	local ran
	ran=$(wc -l <"$T/ran")
	emu_reset
	t_exit 2 "up --plan: $1: refused" idpmake up --plan plan.json
	t_grep "naming the step" "refused: $2" "$STDERR"
	t_eq "nothing was pushed" "$c0" "$(tip)"
	t_eq "no POST to Argo CD" 0 "$(emu_posts .)"
	t_eq "no hook ran" "$ran" "$(wc -l <"$T/ran")"
}

# ---- a hook's input file ------------------------------------------------------------
echo "smoke EDITED" >smoke.conf
refused "the hook's input file was edited" \
	"in-cluster/web:post:smoke: its key differs from the plan's: the hook's command, the script it runs, its inputs"
echo "smoke v1" >smoke.conf

# ---- the Argo CD server: the same emulator by another name ------------------------------
server=$ARGOCD_SERVER
ARGOCD_SERVER=localhost:${server##*:}
refused "another Argo CD server" \
	"in-cluster/web:sync: its key differs from the plan's: the Application, its server or its render changed"
ARGOCD_SERVER=$server

# ---- as planned: the plan applies -------------------------------------------------------------
emu_reset
t_ok "up --plan with everything as planned" idpmake up --plan plan.json
t_grep "the run is the plan" 'the run is the plan; 1 render bound' "$OUTPUT"
t_grep "it synced" ' 1 synced' "$OUTPUT"
t_eq "the hook ran once more" 2 "$(grep -c '^smoke v1$' "$T/ran")"
t_ok "the change was pushed" sh -c "git --git-dir='$bare' show main:in-cluster/web/configmap.web.yaml | grep -q 'level: debug'"
t_done
