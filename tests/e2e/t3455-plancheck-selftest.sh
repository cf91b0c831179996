#!/bin/bash
# The harness's plan check (issue 32 #5, lib.sh's IDPMAKE_PLANCHECK=1) is
# itself tested: a deliberately wrong prediction fails it, naming the step
# and the kind of mismatch; a true one passes.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

real=$IDPMAKE
# a fake idpmake whose plan says one thing and whose up does another
mkdir -p bin
cat >bin/liar <<'EOF2'
#!/bin/sh
for a in "$@"; do
	case $a in
	plan) shift; case " $* " in
		*" --exit-code "*) echo "render one/b:render: never rendered"; exit 1 ;;
		*) echo '{"version":1,"steps":[{"id":"one/a:render","reason":"never rendered"},{"id":"push","reason":"if a render'"'"'s output changes"}]}'; exit 0 ;;
		esac ;;
	log) echo '{"run":1,"summary":"1 rendered"}'; exit 0 ;;
	up) [ -n "$IDPMAKE_EVENTS" ] && printf '%s\n' '{"event":"start","id":"one/b:render","kind":"render"}' >>"$IDPMAKE_EVENTS"; exit 0 ;;
	esac
done
exit 0
EOF2
chmod +x bin/liar

export IDPMAKE_PLANCHECK=1
IDPMAKE=$T/bin/liar
t_ok "the liar's up runs (its status is up's)" idpmake -C . up
t_grep "a step up ran that plan did not list is named" '^idpmake -C \. up: unplanned: one/b:render ran, plan did not list it' "$T/.plancheck"
t_grep "a step plan listed for certain that up did not run is named" '^idpmake -C \. up: not-run: plan listed one/a:render' "$T/.plancheck"
t_grep "work left after a successful up is named" 'not-settled: plan --exit-code after a successful up: render one/b:render' "$T/.plancheck"
t_nogrep "a conditional step (\"if ...\") is not expected" 'not-run: plan listed push' "$T/.plancheck"
: >"$T/.plancheck"

# a refusal plan did not predict
cat >bin/refuser <<'EOF2'
#!/bin/sh
for a in "$@"; do
	case $a in
	plan) echo '{"version":1,"steps":[]}'; exit 0 ;;
	log) echo '{"run":4,"summary":"refused: another distro owns what this run would change"}'; exit 0 ;;
	up) exit 1 ;;
	esac
done
EOF2
chmod +x bin/refuser
IDPMAKE=$T/bin/refuser
t_exit 1 "the refuser's up fails (its status is up's)" idpmake up
t_grep "an unpredicted refusal is named" '^idpmake up: unpredicted: up refused \(refused: another distro owns' "$T/.plancheck"
: >"$T/.plancheck"

# the real idpmake on a small distro: plan and up agree
IDPMAKE=$real
mkdistro d <<'EOF2'
idpmake: 1
name: truth
clusters:
  one: {server: "https://one.example"}
packages:
  a: {type: manifests, path: p, hooks: {post: [{name: hi, run: "echo hi"}]}}
  b: {type: manifests, path: p, needs: [a]}
EOF2
mkmanifest d/p/cm.yaml ConfigMap cm
t_ok "up, checked" idpmake -C d up
t_ok "the check ran (up's events recorded)" test -s "$T/.pc.ev"
mkmanifest d/p/cm2.yaml ConfigMap cm2
t_ok "up after a change, checked" idpmake -C d up
t_ok "a no-op up, checked" idpmake -C d up
t_eq "no mismatch" "" "$(cat "$T/.plancheck" 2>/dev/null)"

# IDPMAKE_EVENTS that cannot be opened is said, and the run goes on
unset IDPMAKE_PLANCHECK
printf '  more: "1"\n' >>d/p/cm.yaml
t_ok "up with IDPMAKE_EVENTS in a folder that does not exist" env IDPMAKE_EVENTS="$T/no/such/events" "$IDPMAKE" -C d up
t_grep "a warning names it" "IDPMAKE_EVENTS: cannot open '$T/no/such/events'" "$STDERR"

t_done
