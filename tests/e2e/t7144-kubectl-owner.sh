#!/bin/bash
# deploy: kubectl never takes over what another distro applied (issue 19
# "Ownership"): each distro applies with its own field manager,
# idpmake/DISTRO, each object marked as its own (annotation
# idpmake.io/distro), and before each phase reads whose the objects are
# (`kubectl get -o json`: the mark; without one, the idpmake manager in
# managedFields that applied last).  A second distro with an object of the
# same name is refused, before its push, naming the owner; --adopt takes it
# over, and then the first is refused.  An object the unnamed manager of an
# older idpmake applied is refused to a distro that never applied it.  The
# package's namespace is shared: two distros with packages in one namespace
# both apply.
#
# Issue 33 #8: a real apiserver gives an applier's managedFields entry a
# time only when its apply changed the object (kubernetes/kubernetes#127938;
# the emulator does the same), so after up --adopt of objects identical to
# the first distro's, times said the first distro applied last.  The mark
# decides: the adopter applies again, the first distro is refused.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
kubeconfig_for "$T/kubeconfig" ctx-a
export KUBECONFIG=$T/kubeconfig
who() { kubectl --context ctx-a get configmap core -n core -o 'jsonpath={.data.who}' 2>&1; }
mark() {	# mark KIND/NAME NAMESPACE: its annotation idpmake.io/distro
	kubectl --context ctx-a get "$1" -n "$2" -o 'jsonpath={.metadata.annotations.idpmake\.io/distro}' 2>&1
}
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

t_eq "marked as one's" one "$(mark configmap/core core)"
t_ok "the render pushed" git --git-dir="$T/one.git" grep -q 'who: one' main --
t_exit 1 "is not marked: the mark is the apply's" git --git-dir="$T/one.git" grep -q idpmake.io/distro main --

# no sleep between the applies: whose an object is does not rest on managedFields' times (in seconds)
t_exit 1 "two, with the same objects: refused" idpmake -C two up
t_grep "naming the ConfigMap and its owner" "ConfigMap core/core was applied by distro 'one' \\(its annotation idpmake.io/distro\\)" "$STDERR"
t_grep "and the Deployment" "Deployment core/web was applied by distro 'one'" "$STDERR"
t_grep "with the way out" 'up --adopt' "$STDERR"
t_eq "one's ConfigMap is as one left it" one "$(who)"
t_eq "two's field manager wrote nothing" "idpmake/one" "$(managers configmap/core)"
t_eq "two pushed nothing" "" "$(git --git-dir="$T/two.git" rev-parse -q --verify main)"
t_exit 1 "and a second try is refused too (nothing was recorded as done)" idpmake -C two up

t_ok "two: up --adopt takes them over" idpmake -C two up --adopt
t_eq "two's ConfigMap now" two "$(who)"
t_ok "two pushed" git --git-dir="$T/two.git" rev-parse -q --verify main

t_eq "marked as two's now" two "$(mark deployment/web core)"

sed -i 's/who: one/who: one2/' one/packages/core/cm.yaml
t_exit 1 "one, changed after two took its objects: refused" idpmake -C one up
t_grep "naming two" "ConfigMap core/core was applied by distro 'two'" "$STDERR"
t_eq "two's ConfigMap is as two left it" two "$(who)"
sed -i 's/who: two/who: two2/' two/packages/core/cm.yaml
t_ok "two, changed: its own objects apply (the Deployment web too, which two applied as one had it)" idpmake -C two up
t_eq "two's new value" two2 "$(who)"

# ---- issue 33 #8: up --adopt of identical objects holds ----------------------
# five and six hold the same ConfigMap shared; each has one of its own to change, so that its next up applies
same() {	# same DISTRO VALUE: DISTRO's package: ConfigMap shared (as in the other) and DISTRO-own (data.v VALUE)
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {who: nobody}\n' >"$1/packages/core/shared.yaml"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-own}\ndata: {v: "%s"}\n' "$1" "$2" >"$1/packages/core/own.yaml"
}
kube_distro five same
same five 1
kube_distro six same
same six 1
t_ok "five applies ConfigMap same/shared" idpmake -C five up
t_exit 1 "six, with the same ConfigMap: refused" idpmake -C six up
t_grep "naming five" "ConfigMap same/shared was applied by distro 'five'" "$STDERR"
t_ok "six: up --adopt of content identical to five's" idpmake -C six up --adopt
t_grep "naming what it took over" "adopted \\(--adopt\\): ConfigMap same/shared from distro 'five'" "$STDOUT"
t_eq "the ConfigMap is marked as six's" six "$(mark configmap/shared same)"
same six 2
t_ok "six's next plain up applies: not refused" idpmake -C six up
t_eq "six's own ConfigMap changed" 2 "$(kubectl --context ctx-a get configmap six-own -n same -o 'jsonpath={.data.v}' 2>&1)"
same five 2
t_exit 1 "five's next plain up: refused, six took the ConfigMap" idpmake -C five up
t_grep "naming six" "ConfigMap same/shared was applied by distro 'six' \\(its annotation idpmake.io/distro\\)" "$STDERR"
t_eq "still six's" six "$(mark configmap/shared same)"
t_eq "five applied nothing: its own ConfigMap as it was" 1 "$(kubectl --context ctx-a get configmap five-own -n same -o 'jsonpath={.data.v}' 2>&1)"

# an object without the mark, which an idpmake before it applied as distro five: managedFields still tell
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unmarked, namespace: same}\ndata: {who: five}\n' >"$T/unmarked.yaml"
t_ok "five's apply without a mark (by hand)" kubectl --context ctx-a apply --server-side --field-manager=idpmake/five -f "$T/unmarked.yaml"
kube_distro seven same
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unmarked}\ndata: {who: seven}\n' >seven/packages/core/cm.yaml
t_exit 1 "seven, with that object: refused" idpmake -C seven up
t_grep "naming five by its field manager" "ConfigMap same/unmarked was applied by distro 'five' \\(field manager idpmake/five\\)" "$STDERR"
t_ok "seven --adopt" idpmake -C seven up --adopt
t_eq "marked as seven's" seven "$(mark configmap/unmarked same)"

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
