#!/bin/bash
# validate makes every check of a created cluster that needs no server
# (issue 32 #1): a worker class its ClusterClass lacks is refused by
# validate, with the distro's file:line:col, as up's render refuses it;
# the example as it is stays valid.  (The version skew against the synced
# version, which needs the state, is validate's too: t8423.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

cp -R "$top/examples/capi" "$T/capi" || t_bail "cannot copy examples/capi"
cd "$T/capi" || exit 1
t_ok "the example is valid" idpmake validate
t_grep "said so" "distro 'capi-fleet' is valid" "$STDOUT"

sed -i 's/workers: {md-0: {class: default-worker, replicas: 2}}/workers: {md-0: {class: no-such-worker, replicas: 2}}/' distro.yaml
t_ok "the worker class was changed" grep -q 'class: no-such-worker' distro.yaml
t_exit 1 "validate refuses a worker class the ClusterClass lacks" idpmake validate
t_grep "at the distro's line, naming the classes there are" \
	"distro.yaml:[0-9]+:[0-9]+: error: worker 'md-0': class 'no-such-worker' is not a machineDeployments class of ClusterClass 'quick-start' \(it has: default-worker\)" "$STDERR"
t_nogrep "not said valid" "is valid" "$STDOUT"
t_exit 1 "render -o refuses it too" idpmake render -o "$T/out"
t_grep "in the same words" "class 'no-such-worker' is not a machineDeployments class" "$STDERR"
mkdir -p "$T/tmp"
t_exit 1 "validate with a TMPDIR of its own" env TMPDIR="$T/tmp" "$IDPMAKE" validate
t_nogrep "no render file left behind of a refused Cluster" . <(find "$T/tmp" -mindepth 1 2>/dev/null)

t_done
