#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# The state: status and status --json, forget, log, SQLite in WAL mode with a
# schema version, the run lock (fail at once naming the holder, or --wait),
# and a failed render that keeps the last success's key.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# The `hold` hook, while d/hold exists, waits until d/release exists (at most
# 60 s), so one run holds the lock while another tries to take it, and the
# test, not the clock, says when it lets go.
mkdistro d <<'EOF'
idpmake: 1
name: state
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
    hooks:
      post:
        - name: hold
          run: 'touch hold-started; n=0; while [ -f hold ] && [ ! -f release ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n + 1)); done'
          when: always
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db

bare=$T/d/.idpmake/gitops.git
commits() { git -C "$bare" rev-list --count main 2>/dev/null || echo 0; }
im() { idpmake -C "$T/d" "$@"; }
ups=0
up() { ups=$((ups + 1)); idpmake -C "$T/d" up "$@"; }

# jq-like: step FIELD ID from a status --json document
step_field() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == sys.argv[3]]
print(s[0].get(sys.argv[2]) if s else "no-such-step")
EOF
}

t_ok "first up" up
t_eq "the state folder holds state.db" yes "$([ -f d/.idpmake/state.db ] && echo yes)"

# ---- status -----------------------------------------------------------------
t_ok "status" im status
t_grep "status lists web's render" 'in-cluster/web:render' "$STDOUT"
t_grep "as ok" '(^|[^a-z])ok[^a-z].*in-cluster/web:render|in-cluster/web:render.*(^|[^a-z])ok([^a-z]|$)' "$STDOUT"
t_grep "status lists the hook" 'in-cluster/db:post:hold' "$STDOUT"

t_ok "status --json" im status --json
cp "$STDOUT" "$T/status1.json"
t_ok "status --json has the shape of cli.md" python3 - "$T/status1.json" "$(git -C "$bare" rev-parse main)" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
head = sys.argv[2]
assert d["version"] == 1, d
assert isinstance(d["steps"], list) and d["steps"], d
for s in d["steps"]:
    for k in ("id", "result", "key", "output", "commit", "at", "ms"):
        assert k in s, (k, s)
    assert s["result"] in ("ok", "failed", "never"), s
byid = {s["id"]: s for s in d["steps"]}
for id in ("in-cluster/web:render", "in-cluster/db:render"):
    s = byid[id]
    assert s["result"] == "ok", s
    assert re.fullmatch(r"[0-9a-f]{16,}", s["key"]), s
    assert re.fullmatch(r"[0-9a-f]{16,}", s["output"]), s
    assert isinstance(s["ms"], int), s
    assert s["at"], s
# the commit of this run is recorded somewhere (the push step, or the renders)
assert any((s.get("commit") or "").startswith(head[:7]) for s in d["steps"]), (head, d)
EOF
web_key=$(step_field "$T/status1.json" key in-cluster/web:render)

# ---- the database ------------------------------------------------------------------
t_ok "state.db is SQLite in WAL mode with a schema version" python3 - "$T/d/.idpmake/state.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
mode = db.execute("PRAGMA journal_mode").fetchone()[0]
assert mode.lower() == "wal", mode
v = db.execute("PRAGMA user_version").fetchone()[0]
assert v >= 1, v
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
EOF

# ---- forget -------------------------------------------------------------------
t_ok "up again: nothing to render" up
t_grep "0 rendered" '^idpmake: 0 rendered' "$STDOUT"
t_ok "forget web" im forget web
t_ok "status --json after forget" im status --json
cp "$STDOUT" "$T/status2.json"
t_eq "web's render is 'never' after forget" never "$(step_field "$T/status2.json" result in-cluster/web:render)"
t_eq "db's render is still ok" ok "$(step_field "$T/status2.json" result in-cluster/db:render)"
t_ok "up after forget" up
t_grep "re-renders one package" '^idpmake: 1 rendered' "$STDOUT"
t_grep "web" 'in-cluster/web:render' "$STDOUT"
t_nogrep "not db" 'in-cluster/db:render' "$STDOUT"
t_eq "the same output makes no new commit" 1 "$(commits)"
t_ok "status --json" im status --json
t_eq "web's key is back, the same" "$web_key" "$(step_field "$STDOUT" key in-cluster/web:render)"

# ---- log --------------------------------------------------------------------------
t_ok "log" im log
cp "$STDOUT" "$T/log.txt"
t_ok "log lists one entry per up ($ups), newest first" python3 - "$T/log.txt" "$ups" <<'EOF'
import re, sys
ids = [int(m.group(1)) for m in re.finditer(r"(?im)^\s*run\s+#?(\d+)", open(sys.argv[1]).read())]
assert len(ids) >= int(sys.argv[2]), ids
assert ids == sorted(ids, reverse=True), ids
EOF
t_ok "the newest entry is the last up (1 rendered), the oldest the first (2 rendered)" python3 - "$T/log.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
entries = re.split(r"(?im)^(?=\s*run\s+#?\d+)", text)
entries = [e for e in entries if e.strip()]
assert re.search(r"\b1 rendered", entries[0]), entries[0]
assert re.search(r"\b2 rendered", entries[-1]), entries[-1]
EOF

# ---- the lock -------------------------------------------------------------------
touch d/hold
rm -f d/hold-started d/release
"$IDPMAKE" -C "$T/d" up >"$T/holder.out" 2>&1 &
holder=$!
t_ok "the first run reached its holding hook" t_wait_for 30 test -f d/hold-started
t_exit 1 "a second up fails while the first holds the lock" timeout 30 "$IDPMAKE" -C "$T/d" up
t_grep "naming the holder's pid ($holder)" "(^|[^0-9])$holder([^0-9]|$)" "$OUTPUT"
t_ok "at once: the holder, waiting for d/release, is still running" kill -0 "$holder"
"$IDPMAKE" -C "$T/d" up --wait >"$T/waiter.out" 2>&1 &
waiter=$!
t_ok "up --wait says it waits for the holder" t_wait_for 30 grep -q "waiting for pid $holder" "$T/waiter.out"
t_ok "and is still waiting while the holder holds the lock" kill -0 "$waiter"
t_ok "the holder has not let go yet" kill -0 "$holder"
touch d/release
wait "$waiter"
t_eq "up --wait runs once the lock is released, and succeeds" 0 "$?"
wait "$holder"
t_eq "the holder succeeded" 0 "$?"
rm -f d/hold d/release
ups=$((ups + 1))

# ---- a failed render -------------------------------------------------------------
t_ok "status --json before the failure" im status --json
cp "$STDOUT" "$T/status3.json"
web_key=$(step_field "$T/status3.json" key in-cluster/web:render)
web_out=$(step_field "$T/status3.json" output in-cluster/web:render)
before=$(commits)
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [unclosed\n' >d/packages/web/broken.yaml
t_exit 1 "up with broken YAML exits 1" up
t_grep "the failure names the file" 'broken\.yaml' "$OUTPUT"
t_eq "no commit" "$before" "$(commits)"
t_ok "status --json after the failure" im status --json
cp "$STDOUT" "$T/status4.json"
t_eq "web's render is failed" failed "$(step_field "$T/status4.json" result in-cluster/web:render)"
t_eq "with the last success's key" "$web_key" "$(step_field "$T/status4.json" key in-cluster/web:render)"
t_eq "and output" "$web_out" "$(step_field "$T/status4.json" output in-cluster/web:render)"
t_exit 1 "up again, still broken: fails again" up
t_grep "retrying web's render" 'in-cluster/web:render' "$OUTPUT"

mkmanifest d/packages/web/broken.yaml ConfigMap fixed
t_ok "up after fixing it" up
t_grep "re-renders exactly web" '^idpmake: 1 rendered' "$STDOUT"
t_grep "web's render" 'in-cluster/web:render' "$STDOUT"
t_nogrep "not db's" 'in-cluster/db:render' "$STDOUT"
t_eq "one commit" $((before + 1)) "$(commits)"
t_ok "with the fixed object" git -C "$bare" cat-file -e main:in-cluster/web/configmap.fixed.yaml
t_ok "status --json" im status --json
t_eq "web's render is ok" ok "$(step_field "$STDOUT" result in-cluster/web:render)"
t_ok "then a no-op" up
t_grep "0 rendered" '^idpmake: 0 rendered' "$STDOUT"

t_done
