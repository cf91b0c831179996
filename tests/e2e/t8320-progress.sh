#!/bin/bash
# Progress that a person can read (issue 9 #8): on a terminal one status line
# that rewrites itself (\r) and names the running steps; a long wait says,
# every second, what it waits for ("waiting for in-cluster/slow: Progressing
# (3 s)"); a failure is printed in full above the line, which comes back
# below it; when output is not a terminal, plain lines and no \r.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=100 IDPMAKE_ARGOCD_BACKOFF_MS=10

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 5000 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

mkdistro d <<EOF
idpmake: 1
name: progress
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters: {in-cluster: {}}
packages:
  slow: {type: manifests, path: packages/slow}
  bad:
    type: manifests
    path: packages/bad
    hooks:
      pre:
        - name: fail
          run: 'echo the-hook-says-boom; sleep 2; exit 3'
EOF
mkmanifest d/packages/slow/cm.yaml ConfigMap slow
mkmanifest d/packages/bad/cm.yaml ConfigMap bad

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

t_exit 1 "up on a terminal (a hook fails)" pty "$IDPMAKE" -C d up
cp "$STDOUT" tty.out
t_ok "the line rewrites itself" grep -q $'\r' tty.out
tr '\r' '\n' <tty.out | sed 's/\x1b\[K//g' >tty.lines
t_grep "it names a running step" '^\[[0-9]+/[0-9]+\] .*(render|sync|pre) in-cluster/(slow|bad)' tty.lines
t_grep "a long wait says what it waits for, with the time" \
	'waiting for in-cluster/slow: Progressing \([0-9]+ s\)' tty.lines
t_ok "and says it again as the seconds pass" python3 -c '
import re, sys
secs = {int(m) for m in re.findall(r"waiting for in-cluster/slow: Progressing \((\d+) s\)", open(sys.argv[1]).read())}
assert len(secs) >= 2, secs' tty.lines
t_grep "the failure is printed in full" 'FAILED.*: in-cluster/bad:pre:fail: ' tty.lines
t_grep "with its log" 'the-hook-says-boom' tty.lines
t_ok "the failure starts a line of its own, above the status line" python3 -c '
import sys
out = open(sys.argv[1], "rb").read()
i = out.index(b"FAILED")
assert out[:i].endswith(b"\r\x1b[K") or out[:i].endswith(b"\n"), out[max(0, i - 80):i + 20]
# the line comes back under the failure, still waiting for the slow sync
assert b"waiting for in-cluster/slow" in out[out.index(b"end of log"):], out[i:]' tty.out
t_grep "the summary" '1 synced.*1 failed' tty.lines

# not a terminal: plain lines
idpmake -C d forget >/dev/null 2>&1
t_exit 1 "up, output to a file" idpmake -C d up
cp "$OUTPUT" plain.out
t_nogrep "no \\r" $'\r' plain.out
t_grep "one plain line per finished step" '^\[[0-9]+/[0-9]+\] sync in-cluster/slow:sync \([0-9]+ ms\)$' plain.out

t_done
