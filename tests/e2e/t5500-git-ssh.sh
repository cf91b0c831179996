#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The GitOps repository over ssh, against a real sshd on 127.0.0.1 (started
# here, with its own host key and authorized_keys) and a real ssh-agent:
# ssh://user@127.0.0.1:PORT/path pushes with the agent's key, a change pushes
# one more commit; an empty agent, a key the server does not accept, no
# SSH_AUTH_SOCK or a dead one each fail (exit 1, never a hang) saying what to
# fix, and push nothing; a URL without a user takes IDPMAKE_GIT_USERNAME; the
# scp-like user@127.0.0.1:path (port 22 only), against an sshd on port 22 of a
# network namespace of its own (unshare --net), so the test takes no port 22
# of the host; skipped (t_skip) where namespaces are not allowed.
#
# Nothing is written under /run: sshd run as root wants its privilege
# separation folder /run/sshd, and when that is absent sshd runs in a mount
# namespace of its own with a tmpfs on /run.
#
# Host keys: libgit2 1.5.1 (libssh2) checks the server's key against
# $HOME/.ssh/known_hosts (only that file: not /etc/ssh/ssh_known_hosts, no
# ~/.ssh/config) and idpmake sets no certificate_check callback, so an
# unknown or changed host key fails with "invalid or unknown remote ssh
# hostkey" (GIT_ECERTIFICATE) before any authentication, and nothing adds the
# key by itself. Entries may be [host]:port, plain host, or hashed (ssh-keygen -H).
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sshd=/usr/sbin/sshd
[ -x "$sshd" ] || t_bail "$sshd missing: run ./configure --install-deps (openssh-server)"
for c in ssh-keygen ssh-agent ssh-add; do
	command -v "$c" >/dev/null || t_bail "$c missing: run ./configure --install-deps (openssh-client)"
done
user=$(id -un)

# sshd_ns: the wrapper that runs sshd with /run/sshd (see above); empty when
# sshd needs none.
need_privsep=0
if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
	unshare --mount --propagation private true 2>/dev/null ||
		t_skip_rest "sshd as root needs /run/sshd, which is absent, and unshare --mount is not allowed here"
	need_privsep=1
fi

# ---- keys ----------------------------------------------------------------------
mkdir -p "$T/sshd" "$HOME/.ssh"
ssh-keygen -q -t ed25519 -N '' -C host -f "$T/sshd/host_ed25519" || t_bail "ssh-keygen (host key) failed"
ssh-keygen -q -t ed25519 -N '' -C user -f "$T/user_ed25519" || t_bail "ssh-keygen (user key) failed"
ssh-keygen -q -t ed25519 -N '' -C stranger -f "$T/stranger_ed25519" || t_bail "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -C impostor -f "$T/impostor_ed25519" || t_bail "ssh-keygen failed"
cp "$T/user_ed25519.pub" "$T/sshd/authorized_keys"
read -r hk_type hk_data _ <"$T/sshd/host_ed25519.pub"
read -r imp_type imp_data _ <"$T/impostor_ed25519.pub"

# start_sshd NAME PORT [netns]: sshd -D on 127.0.0.1:PORT (stopped on exit),
# logging to $T/sshd/NAME.log; with netns, in a network namespace of its own
# (enter it with `nsenter -t $SSHD_PID -n`). Sets SSHD_PID. Returns 1, the log
# in $T/sshd/NAME.log, if it does not listen.
start_sshd() {
	local name=$1 port=$2 conf=$T/sshd/$1.conf log=$T/sshd/$1.log pid
	local wrap=() setup=:
	cat >"$conf" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey "$T/sshd/host_ed25519"
AuthorizedKeysFile "$T/sshd/authorized_keys"
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PidFile "$T/sshd/$name.pid"
SetEnv GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
EOF
	if [ "$need_privsep" = 1 ]; then
		wrap=(--mount --propagation private)
		setup='mount -t tmpfs tmpfs /run && mkdir /run/sshd'
	fi
	if [ "${3:-}" = netns ]; then
		wrap+=(--net)
		setup="ip link set lo up && $setup"
	fi
	: >"$log"
	if [ ${#wrap[@]} = 0 ]; then
		"$sshd" -D -e -f "$conf" >>"$log" 2>&1 &
	else
		# unshare and sh exec: $! is sshd's pid
		unshare "${wrap[@]}" sh -c "$setup"' && exec "$@"' sh "$sshd" -D -e -f "$conf" >>"$log" 2>&1 &
	fi
	pid=$!
	t_pids="$t_pids $pid"
	SSHD_PID=$pid
	for _ in $(seq 100); do
		grep -q 'Server listening on' "$log" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	t_pids=${t_pids/ $pid/}
	return 1
}

for _ in 1 2 3 4 5; do
	port=$(free_port) || t_bail "cannot pick a free port (python3 missing?)"
	start_sshd main "$port" && break
	grep -q -i 'address already in use' "$T/sshd/main.log" ||
		{ sed 's/^/# /' "$T/sshd/main.log"; t_bail "sshd did not start on port $port (log above)"; }
	port=
done
[ -n "$port" ] || t_bail "sshd: no free port after 5 tries"
sshd_log=$T/sshd/main.log

# the agent, stopped on exit with the servers
eval "$(ssh-agent -s)" >/dev/null || t_bail "ssh-agent failed"
t_pids="$t_pids $SSH_AGENT_PID"
ssh-add -q "$T/user_ed25519" 2>/dev/null || t_bail "ssh-add failed"

srv=$T/srv/gitops.git
git init -q --bare -b main "$srv" || t_bail "git init --bare failed"
url=ssh://$user@127.0.0.1:$port$srv
commits() { git -C "${1:-$srv}" rev-list --count main 2>/dev/null || echo 0; }
accepted() { grep -c "Accepted publickey for $user" "${1:-$sshd_log}"; }

mkdistro d <<EOF
idpmake: 1
name: gitssh
git:
  remote: "$url"
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db

# up [ENV-ARGS...]: one run, bounded in time: a hang exits 124, which no check expects.
up() { env "$@" timeout 60 "$IDPMAKE" -C "$T/d" up; }
# change N: a new value in db's ConfigMap, so the next up has something to push.
change() { printf '  n%s: "%s"\n' "$1" "$1" >>d/packages/db/cm.yaml; }
# db_has KEY VALUE: the remote's db ConfigMap has KEY: VALUE (quoted either way)
db_has() {
	git -C "$srv" show main:in-cluster/db/configmap.db.yaml | grep -Eq "^  $1: [\"']?$2[\"']?\$"
}

# ---- host keys: libgit2 checks ~/.ssh/known_hosts ------------------------------------
t_exit 1 "up with no ~/.ssh/known_hosts fails (exit 1)" up
t_grep "the host key is unknown" 'invalid or unknown remote ssh hostkey' "$OUTPUT"
t_grep "idpmake says to add it to ~/.ssh/known_hosts" "add the server's host key to ~/.ssh/known_hosts" "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"
t_eq "no key was offered: the check comes before authentication" 0 "$(accepted)"
t_ok "nothing added the host key by itself" test ! -e "$HOME/.ssh/known_hosts"

printf '[127.0.0.1]:%s %s %s\n' "$port" "$imp_type" "$imp_data" >"$HOME/.ssh/known_hosts"
t_exit 1 "up with another key for [127.0.0.1]:$port in known_hosts fails (exit 1)" up
t_grep "the same message" "invalid or unknown remote ssh hostkey.*known_hosts" "$OUTPUT"
t_eq "nothing reached the remote" 0 "$(commits)"

printf '[127.0.0.1]:%s %s %s\n' "$port" "$hk_type" "$hk_data" >"$HOME/.ssh/known_hosts"
# the git CLI (OpenSSH) with the same files: if this fails, the setup is wrong, not idpmake
t_ok "setup: git ls-remote over OpenSSH reaches the server" env \
	GIT_SSH_COMMAND="ssh -F /dev/null -o BatchMode=yes -o UserKnownHostsFile=$HOME/.ssh/known_hosts" \
	timeout 60 git ls-remote "$url"

# ---- the right host key and the agent's key: it pushes ----------------------------------
t_ok "up over ssh:// with the key in ssh-agent" up
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
t_eq "the remote has one commit" 1 "$(commits)"
t_ok "with web's object" git -C "$srv" cat-file -e main:in-cluster/web/deployment.web.yaml
t_ok "and db's" git -C "$srv" cat-file -e main:in-cluster/db/configmap.db.yaml
t_ok "sshd accepted the agent's key" test "$(accepted)" -ge 1
first=$(git -C "$srv" rev-parse main)

t_ok "a no-op up" up
t_grep "renders nothing" '^idpmake: 0 rendered' "$STDOUT"
t_eq "makes no commit" 1 "$(commits)"

# hashed entries work too
ssh-keygen -q -H -f "$HOME/.ssh/known_hosts" >/dev/null 2>&1
rm -f "$HOME/.ssh/known_hosts.old"
t_nogrep "setup: known_hosts is hashed" '^\[127' "$HOME/.ssh/known_hosts"
change 1
t_ok "up after a change, with a hashed known_hosts" up
t_grep "pushes one commit" '1 commit pushed' "$STDOUT"
t_eq "the remote has one more commit" 2 "$(commits)"
t_eq "on top of the first" "$first" "$(git -C "$srv" rev-parse main~1 2>&1)"
t_ok "the db object has the change" db_has n1 1

# ---- agent problems: exit 1, the reason, nothing pushed, no hang -------------------------
change 2
ssh-add -D -q 2>/dev/null
t_eq "setup: the agent holds no key" 1 "$(ssh-add -l >/dev/null 2>&1; echo $?)"
t_exit 1 "up with the agent emptied fails (exit 1)" up
t_grep "saying ssh-agent offered no key the server accepts" \
	'ssh authentication failed: ssh-agent offered no key the server accepts \(add the key with ssh-add; check SSH_AUTH_SOCK\)' "$OUTPUT"
t_eq "nothing reached the remote" 2 "$(commits)"

ssh-add -q "$T/stranger_ed25519" 2>/dev/null
t_exit 1 "up with only a key the server does not know fails (exit 1)" up
t_grep "with the same reason" 'ssh-agent offered no key the server accepts' "$OUTPUT"
t_eq "nothing reached the remote" 2 "$(commits)"

ssh-add -q "$T/user_ed25519" 2>/dev/null
t_exit 1 "up with SSH_AUTH_SOCK unset fails (exit 1)" up -u SSH_AUTH_SOCK
t_grep "saying SSH_AUTH_SOCK is not set" 'is ssh-agent running\? SSH_AUTH_SOCK is not set' "$OUTPUT"
t_eq "nothing reached the remote" 2 "$(commits)"

t_exit 1 "up with SSH_AUTH_SOCK naming no socket fails (exit 1)" up SSH_AUTH_SOCK="$T/no-agent.sock"
t_grep "naming the agent" 'failed connecting with agent' "$OUTPUT"
t_eq "nothing reached the remote" 2 "$(commits)"

t_ok "up with the stranger's and the user's keys in the agent" up
t_eq "the pending change arrives" 3 "$(commits)"
t_ok "the db object has it" db_has n2 2

# ---- no user in the URL: IDPMAKE_GIT_USERNAME, else 'git' -------------------------------
sed -i "s#remote: .*#remote: \"ssh://127.0.0.1:$port$srv\"#" d/distro.yaml
change 3
t_exit 1 "a URL without a user and no IDPMAKE_GIT_USERNAME logs in as 'git', and fails (exit 1)" up
t_grep "with the ssh-agent reason" 'ssh-agent offered no key the server accepts' "$OUTPUT"
t_grep "sshd saw the user 'git'" 'Invalid user git from 127\.0\.0\.1' "$sshd_log"
t_eq "nothing reached the remote" 3 "$(commits)"
t_ok "with IDPMAKE_GIT_USERNAME=$user it pushes" up IDPMAKE_GIT_USERNAME="$user"
t_eq "the remote has the change" 4 "$(commits)"
t_ok "the db object has it" db_has n3 3

# ---- the scp-like form user@host:path: port 22 only --------------------------------------
# Its sshd listens on port 22 of a network namespace of its own; idpmake joins
# that namespace (nsenter) to reach it.
if ! unshare --net true 2>/dev/null || ! command -v ip >/dev/null || ! command -v nsenter >/dev/null; then
	t_skip "the scp-like form $user@127.0.0.1:path needs an sshd on port 22 of a network namespace (unshare --net, ip, nsenter), not available here"
elif ! start_sshd port22 22 netns; then
	sed 's/^/# /' "$T/sshd/port22.log"
	t_skip "the scp-like form $user@127.0.0.1:path: sshd did not start on 127.0.0.1:22 of its namespace (log above)"
else
	ns22=$SSHD_PID
	scp=$T/srv/scp.git
	git init -q --bare -b main "$scp" || t_bail "git init --bare failed"
	mkdistro d2 <<EOF
idpmake: 1
name: gitscp
git:
  remote: "$user@127.0.0.1:$scp"
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
EOF
	mkmanifest d2/packages/web/cm.yaml ConfigMap web
	up2() { nsenter -t "$ns22" -n env "$@" timeout 60 "$IDPMAKE" -C "$T/d2" up; }
	t_exit 1 "scp-like: port 22 has no known_hosts entry yet: fails (exit 1)" up2
	t_grep "the host key is unknown" 'invalid or unknown remote ssh hostkey' "$OUTPUT"
	printf '127.0.0.1 %s %s\n' "$hk_type" "$hk_data" >>"$HOME/.ssh/known_hosts"
	t_ok "scp-like $user@127.0.0.1:path pushes" up2
	t_grep "one commit" '1 commit pushed' "$STDOUT"
	t_eq "the remote has one commit" 1 "$(commits "$scp")"
	t_ok "with web's object" git -C "$scp" cat-file -e main:in-cluster/web/configmap.web.yaml
	t_ok "through the sshd on port 22" test "$(accepted "$T/sshd/port22.log")" -ge 1
	ssh-add -D -q 2>/dev/null
	printf '  extra: "yes"\n' >>d2/packages/web/cm.yaml
	t_exit 1 "scp-like with the agent emptied fails (exit 1)" up2
	t_grep "saying ssh-agent offered no key the server accepts" 'ssh-agent offered no key the server accepts' "$OUTPUT"
	t_eq "nothing reached the remote" 1 "$(commits "$scp")"
fi

t_done
