#!/bin/bash
# Render workers count their errors per render: with -j 16 and -k 0, a package
# whose file holds a document that is not a map fails alone, and the eleven
# valid packages rendered beside it succeed, every time (issue 12 #3: one
# process-wide error counter made valid packages fail at random).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

{
	echo 'idpmake: 1'
	echo 'name: parallel'
	echo 'packages:'
	for i in $(seq -w 1 12); do
		printf '  p%s:\n    type: manifests\n    path: packages/p%s\n    namespace: ns%s\n' "$i" "$i" "$i"
	done
} | mkdistro d

# each package: a ConfigMap big enough that the twelve renders overlap
for i in $(seq -w 1 12); do
	mkdir -p "d/packages/p$i"
	{
		printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-%s\ndata:\n' "$i"
		seq 1 3000 | sed 's/.*/  key&: "value &"/'
	} >"d/packages/p$i/a-big.yaml"
	mkmanifest "d/packages/p$i/cm.yaml" ConfigMap "cm-$i"
done
# p07: after its valid files, a document that is a list, not a map
printf -- '- not\n- a map\n' >d/packages/p07/z-list.yaml

# 20 runs; 5 under ASan, which finds memory errors, not races (each run
# there takes 6 s of the machine)
runs=20
case $IDPMAKE in */asan/*) runs=5 ;; esac
bad=0
for run in $(seq 1 "$runs"); do
	t_run idpmake -C d -j 16 -k 0 --json up
	failed=$(grep -c '"event": *"failed"' "$STDOUT")
	p07=$(grep '"event": *"failed"' "$STDOUT" | grep -c 'in-cluster/p07:render')
	done_renders=$(grep '"event": *"done"' "$STDOUT" | grep -c ':render"')
	if [ "$t_status" != 1 ] || [ "$failed" != 1 ] || [ "$p07" != 1 ] || [ "$done_renders" != 11 ]; then
		bad=$((bad + 1))
		echo "# run $run: exit $t_status, $failed failed (p07: $p07), $done_renders renders done"
		grep '"event": *"failed"' "$STDOUT" | sed 's/^/#   /' | head -20
	fi
	# the next run renders everything again
	idpmake -C d forget >/dev/null 2>&1 || t_bail "forget failed"
done
t_eq "$runs runs of up -j 16 -k 0: each time exactly p07 fails, the 11 others render" 0 "$bad"

t_exit 1 "render p07 fails" idpmake -C d render p07
t_grep "located error for the list document" 'packages/p07/z-list\.yaml:1:1: error: a Kubernetes object must be a map' "$OUTPUT"
t_done
