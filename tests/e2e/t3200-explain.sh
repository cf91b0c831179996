#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# explain, plan, plan --json, plan --exit-code: why a step would run, named by
# the input that changed, with its old and new hash; plan executes nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: explain
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
mkmanifest d/packages/web/svc.yaml Service web
mkmanifest d/packages/db/cm.yaml ConfigMap db

bare=$T/d/.idpmake/gitops.git
commits() { git -C "$bare" rev-list --count main 2>/dev/null || echo 0; }
im() { idpmake -C "$T/d" "$@"; }

# file_hashes FILE PATH: "OLD NEW" from explain's output, where PATH is named
# as changed with "OLD -> NEW" after it (on its line or the next).
file_hashes() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(re.escape(sys.argv[2]) + r'[^\n]*?\s*\(?([0-9a-f]{8,})\)?\s*->\s*([0-9a-f]{8,})', text)
print("%s %s" % (m.group(1), m.group(2)) if m else "none")
EOF
}

t_ok "first up" im up
t_exit 0 "plan --exit-code after an up exits 0: nothing to do" im plan --exit-code
t_ok "explain of an up-to-date step succeeds" im explain in-cluster/web:render
t_nogrep "and says nothing changed" 'changed|would run' "$STDOUT"

# ---- one file changed ------------------------------------------------------
echo '# a comment' >>d/packages/web/svc.yaml
sed -i 's/port: 80/port: 8080/' d/packages/web/svc.yaml
t_ok "explain in-cluster/web:render" im explain in-cluster/web:render
cp "$STDOUT" "$T/explain1.txt"
t_grep "it names the step" 'in-cluster/web:render' "$T/explain1.txt"
t_grep "it names svc.yaml as changed" 'changed.*packages/web/svc\.yaml' "$T/explain1.txt"
t_nogrep "not deploy.yaml" 'deploy\.yaml' "$T/explain1.txt"
h1=$(file_hashes "$T/explain1.txt" packages/web/svc.yaml)
t_ok "with an old -> new hash ($h1)" test "$h1" != none
read -r old1 new1 <<<"$h1"
t_ok "and the hashes differ" test "$old1" != "$new1"
t_ok "explain of the unchanged db:render" im explain in-cluster/db:render
t_nogrep "names no change" 'changed|would run' "$STDOUT"
t_fail "explain of a step that does not exist fails" im explain in-cluster/nope:render
t_grep "naming it" 'nope' "$OUTPUT"

# ---- plan -------------------------------------------------------------------
t_ok "plan" im plan
cp "$STDOUT" "$T/plan.txt"
t_grep "plan lists web's render" 'in-cluster/web:render' "$T/plan.txt"
t_grep "with the changed file as its reason" 'in-cluster/web:render.*packages/web/svc\.yaml' "$T/plan.txt"
t_nogrep "plan does not list db's render" 'in-cluster/db:render' "$T/plan.txt"

t_ok "plan --json" im plan --json
cp "$STDOUT" "$T/plan.json"
t_ok "plan --json has the shape of cli.md" python3 - "$T/plan.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1, d
assert isinstance(d["steps"], list), d
assert isinstance(d["up_to_date"], int) and not isinstance(d["up_to_date"], bool), d
assert d["up_to_date"] >= 1, d          # db's render at least
for s in d["steps"]:
    for k in ("id", "kind", "reason", "changed"):
        assert k in s, (k, s)
    assert isinstance(s["changed"], list), s
ids = [s["id"] for s in d["steps"]]
assert "in-cluster/web:render" in ids, ids
assert "in-cluster/db:render" not in ids, ids
EOF
t_ok "the render step names cluster, package and kind" python3 - "$T/plan.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == "in-cluster/web:render"][0]
assert s["kind"] == "render", s
assert s["cluster"] == "in-cluster", s
assert s["package"] == "web", s
EOF
t_ok "its changed list is exactly the changed file, by path" python3 - "$T/plan.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == "in-cluster/web:render"][0]
assert s["changed"] == ["packages/web/svc.yaml"], s["changed"]
EOF
t_ok "its reason names the file" python3 - "$T/plan.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == "in-cluster/web:render"][0]
assert "packages/web/svc.yaml" in s["reason"], s["reason"]
EOF

t_exit 1 "plan --exit-code exits 1 when there is work" im plan --exit-code
t_ok "up -n succeeds" im up -n
t_grep "up -n lists the same render" 'in-cluster/web:render' "$STDOUT"
t_eq "plan and up -n made no commit" 1 "$(commits)"
t_ok "explain after plan" im explain in-cluster/web:render
t_eq "plan recorded nothing: explain says the same" "$h1" "$(file_hashes "$STDOUT" packages/web/svc.yaml)"

t_ok "up" im up
t_grep "up renders exactly what plan said" '^idpmake: 1 rendered' "$STDOUT"
t_exit 0 "plan --exit-code exits 0 after it" im plan --exit-code
t_ok "plan --json after it" im plan --json
cp "$STDOUT" "$T/plan2.json"
t_ok "has no steps, and every step up to date" python3 - "$T/plan2.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["steps"] == [], d["steps"]
assert d["up_to_date"] >= 3, d
EOF

# ---- the next change: the old hash is the last success's new one ----------------
sed -i 's/port: 8080/port: 9090/' d/packages/web/svc.yaml
t_ok "explain after a second change" im explain web
h2=$(file_hashes "$STDOUT" packages/web/svc.yaml)
read -r old2 new2 <<<"$h2"
t_eq "the old hash is the hash recorded by the last up" "$new1" "$old2"
t_ok "and the new one differs" test "$new2" != "$old2" -a "$h2" != none

# ---- an added file, a spec change ------------------------------------------------
mkmanifest d/packages/web/extra.yaml ConfigMap extra
t_ok "plan --json after adding a file" im plan --json
cp "$STDOUT" "$T/plan3.json"
t_ok "the added file is in changed" python3 - "$T/plan3.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == "in-cluster/web:render"][0]
assert any("packages/web/extra.yaml" in c for c in s["changed"]), s["changed"]
EOF
t_ok "explain names the added file" im explain in-cluster/web:render
t_grep "as added" 'packages/web/extra\.yaml' "$STDOUT"

sed -i 's/namespace: data/namespace: data2/' d/distro.yaml
t_ok "plan --json after a spec change" im plan --json
cp "$STDOUT" "$T/plan4.json"
t_ok "db's render is planned with a reason" python3 - "$T/plan4.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["steps"] if s["id"] == "in-cluster/db:render"]
assert s, d
assert s[0]["reason"].strip(), s
EOF
t_exit 1 "plan --exit-code exits 1" im plan --exit-code

t_done
