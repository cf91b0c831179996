#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A damaged state.db (truncated, overwritten with garbage, not idpmake's) or
# one locked by another process: a clear error that names the file and the
# way out, never a crash (t_exit checks the status, so a signal fails), and
# nothing pushed.  `forget --all` removes the state without opening it (under
# the run lock), and the next up converges: the remote already holds what was
# pushed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: faults
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

db=$T/d/.idpmake/state.db
bare=$T/d/.idpmake/gitops.git
commits() { git -C "$bare" rev-list --count main; }
im() { idpmake -C "$T/d" "$@"; }

t_ok "first up" im up
cp "$db" "$T/good.db"
n0=$(commits)

# restore the good state, then damage it as $1 says
damage() {
	rm -f "$db" "$db-wal" "$db-shm"
	cp "$T/good.db" "$db"
	case $1 in
	truncated-header) truncate -s 1000 "$db" ;;
	truncated-half) truncate -s $(($(stat -c %s "$T/good.db") / 2)) "$db" ;;
	garbage) head -c 40000 /dev/urandom >"$db" ;;
	garbage-pages) dd if=/dev/urandom of="$db" bs=4096 seek=2 count=4 conv=notrunc 2>/dev/null ;;
	text) printf 'this is not a database\n' >"$db" ;;
	foreign) rm -f "$db" && python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE t(x)"); c.execute("PRAGMA user_version = 1"); c.commit()' "$db" ;;
	esac
}

# a change to push, so that a run that wrongly went on would make a commit
mkmanifest d/packages/web/cm1.yaml ConfigMap web1
for kind in truncated-header truncated-half garbage garbage-pages text foreign; do
	for cmd in up status plan; do
		damage $kind
		t_exit 2 "$kind: $cmd fails with the usage/state exit status" im $cmd
		t_grep "$kind: $cmd names the file" "error: state .*\.idpmake/state\.db" "$STDERR"
		t_grep "$kind: $cmd says the way out" "damaged: 'idpmake forget --all'.* the next up redoes every step" "$STDERR"
	done
	t_eq "$kind: nothing pushed" "$n0" "$(commits)"
done

# ---- forget --all ----------------------------------------------------------
damage garbage
t_exit 2 "forget --all takes no targets" im forget --all web
t_eq "... and removed nothing" yes "$([ -f "$db" ] && echo yes)"
t_exit 2 "--all is forget's alone" im up --all
# a run holds the lock: forget --all refuses, naming the holder
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close(); time.sleep(30)' \
	"$T/d/.idpmake/lock" "$T/held" &
holder=$!
t_wait_for 10 test -f "$T/held" || echo "# the lock was not taken"
t_fail "forget --all while another run holds the lock" im forget --all
t_grep "... names the lock" "holds .*\.idpmake/lock" "$STDERR"
t_eq "... and removed nothing" yes "$([ -f "$db" ] && echo yes)"
kill "$holder"
wait "$holder" 2>/dev/null
t_ok "forget --all on a damaged state" im forget --all
t_grep "... says what it removed" "removed .*\.idpmake/state\.db" "$STDOUT"
t_eq "state.db is gone" no "$([ -e "$db" ] && echo yes || echo no)"
t_ok "forget --all again: nothing to forget" im forget --all
t_grep "... says so" "nothing to forget" "$STDOUT"
t_ok "up after forget --all" im up
t_eq "it pushed the edit in one commit" "$((n0 + 1))" "$(commits)"
t_exit 0 "plan has nothing to do" im plan --exit-code
# forget --all needs no distro: it works when the manifest is broken too
cp d/distro.yaml "$T/distro.keep"
echo 'packages: [' >d/distro.yaml
t_ok "forget --all with a broken distro.yaml" im forget --all
cp "$T/distro.keep" d/distro.yaml
t_ok "up after that" im up
t_eq "no new commit: the remote holds it already" "$((n0 + 1))" "$(commits)"

# ---- locked by another process ----------------------------------------------
# A sqlite3 writer holds the write lock for 30 s; up waits its busy timeout
# (10 s), then fails naming the file, and does nothing.
cp "$db" "$T/good.db"
mkmanifest d/packages/web/cm2.yaml ConfigMap web2
n1=$(commits)
python3 - "$db" "$T/locked" <<'EOF' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO run(started) VALUES (1)")
open(sys.argv[2], "w").close()
time.sleep(30)
EOF
locker=$!
t_wait_for 10 test -f "$T/locked" || echo "# the locker did not start"
t_exit 1 "up while another process holds a lock on state.db" im up
t_grep "... names the file" "error: state .*\.idpmake/state\.db: .*database is locked" "$STDERR"
t_grep "... and the way out" "another process .* holds a lock on it; end that process" "$STDERR"
t_eq "... and pushed nothing" "$n1" "$(commits)"
kill "$locker"
wait "$locker" 2>/dev/null
t_ok "up once the lock is gone" im up
t_eq "... pushes the edit" "$((n1 + 1))" "$(commits)"
t_exit 0 "plan has nothing to do" im plan --exit-code

t_done
