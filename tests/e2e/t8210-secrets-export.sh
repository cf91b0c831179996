#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Secrets never reach the graph export (engine.md "State"): with tokens in
# the environment (ARGOCD_AUTH_TOKEN, IDPMAKE_GIT_TOKEN, IDPMAKE_SOURCE_TOKEN),
# in argocd.token-file, and passwords in the GitOps remote's and a git
# source's URL, a cluster's register token (register.token-env), `graph --format dot|json|mermaid` (and plan --json, -v) show
# none of them, while they do show the graph (so an empty export cannot pass),
# and every edge's ends are declared nodes (the register steps, which have no
# package, crashed dot and mermaid).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

argo_env=argoenv$(random_string)
argo_file=argofile$(random_string)
git_tok=gittok$(random_string)
src_tok=srctok$(random_string)
remote_pw=remotepw$(random_string)
src_pw=srcpw$(random_string)
edge_tok=edgetok$(random_string)
printf '%s\n' "$argo_file" >"$T/argocd.token"
chmod 600 "$T/argocd.token"

mkdistro d <<EOF
idpmake: 1
name: secrets
git: {remote: "https://idp:$remote_pw@gitea.invalid/idp/gitops.git"}
argocd: {server: argocd.invalid, token-file: "$T/argocd.token"}
clusters:
  in-cluster: {server: "https://kubernetes.default.svc"}
  edge: {server: "https://edge.example:6443", register: {token-env: EDGE_TOKEN}}
packages:
  local: {type: manifests, path: p, hooks: {post: [{name: smoke, run: "echo ok", env: [ARGOCD_AUTH_TOKEN]}]}}
  remote:
    type: manifests
    git: {url: "https://src:$src_pw@git.invalid/org/src.git", ref: v1, path: deploy}
    needs: [local]
EOF
mkmanifest d/p/cm.yaml ConfigMap cm
cd d || exit 1

# sec CMD...: CMD with every token in the environment
sec() {
	env ARGOCD_AUTH_TOKEN="$argo_env" IDPMAKE_GIT_TOKEN="$git_tok" IDPMAKE_SOURCE_TOKEN="$src_tok" EDGE_TOKEN="$edge_tok" \
		IDPMAKE_GIT_USERNAME=idp IDPMAKE_SOURCE_USERNAME=src "$IDPMAKE" "$@"
}
# nosecret NAME FILE: FILE holds none of the seven secrets
nosecret() {
	local s
	for s in "$argo_env" "$argo_file" "$git_tok" "$src_tok" "$remote_pw" "$src_pw" "$edge_tok"; do
		t_nostring "$1: no secret ${s%%[0-9a-f]*}" "$s" "$2"
	done
}

for fmt in dot json mermaid; do
	t_ok "graph --format $fmt" sec graph --format "$fmt"
	cp "$STDOUT" "$T/graph.$fmt"
	cp "$STDERR" "$T/graph.$fmt.err"
	if [ "$fmt" = mermaid ]; then
		t_grep "graph $fmt: shows the git source package's sync" '"remote sync"' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the hook" '"local post:smoke"' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the other cluster" 'subgraph c1 \["edge"\]' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the cluster's register step" '\[\["register"\]\]' "$T/graph.$fmt"
	else
		t_grep "graph $fmt: shows the git source package's sync" '"in-cluster/remote:sync"' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the hook" '"in-cluster/local:post:smoke"' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the other cluster" '"edge/remote:sync"' "$T/graph.$fmt"
		t_grep "graph $fmt: shows the cluster's register step" '"edge:register"' "$T/graph.$fmt"
	fi
	nosecret "graph $fmt" "$T/graph.$fmt"
	nosecret "graph $fmt stderr" "$T/graph.$fmt.err"
done
t_ok "dot: every edge's ends are declared nodes" python3 -c '
import re, sys
decl, ends = set(), set()
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\"[^\"]*\") -> (\"[^\"]*\");", line)
    if m:
        ends.update(m.groups())
        continue
    m = re.match(r"\s*(\"[^\"]*\") \[", line)
    if m:
        decl.add(m.group(1))
assert ends and ends <= decl, sorted(ends - decl)
assert "\"repository:register\"" in decl and "\"edge:register\"" in decl, decl' "$T/graph.dot"
if command -v dot >/dev/null; then
	t_ok "dot: graphviz reads it" dot -Tsvg -o "$T/graph.svg" "$T/graph.dot"
else
	t_skip "graphviz (dot) is not installed"
fi
t_ok "mermaid: every edge's ends are declared nodes" python3 -c '
import re, sys
decl, ends = set(), set()
for line in open(sys.argv[1]):
    m = re.match(r"\s*(s\d+) --> (s\d+)$", line)
    if m:
        ends.update(m.groups())
        continue
    m = re.match(r"\s*(s\d+)[\[({]", line)
    if m:
        decl.add(m.group(1))
assert ends and ends <= decl, sorted(ends - decl)' "$T/graph.mermaid"
t_ok "graph --json" sec --json graph
cp "$STDOUT" "$T/graph.j2"
t_ok "graph --json: a JSON document with nodes and edges" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
assert len(g["nodes"]) >= 8 and len(g["edges"]) >= 6, g' "$T/graph.j2"
nosecret "graph --json" "$T/graph.j2"
t_ok "graph -v --format json" sec -v graph --format json
cat "$STDOUT" "$STDERR" >"$T/graph.v"
nosecret "graph -v" "$T/graph.v"

# the graph export is written nowhere else either: no state was made
t_ok "graph left no state folder" test ! -e .idpmake

# the token in the token file must stay out when the environment has none
t_ok "graph --format json, token-file only" "$IDPMAKE" graph --format json
cp "$STDOUT" "$T/graph.tf"
t_grep "token-file only: the graph is there" 'in-cluster/local:sync' "$T/graph.tf"
t_nostring "token-file only: no token" "$argo_file" "$T/graph.tf"
t_done
