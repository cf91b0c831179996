#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# `up --json` (cli.md "JSON shapes"): stdout is one JSON object per line and
# nothing else; start and done events for what ran (done with "ms"); a sync
# step without argocd is a `skipped` event with its reason; a failed step is
# a `failed` event with its cause and the command it ran; its dependents are
# `not-run` events naming it; the last line is the summary with every count.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p bin
cat >bin/failtool <<'EOF'
#!/bin/sh
case $1 in --version) echo "failtool 1.0"; exit 0 ;; esac
echo "failtool: cannot render $1" >&2
exit 4
EOF
chmod +x bin/failtool
export PATH=$T/bin:$PATH

mkdistro d <<'EOF'
idpmake: 1
name: jsonev
rules: [rules/fail.yaml]
packages:
  good: {type: manifests, path: p, hooks: {post: [{name: hello, run: "echo hello"}]}}
  bad: {type: fail, path: p, hooks: {post: [{name: after, run: "echo after"}]}}
EOF
mkmanifest d/p/cm.yaml ConfigMap cm
mkdir -p d/rules
cat >d/rules/fail.yaml <<'EOF'
rule: fail
command: [failtool, "${src}", --flag]
version: [failtool, --version]
EOF
cd d || exit 1

# check PYTHON-ASSERTIONS: run them with `ev` = the list of events of
# $T/ev.jsonl (every line must parse) and `by(event, id)` = matching events
check() {
	python3 -c '
import json, sys
ev = []
for n, line in enumerate(open(sys.argv[1]), 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON: %r (%s)" % (n, line, e))
    assert isinstance(o, dict) and "event" in o, line
    ev.append(o)
def by(event, id=None):
    return [e for e in ev if e["event"] == event and (id is None or e.get("id") == id)]
exec(sys.argv[2])' "$T/ev.jsonl" "$1"
}

t_exit 1 "up --json with a failing render: exit 1" idpmake -k 0 --json up
cp "$STDOUT" "$T/ev.jsonl"
cp "$STDERR" "$T/ev.err"
t_ok "stdout: every line is a JSON object with an event" check 'assert len(ev) > 3, ev'
t_ok "start and done for good's render, done with ms" check '
s, d = by("start", "in-cluster/good:render"), by("done", "in-cluster/good:render")
assert len(s) == 1 and len(d) == 1, (s, d)
assert isinstance(d[0]["ms"], int) and d[0]["kind"] == "render", d'
t_ok "failed: bad's render, with its cause" check '
f = by("failed", "in-cluster/bad:render")
assert len(f) == 1, ev
assert f[0]["kind"] == "render" and "exited with status 4" in f[0]["reason"], f
assert isinstance(f[0]["ms"], int), f'
t_ok "failed: the command it ran" check '
f = by("failed", "in-cluster/bad:render")
assert f[0].get("command") == "failtool p --flag", f'
t_ok "not-run: bad's sync and hook, naming the failed render" check '
for id in ("in-cluster/bad:sync", "in-cluster/bad:post:after"):
    n = by("not-run", id)
    assert len(n) == 1, (id, ev)
    assert "in-cluster/bad:render" in n[0]["reason"], n
assert not by("start", "in-cluster/bad:post:after"), ev'
t_ok "the push waits for every render: not run, and good's steps after it" check '
for id in ("push", "in-cluster/good:sync", "in-cluster/good:post:hello"):
    n = by("not-run", id)
    assert len(n) == 1 and n[0]["reason"] == "in-cluster/bad:render failed", (id, ev)'
t_ok "the summary is the last line, with every count" check '
s = ev[-1]
assert s["event"] == "summary", s
want = {"rendered": 1, "pushed": None, "synced": 0, "hooks": 0, "failed": 1, "not_run": 5, "up_to_date": 0}
for k, v in want.items():
    assert s[k] == v, (k, s)
assert len(by("summary")) == 1, ev'
t_nogrep "no status lines on stdout" '^\[[0-9]+/[0-9]+\]|^idpmake:' "$T/ev.jsonl"
t_nogrep "no FAILED text on stderr in --json mode" '^FAILED' "$T/ev.err"

# the same failure without --json: the command and the log on stderr
t_exit 1 "up (text) with the failing render" idpmake -k 0 up
t_grep "text: FAILED line" '^FAILED: in-cluster/bad:render: ' "$STDERR"
t_grep "text: the command" '^command: failtool p --flag$' "$STDERR"
t_grep "text: the log" '^failtool: cannot render p$' "$STDERR"

# a no-op: no start events, the summary counts what is up to date
sed -i 's/^  bad: .*$//' distro.yaml
t_ok "up --json after removing bad" idpmake --json up
cp "$STDOUT" "$T/ev.jsonl"
t_ok "skipped: the sync step, with its reason (no argocd), no ms" check '
s = by("skipped", "in-cluster/good:sync")
assert len(s) == 1, ev
assert s[0]["kind"] == "sync" and "no argocd configured" in s[0]["reason"], s
assert "ms" not in s[0] and not by("start", "in-cluster/good:sync"), ev'
t_ok "the push and the hook ran" check '
assert len(by("done", "push")) == 1 and len(by("done", "in-cluster/good:post:hello")) == 1, ev'
t_ok "summary: the commit pushed, one hook" check '
s = ev[-1]
assert s["event"] == "summary" and len(s["pushed"]) == 40 and s["hooks"] == 1, s
assert s["failed"] == 0 and s["not_run"] == 0 and s["synced"] == 0, s'
t_ok "up --json no-op" idpmake --json up
cp "$STDOUT" "$T/ev.jsonl"
t_ok "no-op: no start, done or failed event" check '
assert not by("start") and not by("done") and not by("failed"), ev'
t_ok "no-op: the sync is still reported skipped, with its reason" check '
s = by("skipped", "in-cluster/good:sync")
assert len(s) == 1 and "no argocd configured" in s[0]["reason"], ev'
t_ok "no-op: summary" check '
s = ev[-1]
assert s["event"] == "summary" and s["pushed"] is None and s["rendered"] == 0, s
assert s["failed"] == 0 and s["up_to_date"] == 3, s'
t_done
