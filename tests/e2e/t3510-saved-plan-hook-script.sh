#!/bin/bash
# up --plan binds what hooks run (issue 20 item 4, issue 21 item 9): a hook's
# key covers the script its command names (the first word of a command, or
# the one after an interpreter, by a path from the distro's folder), so an
# edit to smoke.sh after `plan -o` makes `up --plan` refuse with exit 2,
# before anything is pushed or any hook runs; a hook up to date in the plan
# whose script changed is refused too, as is a step whose key differs from
# the plan's though it would not run (every step's key is checked).  A plan
# file whose fields have other types is refused, naming the field.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<EOF
idpmake: 1
name: hooked
packages:
  web:
    type: manifests
    path: packages/web
    namespace: web
    hooks:
      post:
        - {name: smoke, run: './smoke.sh >>smoke.out 2>&1'}
        - {name: interp, run: 'FOO=1 sh -e scripts/mark.sh arg.txt', when: once}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
printf '#!/bin/sh\necho "smoke v1" >>%s/ran\n' "$T" >d/smoke.sh
chmod +x d/smoke.sh
mkdir d/scripts
printf 'echo "mark v1" >>%s/ran\n' "$T" >d/scripts/mark.sh
echo arg1 >d/arg.txt
cd d || exit 1
: >"$T/ran"
commits() { git --git-dir=.idpmake/gitops.git rev-list --count main; }

t_ok "the first up" idpmake up
t_grep "smoke ran" '^smoke v1$' "$T/ran"
t_grep "mark ran" '^mark v1$' "$T/ran"

# ---- the script edited after the plan, the hook runs in the plan -----------------
echo '  level: debug' >>packages/web/cm.yaml
t_ok "plan -o plan.json (a change: the when: changed hook runs)" idpmake plan -o plan.json
t_grep "the plan runs the smoke hook" 'in-cluster/web:post:smoke' "$STDOUT"
c0=$(commits)
printf '#!/bin/sh\necho "smoke EDITED" >>%s/ran\n' "$T" >smoke.sh
t_exit 2 "up --plan after smoke.sh was edited: refused" idpmake up --plan plan.json
t_grep "naming the hook and that its script may have changed" \
	"refused: in-cluster/web:post:smoke: its key differs from the plan's: the hook's command, the script it runs" "$STDERR"
t_nogrep "the edited script did not run" 'EDITED' "$T/ran"
t_eq "nothing was pushed" "$c0" "$(commits)"

# the script as it was: the plan applies
printf '#!/bin/sh\necho "smoke v1" >>%s/ran\n' "$T" >smoke.sh
t_ok "up --plan with smoke.sh as planned" idpmake up --plan plan.json
t_eq "it pushed" "$((c0 + 1))" "$(commits)"
t_eq "smoke ran as planned" 2 "$(grep -c '^smoke v1$' "$T/ran")"

# ---- a hook up to date in the plan, its script edited after it ----------------------
t_ok "plan -o plan2.json (nothing to do)" idpmake plan -o plan2.json
t_grep "nothing would run" '0 steps would run' "$STDOUT"
printf 'echo "mark EDITED" >>%s/ran\n' "$T" >scripts/mark.sh
t_ok "plan: the interpreter's script is in the key" idpmake plan
t_grep "the once hook would run again: its script changed" 'post:interp' "$STDOUT"
t_exit 2 "up --plan: the hook the plan does not run would run: refused" idpmake up --plan plan2.json
t_grep "naming it" 'refused: in-cluster/web:post:interp would run' "$STDERR"
t_nogrep "the edited interpreted script did not run" 'mark EDITED' "$T/ran"

# ---- a key that differs though the step would not run ---------------------------------
# (the state took the edited script: up ran it; the plan was made before)
t_ok "up runs the edited script" idpmake up
t_grep "it ran" '^mark EDITED$' "$T/ran"
t_exit 2 "up --plan of the older plan: the hook's key differs: refused" idpmake up --plan plan2.json
t_grep "naming it" 'refused: in-cluster/web:post:interp: its key differs' "$STDERR"

# ---- what is not a script: arguments and a redirection's target --------------------------
echo arg2 >arg.txt
echo more >>smoke.out
t_ok "plan: an argument and a redirection target are not in the key" idpmake --exit-code plan

# ---- a plan file whose fields have other types (savedplan_parse; fuzz-plan) ---------------
python3 -c '
import json
p = json.load(open("plan2.json"))
p["steps"][0]["key"] = 5
json.dump(p, open("typed.json", "w"))'
t_exit 2 "up --plan with a step whose key is a number: refused" idpmake up --plan typed.json
t_grep "naming the step's index" 'typed.json is not a saved plan: steps\[0\] is not a step' "$STDERR"
t_done
