#!/bin/bash
# A package of 80,000 objects renders in seconds: objects are named by
# sorting once, not by comparing each with every other (it cost 8 s of CPU
# for 40,000, and grew with the square).  Two objects of one kind, name and
# namespace are still an error at the later one's line, pointing at the
# first; the same kind and name in two namespaces get the namespace in
# their file names; and two objects that would be written to one file (a
# kind "A" named "configmap.x" beside ConfigMap x in namespace a) are an
# error, not one object silently lost.
# e2e: long
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
  some:
    type: manifests
    path: packages/some
    namespace: apps
    hooks:
      post:
        - name: count
          run: 'ls "$IDPMAKE_RENDERED" | wc -l >rendered-count'
EOF2
mkdir -p d/packages/many d/packages/dup d/packages/clash d/packages/some
# The cost is measured on the plain build, in CPU time (user + system), so
# that a loaded machine cannot fail it: 20 s is far above the sorted code's
# and far below a quadratic one's.  The ASan build checks the same code for
# memory errors on 20,000 objects, with no bound but a timeout for a hang.
many=80000 limit=20
case $IDPMAKE in */asan/*) many=20000 limit= ;; esac
awk -v n="$many" 'BEGIN { for (i = n; i > 0; i--) printf "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i }' \
	>d/packages/many/cms.yaml

timer=(/usr/bin/time -f '%U %S' -o "$T/cpu")
[ -x /usr/bin/time ] || timer=()
t_ok "render of $many objects" "${timer[@]}" timeout 300 "$IDPMAKE" -C d render many
if [ -z "$limit" ]; then
	:
elif [ -x /usr/bin/time ]; then
	cpu=$(awk 'END { printf "%.2f", $1 + $2 }' "$T/cpu")
	awk -v c="$cpu" -v l="$limit" 'BEGIN { exit !(c < l) }'
	t_report $? "... within $limit s of CPU (${cpu} s)"
else
	t_skip "no /usr/bin/time to measure the render's CPU time"
fi
t_eq "prints every object" "$many" "$(grep -c '^kind: ConfigMap$' "$STDOUT")"

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

# copies made again on demand are not fsynced: two fsyncs a file made
# render -o (and a hook's IDPMAKE_RENDERED) of 20,000 objects take a minute
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s%d}\n", i }' \
	>d/packages/some/cms.yaml
if command -v strace >/dev/null; then
	fsyncs() { grep -c -E '^[0-9]+ +f(data)?sync\(' "$T/fsync.log"; }
	# LeakSanitizer cannot run under ptrace
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	t_ok "render -o of 2,000 objects" strace -f -o "$T/fsync.log" -e trace=fsync,fdatasync \
		"$IDPMAKE" -C d render -o "$T/some" some
	t_eq "writes 2,000 files" 2000 "$(find "$T/some/in-cluster/some" -type f | wc -l | tr -d ' ')"
	t_ok "with fewer than 20 fsyncs (the cache's), not 2 a file ($(fsyncs))" test "$(fsyncs)" -lt 20
	t_ok "up of it, with a hook" strace -f -o "$T/fsync.log" -e trace=fsync,fdatasync "$IDPMAKE" -C d up some
	t_eq "the hook saw 2,000 files" 2000 "$(tr -d ' ' <d/rendered-count)"
	t_ok "fewer than 200 fsyncs (state, cache, clone), not 2 a file ($(fsyncs))" test "$(fsyncs)" -lt 200
else
	t_skip "strace is not installed: fsyncs not counted"
fi
t_done
