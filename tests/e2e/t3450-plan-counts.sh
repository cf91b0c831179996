#!/bin/bash
# plan lists only the steps that can run, and counts them as up does
# (issue 32 #4): with no Argo CD, no sync step is listed as one that would
# run (they are counted as skipped, as up skips them), and the number plan
# gives is the number of steps up then runs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: counts
clusters:
  one: {server: "https://one.example"}
packages:
  a: {type: manifests, path: p, hooks: {post: [{name: hi, run: "echo hi-a"}]}}
  b: {type: manifests, path: p}
EOF2
mkmanifest d/p/cm.yaml ConfigMap cm
cd d || exit 1

t_ok "plan with no Argo CD" idpmake plan
t_nogrep "plan: no sync is listed as a step that would run" '^sync ' "$STDOUT"
t_grep "plan: the syncs are counted as skipped" '^idpmake: 4 steps would run, 0 up to date \(no argocd configured: 2 Argo CD steps are skipped\)' "$STDOUT"
t_ok "plan --json" idpmake plan --json
cp "$STDOUT" "$T/plan.json"
t_eq "plan --json: the steps that would run, no sync among them" \
	"one/a:post:hi one/a:render one/b:render push" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted(s["id"] for s in json.load(open(sys.argv[1]))["steps"])))' "$T/plan.json")"
t_ok "up --json" idpmake up --json
t_eq "up ran exactly the steps plan listed" \
	"one/a:post:hi one/a:render one/b:render push" \
	"$(python3 -c 'import json,sys
print(" ".join(sorted(e["id"] for e in map(json.loads, open(sys.argv[1])) if e["event"] == "start")))' "$STDOUT")"
t_ok "plan after up" idpmake plan --exit-code
t_grep "plan after up: nothing to do, the skipped syncs not counted as up to date" '^idpmake: 0 steps would run, 4 up to date \(no argocd configured: 2 Argo CD steps are skipped\)' "$STDOUT"

t_done
