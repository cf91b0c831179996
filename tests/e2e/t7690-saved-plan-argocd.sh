#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Saved plans against Argo CD (issue 8 §4) and diffs without the network
# (§1, §2), the parts t3500, t5700 and t5710 do not reach: up --plan refuses
# with exit 2 when the renderer's tool version or the idpmake version differs
# from the plan, naming it, and then neither pushes nor syncs (no POST to
# Argo CD); the plan applied syncs.  diff CLUSTER_A/ CLUSTER_B/ of a distro
# with a GitOps remote and an Argo CD works with both gone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster c2=https://c2.example:6443
# a renderer whose version command is a script replaced on "upgrade"
tool() { rm -f "$T/mytool" && printf '#!/bin/sh\necho mytool %s\n' "$1" >"$T/mytool" && chmod +x "$T/mytool"; }
tool 1.0
mkdir -p d/rules
cat >d/rules/tool.yaml <<EOF
rule: tool
description: cat, with a versioned tool
command: [sh, -c, 'for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done', sh, "\${src}"]
version: [$T/mytool]
EOF
mkdistro d <<EOF
idpmake: 1
name: planned
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
rules: [rules/tool.yaml]
clusters:
  in-cluster: {server: "https://kubernetes.default.svc", vars: {r: "1"}}
  c2: {server: "https://c2.example:6443", vars: {r: "2"}}
packages:
  web: {type: tool, path: packages/web, namespace: web, rewrite: [{match: RR, replace: '\${r}'}]}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap cfg web
echo '  r: RR' >>d/packages/web/cm.yaml
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
tip() { git --git-dir="$bare" rev-parse main; }

t_ok "setup: up" idpmake up
t_grep "setup: both synced" ' 2 synced' "$OUTPUT"

echo '  level: debug' >>packages/web/cm.yaml
t_ok "plan -o plan.json" idpmake plan -o plan.json
c0=$(tip)

# ---- the renderer's tool was upgraded after the plan ---------------------------
tool 2.0
emu_reset
t_exit 2 "up --plan: the tool version differs: exit 2" idpmake up --plan plan.json
t_grep "the tool version is named" 'refused: in-cluster/web:render: tool version changed since the plan' "$STDERR"
t_grep "nothing was pushed or synced" 'nothing was pushed or synced' "$STDERR"
t_eq "no commit pushed" "$c0" "$(tip)"
t_eq "no POST to Argo CD (no sync, no Application written)" 0 "$(emu_posts .)"
tool 1.0

# ---- another idpmake made the plan ----------------------------------------------
python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); p["idpmake"] = "0.0.1-other"
json.dump(p, open(sys.argv[2], "w"))' plan.json other.json || t_bail "cannot edit the plan"
t_exit 2 "up --plan: another idpmake version made it: exit 2" idpmake up --plan other.json
t_grep "both versions are named" 'refused: the plan was made by idpmake 0.0.1-other, this is idpmake ' "$STDERR"
t_eq "no commit pushed" "$c0" "$(tip)"
t_eq "no POST to Argo CD" 0 "$(emu_posts .)"

# ---- the plan as made: applied and synced ----------------------------------------
t_ok "up --plan with the planned tool" idpmake up --plan plan.json
t_grep "the run is the plan" 'the run is the plan; 2 renders bound' "$OUTPUT"
t_grep "and both Applications synced" ' 2 synced' "$OUTPUT"
t_ok "the change was pushed" sh -c "git --git-dir='$bare' show main:c2/web/configmap.cfg.yaml | grep -q 'level: debug'"

# ---- offline: no Argo CD, no GitOps remote ------------------------------------------
kill "$EMU_PID" && wait "$EMU_PID" 2>/dev/null
mv "$bare" "$bare.away" || t_bail "cannot move the remote away"
echo '  more: x' >>packages/web/cm.yaml
t_exit 1 "diff in-cluster/ c2/ --exit-code with Argo CD and the remote gone" idpmake --color=never diff --exit-code in-cluster/ c2/
t_grep "shows the clusters' difference" '^\+  r: .?2.?$' "$STDOUT"
t_grep "with the uncommitted change rendered" '^ +more: x$' "$STDOUT"
t_exit 1 "diff --rev HEAD --exit-code offline too" idpmake --color=never diff --exit-code --rev HEAD
t_grep "the change" '^\+  more: x$' "$STDOUT"
t_done
