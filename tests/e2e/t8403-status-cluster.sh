#!/bin/bash
# status (and forget) with targets show (and forget) the steps the targets
# name, not the steps of what they need: under rollout.waves `status eu-1/`
# was every earlier wave's cluster too; graph --packages is the distro's
# shape, its clusters collapsed (issue 25 traps).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<EOF
idpmake: 1
name: statwaves
argocd: {server: argocd.invalid, repo-url: "file:///srv/gitops.git"}
clusters:
  canary: {server: "https://canary.example:6443"}
  eu-1: {server: "https://eu-1.example:6443", labels: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", labels: {region: eu}}
rollout:
  waves:
    - {name: canary, clusters: [canary]}
    - {name: eu, selector: {region: eu}}
packages:
  base: {type: manifests, path: packages/base}
  web: {type: manifests, path: packages/web, needs: [base]}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/web/cm.yaml ConfigMap web
cd d || exit 1
# the steps' ids status lists, one line
ids() { awk 'NR > 1 && $1 != "error:" {print $2}' "$STDOUT" | sort | tr '\n' ' ' | sed 's/ $//'; }

t_ok "status eu-1/" idpmake status eu-1/
t_eq "eu-1's steps alone" "eu-1/base:render eu-1/base:sync eu-1/web:render eu-1/web:sync" "$(ids)"
t_ok "status eu-1/web" idpmake status eu-1/web
t_eq "that package on eu-1 alone" "eu-1/web:render eu-1/web:sync" "$(ids)"
t_ok "status 'eu-*/'" idpmake status 'eu-*/'
t_eq "a glob: both eu clusters" 8 "$(ids | wc -w)"
t_nogrep "and not canary's" 'canary/' "$STDOUT"
t_ok "status web" idpmake status web
t_eq "a package: everywhere" "canary/web:render canary/web:sync eu-1/web:render eu-1/web:sync eu-2/web:render eu-2/web:sync" "$(ids)"
t_ok "status" idpmake status
t_grep "no targets: everything, the push too" ' push ' "$STDOUT"

t_ok "graph --packages" idpmake graph --packages
t_eq "one node per package, one edge per need" 'digraph "statwaves" {
	rankdir=LR;
	node [fontname="Helvetica", fontsize=10, shape=box];
	"base" [label="base (3 clusters)"];
	"web" [label="web (3 clusters)"];
	"base" -> "web";
}' "$(cat "$STDOUT")"
t_ok "graph --packages --format mermaid eu-1/web" idpmake graph --packages --format mermaid eu-1/web
t_eq "the selection: web on eu-1, and base it needs" 'flowchart LR
  p0["base (1 cluster)"]
  p1["web (1 cluster)"]
  p0 --> p1' "$(cat "$STDOUT")"
t_ok "graph --packages --json" idpmake --json graph --packages
cp "$STDOUT" graph.json
t_ok "... nodes and edges" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(n["id"], n["clusters"]) for n in d["nodes"]] == [("base", 3), ("web", 3)], d
assert d["edges"] == [{"from": "base", "to": "web"}], d' graph.json
t_done
