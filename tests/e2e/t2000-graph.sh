#!/bin/bash
# idpmake graph: dot (the default, accepted by Graphviz), json in the shape of
# cli.md, mermaid; one push node; render -> push -> pre -> sync -> post; needs
# edges from the needed package's last step to the dependent's first step
# after push; per-cluster steps with profiles; hooks as C/P:pre:NAME steps.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

for p in a b c d; do
	mkmanifest "d/packages/$p/cm.yaml" ConfigMap "$p"
done
mkdistro d <<'EOF'
idpmake: 1
name: graphs
clusters:
  one: {server: https://one.example, profiles: [core]}
  two: {name: two, profiles: [core, apps]}
profiles:
  core: [a]
  apps: [b, c, d]
packages:
  a:
    type: manifests
    path: packages/a
    labels: {tier: core}
    hooks:
      post:
        - {name: check, run: "true"}
        - {name: check2, run: "true"}
  b:
    type: manifests
    path: packages/b
    needs: [a]
    labels: {tier: apps}
    hooks:
      pre:
        - {name: prep, run: "true"}
        - {name: prep2, run: "true"}
      post:
        - {name: smoke, run: "true", when: always}
  c:
    type: manifests
    path: packages/c
    needs: [b]
    labels: {tier: apps}
  d:
    type: manifests
    path: packages/d
    needs: [one/a]
EOF
cd d || exit 1

# ---- dot ---------------------------------------------------------------------
t_ok "graph (dot by default)" idpmake graph
cp "$STDOUT" graph.dot
t_grep "it is a digraph" '^(strict )?digraph' graph.dot
t_ok "graph --format dot is the same" idpmake graph --format dot
t_eq "same bytes" "$(cat graph.dot)" "$(cat "$STDOUT")"
t_ok "Graphviz dot -Tsvg accepts it" dot -Tsvg -o graph.svg graph.dot
t_nogrep "dot has no warning about it" 'Warning|Error' "$STDERR"
t_grep "the SVG is an svg" '<svg' graph.svg
t_grep "the SVG shows the push node" '>push' graph.svg
t_grep "the SVG has a cluster box per cluster (one)" '>one<' graph.svg
t_grep "and (two)" '>two<' graph.svg
t_nogrep "node labels break lines: no literal backslash-n in the SVG text" '<text[^>]*>[^<]*\\n' graph.svg
t_grep "the SVG has the hook step's name" 'prep2' graph.svg
t_ok "graph is deterministic" idpmake graph
t_eq "two runs give the same dot" "$(cat graph.dot)" "$(cat "$STDOUT")"
t_ok "graph writes no state" test ! -e .idpmake/state.db

# ---- json --------------------------------------------------------------------
t_ok "graph --format json" idpmake graph --format json
cp "$STDOUT" graph.json
python3 - graph.json >facts.txt 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("toplevel", " ".join(sorted(d)))
print("version", d["version"], type(d["version"]).__name__)
ids = set()
for n in d["nodes"]:
    ids.add(n["id"])
    if n["kind"] == "push":
        print("node", n["id"], n["kind"])
    else:
        print("node", n["id"], n["kind"], n["cluster"], n["package"])
        # the id is CLUSTER/PACKAGE:STEP
        step = n["id"].split(":", 1)[1]
        if not n["id"].startswith(n["cluster"] + "/" + n["package"] + ":"):
            print("badid", n["id"])
        if n["kind"] in ("pre", "post") and step.split(":")[0] != n["kind"]:
            print("badkind", n["id"])
    if n["kind"] not in ("pre", "render", "push", "sync", "post"):
        print("badkind", n["id"], n["kind"])
print("nodes", len(d["nodes"]), "unique", len(ids))
print("pushes", sum(1 for n in d["nodes"] if n["kind"] == "push"))
for e in d["edges"]:
    print("edge", e["from"], e["to"])
    for end in (e["from"], e["to"]):
        if end not in ids:
            print("dangling", end)
# acyclic, and a topological order exists
import collections
indeg = collections.Counter()
out = collections.defaultdict(list)
for e in d["edges"]:
    indeg[e["to"]] += 1
    out[e["from"]].append(e["to"])
q = [i for i in ids if indeg[i] == 0]
seen = 0
while q:
    x = q.pop()
    seen += 1
    for y in out[x]:
        indeg[y] -= 1
        if indeg[y] == 0:
            q.append(y)
print("acyclic", seen == len(ids))
EOF
t_grep "the JSON parses (python3 json)" '^version 1 int$' facts.txt
t_grep "it has version, nodes and edges" '^toplevel .*edges.*nodes.*version' facts.txt
t_grep "exactly one push node" '^pushes 1$' facts.txt
t_grep "its id is push, kind push" '^node push push$' facts.txt
t_nogrep "every node id is CLUSTER/PACKAGE:STEP with its cluster and package fields" '^badid' facts.txt
t_nogrep "every kind is pre, render, push, sync or post and matches the id" '^badkind' facts.txt
t_nogrep "every edge joins two nodes" '^dangling' facts.txt
t_grep "node ids are unique" '^nodes ([0-9]+) unique \1$' facts.txt
t_grep "the graph is acyclic" '^acyclic True$' facts.txt

# Per-cluster steps: cluster one has profile core (a); two has core and apps.
# d has no profile listed on one; it is in apps, so it goes to two only.
t_grep "one/a:render" '^node one/a:render render one a$' facts.txt
t_grep "two/a:render" '^node two/a:render render two a$' facts.txt
t_grep "two/b:render" '^node two/b:render render two b$' facts.txt
t_nogrep "cluster one has no package b (not in its profiles)" '^node one/b:' facts.txt
t_nogrep "cluster one has no package c" '^node one/c:' facts.txt
t_grep "hooks are steps C/P:pre:NAME" '^node two/b:pre:prep pre two b$' facts.txt
t_grep "and C/P:post:NAME" '^node one/a:post:check post one a$' facts.txt
t_grep "sync steps" '^node two/c:sync sync two c$' facts.txt

# The chain render -> push -> pre -> sync -> post.
t_grep "render -> push" '^edge two/b:render push$' facts.txt
t_grep "every render feeds push (one/a)" '^edge one/a:render push$' facts.txt
t_grep "push -> first pre hook" '^edge push two/b:pre:prep$' facts.txt
t_grep "pre hooks in order" '^edge two/b:pre:prep two/b:pre:prep2$' facts.txt
t_grep "last pre -> sync" '^edge two/b:pre:prep2 two/b:sync$' facts.txt
t_grep "sync -> post" '^edge two/b:sync two/b:post:smoke$' facts.txt
t_grep "push -> sync when there is no pre hook" '^edge push two/c:sync$' facts.txt
t_grep "post hooks in order" '^edge one/a:post:check one/a:post:check2$' facts.txt
t_nogrep "render does not go straight to sync" '^edge [^ ]*:render [^ ]*:sync$' facts.txt

# needs: from X's last step to the dependent's first step after push.
t_grep "b needs a: a's last post hook -> b's first pre hook" '^edge two/a:post:check2 two/b:pre:prep$' facts.txt
t_nogrep "b needs a only on its own cluster" '^edge one/a:[^ ]* two/b:' facts.txt
t_grep "c needs b: b's last post hook -> c's sync" '^edge two/b:post:smoke two/c:sync$' facts.txt
t_nogrep "not from b's sync (the post hook is b's last step)" '^edge two/b:sync two/c:sync$' facts.txt
t_grep "d needs one/a: across clusters" '^edge one/a:post:check2 two/d:sync$' facts.txt

t_ok "graph --json is graph --format json" idpmake graph --json
t_eq "same document" "$(cat graph.json)" "$(cat "$STDOUT")"

# ---- mermaid -------------------------------------------------------------------
t_ok "graph --format mermaid" idpmake graph --format mermaid
cp "$STDOUT" graph.mmd
t_eq "it starts with flowchart" flowchart "$(head -n 1 graph.mmd | cut -d' ' -f1)"
t_grep "one subgraph per cluster (one)" '^ *subgraph .*one' graph.mmd
t_grep "and two" '^ *subgraph .*two' graph.mmd
t_grep "it has edges" '-->' graph.mmd
t_grep "it names the hook" 'pre:prep2' graph.mmd
edges_json=$(grep -c '^edge ' facts.txt)
t_eq "as many edges as the JSON" "$edges_json" "$(grep -c -- '-->' graph.mmd)"

# ---- options and errors -----------------------------------------------------------
t_exit 2 "an unknown format is a usage error" idpmake graph --format svgz
t_grep "naming the formats" 'dot|json|mermaid' "$STDERR"

# A distro without clusters: one cluster in-cluster.
cd "$T" || exit 1
mkmanifest s/packages/x/cm.yaml ConfigMap x
mkdistro s <<'EOF'
idpmake: 1
name: single
packages:
  x: {type: manifests, path: packages/x}
EOF
t_ok "graph --format json, default cluster" idpmake -C s graph --format json
t_grep "the default cluster is in-cluster" '"in-cluster/x:render"' "$STDOUT"
t_ok "the dot of it renders with Graphviz" sh -c "'$IDPMAKE' -C s graph | dot -Tsvg >/dev/null"

t_done
