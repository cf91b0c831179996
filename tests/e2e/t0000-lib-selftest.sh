#!/bin/bash
# The helper library itself: the checks, the fixtures, the git server with basic
# auth, and the Argo CD emulator when it is there.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# ---- the checks --------------------------------------------------------
t_ok "t_ok passes a command that exits 0" true
t_fail "t_fail passes a command that exits non-zero" false
t_exit 3 "t_exit matches the exit status" sh -c 'exit 3'
t_ok "a command's stdout and stderr are kept" sh -c 'echo out; echo err >&2'
t_eq "stdout in \$STDOUT" out "$(cat "$STDOUT")"
t_eq "stderr in \$STDERR" err "$(cat "$STDERR")"
t_grep "both in \$OUTPUT" '^err$' "$OUTPUT"
t_nogrep "t_nogrep passes when nothing matches" '^nothing$' "$OUTPUT"

# A failing check prints "not ok" and the output, and counts as a failure:
# run in a subshell so this script's own count is untouched.
(
	# A fresh count for the inner checks.
	# shellcheck disable=SC2034
	t_count=0 t_passed=0 t_failed=0 t_skipped=0
	t_ok "inner" sh -c 'echo inner-output; exit 1'
	t_fail "inner crash" sh -c 'kill -SEGV $$' 2>/dev/null
	t_exit 2 "inner exit" true
	t_eq "inner eq" a b
	t_grep "inner grep" nope "$OUTPUT"
	echo x >"$T/x"
	t_nogrep "inner nogrep" x "$T/x"
	t_fail "inner fail" true
	t_nogrep "inner nogrep, no such file" '^nothing$' "$T/no-such-file"
	t_nogrep "inner nogrep, a match in a pipe" '^y$' <(echo y)
	t_nogrep "inner nogrep, a bad regex" '(' "$T/x"
	t_nostring "inner nostring, a match" 'x' "$T/x"
	t_nostring "inner nostring, no such path" 'nothing' "$T/x" "$T/no-such-dir"
	t_skip "inner skip"
	emu=http://127.0.0.1:1/_emu
	emu_post fault '{"app": "a"}'
	t_done
) >"$T/inner.out" 2>&1
t_eq "a subshell with failing checks exits 1" 1 $?
t_grep "a failing t_ok says not ok" '^not ok 1 - inner$' "$T/inner.out"
t_grep "and shows the command's output" '^# .*inner-output' "$T/inner.out"
t_grep "t_fail refuses a crash" '^not ok 2 - inner crash$' "$T/inner.out"
t_grep "t_nogrep fails on a missing file" '^not ok 8 - inner nogrep, no such file$' "$T/inner.out"
t_grep "t_nogrep reads a <(...) pipe and fails on its match" '^not ok 9 - inner nogrep, a match in a pipe$' "$T/inner.out"
t_grep "t_nogrep fails when grep fails (exit 2)" '^not ok 10 - inner nogrep, a bad regex$' "$T/inner.out"
t_grep "t_nostring fails on a match" '^not ok 11 - inner nostring, a match$' "$T/inner.out"
t_grep "t_nostring fails on a missing path" '^not ok 12 - inner nostring, no such path$' "$T/inner.out"
t_grep "t_skip is shown as a skip" '^ok 13 # SKIP inner skip$' "$T/inner.out"
t_grep "an emu_post the emulator did not take is a failure" '^not ok 14 - the emulator takes POST fault$' "$T/inner.out"
t_grep "t_done counts the failures and the skip" '^# 0 passed, 13 failed, 1 skipped$' "$T/inner.out"
t_nogrep "t_nogrep passes on a pipe without a match" '^y$' <(echo x)
t_nostring "t_nostring passes on a folder without the string" 'no-such-string' "$T/home"
t_ok "t_wait_for returns once the condition holds" t_wait_for 5 test -e "$T/x"
t_fail "t_wait_for gives up after its timeout" t_wait_for 1 test -e "$T/no-such-file"
(sleep 0.3; touch "$T/later") &
t_ok "t_wait_for waits for a condition that comes true later" t_wait_for 10 test -e "$T/later"
wait
t_eq "the scratch folder is the current directory" "$T" "$PWD"
t_eq "HOME is inside the scratch folder" "$T/home" "$HOME"

# ---- fixtures ----------------------------------------------------------
mkdistro d <<'EOF'
idpmake: 1
name: selftest
EOF
t_grep "mkdistro writes distro.yaml" '^name: selftest$' d/distro.yaml
mkmanifest d/packages/web/deploy.yaml Deployment web apps
t_grep "mkmanifest sets apiVersion" '^apiVersion: apps/v1$' d/packages/web/deploy.yaml
t_grep "mkmanifest sets the name" '^  name: web$' d/packages/web/deploy.yaml
t_grep "mkmanifest sets the namespace" '^  namespace: apps$' d/packages/web/deploy.yaml
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
	t_ok "the manifest is YAML" python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["kind"] == "Deployment"' d/packages/web/deploy.yaml
else
	t_skip "PyYAML missing: the manifest is not parsed (python3-yaml)"
fi

# ---- the git server ----------------------------------------------------
start_git_server
t_ok "GIT_HTTP_BASE is on loopback" grep -Eq '^http://127\.0\.0\.1:[0-9]+/git$' <<<"$GIT_HTTP_BASE"
url=$(new_remote demo)
t_eq "new_remote prints the URL" "$GIT_HTTP_BASE/demo.git" "$url"
t_eq "anonymous access is refused with 401" 401 "$(http_code "$url/info/refs?service=git-upload-pack")"
t_eq "the right password is accepted" 200 \
	"$(http_code "$url/info/refs?service=git-upload-pack" -u "$GIT_USER:$GIT_PASS")"

t_ok "clone the empty remote with the credentials in the URL" git clone -q "$(authurl "$url")" work
echo hello >work/README
git -C work add README
git -C work commit -q -m "first commit"
t_ok "push a commit over HTTP" git -C work push -q origin main
t_eq "the remote has the commit" "$(git -C work rev-parse HEAD)" \
	"$(git -C "$T/git-srv/repos/demo.git" rev-parse main)"
t_ok "a second clone sees it" git clone -q "$(authurl "$url")" work2
t_eq "with the same content" hello "$(cat work2/README)"

bad=${url/:\/\//://$GIT_USER:wrong@}
t_fail "a wrong password is refused" git ls-remote "$bad"
t_grep "with 'Authentication failed'" 'Authentication failed' "$OUTPUT"
t_eq "and 401" 401 "$(http_code "$url/info/refs?service=git-upload-pack" -u "$GIT_USER:wrong")"
t_fail "a push with a wrong password is refused" git -C work push "$bad" main:other

# ---- ports: held from the moment they are chosen ---------------------------
# A port chosen free, closed, and bound later by a server can be taken in
# between by a server of another script running at once (run.sh runs two,
# `ninja test` four): the script then talks to that server. The servers get
# their socket from listen_exec, or bind port 0 and say which they got.
binds() {	# binds PORT: another process can bind 127.0.0.1:PORT now
	python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}
t_ok "no script picks a port for a server to bind later (free_port: sshd in t5500 alone)" \
	sh -c '! grep -n -e free_port -e "print(s.getsockname()\[1\])" "$1"/t[0-9]*.sh | grep -v -e "^$1/t5500-" -e "^$1/t0000-"' sh "$top/tests/e2e"
cat >"$T/held.conf.in" <<'EOF'
port @PORT@
EOF
listen_exec "$T/held.port" "$T/held.conf.in" "$T/held.conf" \
	python3 -c 'import os, socket, time
s = socket.socket(fileno=3)
assert os.environ["LISTEN_PID"] == str(os.getpid()) and os.environ["LISTEN_FDS"] == "1"
c, _ = s.accept(); c.sendall(b"held %d\n" % s.getsockname()[1]); c.close(); time.sleep(30)' &
held_pid=$!
t_pids="$t_pids $held_pid"
held=$(read_port "$T/held.port" "$held_pid")
t_ok "listen_exec says the port" test -n "$held"
t_eq "... writes it into the configuration" "port $held" "$(cat "$T/held.conf")"
t_fail "... and holds it: another process cannot bind it" binds "$held"
t_eq "... the command it runs gets the listening socket as fd 3" "held $held" \
	"$(python3 -c 'import socket, sys; print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).makefile().readline().strip())' "$held")"
dead=
dead_port dead
t_ok "dead_port sets a port" test -n "$dead"
t_fail "... that refuses connections" python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)' "$dead"
t_fail "... and that another process cannot bind" binds "$dead"

# ---- the Argo CD emulator, once it exists --------------------------------
if [ -f "$top/tests/argocd-emu/emulator.py" ]; then
	# shellcheck disable=SC2119
	start_argocd_emulator
	t_ok "ARGOCD_SERVER is on loopback" grep -Eq '^127\.0\.0\.1:[0-9]+$' <<<"$ARGOCD_SERVER"
	t_eq "ARGOCD_OPTS is --plaintext" --plaintext "$ARGOCD_OPTS"
	t_ok "the emulator answers HTTP" test "$(http_code "http://$ARGOCD_SERVER/api/version")" != 000
	emu_post reset '{}'
	t_eq "emu_post reaches the emulator (returns 0)" 0 "$?"
else
	t_skip "tests/argocd-emu/emulator.py not there yet"
fi

t_done
