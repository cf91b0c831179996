#!/bin/bash
# deploy: kubectl never takes over what another distro applied (issue 19
# "Ownership"): each distro applies with its own field manager,
# idpmake/DISTRO, and before each phase reads who applied the objects last
# (`kubectl get -o json`: their managedFields).  A second distro with an
# object of the same name is refused, before its push, naming the owner;
# --adopt takes it over, and then the first is refused.  An object the
# unnamed manager of an older idpmake applied is refused to a distro that
# never applied it.  The package's namespace is shared: two distros with
# packages in one namespace both apply.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
kubeconfig_for "$T/kubeconfig" ctx-a
export KUBECONFIG=$T/kubeconfig
who() { kubectl --context ctx-a get configmap core -n core -o 'jsonpath={.data.who}' 2>&1; }
managers() {
	kubectl --context ctx-a get "$1" -n core -o json --show-managed-fields |
		python3 -c 'import json, sys; print(" ".join(m["manager"] for m in json.load(sys.stdin)["metadata"]["managedFields"]))'
}

# distro NAME [CONFIGMAP]: a distro NAME with its own GitOps remote, one
# deploy: kubectl package in namespace core: a ConfigMap (default core, its
# data.who NAME) and a Deployment web
distro() {
	kube_distro "$1"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {who: %s}\n' "${2:-core}" "$1" \
		>"$1/packages/core/cm.yaml"
	mkmanifest "$1/packages/core/deploy.yaml" Deployment web
}
distro one
distro two

t_ok "one: up applies" idpmake -C one up
t_eq "its ConfigMap" one "$(who)"
t_eq "applied with one's own field manager" "idpmake/one" "$(managers configmap/core)"
t_ok "up again: nothing to apply" idpmake -C one up
t_grep "up to date" 'up to date' "$STDOUT"

sleep 1	# managedFields' times are in seconds: the next apply is later than one's
t_exit 1 "two, with the same objects: refused" idpmake -C two up
t_grep "naming the ConfigMap and its owner" "ConfigMap core/core was applied by distro 'one' \\(field manager idpmake/one\\)" "$STDERR"
t_grep "and the Deployment" "Deployment core/web was applied by distro 'one'" "$STDERR"
t_grep "with the way out" 'up --adopt' "$STDERR"
t_eq "one's ConfigMap is as one left it" one "$(who)"
t_eq "two's field manager wrote nothing" "idpmake/one" "$(managers configmap/core)"
t_eq "two pushed nothing" "" "$(git --git-dir="$T/two.git" rev-parse -q --verify main)"
t_exit 1 "and a second try is refused too (nothing was recorded as done)" idpmake -C two up

t_ok "two: up --adopt takes them over" idpmake -C two up --adopt
t_eq "two's ConfigMap now" two "$(who)"
t_ok "two pushed" git --git-dir="$T/two.git" rev-parse -q --verify main

sleep 1
sed -i 's/who: one/who: one2/' one/packages/core/cm.yaml
t_exit 1 "one, changed after two took its objects: refused" idpmake -C one up
t_grep "naming two" "ConfigMap core/core was applied by distro 'two'" "$STDERR"
t_eq "two's ConfigMap is as two left it" two "$(who)"
sed -i 's/who: two/who: two2/' two/packages/core/cm.yaml
t_ok "two, changed: its own objects apply" idpmake -C two up
t_eq "two's new value" two2 "$(who)"

# the namespace is not an object of the package's: another distro with other objects in it applies
distro three other
rm three/packages/core/deploy.yaml
t_ok "three, other objects in the same namespace: applies" idpmake -C three up
t_eq "its ConfigMap" three "$(kubectl --context ctx-a get configmap other -n core -o 'jsonpath={.data.who}' 2>&1)"

# an object an older idpmake applied (field manager "idpmake", no distro named)
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: core}\ndata: {who: legacy}\n' >"$T/old.yaml"
t_ok "an older idpmake's apply (by hand)" kubectl --context ctx-a apply --server-side --field-manager=idpmake -f "$T/old.yaml"
distro four old
rm four/packages/core/deploy.yaml
t_exit 1 "four never applied it: refused" idpmake -C four up
t_grep "naming the older idpmake" 'ConfigMap core/old was applied by an idpmake before distros had their own field manager' "$STDERR"
t_eq "left as it was" legacy "$(kubectl --context ctx-a get configmap old -n core -o 'jsonpath={.data.who}' 2>&1)"
t_ok "four --adopt" idpmake -C four up --adopt
t_eq "four's value" four "$(kubectl --context ctx-a get configmap old -n core -o 'jsonpath={.data.who}' 2>&1)"

t_done
