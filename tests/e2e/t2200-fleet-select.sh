#!/bin/bash
# Selecting in a fleet: -l matches cluster labels as well as package labels
# (each KEY=VALUE on either), targets take cluster and package globs
# ('eu-*/', 'eu-*/web', '*/we*'), and a glob that matches nothing is an
# error naming it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: select
clusters:
  eu-1: {server: "https://eu-1:6443", labels: {region: eu, env: prod}}
  eu-2: {server: "https://eu-2:6443", labels: {region: eu, env: dev}}
  us-1: {server: "https://us-1:6443", labels: {region: us, env: prod}}
packages:
  web: {type: manifests, path: packages/web, labels: {tier: apps}}
  db: {type: manifests, path: packages/db, labels: {tier: data}}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
mkmanifest d/packages/db/cm.yaml ConfigMap db
cd d || exit 1

# ids SELECTION...: the render steps a plan --json selects (with no Argo CD it lists no sync), sorted, one line
ids() {
	idpmake plan --json "$@" >"$T/p.json" || { echo "plan failed"; return; }
	python3 -c 'import json, sys
print(" ".join(sorted(s["id"] for s in json.load(open(sys.argv[1]))["steps"] if s["kind"] == "render")))' "$T/p.json"
}

t_eq "-l on a cluster label" "eu-1/db:render eu-1/web:render eu-2/db:render eu-2/web:render" "$(ids -l region=eu)"
t_eq "-l on a package label" "eu-1/web:render eu-2/web:render us-1/web:render" "$(ids -l tier=apps)"
t_eq "-l on both: all must hold" "eu-1/web:render us-1/web:render" "$(ids -l tier=apps -l env=prod)"
t_eq "a cluster glob" "eu-1/db:render eu-1/web:render eu-2/db:render eu-2/web:render" "$(ids 'eu-*/')"
t_eq "a cluster and package glob" "eu-1/web:render eu-2/web:render" "$(ids 'eu-*/w*')"
t_eq "a package glob on every cluster" "eu-1/db:render eu-2/db:render us-1/db:render" "$(ids '*/d?')"
t_eq "a glob with -l" "eu-1/web:render" "$(ids -l tier=apps -l env=prod 'eu-*/')"
t_exit 2 "a cluster glob that matches nothing" idpmake plan 'ap-*/'
t_grep "the error names the glob" "unknown target 'ap-\*/': no cluster matches 'ap-\*'" "$STDERR"
t_exit 2 "a label that matches nothing" idpmake plan -l region=us 'eu-*/'
t_grep "the error says so" "no such package with those labels" "$STDERR"
t_done
