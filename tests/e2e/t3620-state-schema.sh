#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The state's schema across releases: a state folder written by the previous
# release (tests/fixtures/state-v1, made by idpmake 0.1.0 at edd5931) opens,
# its records are read, and it is migrated forward to this idpmake's schema;
# the next up converges with no new commit.  A state from a newer idpmake is
# refused, naming both versions, and left as it was.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

fx=$top/tests/fixtures/state-v1
cp -r "$fx" d
rm d/state.sql d/gitops.fi
mkdir -p d/.idpmake
git init -q --bare -b main d/.idpmake/gitops.git
git -C d/.idpmake/gitops.git fast-import --quiet <"$fx/gitops.fi"
head=$(git -C d/.idpmake/gitops.git rev-parse main)
db=$T/d/.idpmake/state.db
remote="file://$(cd d && pwd -P)/.idpmake/gitops.git"
python3 - "$fx/state.sql" "$db" "$remote" <<'EOF'
import sqlite3, sys
sql = open(sys.argv[1]).read().replace("@REMOTE@", sys.argv[3])
c = sqlite3.connect(sys.argv[2])
c.executescript(sql)
c.close()
EOF
sqlv() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$1"; }
im() { idpmake -C "$T/d" "$@"; }
commits() { git -C d/.idpmake/gitops.git rev-list --count main; }

t_eq "the fixture is the previous release's schema" 1 "$(sqlv 'PRAGMA user_version')"
t_eq "the fixture's remote holds its two commits" 2 "$(commits)"

# what this idpmake's schema version is: the number it names refusing a newer one
cp "$db" "$T/v1.db"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 999"); c.commit()' "$db"
t_exit 2 "a state from a newer idpmake is refused (status)" im status
t_grep "... naming the state and both versions" \
	"state .*\.idpmake/state\.db has schema version 999; this idpmake knows up to [0-9]+" "$STDERR"
current=$(sed -nE 's/.*knows up to ([0-9]+).*/\1/p' "$STDERR")
t_exit 2 "... and by up" im up
t_grep "... naming both versions" "schema version 999; this idpmake knows up to $current" "$STDERR"
t_grep "... and the ways out" "upgrade idpmake, or .*forget --all" "$STDERR"
t_exit 2 "... and by plan" im plan
t_eq "... and left as it was" 999 "$(sqlv 'PRAGMA user_version')"
t_eq "... nothing pushed" 2 "$(commits)"
cp "$T/v1.db" "$db"

# ---- the previous release's state opens and migrates forward -----------------
t_ok "status reads the previous release's state" im status --json
cp "$STDOUT" "$T/status.json"
t_ok "... its records: both renders ok, with the keys the old release wrote" python3 - "$T/status.json" "$T/v1.db" <<'EOF'
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
# a hash is two 64-bit words, stored little-endian and shown as numbers
hexs = lambda b: b[:8][::-1].hex() + b[8:][::-1].hex()
old = {id: hexs(k) for id, k in sqlite3.connect(sys.argv[2]).execute("SELECT id, key FROM step")}
by = {s["id"]: s for s in d["steps"]}
for id in ("in-cluster/web:render", "in-cluster/db:render", "push"):
    assert by[id]["result"] == "ok", by[id]
    assert by[id]["key"] == old[id], (by[id], old[id])
EOF
t_ok "log shows the old runs" im log
t_grep "... the second one" "^run 2 .* up +ok" "$STDOUT"
t_eq "status (read-only) did not migrate it" 1 "$(sqlv 'PRAGMA user_version')"
t_ok "up on the previous release's state" im up
t_eq "it is migrated to this idpmake's schema" "$current" "$(sqlv 'PRAGMA user_version')"
t_eq "the old runs are kept" 3 "$(sqlv 'SELECT count(*) FROM run')"
t_eq "no new commit: the remote holds the same render" "$head" "$(git -C d/.idpmake/gitops.git rev-parse main)"
t_exit 0 "plan has nothing to do" im plan --exit-code
mkmanifest d/packages/web/cm.yaml ConfigMap web
t_ok "a change after the migration" im up
t_eq "... is pushed in one commit" 3 "$(commits)"
t_exit 0 "plan has nothing to do" im plan --exit-code

# ---- a newer state's way out: forget --all ----------------------------------
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 999"); c.commit()' "$db"
t_ok "forget --all removes a newer state" im forget --all
t_ok "up after it" im up
t_eq "... makes no commit" 3 "$(commits)"
t_eq "... with this idpmake's schema" "$current" "$(sqlv 'PRAGMA user_version')"

t_done
