#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# --json for validate (the diagnostics with file, line, column, severity and
# message), version (idpmake's and each library's), explain (the step, its
# decision and each changed input) and diff against the GitOps repository
# (always JSON, with or without differences); a reader that closes stdout
# (up --json | head -1) ends the output, not the run (issue 37 item 1).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: jsonout
vars:
  region: eu-west-1
packages:
  a:
    type: manifests
    path: packages/a
    namespace: apps-${region}
  b:
    type: manifests
    path: packages/b
    namespace: data
    needs: [a]
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a
mkmanifest d/packages/b/cm.yaml ConfigMap b
im() { idpmake -C "$T/d" "$@"; }
# json FILE PYTHON: FILE is one JSON document, d, and the PYTHON assertions hold
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); exec(sys.argv[2])' "$1" "$2"; }

# ---- validate --json -----------------------------------------------------------------------
t_ok "validate --json on a good distro" im --json validate
cp "$STDOUT" good.json
t_ok "valid: true, no diagnostics, the distro counted" json good.json '
assert d["valid"] is True and d["error_count"] == 0 and d["diagnostics"] == [], d
assert d["distro"]["packages"] == 2, d'
cp -R d bad
sed -i 's/^    type: manifests$/    type: manifests\n    colour: blue/' bad/distro.yaml
t_exit 2 "validate --json on a bad distro: exit 2" idpmake -C bad validate --json
cp "$STDOUT" bad.json
t_nogrep "stderr: no error lines, one summary" 'error: unknown key' "$STDERR"
t_grep "stderr: the summary" 'validate: not valid: 2 errors' "$STDERR"
t_ok "valid: false, each error with file, line, column, severity and message" json bad.json '
assert d["valid"] is False and d["error_count"] == len(d["diagnostics"]) == 2, d
for e, line in zip(d["diagnostics"], (8, 13)):
    assert e == {"severity": "error", "message": "unknown key \x27colour\x27 in a package", "file": "distro.yaml",
                 "line": line, "column": 5}, e'
mkdir nodistro
t_exit 2 "validate --json with no distro.yaml: exit 2" idpmake -C nodistro --json validate
cp "$STDOUT" none.json
t_ok "still a document, its one error naming the file" json none.json '
e, = d["diagnostics"]
assert d["valid"] is False and e["severity"] == "error" and e["file"] == "distro.yaml" and "line" not in e, d'
# a warning is a diagnostic too (unexpanded.c's, at its place)
cp -R d warn && printf '  note: "${region}"\n' >>warn/packages/b/cm.yaml
t_ok "validate --json with a warning: still valid" idpmake -C warn --json validate
cp "$STDOUT" warn.json
t_ok "the warning, at its file, line and column" json warn.json '
w = d["diagnostics"][0]
assert d["valid"] is True and d["warning_count"] == 1 and w["severity"] == "warning", d
assert w["file"].endswith("packages/b/cm.yaml") and w["line"] > 1 and w["column"] == 10 and "${region}" in w["message"], w'

# ---- version --json ------------------------------------------------------------------------
t_ok "version --json" idpmake --json version
cp "$STDOUT" version.json
t_ok "idpmake's version and each library's" json version.json '
assert d["version"], d
for lib in ("libgit2", "libcurl", "sqlite", "libyaml", "jansson", "pcre2", "libarchive", "xxhash"):
    assert d["libraries"][lib][0].isdigit(), (lib, d)'

# ---- explain --json ------------------------------------------------------------------------
t_ok "first up" im up
sed -i 's/region: eu-west-1/region: us-east-1/' d/distro.yaml
printf '  extra: x\n' >>d/packages/b/cm.yaml
t_ok "explain a b --json" im explain a b --json
cp "$STDOUT" explain.json
t_ok "each step, its decision, and the variable and the file that changed" json explain.json '
a, b = d["steps"]
assert a["id"] == "in-cluster/a:render" and a["decision"] == "run" and a["reason"].startswith("var region changed"), a
v = [x for x in a["inputs"] if x["name"] == "var region"][0]
assert v == {"name": "var region", "change": "changed", "old": "eu-west-1", "new": "us-east-1"}, v
f = [x for x in b["inputs"] if x["name"] == "packages/b/cm.yaml"][0]
assert b["decision"] == "run" and f["change"] == "changed" and f["old"] != f["new"], b
assert a["key"]["old"] != a["key"]["new"], a'
t_ok "explain's text is as it was" im explain a
t_grep "its reason" '^in-cluster/a:render: would run: var region changed' "$STDOUT"
t_grep "the variable, old and new" "^           'eu-west-1' -> 'us-east-1'$" "$STDOUT"

# ---- diff --json ---------------------------------------------------------------------------
t_ok "diff --json with differences" im --json diff
cp "$STDOUT" diff1.json
t_ok "JSON: the objects that differ, each with its unified diff" json diff1.json '
assert d["mode"] == "gitops" and d["differ"] == len(d["objects"]) >= 1 and len(d["commit"]) == 40, d
o = {x["file"]: x for x in d["objects"]}
assert o["in-cluster/b/configmap.b.yaml"]["status"] == "change", o
assert "+  extra: x" in o["in-cluster/b/configmap.b.yaml"]["diff"], o'
t_ok "up" im up
t_ok "diff --json with none" im diff --json
cp "$STDOUT" diff0.json
t_ok "JSON still: nothing differs" json diff0.json 'assert d["differ"] == 0 and d["objects"] == [], d'

# ---- a closed pipe ends the output, not the run --------------------------------------------
printf '  more: y\n' >>d/packages/b/cm.yaml
idpmake_pipe() { "$IDPMAKE" -C "$T/d" up --json | head -1 >head.out; }
t_ok "up --json | head -1" idpmake_pipe
t_ok "it printed its first event" json head.out 'assert d["event"], d'
t_ok "log --json" im --json log
head -1 "$STDOUT" >lastrun.json
t_ok "the run finished, with its real result and summary" json lastrun.json '
assert d["run"] == 3 and d.get("finished") and d["result"] == 0, d
assert d["summary"].startswith("1 rendered, pushed"), d'
t_ok "and the change is pushed: nothing differs now" im --json diff
cp "$STDOUT" diff2.json
t_ok "nothing" json diff2.json 'assert d["differ"] == 0, d'
t_done
