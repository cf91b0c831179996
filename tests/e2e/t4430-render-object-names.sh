#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Object names become file names, so they are checked against Kubernetes'
# rules when rendered (issue 12 #5): DNS-1123 subdomains for most kinds, path
# segment names for RBAC's four kinds, DNS-1123 labels for namespaces, with
# the error at the name's file:line:col. A name that climbs out of `render
# -o`'s folder writes nothing anywhere; a name with a space is refused with a
# clear error instead of making a bundle its reader refuses.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: names
packages:
  evil:
    type: manifests
    path: packages/evil
    namespace: apps
EOF2
mkdir -p d/packages/evil o
cat >d/packages/evil/cm.yaml <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata:
  name: x/../../../../pwned-idpmake
data: {a: "1"}
EOF2

# ---- a name that climbs out of the output folder -------------------------------
t_fail "validate refuses the traversal name" idpmake -C d validate
t_grep "at the name's line and column" 'packages/evil/cm\.yaml:4:9: error: .*ConfigMap name .x/\.\./\.\./\.\./\.\./pwned-idpmake. is not valid' "$OUTPUT"
t_exit 1 "render -o fails" idpmake -C d render -o "$T/o/out"
t_grep "naming the package and the rule" "package 'evil'.*DNS-1123 subdomain" "$OUTPUT"
t_eq "nothing is written outside the output folder" "" "$(find "$T/o" -mindepth 1 -not -path "$T/o/out" -not -path "$T/o/out/*")"
t_eq "nor any pwned file anywhere in the scratch folder" "" "$(find "$T" -name 'pwned*')"
t_exit 1 "up fails the render" idpmake -C d up
t_eq "up wrote nothing outside either" "" "$(find "$T" -name 'pwned*')"

# ---- a name with a space, upper case, a bad namespace, a bad kind ------------------
bad() {	# bad DESC YAML LOC-RE MSG-RE
	printf '%s\n' "$2" >d/packages/evil/cm.yaml
	t_exit 1 "$1: render fails" idpmake -C d render
	t_grep "$1: located" "$3" "$OUTPUT"
	t_grep "$1: says why" "$4" "$OUTPUT"
	t_nogrep "$1: no bundle reader error" 'not a valid rendered bundle' "$OUTPUT"
}
bad "a space" 'apiVersion: v1
kind: ConfigMap
metadata: {name: my config}' 'packages/evil/cm\.yaml:3:18: error: ' "ConfigMap name 'my config' is not valid in Kubernetes"
bad "upper case" 'apiVersion: v1
kind: Secret
metadata:
  name: Creds' 'packages/evil/cm\.yaml:4:9: error: ' "Secret name 'Creds' is not valid"
bad "a newline" 'apiVersion: v1
kind: ConfigMap
metadata:
  name: "ok\n../../x"' 'packages/evil/cm\.yaml:4:9: error: ' "is not valid in Kubernetes"
bad "a bad namespace" 'apiVersion: v1
kind: ConfigMap
metadata: {name: ok, namespace: ../etc}' 'packages/evil/cm\.yaml:3:33: error: ' "namespace '\.\./etc', which is not a DNS-1123 label"
bad "a bad kind" 'apiVersion: v1
kind: ../Evil
metadata: {name: ok}' 'packages/evil/cm\.yaml:2:7: error: ' "kind '\.\./Evil' is not a valid Kubernetes kind"
bad "an RBAC name with a slash" 'apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ../../x}' 'packages/evil/cm\.yaml:3:18: error: ' "path segment name"
bad "an RBAC name .." 'apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ".."}' 'packages/evil/cm\.yaml:3:18: error: ' "not '\.' or '\.\.'"

# ---- what Kubernetes allows renders, pushes, and reads back ---------------------
cat >d/packages/evil/cm.yaml <<'EOF2'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:controller:Odd Name"}
rules: []
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a.b-c.d, namespace: apps-1}
EOF2
t_ok "an RBAC name with ':', upper case and a space is valid" idpmake -C d render -o "$T/o/ok"
t_ok "its file is there" test -f "$T/o/ok/in-cluster/evil/clusterrole.system:controller:odd name.yaml"
t_grep "the name keeps its case inside the file" '^  name: "?system:controller:Odd Name"?$' "$T/o/ok/in-cluster/evil/clusterrole.system:controller:odd name.yaml"
t_ok "a dotted subdomain name" test -f "$T/o/ok/in-cluster/evil/configmap.a.b-c.d.yaml"
t_ok "up pushes it (the bundle is read back)" idpmake -C d up
t_eq "the pushed tree" "clusterrole.system:controller:odd name.yaml|configmap.a.b-c.d.yaml" \
	"$(git -C d/.idpmake/gitops.git ls-tree --name-only main in-cluster/evil/ | xargs -d '\n' -n1 basename | paste -sd'|')"
t_ok "a no-op run after it" idpmake -C d up
t_grep "nothing rendered" ' 0 rendered' "$OUTPUT"
t_done
