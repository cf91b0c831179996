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

# ids SELECTION...: the sync steps a plan --json selects, sorted, one line
ids() {
	idpmake plan --json "$@" >"$T/p.json" || { echo "plan failed"; return; }
	python3 -c 'import json, sys
print(" ".join(sorted(s["id"] for s in json.load(open(sys.argv[1]))["steps"] if s["kind"] == "sync")))' "$T/p.json"
}

t_eq "-l on a cluster label" "eu-1/db:sync eu-1/web:sync eu-2/db:sync eu-2/web:sync" "$(ids -l region=eu)"
t_eq "-l on a package label" "eu-1/web:sync eu-2/web:sync us-1/web:sync" "$(ids -l tier=apps)"
t_eq "-l on both: all must hold" "eu-1/web:sync us-1/web:sync" "$(ids -l tier=apps -l env=prod)"
t_eq "a cluster glob" "eu-1/db:sync eu-1/web:sync eu-2/db:sync eu-2/web:sync" "$(ids 'eu-*/')"
t_eq "a cluster and package glob" "eu-1/web:sync eu-2/web:sync" "$(ids 'eu-*/w*')"
t_eq "a package glob on every cluster" "eu-1/db:sync eu-2/db:sync us-1/db:sync" "$(ids '*/d?')"
t_eq "a glob with -l" "eu-1/web:sync" "$(ids -l tier=apps -l env=prod 'eu-*/')"
t_exit 2 "a cluster glob that matches nothing" idpmake plan 'ap-*/'
t_grep "the error names the glob" "unknown target 'ap-\*/': no cluster matches 'ap-\*'" "$STDERR"
t_exit 2 "a label that matches nothing" idpmake plan -l region=us 'eu-*/'
t_grep "the error says so" "no such package with those labels" "$STDERR"
t_done
