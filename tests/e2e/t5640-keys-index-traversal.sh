#!/bin/bash
# A hostile GitOps repository and an empty state folder: someone who can
# push writes a package folder holding a nested tree named '..' (git
# accepts it unless fsck is on) and a keys index line whose tree and output
# hash match it.  The reconstruction (remotekeys.c) must not take that
# folder as a render: its files would be written outside the state folder
# by the hooks' IDPMAKE_RENDERED copy (and by render -o, diff).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PYTHONPATH=$top/tests/e2e/py python3 -c 'import sys, xxh3; sys.exit(not xxh3.available())' ||
	t_skip_rest "no libxxhash for python3 ctypes (the test computes an output hash)"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF
idpmake: 1
name: hostile-index
git: {remote: "$bare"}
clusters:
  dev: {server: "https://dev.example:6443"}
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
    hooks:
      post:
        - name: look
          run: ls "\$IDPMAKE_RENDERED" >/dev/null
          when: always
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web

# craft.py WORK FOLDER LEVELS: FOLDER on the tip gains LEVELS nested trees
# named '..' holding the file 'pwned', and its index line the matching tree
# and output hash (the key is kept); committed and pushed to main
cat >"$T/craft.py" <<'EOF'
import subprocess, sys
from xxh3 import xxh
work, folder, levels = sys.argv[1], sys.argv[2], int(sys.argv[3])
def git(*a, inp=None):
    return subprocess.run(["git", "-C", work] + list(a), input=inp, capture_output=True, check=True).stdout
def tree(entries):
    data = b"".join(m.encode() + b" " + n.encode() + b"\0" + bytes.fromhex(s) for m, n, s in entries)
    return git("hash-object", "-t", "tree", "--literally", "-w", "--stdin", inp=data).decode().strip()
def ls(t):
    out = []
    for line in git("ls-tree", t).decode().splitlines():
        meta, name = line.split("\t", 1)
        m, _, s = meta.split()
        out.append((m, name, s))
    return out
payload = b"owned\n"
t = tree([("100644", "pwned", git("hash-object", "-w", "--stdin", inp=payload).decode().strip())])
for _ in range(levels - 1):
    t = tree([("40000", "..", t)])
orig = ls("HEAD:" + folder)
files = [(n, git("cat-file", "blob", s)) for m, n, s in orig if m == "100644"]
newf = tree([("40000", "..", t)] + orig)
entries = sorted([("../" * levels + "pwned", payload)] + files)
out = xxh(b"idpmake-bundle 1\n" + b"".join(n.encode() + b" %d\n" % len(d) + d + b"\n" for n, d in entries))
def rebuild(t, parts, new):
    if len(parts) == 1:
        return tree([(m, n, new if n == parts[0] else s) for m, n, s in ls(t)])
    return tree([(m, n, rebuild(s, parts[1:], new) if n == parts[0] else s) for m, n, s in ls(t)])
keys = git("cat-file", "blob", "HEAD:.idpmake/keys").decode().splitlines()
keys = [l if not l.startswith(folder + " ") else "%s %s %s %s" % (folder, l.split()[-3], out, newf) for l in keys]
kblob = git("hash-object", "-w", "--stdin", inp=("\n".join(keys) + "\n").encode()).decode().strip()
root = rebuild(rebuild(git("rev-parse", "HEAD^{tree}").decode().strip(), folder.split("/"), newf),
               [".idpmake", "keys"], kblob)
c = git("commit-tree", root, "-p", "HEAD", "-m", "hostile", inp=b"").decode().strip()
git("push", "-q", "origin", c + ":refs/heads/main")
EOF

cd d || exit 1
t_ok "first up" idpmake up
git clone -q "$bare" "$T/work" || t_bail "git clone failed"
# the hooks' copy is $T/d/.idpmake/rendered/dev/web: five '..' lead to $T
PYTHONPATH=$top/tests/e2e/py python3 "$T/craft.py" "$T/work" dev/web 5 || t_bail "cannot craft the hostile folder"
git --git-dir="$bare" ls-tree -r --name-only main >"$T/tree.txt" || t_bail "git ls-tree failed"
t_grep "the hostile folder is on the remote" '^dev/web/\.\./\.\./\.\./\.\./\.\./pwned$' "$T/tree.txt"
rm -rf .idpmake
t_ok "up with an empty state folder against the hostile remote" idpmake up -v
t_grep "the folder is not taken as a render" 'dev/web is not what .idpmake/keys says: rendered' "$STDERR"
t_ok "nothing was written outside the state folder" test ! -e "$T/pwned"
t_nogrep "no file named pwned anywhere under the distro or its state" 'pwned' <(find "$T/d" "$T/home" -name pwned)

t_done
