#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# What children inherit: a hook and a rule-file renderer see descriptors 0,
# 1 and 2 and no other (not one idpmake inherited, not another step's log),
# an allowlisted environment without ARGOCD_AUTH_TOKEN, IDPMAKE_GIT_TOKEN or
# any other variable idpmake was given; a hook gets a credential only when
# its `env` names it; no token is on any process's command line.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

tok_argo=argo-$(random_string)
tok_git=git-$(random_string)
tok_other=other-$(random_string)
out=$T/out
mkdir -p "$out" bin

# A renderer of our own: lists the descriptors a program it starts has and
# its environment, then prints the package's objects.  ls lists
# /proc/self/fd: its own, where the one it reads the folder through (a
# link to /proc/PID/fd) is dropped below.  (The shell's own /proc/$$/fd
# would show the shell's internal descriptors, close-on-exec.)
cat >bin/dumptool <<'EOF'
#!/bin/sh
case $1 in
--version) echo "dumptool 1.0"; exit 0 ;;
esac
ls -l /proc/self/fd >"$2/render-fds.txt"; :
env >"$2/render-env.txt"
cat "$1"/*.yaml
EOF
chmod +x bin/dumptool
export PATH=$T/bin:$PATH

mkdir -p d/rules d/packages/r d/packages/h
cat >d/rules/dump.yaml <<EOF
rule: dump
command: [dumptool, "\${src}", "$out"]
version: [dumptool, --version]
EOF
mkdistro d <<EOF
idpmake: 1
name: childenv
rules: [rules/dump.yaml]
packages:
  r:
    type: dump
    path: packages/r
  h:
    type: manifests
    path: packages/h
    hooks:
      pre:
        - name: plain
          run: 'ls -l /proc/self/fd >$out/hook-fds.txt; env >$out/hook-env.txt'
EOF
mkmanifest d/packages/r/cm.yaml ConfigMap r
mkmanifest d/packages/h/cm.yaml ConfigMap h

# fd 7, open without close-on-exec in idpmake, as a descriptor from a parent
# or a library would be
t_ok "up, with tokens in the environment and descriptor 7 open" \
	env ARGOCD_AUTH_TOKEN="$tok_argo" IDPMAKE_GIT_TOKEN="$tok_git" SOME_SECRET="$tok_other" \
	"$IDPMAKE" -C d up 7>"$T/extra-fd"

# fds FILE: the descriptors in an `ls -l /proc/self/fd` listing, but ls's own
fds() { grep -v -E -e '-> /proc/[0-9]+/fd$' -e '^total' "$1" | sed -E 's/.* ([0-9]+) -> .*/\1/' | sort -n | tr '\n' ' ' | sed 's/ $//'; }
t_eq "the renderer has descriptors 0 1 2 only" "0 1 2" "$(fds "$out/render-fds.txt")"
t_eq "the hook has descriptors 0 1 2 only" "0 1 2" "$(fds "$out/hook-fds.txt")"
for f in render-env hook-env; do
	t_nogrep "$f: no ARGOCD_AUTH_TOKEN" "ARGOCD_AUTH_TOKEN|$tok_argo" "$out/$f.txt"
	t_nogrep "$f: no IDPMAKE_GIT_TOKEN" "IDPMAKE_GIT_TOKEN|$tok_git" "$out/$f.txt"
	t_nogrep "$f: no variable outside the allowlist" "SOME_SECRET|$tok_other" "$out/$f.txt"
	t_grep "$f: PATH is passed on" "^PATH=$T/bin:" "$out/$f.txt"
	t_grep "$f: HOME is passed on" "^HOME=$HOME\$" "$out/$f.txt"
done
t_grep "the hook still gets its IDPMAKE_ variables" '^IDPMAKE_PACKAGE=h$' "$out/hook-env.txt"

# ---- a hook that names a credential gets it -------------------------------------
cat >>d/distro.yaml <<EOF
        - name: asks
          env: [ARGOCD_AUTH_TOKEN, NOT_SET_ANYWHERE]
          run: 'env >$out/asks-env.txt; printf "%s\n" "\$ARGOCD_AUTH_TOKEN" >$out/tok; for f in /proc/[0-9]*/cmdline; do tr "\\\\0" " " <"\$f"; echo; done >$out/cmdlines.txt; :'
EOF
t_ok "up with a hook that names ARGOCD_AUTH_TOKEN in its env" \
	env ARGOCD_AUTH_TOKEN="$tok_argo" IDPMAKE_GIT_TOKEN="$tok_git" SOME_SECRET="$tok_other" \
	"$IDPMAKE" -C d up
t_grep "a hook with env: [ARGOCD_AUTH_TOKEN] gets it" "^ARGOCD_AUTH_TOKEN=$tok_argo\$" "$out/asks-env.txt"
t_nogrep "and nothing it did not name" "IDPMAKE_GIT_TOKEN|SOME_SECRET" "$out/asks-env.txt"
t_nogrep "a named variable that is not set stays unset" "NOT_SET_ANYWHERE" "$out/asks-env.txt"
t_ok "the hook listed the command lines while it ran" test -s "$out/cmdlines.txt"
t_ok "no process had the token on its command line" \
	sh -c '! grep -F -q -f "$1" "$2"' sh "$out/tok" "$out/cmdlines.txt"

# ---- the hook env key is checked ------------------------------------------------
mkdistro bad <<'EOF'
idpmake: 1
name: badenv
packages:
  h:
    type: manifests
    path: p
    hooks:
      pre:
        - {name: x, run: 'true', env: ['NOT-A-NAME']}
EOF
mkmanifest bad/p/cm.yaml ConfigMap h
t_exit 2 "a hook env entry that is not a variable name is a manifest error" idpmake -C bad validate
t_grep "located" "distro.yaml:[0-9]+:[0-9]+: error: hook env 'NOT-A-NAME'" "$STDERR"

t_done
