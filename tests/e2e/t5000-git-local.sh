#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The GitOps repository on local remotes: the embedded default (STATE/gitops.git),
# a path, a file:// URL; one commit per run whose message lists the changed
# packages and carries an Idpmake-Run: trailer; git.path and git.branch;
# git.author; one file per object; a removed package's folder is removed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# ---- the default remote -----------------------------------------------------
mkdistro d <<'EOF'
idpmake: 1
name: gitlocal
git:
  author: {name: Platform Bot, email: platform-bot@example.org}
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
  old:
    type: manifests
    path: packages/old
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/web/svc.yaml Service web
# two objects in one file
{
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db-one\ndata: {a: "1"}\n---\n'
	printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-two\nstringData: {b: "2"}\n'
} >"$T/two.yaml"
mkdir -p d/packages/db && mv "$T/two.yaml" d/packages/db/two.yaml
mkmanifest d/packages/old/cm.yaml ConfigMap old

bare=$T/d/.idpmake/gitops.git
commits() { git -C "$1" rev-list --count "${2:-main}" 2>/dev/null || echo 0; }

t_ok "up with the default remote" idpmake -C d up
t_eq "STATE/gitops.git is a bare repository" true "$(git -C "$bare" rev-parse --is-bare-repository 2>&1)"
t_eq "one commit on main" 1 "$(commits "$bare")"
git -C "$bare" ls-tree -r --name-only main | grep -v "^\.idpmake/" >"$T/files1"
t_eq "one file per object, KIND.NAME.yaml in \${cluster}/\${package}" \
	"in-cluster/db/configmap.db-one.yaml in-cluster/db/secret.db-two.yaml in-cluster/old/configmap.old.yaml in-cluster/web/deployment.web.yaml in-cluster/web/service.web.yaml" \
	"$(sort "$T/files1" | tr '\n' ' ' | sed 's/ $//')"
git -C "$bare" show main:in-cluster/web/deployment.web.yaml >"$T/deploy.yaml" 2>&1
t_grep "the object is there" '^kind: Deployment' "$T/deploy.yaml"
if python3 -c 'import yaml' 2>/dev/null; then
	t_ok "each file is one YAML object" python3 - "$bare" <<'EOF'
import subprocess, sys, yaml
bare = sys.argv[1]
names = subprocess.check_output(["git", "-C", bare, "ls-tree", "-r", "--name-only", "main"], text=True).split()
names = [n for n in names if not n.startswith(".idpmake/")]
for n in names:
    text = subprocess.check_output(["git", "-C", bare, "show", "main:" + n], text=True)
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert len(docs) == 1, (n, docs)
    assert docs[0]["metadata"]["name"] in n, n
EOF
else
	t_skip "PyYAML missing: no check that each file is one YAML object (python3-yaml)"
fi
git -C "$bare" log -1 --format=%B main >"$T/msg1"
t_grep "the message lists web" 'web' "$T/msg1"
t_grep "the message lists db" '(^|[^a-z])db([^a-z]|$)' "$T/msg1"
t_grep "the message has an Idpmake-Run: trailer" '^Idpmake-Run: [^ ]+' "$T/msg1"
t_ok "git parses it as a trailer" sh -c "git -C '$bare' log -1 --format='%(trailers:key=Idpmake-Run,valueonly)' main | grep -q ."
t_eq "the author is git.author" "Platform Bot <platform-bot@example.org>" "$(git -C "$bare" log -1 --format='%an <%ae>' main)"

t_ok "a second up" idpmake -C d up
t_eq "makes no commit" 1 "$(commits "$bare")"

# one package changed: one commit naming it alone
sed -i 's/"2"/"3"/' d/packages/db/two.yaml
t_ok "up after changing db" idpmake -C d up
t_eq "one more commit" 2 "$(commits "$bare")"
git -C "$bare" log -1 --format=%B main >"$T/msg2"
t_grep "naming db" '(^|[^a-z])db([^a-z]|$)' "$T/msg2"
t_nogrep "not web" 'web' "$T/msg2"
t_grep "with its own trailer" '^Idpmake-Run: ' "$T/msg2"
t_ok "a different run id" test "$(grep '^Idpmake-Run:' "$T/msg1")" != "$(grep '^Idpmake-Run:' "$T/msg2")"
t_eq "the commit changes the Secret only" in-cluster/db/secret.db-two.yaml "$(git -C "$bare" diff --name-only main~1 main -- . ":!.idpmake")"

# a package removed from the distro: its folder goes in the next commit
python3 - d/distro.yaml <<'EOF'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = lines.index("  old:")
del lines[i:i + 4]
open(p, "w").write("\n".join(lines))
EOF
t_nogrep "(the fixture no longer has old)" '^  old:' d/distro.yaml
t_ok "up after removing the package old" idpmake -C d up
t_eq "one more commit" 3 "$(commits "$bare")"
t_fail "old's folder is gone" git -C "$bare" cat-file -e main:in-cluster/old
t_ok "the other folders stay" git -C "$bare" cat-file -e main:in-cluster/web/deployment.web.yaml
git -C "$bare" log -1 --format=%B main >"$T/msg3"
t_grep "the message names old" 'old' "$T/msg3"
t_ok "a further up is a no-op" idpmake -C d up
t_eq "no commit" 3 "$(commits "$bare")"

# ---- a path remote, with existing content ------------------------------------------
remote=$T/remotes/path.git
git init -q --bare -b main "$remote"
git clone -q "$remote" "$T/seed" 2>/dev/null
echo "owned by someone else" >"$T/seed/README.md"
git -C "$T/seed" add README.md && git -C "$T/seed" commit -q -m seed && git -C "$T/seed" push -q origin main
seed=$(git -C "$remote" rev-parse main)
mkdistro p <<EOF
idpmake: 1
name: pathremote
git:
  remote: $remote
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF
mkmanifest p/packages/web/deploy.yaml Deployment web
t_ok "up with git.remote a path" idpmake -C p up
t_eq "one commit on top of the remote's" 2 "$(commits "$remote")"
t_eq "its parent is the remote's head" "$seed" "$(git -C "$remote" rev-parse main~1 2>&1)"
t_ok "the object is there" git -C "$remote" cat-file -e main:in-cluster/web/deployment.web.yaml
t_eq "the remote's other files stay" "owned by someone else" "$(git -C "$remote" show main:README.md 2>&1)"
t_eq "the default author is idpmake <idpmake@localhost>" "idpmake <idpmake@localhost>" \
	"$(git -C "$remote" log -1 --format='%an <%ae>' main)"
t_ok "no embedded remote is made" test ! -d p/.idpmake/gitops.git

# ---- a file:// remote ---------------------------------------------------------------
fremote=$T/remotes/file.git
git init -q --bare -b main "$fremote"
mkdistro f <<EOF
idpmake: 1
name: fileremote
git:
  remote: file://$fremote
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF
mkmanifest f/packages/web/deploy.yaml Deployment web
t_ok "up with a file:// remote into an empty repository" idpmake -C f up
t_eq "one commit" 1 "$(commits "$fremote")"
t_ok "the object is there" git -C "$fremote" cat-file -e main:in-cluster/web/deployment.web.yaml
mkmanifest f/packages/web/svc.yaml Service web
mkmanifest "$T/dup-a.yaml" ConfigMap same team-a
mkmanifest "$T/dup-b.yaml" ConfigMap same team-b
{ cat "$T/dup-a.yaml"; echo ---; cat "$T/dup-b.yaml"; } >f/packages/web/dup.yaml
t_ok "a second change" idpmake -C f up
t_eq "two commits" 2 "$(commits "$fremote")"
t_ok "the new object is there" git -C "$fremote" cat-file -e main:in-cluster/web/service.web.yaml
t_ok "two objects whose names collide: NAMESPACE.KIND.NAME.yaml (team-a)" \
	git -C "$fremote" cat-file -e main:in-cluster/web/team-a.configmap.same.yaml
t_ok "and team-b" git -C "$fremote" cat-file -e main:in-cluster/web/team-b.configmap.same.yaml

# ---- git.path and git.branch, two clusters -----------------------------------------------
bremote=$T/remotes/branch.git
git init -q --bare -b main "$bremote"
git -C "$T/seed" push -q "$bremote" main
mkdistro b <<EOF
idpmake: 1
name: branches
git:
  remote: $bremote
  branch: prod
  path: "envs/\${cluster}/\${package}"
clusters:
  east: {server: https://east.example}
  west: {server: https://west.example}
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF
mkmanifest b/packages/web/deploy.yaml Deployment web
t_ok "up with git.branch prod and git.path envs/\${cluster}/\${package}" idpmake -C b up
t_ok "branch prod exists" git -C "$bremote" rev-parse --verify -q prod
t_ok "with the east cluster's folder" git -C "$bremote" cat-file -e prod:envs/east/web/deployment.web.yaml
t_ok "and the west cluster's" git -C "$bremote" cat-file -e prod:envs/west/web/deployment.web.yaml
t_fail "nothing at the default path" git -C "$bremote" cat-file -e prod:east
t_eq "main is untouched" "$seed" "$(git -C "$bremote" rev-parse main)"
t_eq "one commit for both clusters" 1 "$(git -C "$bremote" rev-list --count main..prod 2>&1)"

t_done
