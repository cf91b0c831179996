#!/bin/bash
# `idpmake distros`: the distros `extends: NAME` can name, in its search
# order: the folders of IDPMAKE_DISTRO_PATH, the installed ones
# (PREFIX/share/idpmake/distros), the built-in ones (capi-mgmt, default, cnoe,
# minimal); capi-mgmt's providers take its vars.
# A name found again later is marked shadowed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

unset IDPMAKE_DISTRO_PATH
t_ok "distros" idpmake distros
t_grep "a header" '^NAME +SOURCE +DESCRIPTION$' "$STDOUT"
t_grep "default is built in" '^default +built-in +idpmake.s starter platform' "$STDOUT"
t_grep "cnoe is built in" '^cnoe +built-in +the CNOE platform' "$STDOUT"
t_grep "minimal is built in" '^minimal +built-in +Argo CD alone' "$STDOUT"
t_grep "capi-mgmt is built in" '^capi-mgmt +built-in +Argo CD, cert-manager, the cluster-api-operator' "$STDOUT"
mkdir -p cm
cat >cm/distro.yaml <<'ZZCM'
idpmake: 1
name: cm
extends: capi-mgmt
vars: {infra: aws, infra-version: v2.9.1}
packages:
  argocd: null
  cert-manager: null
  capi-operator: null
  capi-providers: {needs: []}
ZZCM
t_ok "capi-mgmt's providers render" idpmake -C cm render in-cluster/capi-providers
t_grep "the core with ClusterTopology on" '^      ClusterTopology: true$' "$STDOUT"
t_grep "the infrastructure provider of the var" '^  name: aws$' "$STDOUT"
t_grep "at its version" '^  version: v2.9.1$' "$STDOUT"
t_grep "in its namespace" '^  name: capi-aws-system$' "$STDOUT"
t_ok "--help lists the command" idpmake --help
t_grep "with its line" '^  distros +the distros extends can name' "$STDOUT"
t_ok "help distros" idpmake help distros
t_grep "its usage" 'usage: idpmake \[OPTIONS\] distros' "$STDOUT"
t_exit 2 "distros takes no arguments" idpmake distros extra

# two folders on IDPMAKE_DISTRO_PATH: one adds a distro, one overrides cnoe
mkdir -p p1/mine p2/cnoe p2/not-a-distro
printf 'idpmake: 1\nname: mine\ndescription: my flavour\nextends: cnoe\n' >p1/mine/distro.yaml
printf 'idpmake: 1\nname: cnoe\ndescription: a patched cnoe\npackages: {}\n' >p2/cnoe/distro.yaml
export IDPMAKE_DISTRO_PATH=$T/p1:$T/p2
t_ok "distros with IDPMAKE_DISTRO_PATH" idpmake distros
t_grep "mine from the first folder" '^mine +IDPMAKE_DISTRO_PATH +my flavour$' "$STDOUT"
t_grep "with where it is" "^ +at $T/p1/mine\$" "$STDOUT"
t_grep "cnoe from the second folder" '^cnoe +IDPMAKE_DISTRO_PATH +a patched cnoe$' "$STDOUT"
t_grep "the built-in cnoe is shadowed by it" "^ +shadowed: extends: cnoe takes $T/p2/cnoe\$" "$STDOUT"
t_nogrep "a folder without distro.yaml is not listed" 'not-a-distro' "$STDOUT"
first=$(grep -n '^mine ' "$STDOUT" | cut -d: -f1)
builtin=$(grep -n '^default ' "$STDOUT" | cut -d: -f1)
t_ok "the search order: IDPMAKE_DISTRO_PATH before the built-in ones" test "${first:-99}" -lt "${builtin:-0}"

t_ok "distros --json" idpmake --json distros
cp "$STDOUT" distros.json
t_ok "is JSON with every field" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
by = {(d["name"], d["source"]): d for d in a}
assert by[("mine", "IDPMAKE_DISTRO_PATH")]["path"] == sys.argv[2] + "/p1/mine"
assert by[("cnoe", "built-in")]["shadowed_by"] == sys.argv[2] + "/p2/cnoe"
assert by[("cnoe", "built-in")]["path"] is None
assert by[("minimal", "built-in")]["shadowed_by"] is None
' distros.json "$T"

# what distros lists is what extends finds
mkdistro d <<'EOF2'
idpmake: 1
name: d
extends: cnoe
EOF2
t_ok "extends: cnoe takes the one on IDPMAKE_DISTRO_PATH" idpmake -C d validate
t_grep "the patched cnoe has no packages" '0 packages' "$OUTPUT"

# the built-in minimal: Argo CD alone, applied with kubectl
unset IDPMAKE_DISTRO_PATH
mkdistro m <<'EOF2'
idpmake: 1
name: m
extends: minimal
EOF2
t_ok "a distro extending minimal validates" idpmake -C m validate
t_grep "with minimal's one package" ': 1 package, ' "$OUTPUT"
t_ok "its graph" idpmake -C m graph --format json
cp "$STDOUT" m.json
t_ok "argocd is applied before the push (deploy: kubectl)" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
assert {"from": "in-cluster/argocd:sync", "to": "push"} in g["edges"]
assert {"from": "in-cluster/argocd:render", "to": "push"} not in g["edges"]
' m.json

# installed distros: listed when PREFIX/share/idpmake/distros exists
prefix=$(sed -n 's/^prefix = //p' "$top/build.ninja" 2>/dev/null)
if [ -n "$prefix" ] && [ -d "$prefix/share/idpmake/distros" ]; then
	unset IDPMAKE_DISTRO_PATH
	t_ok "distros with an installation" idpmake distros
	for n in "$prefix"/share/idpmake/distros/*/; do
		n=$(basename "$n")
		t_grep "installed $n is listed" "^$n +installed " "$STDOUT"
	done
else
	t_skip "no installed distros under ${prefix:-PREFIX}/share/idpmake/distros"
fi
t_done
