#!/bin/bash
# A package of 80,000 objects renders in seconds: objects are named by
# sorting once, not by comparing each with every other (it cost 8 s of CPU
# for 40,000, and grew with the square).  Two objects of one kind, name and
# namespace are still an error at the later one's line, pointing at the
# first; the same kind and name in two namespaces get the namespace in
# their file names; and two objects that would be written to one file (a
# kind "A" named "configmap.x" beside ConfigMap x in namespace a) are an
# error, not one object silently lost.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: many
packages:
  many:
    type: manifests
    path: packages/many
    namespace: apps
  dup:
    type: manifests
    path: packages/dup
    namespace: apps
  clash:
    type: manifests
    path: packages/clash
    namespace: apps
EOF2
mkdir -p d/packages/many d/packages/dup d/packages/clash
awk 'BEGIN { for (i = 80000; i > 0; i--) printf "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i }' \
	>d/packages/many/cms.yaml

start=$(date +%s%N)
t_ok "render of 80,000 objects within 20 s" timeout 20 "$IDPMAKE" -C d render many
echo "# render took $(( ($(date +%s%N) - start) / 1000000 )) ms"
t_eq "prints every object" 80000 "$(grep -c '^kind: ConfigMap$' "$STDOUT")"

cat >d/packages/dup/a.yaml <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata: {name: same, namespace: one}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: same, namespace: two}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
EOF2
t_ok "the same name in two namespaces renders" idpmake -C d render -o "$T/out" dup
t_ok "one file per namespace: one" test -f "$T/out/in-cluster/dup/one.configmap.same.yaml"
t_ok "one file per namespace: two" test -f "$T/out/in-cluster/dup/two.configmap.same.yaml"
t_ok "an object of its own keeps its plain name" test -f "$T/out/in-cluster/dup/configmap.other.yaml"
cat >>d/packages/dup/a.yaml <<'EOF2'
---
apiVersion: v1
kind: ConfigMap
metadata: {name: same, namespace: one}
EOF2
t_exit 1 "the same name in the same namespace fails" idpmake -C d render dup
t_grep "at the later object, pointing at the first" \
	'packages/dup/a\.yaml:13:1: error: package .dup.: object configmap\.same\.yaml is defined twice \(also at .*packages/dup/a\.yaml:1\)' \
	"$STDERR"
t_eq "said once" 1 "$(grep -c 'defined twice' "$STDERR")"

cat >d/packages/clash/a.yaml <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: b}
---
apiVersion: v1
kind: A
metadata: {name: configmap.x}
EOF2
t_exit 1 "two objects written to one file fail the render" idpmake -C d render clash
t_grep "naming the file" 'same file a\.configmap\.x\.yaml' "$OUTPUT"
t_exit 1 "and up" idpmake -C d up clash
t_ok "which pushed nothing of clash" sh -c '! git -C d/.idpmake/gitops.git rev-parse -q --verify main:in-cluster/clash'
t_done
