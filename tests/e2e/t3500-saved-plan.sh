#!/bin/bash
# Saved plans (issue 8 §4): `plan -o FILE` records every selected step's key,
# whether it runs, and each render's output hash; `up --plan FILE` does
# exactly that plan, with the renders bound to the approved output, or
# refuses with exit 2 naming the first difference (a file, a variable, the
# distro, the render's output), before anything is pushed or a hook runs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p d/rules
mkdistro d <<EOF
idpmake: 1
name: saved
vars: {greeting: hello}
rules: [rules/counted.yaml]
packages:
  web:
    type: counted
    path: packages/web
    namespace: web
    rewrite:
      - {match: 'GREETING', replace: '\${greeting}'}
    hooks:
      post:
        - {name: mark, run: 'echo ran >>$T/hooks'}
  db: {type: manifests, path: packages/db, namespace: db}
EOF
# web renders with a rule that counts its runs in $T/renders
cat >d/rules/counted.yaml <<EOF
rule: counted
description: cat, counting renders
command: [sh, -c, 'echo render >>$T/renders; for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done', sh, "\${src}"]
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
printf '  say: GREETING\n' >>d/packages/web/cm.yaml
mkmanifest d/packages/db/cm.yaml ConfigMap db db
cd d || exit 1
: >"$T/renders" && : >"$T/hooks"
renders() { wc -l <"$T/renders"; }
hooks() { wc -l <"$T/hooks"; }
commits() { git --git-dir=.idpmake/gitops.git rev-list --count main; }
state() { sqlite3 .idpmake/state.db 'select id, hex(key), hex(output), ok from step order by id'; }

t_ok "the first up" idpmake up
t_eq "the hook ran" 1 "$(hooks)"

# ---- applied ----------------------------------------------------------------
echo '  level: debug' >>packages/web/cm.yaml
r0=$(renders)
t_ok "plan -o plan.json" idpmake plan -o plan.json
t_grep "says what would run" '^render in-cluster/web:render: .*changed' "$STDOUT"
t_grep "with the output it renders to" 'output [0-9a-f]{12}' "$STDOUT"
t_grep "and where the plan is" 'the plan is saved in plan.json' "$STDOUT"
t_eq "plan -o renders what would render (into the cache)" "$((r0 + 1))" "$(renders)"
t_eq "the plan records the render's key, output and that it runs" "True True True" \
	"$(python3 -c '
import json, sys
p = json.load(open("plan.json"))
s = {x["id"]: x for x in p["steps"]}
w = s["in-cluster/web:render"]
print(len(w["key"]) == 32, len(w["output"]) == 32 and w["output"] != "0" * 32, w["run"] and not s["in-cluster/db:render"]["run"])')"
t_eq "and the push and the hook, with their keys" "True True" \
	"$(python3 -c '
import json
s = {x["id"]: x for x in json.load(open("plan.json"))["steps"]}
print(s["push"]["run"] and s["push"]["key"] != "0" * 32, s["in-cluster/web:post:mark"]["run"])')"
t_nogrep "variables are recorded as hashes, not values" '"hello"' plan.json
t_eq "plan -o changed no state" "1" "$(commits)"
c0=$(commits)
t_ok "up --plan plan.json" idpmake up --plan plan.json
t_grep "says the run is the plan" 'the run is the plan; 1 render bound' "$OUTPUT"
t_eq "it pushed" "$((c0 + 1))" "$(commits)"
git --git-dir=.idpmake/gitops.git show main:in-cluster/web/configmap.web.yaml >"$T/pushed.yaml"
t_grep "the planned change" '^  level: debug$' "$T/pushed.yaml"
t_eq "the render was not run again: it is bound to the plan's output" "$((r0 + 1))" "$(renders)"
t_eq "the hook the plan runs ran" 2 "$(hooks)"
t_ok "up --plan again: the plan is applied, nothing to do" idpmake up --plan plan.json
t_eq "no commit" "$((c0 + 1))" "$(commits)"
t_eq "no hook" 2 "$(hooks)"
t_ok "plan: up to date after it" idpmake --exit-code plan

# refused: nothing pushed, no hook run, no state recorded
refused() { # DESC REGEX
	local c s h
	c=$(commits) s=$(state) h=$(hooks)
	t_exit 2 "up --plan refuses: $1" idpmake up --plan plan.json
	t_grep "naming the first difference" "refused: $2" "$STDERR"
	t_grep "saying nothing was pushed" 'nothing was pushed or synced' "$STDERR"
	t_eq "no commit" "$c" "$(commits)"
	t_eq "no hook ran" "$h" "$(hooks)"
	t_eq "no step was recorded" "$s" "$(state)"
}

# ---- a file changes after the plan ---------------------------------------------
echo '  level2: info' >>packages/web/cm.yaml
t_ok "plan -o" idpmake plan -o plan.json
echo '  more: yes' >>packages/web/cm.yaml
refused "a file changed" 'in-cluster/web:render: files changed since the plan'
sed -i -e '/more: yes/d' packages/web/cm.yaml
t_ok "with the file as planned, up --plan runs" idpmake up --plan plan.json

# ---- a variable changes -----------------------------------------------------------
echo '  level3: warn' >>packages/web/cm.yaml
t_ok "plan -o" idpmake plan -o plan.json
sed -i -e 's/greeting: hello/greeting: bonjour/' distro.yaml
refused "a variable changed" "variable 'greeting' changed"
t_nogrep "without its value" 'bonjour|hello' "$STDERR"
sed -i -e 's/greeting: bonjour/greeting: hello/' distro.yaml

# ---- the distro changes -------------------------------------------------------------
sed -i -e 's/namespace: db}/namespace: db2}/' distro.yaml
refused "a package's definition changed" 'in-cluster/db:render: (package spec|namespace) changed since the plan'
sed -i -e 's/namespace: db2}/namespace: db}/' distro.yaml
echo '  extra: {type: manifests, path: packages/db, namespace: extra}' >>distro.yaml
refused "a package was added" 'in-cluster/extra:render is not in the plan'
sed -i -e '/^  extra:/d' distro.yaml
echo '# a comment' >>distro.yaml
refused "the manifest changed otherwise" 'distro.yaml changed since the plan'
sed -i -e '/^# a comment/d' distro.yaml

# ---- the render is bound to the plan's output ----------------------------------------
rm -rf .idpmake/cache/keys
sed -i -e 's/^command: .*/command: [sh, -c, '"'"'echo render >>$T\/renders; for f in "$1"\/*.yaml; do echo ---; cat "$f"; done; printf "%s\\n" --- "apiVersion: v1" "kind: ConfigMap" "metadata: {name: stamp, namespace: web}" "data: {t: \\"$(date +%s%N)\\"}"'"'"', sh, "${src}"]/' rules/counted.yaml
t_ok "plan -o with a renderer whose output is not reproducible" idpmake plan -o plan.json
rm -rf .idpmake/cache/keys
refused "the render's output differs from the plan's (another machine's cache)" \
	"in-cluster/web:render: the render's output is [0-9a-f]{12}, the plan's is [0-9a-f]{12}"

# ---- usage --------------------------------------------------------------------------
t_exit 2 "up --plan with targets" idpmake up --plan plan.json web
t_grep "is refused: the plan has its targets" 'give no targets' "$STDERR"
t_exit 2 "up --plan with --prune" idpmake up --prune --plan plan.json
echo '{}' >bad.json
t_exit 2 "up --plan with a file that is not a plan" idpmake up --plan bad.json
t_grep "says so" 'is not a saved plan' "$STDERR"
t_done
