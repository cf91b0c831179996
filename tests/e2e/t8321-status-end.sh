#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The status line and the summary as ninja and terraform show them (issue 32
# #6, #8): the counter ends at [N/N], the steps found up to date when their
# turn came leaving the total (as ninja's restat), in one cluster and in a
# fleet; the summary names the synced Applications, ten, then a count; on a
# terminal the lines of the push and the syncs stay, a render's is written
# over; the push's line reads "push: COMMIT (N folders)"; --json keeps
# cli.md's events.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --cluster eu-1=https://eu-1.example:6443 --cluster eu-2=https://eu-2.example:6443 \
	--cluster us-1=https://us-1.example:6443

mkdistro one <<EOF
idpmake: 1
name: one
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters: {in-cluster: {}}
packages:
  a: {type: manifests, path: packages/a}
  b: {type: manifests, path: packages/b, needs: [a]}
  c:
    type: manifests
    path: packages/c
    hooks:
      post:
        - {name: hi, run: 'echo hello-from-c'}
EOF
for p in a b c; do mkmanifest "one/packages/$p/cm.yaml" ConfigMap "$p"; done

# last_counter FILE: the last "[K/N]" of a plain run, as "K N"
last_counter() { grep -oE '^\[[0-9]+/[0-9]+\]' "$1" | tail -n 1 | tr -d '[]' | tr / ' '; }
# ends_full FILE: its last counter is [N/N]
ends_full() { read -r k n <<<"$(last_counter "$1")"; [ -n "$k" ] && [ "$k" = "$n" ]; }

# ---- one cluster, not a terminal ---------------------------------------------------
t_ok "first up" idpmake -C one up
cp "$STDOUT" one1.out
t_ok "the counter ends at [N/N] ($(last_counter one1.out))" ends_full one1.out
t_grep "the push's line: push: COMMIT (3 folders)" '^\[[0-9]+/[0-9]+\] push: [0-9a-f]{7} \(3 folders\) \([0-9]+ ms\)$' one1.out
t_nogrep "not push push" 'push push' one1.out
t_eq "the summary names the synced Applications, in the order they synced" \
	"in-cluster-a in-cluster-b in-cluster-c" "$(sed -n 's/^synced: //p' one1.out | tr -d , | tr ' ' '\n' | sort | xargs)"
t_eq "... in the order they synced" "$(grep -oE '^\[[0-9]+/[0-9]+\] sync in-cluster/[a-c]' one1.out | sed 's#.*/#in-cluster-#' | xargs)" \
	"$(sed -n 's/^synced: //p' one1.out | tr -d , | xargs)"
tail -n 1 one1.out >last.out
t_grep "the summary line is the last" '^idpmake: 3 rendered, .* 3 synced' last.out

echo '  more: "1"' >>one/packages/b/cm.yaml
t_ok "up after a change to b: a, c and their hook are up to date when their turn comes" idpmake -C one up
cp "$STDOUT" one2.out
t_ok "the counter ends at [N/N] ($(last_counter one2.out))" ends_full one2.out
t_grep "the push: 1 folder" '^\[[0-9]+/[0-9]+\] push: [0-9a-f]{7} \(1 folder\) ' one2.out
t_grep "only b is synced, named" '^synced: in-cluster-b$' one2.out

# ---- on a terminal --------------------------------------------------------------
# pty OUT CMD...: CMD on a pseudo-terminal (100 columns), its raw output in OUT
pty() {
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
# screen RAW: what the terminal shows, each line as its last \r left it, escapes removed
screen() {
	python3 - "$1" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
data = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", data)
for line in data.split("\n"):
    print(line.rstrip("\r").split("\r")[-1])
EOF
}
echo '  more: "1"' >>one/packages/a/cm.yaml
t_ok "up on a terminal after a change to a (b and c's hook cut off)" pty tty.raw "$IDPMAKE" -C one up
screen tty.raw >tty.txt
t_ok "the counter ends at [N/N]" python3 -c '
import re, sys
c = re.findall(rb"\[(\d+)/(\d+)\]", open(sys.argv[1], "rb").read())
assert c and c[-1][0] == c[-1][1], c[-3:]' tty.raw
t_grep "the push's line stays" '^\[[0-9]+/[0-9]+\] push: [0-9a-f]{7} \(1 folder\)$' tty.txt
t_grep "the sync's line stays" '^\[[0-9]+/[0-9]+\] sync in-cluster/a:sync$' tty.txt
t_nogrep "the render's line is written over" '^\[[0-9]+/[0-9]+\] render ' tty.txt
t_grep "the summary names a" '^synced: in-cluster-a$' tty.txt

sed -i '1i # a comment: the same objects' one/packages/a/cm.yaml
t_ok "up on a terminal after an edit that renders the same objects" pty tty2.raw "$IDPMAKE" -C one up
screen tty2.raw >tty2.txt
t_grep "the last line, [1/1], stays on the screen" '^\[1/1\] render in-cluster/a:render: output unchanged$' tty2.txt

# ---- --json: the events of cli.md, no text --------------------------------------
echo '  more: "1"' >>one/packages/c/cm.yaml
t_ok "up --json" idpmake -C one up --json
cp "$STDOUT" up.json
t_ok "only JSON objects; events of cli.md; the summary last, counting 1 synced" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert all(e["event"] in ("start", "done", "failed", "skipped", "not-run") for e in ev[:-1]), ev
assert ev[-1]["event"] == "summary" and ev[-1]["synced"] == 1, ev[-1]
push = [e for e in ev if e["event"] == "done" and e["id"] == "push"]
assert push and push[0]["kind"] == "push", ev' up.json

# ---- a fleet: twelve Applications -----------------------------------------------------
mkdistro fleet <<EOF
idpmake: 1
name: fleet
git: {remote: "$bare", branch: fleet}
argocd: {repo-url: "file://$bare"}
clusters:
  eu-1: {server: "https://eu-1.example:6443", labels: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", labels: {region: eu}}
  us-1: {server: "https://us-1.example:6443", labels: {region: us}}
rollout:
  waves:
    - {name: eu, selector: {region: eu}}
    - {name: us, selector: {region: us}}
packages:
  p1: {type: manifests, path: packages/p1}
  p2: {type: manifests, path: packages/p2}
  p3: {type: manifests, path: packages/p3}
  p4: {type: manifests, path: packages/p4}
EOF
for p in p1 p2 p3 p4; do mkmanifest "fleet/packages/$p/cm.yaml" ConfigMap "$p"; done
t_ok "fleet: first up" idpmake -C fleet up
cp "$STDOUT" fleet1.out
t_ok "the counter ends at [N/N] ($(last_counter fleet1.out))" ends_full fleet1.out
t_grep "the summary names ten Applications, then a count" \
	'^synced: ([a-z0-9-]+, ){9}[a-z0-9-]+ and 2 more$' fleet1.out
t_grep "12 synced" ' 12 synced' fleet1.out
echo '  more: "1"' >>fleet/packages/p2/cm.yaml
t_ok "fleet: up after a change to p2" idpmake -C fleet up
cp "$STDOUT" fleet2.out
t_ok "the counter ends at [N/N] ($(last_counter fleet2.out))" ends_full fleet2.out
t_grep "p2's three Applications, named in the order they synced (wave eu, then us)" \
	'^synced: (eu-1-p2, eu-2-p2|eu-2-p2, eu-1-p2), us-1-p2$' fleet2.out

t_done
