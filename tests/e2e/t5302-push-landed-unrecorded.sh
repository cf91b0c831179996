#!/bin/bash
# A run killed after the remote took its push and before the state recorded
# it (state.c invariant 3), then a change back to what the state last
# recorded: the next up must still write the folder, or the remote keeps
# the dead run's content for good while every later run calls it up to
# date (t5300's kill loop found this under ASan).  The kill is exact: the
# real git server's reference-transaction hook (run once the branch moved,
# before the server answers) kills idpmake while it waits for the answer.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_git_server
remote=$(new_remote gitops) || t_bail "new_remote failed"
export IDPMAKE_GIT_USERNAME=$GIT_USER IDPMAKE_GIT_TOKEN=$GIT_PASS
repo=$T/git-srv/repos/gitops.git
# armed by the file "arm": kill -9 the run whose pid is in "pid" once the branch moved
# (reference-transaction "committed": after the update, before the server answers)
cat >"$repo/hooks/reference-transaction" <<EOF
#!/bin/sh
[ "\$1" = committed ] && [ -f "$T/arm" ] || exit 0
rm -f "$T/arm"
for _ in \$(seq 50); do [ -s "$T/pid" ] && break; sleep 0.1; done
python3 -c 'import os, sys; os.killpg(int(open(sys.argv[1]).read()), 9)' "$T/pid"
EOF
chmod +x "$repo/hooks/reference-transaction"

mkdistro d <<EOF
idpmake: 1
name: died
git: {remote: "$remote"}
packages:
  p: {type: manifests, path: packages/p}
  q: {type: manifests, path: packages/q}
EOF
mkmanifest d/packages/p/cm.yaml ConfigMap p
mkmanifest d/packages/q/cm.yaml ConfigMap q
t_ok "first up" idpmake -C d up

mkmanifest d/packages/p/extra.yaml ConfigMap extra
: >"$T/pid"
touch "$T/arm"
setsid "$IDPMAKE" -C d up >"$T/killed.out" 2>&1 &
pid=$!
echo "$pid" >"$T/pid"
wait "$pid"
t_eq "the run was killed (kill -9)" 137 "$?"
t_ok "after the remote took its push" git --git-dir="$repo" cat-file -e main:in-cluster/p/configmap.extra.yaml

rm d/packages/p/extra.yaml	# back to what the state recorded as pushed before the dead run
t_ok "up after the death" idpmake -C d up
t_fail "the remote no longer holds the dead run's object" git --git-dir="$repo" cat-file -e main:in-cluster/p/configmap.extra.yaml
t_ok "a further up" idpmake -C d up
t_nogrep "pushes nothing" 'commit pushed' "$STDOUT"
t_ok "render -o" idpmake -C d render -o "$T/rendered"
mkdir -p "$T/remote" && git --git-dir="$repo" archive main | tar -x -C "$T/remote"
t_ok "the remote holds exactly the render" diff -r -x .idpmake -x .idpmake-keys "$T/rendered" "$T/remote"

# a push the server refuses, then the package removed: its folder is still idpmake's, and goes
printf '#!/bin/sh\necho refused by the test >&2\nexit 1\n' >"$repo/hooks/pre-receive"
chmod +x "$repo/hooks/pre-receive"
printf '  b: "1"\n' >>d/packages/p/cm.yaml
t_fail "up refused by the server" idpmake -C d up
rm "$repo/hooks/pre-receive"
python3 -c 'import re, sys; t = open(sys.argv[1]).read(); open(sys.argv[1], "w").write(re.sub(r"  p: .*\n", "", t))' d/distro.yaml
t_ok "up without package p" idpmake -C d up
t_fail "its folder is removed from the remote" git --git-dir="$repo" cat-file -e main:in-cluster/p/configmap.p.yaml
t_ok "q's is still there" git --git-dir="$repo" cat-file -e main:in-cluster/q/configmap.q.yaml
t_done
