#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok
# The end of a run a person reads (issue 25, Output): Ctrl-C ends with one
# line saying what finished and how to go on, not a FAILED block with the
# hook's log and a "not run" line per step; a warning printed while the
# terminal's status line shows never lands in the middle of it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# pty CMD...: run CMD on a pseudo-terminal; its output, raw, on stdout; its exit status
pty() {
	python3 -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
sys.stdout.buffer.write(out)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))' "$@"
}

# ---- Ctrl-C -----------------------------------------------------------------------------
mkdistro h <<EOF
idpmake: 1
name: intr
packages:
  a:
    type: manifests
    path: p/a
    hooks:
      pre:
        - name: slow
          run: 'echo the-slow-hook-log; touch $T/a-started; while [ -e $T/slow ]; do sleep 0.05; done'
  b:
    type: manifests
    path: p/b
    needs: [a]
    hooks:
      pre:
        - name: one
          run: 'true'
        - name: two
          run: 'true'
EOF
mkmanifest h/p/a/cm.yaml ConfigMap a
mkmanifest h/p/b/cm.yaml ConfigMap b
touch "$T/slow"
"$IDPMAKE" -C h up >"$T/out" 2>"$T/err" &
pid=$!
t_ok "the hook started" t_wait_for 60 test -e "$T/a-started"
kill -INT "$pid"
wait "$pid"
t_eq "SIGINT: exit 130" 130 "$?"
rm -f "$T/slow"
t_nogrep "no FAILED block" 'FAILED' "$T/err"
t_nogrep "not the hook's log" 'the-slow-hook-log' "$T/err"
t_nogrep "no 'not run' line per step" '^not run: ' "$T/err"
t_eq "one line about the interrupt" 1 "$(grep -c interrupted "$T/err")"
t_grep "saying what finished, and how to go on" \
	"^idpmake: interrupted: [0-9]+ steps? finished and recorded \(2 rendered, .*1 stopped.*[0-9]+ not run; 'idpmake up' goes on from there$" \
	"$T/err"
t_nogrep "and no summary besides" '^idpmake: [0-9]+ rendered' "$T/out"
t_ok "up goes on from there" idpmake -C h up
t_grep "running what was left" 'in-cluster/b:pre:two' "$STDOUT"

# ---- a warning while the status line shows -----------------------------------------------
mkdistro w <<EOF
idpmake: 1
name: warn
packages:
  a: {type: manifests, path: p/a}
EOF
mkmanifest w/p/a/cm.yaml ConfigMap a
t_ok "a first up" idpmake -C w up
mkmanifest w/p/a/cm.yaml ConfigMap a2
# a lock file a killed run left: the push removes it, with a warning
touch w/.idpmake/gitops.git/packed-refs.lock
t_ok "up on a terminal" pty "$IDPMAKE" -C w up
cp "$STDOUT" tty.out
t_grep "the warning" 'idpmake: warning: removing .*packed-refs.lock, left by an interrupted run' tty.out
t_ok "it starts a line of its own: the status line was cleared first" python3 -c '
import sys
out = open(sys.argv[1], "rb").read()
i = out.index(b"idpmake: warning:")
before = out[:i]
assert before.endswith(b"\r\x1b[K") or before.endswith(b"\n") or not before, out[max(0, i - 60):i + 40]' tty.out

t_done
