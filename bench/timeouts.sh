#!/usr/bin/env bash
# bench/timeouts.sh - how soon a run ends after a timeout (the speed claims the
# e2e tests no longer make: they wait on conditions, issue 21 item 9).
#   hook      a post hook that would sleep 60 s, `timeout: 1`: seconds from the
#             start of `up` to its exit (exit 1); target <= 5 (1 s + the kill)
# RUNS (default 3) rounds, the median.  STRICT=1: exit 1 when the target is
# missed.  KEEP=1 keeps the folder.
set -u
export LC_ALL=C NO_COLOR=1
here=$(cd "$(dirname "$0")" && pwd)
IDPMAKE=${IDPMAKE:-$(cd "$here/.." && pwd)/idpmake}
RUNS=${RUNS:-3}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-timeouts.XXXXXX") || exit 2
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$DIR

median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

mkdir -p "$DIR/d/packages/api" "$DIR/d/out" && cd "$DIR/d" || exit 2
cat >distro.yaml <<'EOF'
idpmake: 1
name: timeouts
packages:
  api:
    type: manifests
    path: packages/api
    namespace: apps
    hooks:
      post:
        - {name: slow, run: 'sleep 60; echo finished >out/finished', timeout: 1, when: always}
EOF
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  n: "0"\n' >packages/api/cm.yaml
times=()
for r in $(seq "$RUNS"); do
	sed -i "s/n: .*/n: \"$r\"/" packages/api/cm.yaml
	t0=$EPOCHREALTIME
	"$IDPMAKE" up >"$DIR/up.$r.log" 2>&1
	rc=$? t1=$EPOCHREALTIME
	[ "$rc" = 1 ] || { echo "timeouts.sh: up exited $rc, not 1 (see $DIR/up.$r.log)" >&2; cat "$DIR/up.$r.log" >&2; exit 2; }
	times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')")
done
hook=$(printf '%s\n' "${times[@]}" | median)
ok=$(awk -v t="$hook" 'BEGIN{print (t <= 5) ? "ok" : "MISSED"}')
printf '%-40s %8s %10s %s\n' case seconds target result
printf '%-40s %8s %10s %s\n' "hook timeout 1 s (would sleep 60 s)" "$hook" "<= 5" "$ok"
[ "${STRICT:-0}" = 1 ] && [ "$ok" != ok ] && exit 1
exit 0
