#!/bin/bash
# Options and forget (cli.md): `--state DIR` and `IDPMAKE_STATE` move the
# state folder (and --state wins); `-k N` with N >= 2 stops after exactly N
# failures (-k 0 never stops); `-v` prints the render rule's command and each
# hook's command as they run, and a failed step prints its command with its
# log; `forget` with no target forgets every step, `forget CLUSTER/` the
# steps of that cluster only.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# a render tool of our own
mkdir -p bin
cat >bin/cattool <<'EOF'
#!/bin/sh
case $1 in --version) echo "cattool 1.0"; exit 0 ;; esac
cat "$1"/*.yaml
EOF
chmod +x bin/cattool
export PATH=$T/bin:$PATH

mkdistro d <<'EOF'
idpmake: 1
name: opts
clusters:
  one: {server: "https://one.example"}
  two: {server: "https://two.example"}
packages:
  a: {type: manifests, path: p, hooks: {post: [{name: fine, run: "echo fine-a"}]}}
  b: {type: manifests, path: p}
EOF
mkmanifest d/p/cm.yaml ConfigMap cm
cd d || exit 1

# ---- --state DIR and IDPMAKE_STATE ---------------------------------------
t_ok "up --state DIR" idpmake --state "$T/st1" up
t_grep "--state: everything rendered (two renders, each shared by the two clusters)" '^idpmake: 2 rendered, 1 commit pushed' "$STDOUT"
t_ok "--state: state.db in DIR" test -f "$T/st1/state.db"
t_ok "--state: the embedded GitOps repository in DIR" git --git-dir="$T/st1/gitops.git" rev-parse --verify main
t_ok "--state: nothing in the default .idpmake" test ! -e .idpmake
t_ok "up --state DIR again" idpmake --state "$T/st1" up
t_grep "--state: the second run is a no-op" '^idpmake: 0 rendered, nothing pushed, .* 7 up to date' "$STDOUT"
t_ok "plan without --state" idpmake plan
t_grep "without --state: another (empty) state, everything would run" '^render +a \(for 2 clusters\): never rendered' "$STDOUT"
t_ok "status --state DIR" idpmake --state "$T/st1" status --json
cp "$STDOUT" "$T/status.json"
t_ok "status --state: one/a:render ok" python3 -c '
import json, sys
s = {x["id"]: x for x in json.load(open(sys.argv[1]))["steps"]}
assert s["one/a:render"]["result"] == "ok", s["one/a:render"]' "$T/status.json"

t_ok "up with IDPMAKE_STATE" env IDPMAKE_STATE="$T/st2" "$IDPMAKE" up
t_grep "IDPMAKE_STATE: everything rendered" '^idpmake: 2 rendered, 1 commit pushed' "$STDOUT"
t_ok "IDPMAKE_STATE: state.db there" test -f "$T/st2/state.db"
t_ok "IDPMAKE_STATE: nothing in the default .idpmake" test ! -e .idpmake
t_ok "up with IDPMAKE_STATE again" env IDPMAKE_STATE="$T/st2" "$IDPMAKE" up
t_grep "IDPMAKE_STATE: a no-op" '^idpmake: 0 rendered, nothing pushed' "$STDOUT"
t_ok "--state wins over IDPMAKE_STATE" env IDPMAKE_STATE="$T/st2" "$IDPMAKE" --state "$T/st3" up
t_grep "--state over IDPMAKE_STATE: the new folder, everything rendered" '^idpmake: 2 rendered, 1 commit pushed' "$STDOUT"
t_ok "--state over IDPMAKE_STATE: state.db in the --state folder" test -f "$T/st3/state.db"
t_ok "relative --state is relative to the current folder (after -C)" idpmake -C "$T" --state st4 -f d/distro.yaml up
t_ok "relative --state: made under the current folder" test -f "$T/st4/state.db"
t_ok "still nothing in the default .idpmake" test ! -e .idpmake

# ---- forget ---------------------------------------------------------------
export IDPMAKE_STATE=$T/st1
t_ok "forget one/" idpmake forget one/
t_grep "forget one/: 3 steps (2 renders, 1 hook)" '^idpmake: forgot 3 steps' "$OUTPUT"
t_ok "plan after forget one/" idpmake plan --json
cp "$STDOUT" "$T/plan1.json"
t_ok "forget one/: exactly one's renders and hook would run, two is up to date" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
ids = sorted(s["id"] for s in p["steps"] if s["kind"] in ("render", "post", "pre"))
assert ids == ["one/a:post:fine", "one/a:render", "one/b:render"], ids' "$T/plan1.json"
t_ok "up after forget one/" idpmake up
t_grep "up after forget one/: two renders" '^idpmake: 2 rendered' "$STDOUT"
t_grep "up after forget one/: the hook ran again" 'post one/a:post:fine' "$STDOUT"
t_nogrep "up after forget one/: nothing of two ran" '(render|post) two/' "$STDOUT"
t_exit 2 "forget nosuch/: an unknown cluster is a usage error" idpmake forget nosuch/
t_grep "forget nosuch/: names the cluster" "no cluster named 'nosuch'" "$STDERR"
t_ok "forget (no target)" idpmake forget
t_grep "forget: every recorded step (4 renders, 2 hooks, the push)" '^idpmake: forgot 7 steps' "$OUTPUT"
t_ok "plan after forget" idpmake plan --json
cp "$STDOUT" "$T/plan2.json"
t_ok "forget: every render and hook would run" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
ids = sorted(s["id"] for s in p["steps"] if s["kind"] in ("render", "post", "pre"))
assert ids == ["one/a:post:fine", "one/a:render", "one/b:render", "two/a:post:fine", "two/a:render", "two/b:render"], ids
assert p["up_to_date"] == 0, p["up_to_date"]' "$T/plan2.json"
unset IDPMAKE_STATE

# ---- -k N ------------------------------------------------------------------
mkdistro "$T/k" <<'EOF'
idpmake: 1
name: keepgoing
rules: [rules/cat.yaml]
packages:
  a: {type: manifests, path: p, hooks: {pre: [{name: boom, run: "echo boom-a; exit 3"}]}}
  b: {type: manifests, path: p, hooks: {pre: [{name: boom, run: "echo boom-b; exit 3"}]}}
  c: {type: manifests, path: p, hooks: {pre: [{name: boom, run: "echo boom-c; exit 3"}]}}
  r: {type: cat, path: p, hooks: {post: [{name: fine, run: "echo fine-r"}]}}
EOF
mkmanifest "$T/k/p/cm.yaml" ConfigMap cm
mkdir -p "$T/k/rules"
cat >"$T/k/rules/cat.yaml" <<'EOF'
rule: cat
command: [cattool, "${src}"]
version: [cattool, --version]
inputs: ["*.yaml"]
EOF
cd "$T/k" || exit 1
# count EVENT KIND: the events of $STDOUT (a --json run) of that event and kind
count() { python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == sys.argv[2] and e.get("kind") == sys.argv[3]:
        n += 1
print(n)' "$STDOUT" "$1" "$2"; }
summary() { tail -n 1 "$STDOUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

t_exit 1 "-k 2 with three failing hooks: exit 1" idpmake -j1 -k 2 --json up
t_eq "-k 2: exactly 2 hooks failed" 2 "$(count failed pre)"
t_eq "-k 2: summary says 2 failed" 2 "$(summary failed)"
t_eq "-k 2: the third hook did not start (3 starts would be one too many)" 2 "$(count start pre)"
t_grep "-k 2: the third is not run, stopped after failures" '"event":"not-run","id":"in-cluster/[abc]:pre:boom","kind":"pre","reason":"stopped after failures \(-k\)"' "$STDOUT"
t_eq "-k 2: the healthy package's hook ran" 1 "$(count "done" post)"
t_exit 1 "-k 2 again: the failed hooks are retried" idpmake -j1 -k 2 --json up
t_eq "-k 2 again: exactly 2 failed" 2 "$(count failed pre)"
t_exit 1 "-k 0 never stops" idpmake -j1 -k 0 --json up
t_eq "-k 0: all 3 hooks failed" 3 "$(count failed pre)"
t_eq "-k 0: summary says 3 failed" 3 "$(summary failed)"
t_exit 1 "-k 1 (the default) stops at the first" idpmake -j1 --json up
t_eq "default -k 1: exactly 1 failed" 1 "$(count failed pre)"
t_eq "default -k 1: 2 hooks not run" 2 "$(grep -c '"event":"not-run","id":"in-cluster/[abc]:pre:boom"' "$STDOUT")"
t_exit 1 "-k 3 with three failing hooks" idpmake -j1 -k 3 --json up
t_eq "-k 3: 3 failed" 3 "$(count failed pre)"

# ---- -v: the commands as they run; a failure prints its command ------------
rm -rf .idpmake
t_exit 1 "up -v" idpmake -v -j1 -k 0 up
cp "$STDERR" "$T/verbose.err"
t_grep "-v: the render rule's command" "^idpmake: in-cluster/r:render: cattool p$" "$T/verbose.err"
t_grep "-v: the post hook's command" '^idpmake: in-cluster/r:post:fine: echo fine-r$' "$T/verbose.err"
t_grep "-v: a failing hook's command" '^idpmake: in-cluster/a:pre:boom: echo boom-a; exit 3$' "$T/verbose.err"
t_grep "-v: the push (git) too" '^idpmake: git push ' "$T/verbose.err"
t_grep "a failed step prints its command" '^command: echo boom-b; exit 3$' "$T/verbose.err"
t_grep "and its log" '^boom-b$' "$T/verbose.err"
rm -rf .idpmake
t_exit 1 "up without -v" idpmake -j1 -k 0 up
t_nogrep "without -v: no command lines as they run" '^idpmake: in-cluster/' "$STDERR"
t_grep "without -v: a failed step still prints its command" '^command: echo boom-c; exit 3$' "$STDERR"
t_grep "without -v: and its log" '^boom-c$' "$STDERR"
# forget STEP: one step by its id, and an unknown id refused
t_exit 1 "up again (the failing hooks fail again)" idpmake -j1 -k 0 up
t_ok "forget in-cluster/r:render" idpmake forget in-cluster/r:render
t_grep "one step forgotten" 'forgot 1 step' "$OUTPUT"
t_ok "plan after forgetting a step" idpmake plan
t_grep "that render runs again" '^render +in-cluster/r:render: never rendered' "$STDOUT"
t_exit 2 "forget an unknown step id" idpmake forget in-cluster/nope:render
t_grep "the error names it" "no step 'in-cluster/nope:render'" "$STDERR"
t_done
