#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Output: one line per step and a summary line without a terminal; one status
# line rewritten in place (\r) on a terminal; `up --json` events and their
# summary; colour; --help, help COMMAND, version; exit status 2 for usage and
# manifest errors.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: output
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
    hooks:
      post:
        - name: smoke
          run: echo smoke
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db
bare=$T/d/.idpmake/gitops.git
im() { idpmake -C "$T/d" "$@"; }

# on_tty OUT CMD...: runs CMD on a pseudo-terminal (100 columns), its output in OUT
on_tty() {
	python3 - "$@" <<'EOF'
import fcntl, os, pty, struct, sys, termios
out = open(sys.argv[1], "wb")
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    os.execvp(sys.argv[2], sys.argv[2:])
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out.write(b)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
EOF
}

summary_re='^idpmake: [0-9]+ rendered, (1 commit pushed \([0-9a-f]{7,}\)|nothing pushed), [0-9]+ synced, [0-9]+ hooks?, (.*, )?[0-9]+ up to date$'

# ---- without a terminal ---------------------------------------------------------
t_ok "up without a terminal" im up
cp "$STDOUT" "$T/up1.out"
t_grep "a summary line" "$summary_re" "$T/up1.out"
t_eq "it is the last line" 1 "$(tail -n 1 "$T/up1.out" | grep -E -c "$summary_re")"
t_eq "exactly one summary line" 1 "$(grep -c '^idpmake: ' "$T/up1.out")"
t_grep "it counts 2 rendered and 1 hook" '^idpmake: 2 rendered, .*, 1 hook,' "$T/up1.out"
head=$(git -C "$bare" rev-parse main)
t_grep "it names the pushed commit (${head:0:7})" "1 commit pushed \\(${head:0:7}" "$T/up1.out"
for id in in-cluster/web:render in-cluster/db:render in-cluster/web:post:smoke; do
	t_eq "one line for $id" 1 "$(grep -c -F "$id" "$T/up1.out")"
done
t_eq "one line for the push" 1 "$(grep -c -E '(^|[^a-z])push([^a-z]|$)' "$T/up1.out")"
t_nostring "no carriage return" "$(printf '\r')" "$T/up1.out"
t_nostring "no escape sequence (NO_COLOR)" "$(printf '\033')" "$T/up1.out"

t_ok "a no-op up" im up
t_grep "ends with the summary" "$summary_re" "$STDOUT"
t_grep "0 rendered, nothing pushed" '^idpmake: 0 rendered, nothing pushed' "$STDOUT"

# ---- --json ----------------------------------------------------------------------------
printf '  more: "1"\n' >>d/packages/db/cm.yaml
sed -i 's/replicas: 1/replicas: 2/' d/packages/web/deploy.yaml
t_ok "up --json" im up --json
cp "$STDOUT" "$T/up.json"
head=$(git -C "$bare" rev-parse main)
t_ok "every line is a JSON event of cli.md; the last is the summary" python3 - "$T/up.json" "$head" <<'EOF'
import json, sys
head = sys.argv[2]
lines = [l for l in open(sys.argv[1]).read().split("\n") if l.strip()]
ev = [json.loads(l) for l in lines]
assert all(isinstance(e, dict) for e in ev), ev
for e in ev[:-1]:
    assert e["event"] in ("start", "done", "failed", "skipped", "not-run"), e
    assert isinstance(e.get("id"), str) and e["id"], e
s = ev[-1]
assert s["event"] == "summary", s
for k in ("rendered", "synced", "hooks", "failed", "up_to_date"):
    assert isinstance(s[k], int) and not isinstance(s[k], bool), (k, s)
assert s["rendered"] == 2, s
assert s["failed"] == 0, s
assert s["hooks"] == 1, s
assert isinstance(s["pushed"], str) and head.startswith(s["pushed"]) and len(s["pushed"]) >= 7, (s, head)
EOF
t_ok "each start has its done; done events have ms" python3 - "$T/up.json" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
started = [e["id"] for e in ev if e["event"] == "start"]
done = {e["id"]: e for e in ev if e["event"] == "done"}
assert "in-cluster/web:render" in started and "in-cluster/db:render" in started, started
for id in started:
    assert id in done, (id, done)
    assert isinstance(done[id].get("ms"), int), done[id]
    evs = [(e["event"], e.get("id")) for e in ev]
    assert evs.index(("start", id)) < evs.index(("done", id)), (id, evs)
EOF
t_ok "nothing but JSON on stdout" python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)
' "$T/up.json"

t_ok "a no-op up --json" im up --json
cp "$STDOUT" "$T/noop.json"
t_ok "its summary: 0 rendered, pushed null, 0 failed, up_to_date > 0" python3 - "$T/noop.json" <<'EOF'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
assert s["event"] == "summary", s
assert s["rendered"] == 0 and s["pushed"] is None and s["failed"] == 0, s
assert s["up_to_date"] >= 2, s
EOF

# a failure in JSON: failed, not-run, and the summary counts it
cat >>d/distro.yaml <<'EOF'
  bad:
    type: manifests
    path: packages/bad
    namespace: data
    hooks:
      pre:
        - name: nope
          run: echo nope-log-line; exit 3
      post:
        - name: never
          run: echo never
EOF
mkmanifest d/packages/bad/cm.yaml ConfigMap bad
t_exit 1 "up --json with a failing hook exits 1" im up --json
cp "$STDOUT" "$T/fail.json"
t_ok "a failed event for the hook, not-run for what follows it, summary failed 1" python3 - "$T/fail.json" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failed = [e["id"] for e in ev if e["event"] == "failed"]
notrun = [e["id"] for e in ev if e["event"] == "not-run"]
assert failed == ["in-cluster/bad:pre:nope"], ev
assert "in-cluster/bad:post:never" in notrun, ev
s = ev[-1]
assert s["event"] == "summary" and s["failed"] == 1, s
EOF
t_exit 1 "the same without --json" im up
t_grep "names the failed step" 'in-cluster/bad:pre:nope' "$OUTPUT"
t_grep "prints its log" 'nope-log-line' "$OUTPUT"
t_grep "says what did not run" 'in-cluster/bad:post:never' "$OUTPUT"
t_grep "and ends with the summary" "$summary_re" "$STDOUT"
sed -i 's/run: echo nope-log-line; exit 3/run: echo fixed/' d/distro.yaml

# ---- on a terminal -----------------------------------------------------------------------
printf '  again: "1"\n' >>d/packages/db/cm.yaml
t_ok "up on a terminal" on_tty "$T/tty.out" "$IDPMAKE" -C "$T/d" up
t_ok "the status line is rewritten in place (a \\r not ending a line)" python3 -c '
import re, sys
data = open(sys.argv[1], "rb").read()
assert re.search(rb"\r(?!\n)", data), data
' "$T/tty.out"
t_ok "it shows [N/M] progress" python3 -c '
import re, sys
data = open(sys.argv[1], "rb").read()
assert re.search(rb"\[\d+/\d+\]", data), data
' "$T/tty.out"
# what the terminal shows: each line as left after its last \r, escapes removed
python3 - "$T/tty.out" >"$T/tty.txt" <<'EOF2'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
data = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", data)
for line in data.split("\n"):
    line = line.rstrip("\r")
    print(line.split("\r")[-1])
EOF2
t_grep "the summary line is printed on a line of its own" '^idpmake: [0-9]+ rendered' "$T/tty.txt"

# ---- colour ------------------------------------------------------------------------------------
sed -i 's/run: echo fixed/run: exit 4/' d/distro.yaml
t_exit 1 "a failure with --color=always" env -u NO_COLOR "$IDPMAKE" --color=always -C "$T/d" up
t_ok "has escape sequences" sh -c "grep -q \$(printf '\033') '$OUTPUT'"
t_exit 1 "a failure with --color=never on a terminal" on_tty "$T/tty2.out" env -u NO_COLOR "$IDPMAKE" --color=never -C "$T/d" up
t_ok "has no colour (SGR) sequence" python3 -c '
import re, sys
assert not re.search(rb"\x1b\[[0-9;]*m", open(sys.argv[1], "rb").read())
' "$T/tty2.out"
t_exit 1 "a failure on a terminal with NO_COLOR" on_tty "$T/tty3.out" env NO_COLOR=1 "$IDPMAKE" -C "$T/d" up
t_ok "has no colour (SGR) sequence" python3 -c '
import re, sys
assert not re.search(rb"\x1b\[[0-9;]*m", open(sys.argv[1], "rb").read())
' "$T/tty3.out"
sed -i 's/run: exit 4/run: echo fixed/' d/distro.yaml

# ---- help, version, usage errors ---------------------------------------------------------------
t_ok "--help" idpmake --help
t_grep "shows the usage" '^usage: idpmake' "$STDOUT"
t_grep "lists up" '^ +up ' "$STDOUT"
t_grep "lists plan" '^ +plan ' "$STDOUT"
t_ok "help up" idpmake help up
t_grep "gives up's usage" '^usage: idpmake \[OPTIONS\] up \[TARGET\.\.\.\]$' "$STDOUT"
t_grep "and what up does" '^render, push, sync and run hooks for what changed' "$STDOUT"
t_nogrep "not another command's usage" '^usage: idpmake \[OPTIONS\] (plan|status|render)' "$STDOUT"
cp "$STDOUT" "$T/help-up.out"
t_ok "up --help" idpmake up --help
t_grep "gives up's usage" '^usage: idpmake \[OPTIONS\] up \[TARGET\.\.\.\]$' "$STDOUT"
t_eq "the same text as help up" "$(cat "$T/help-up.out")" "$(cat "$STDOUT")"
t_ok "help plan" idpmake help plan
t_grep "gives plan's usage, not up's" '^usage: idpmake \[OPTIONS\] plan ' "$STDOUT"
t_exit 2 "an unknown option exits 2" idpmake --no-such-option
t_grep "naming it" 'no-such-option' "$OUTPUT"
t_exit 2 "an unknown option of up exits 2" im up --no-such-option
t_exit 2 "an unknown command exits 2" idpmake help no-such-command
t_exit 2 "an unknown target exits 2" im up no-such-package
t_grep "naming it" 'no-such-package' "$OUTPUT"
t_exit 2 "-j without a number exits 2" im -j x up
t_ok "version" idpmake version
t_grep "prints idpmake's version" '^idpmake [^ ]+$' "$STDOUT"
for lib in libgit2 SQLite libyaml PCRE2 xxHash; do
	t_grep "and $lib's" "$lib +[0-9]+\\.[0-9]+" "$STDOUT"
done
t_ok "--version" idpmake --version
t_grep "prints the version" '^idpmake [^ ]+$' "$STDOUT"

# ---- a manifest error: exit 2, nothing ran -----------------------------------------------------
mkdistro e <<'EOF'
idpmake: 1
name: broken
pakages:
  web: {type: manifests, path: packages/web}
EOF
t_exit 2 "a manifest with an unknown key exits 2" idpmake -C "$T/e" up
t_grep "naming file, line and column" 'distro\.yaml:3:[0-9]+' "$OUTPUT"
t_grep "with a suggestion" 'packages' "$OUTPUT"
t_ok "nothing ran: no repository" test ! -e e/.idpmake/gitops.git

# ---- -f FILE ------------------------------------------------------------------------------
mkdir -p o
cp d/distro.yaml o/other.yaml
cp -r d/packages o/
t_ok "-f FILE reads another manifest" idpmake -C "$T/o" -f other.yaml up
t_grep "and renders it" '^idpmake: 3 rendered' "$STDOUT"

t_done
