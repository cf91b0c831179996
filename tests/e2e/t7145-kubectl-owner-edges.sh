#!/bin/bash
# deploy: kubectl ownership (t7144), its edges:
#   - the package's namespace, which idpmake creates for every package in it,
#     makes no distro its owner: a distro that holds that Namespace as an
#     object of its own applies it;
#   - a refused step leaves the cluster as it was: no object of an earlier
#     phase, nor the package's namespace, is applied before the refusal (with
#     CRDs, the first phase is, and the rest is still refused);
#   - up --adopt names what it takes over;
#   - a hostile manager name reaches the terminal escaped.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119 # no arguments: the defaults
start_kube_emulator
kubeconfig_for "$T/kubeconfig" ctx-a
export KUBECONFIG=$T/kubeconfig
k() { kubectl --context ctx-a "$@"; }
managers() {	# managers KIND/NAME [NAMESPACE]
	k get "$1" ${2:+-n "$2"} -o json --show-managed-fields |
		python3 -c 'import json, sys; print(" ".join(sorted(m["manager"] for m in json.load(sys.stdin)["metadata"]["managedFields"])))'
}
namespace() { printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$1" | k apply --server-side --field-manager=hand -f - >/dev/null; }
configmap() {	# configmap FILE NAME WHO [NAMESPACE]
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s%s}\ndata: {who: %s}\n' "$2" "${4:+, namespace: $4}" "$3" >"$1"
}

# distro NAME NAMESPACE: a distro with one deploy: kubectl package, core, in NAMESPACE (its files: the caller's)
distro() { kube_distro "$1" "$2"; }

# ---- the package's namespace is nobody's ------------------------------------
distro nsa team
configmap nsa/packages/core/cm.yaml x nsa
distro nsb elsewhere
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {team: b}}\n' >nsb/packages/core/ns.yaml
t_ok "a package in namespace team: up creates the namespace" idpmake -C nsa up
t_eq "with a field manager of no distro's" "idpmake-namespace" "$(managers namespace/team)"
sleep 1	# managedFields' times are in seconds
t_ok "another distro's Namespace team, an object of its package: applies" idpmake -C nsb up
t_eq "its label" b "$(k get namespace team -o 'jsonpath={.metadata.labels.team}')"
sleep 1
configmap nsa/packages/core/cm.yaml x nsa2
t_ok "the first distro's package in team, changed: still applies" idpmake -C nsa up
t_eq "the Namespace is still the second distro's" "idpmake-namespace idpmake/nsb" "$(managers namespace/team)"

# ---- a refusal applies nothing ------------------------------------------------
distro ra shared
configmap ra/packages/core/cm.yaml cm ra
t_ok "ra applies its ConfigMap shared/cm" idpmake -C ra up
sleep 1
distro rb rb-home
configmap rb/packages/core/cm.yaml cm rb shared
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: rb-extra}\n' >rb/packages/core/ns.yaml
configmap rb/packages/core/own.yaml own rb
t_exit 1 "rb, with ra's ConfigMap (in its own namespace): refused" idpmake -C rb up
t_grep "naming it" "ConfigMap shared/cm was applied by distro 'ra'" "$STDERR"
t_exit 1 "its Namespace (an earlier phase) was not applied" k get namespace rb-extra
t_exit 1 "nor its package's namespace" k get namespace rb-home
t_eq "ra's ConfigMap as it was" ra "$(k get configmap cm -n shared -o 'jsonpath={.data.who}')"

# with CRDs, the custom resources are looked up once the CRDs are there: the first phase is applied
cat >rb/packages/core/crd.yaml <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.rb.example.com}
spec:
  group: rb.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
EOF
printf 'apiVersion: rb.example.com/v1\nkind: Gadget\nmetadata: {name: g}\n' >rb/packages/core/gadget.yaml
t_exit 1 "rb with a CRD: still refused" idpmake -C rb up
t_grep "naming ra's ConfigMap" "ConfigMap shared/cm was applied by distro 'ra'" "$STDERR"
t_eq "ra's ConfigMap as it was" ra "$(k get configmap cm -n shared -o 'jsonpath={.data.who}')"
t_exit 1 "nor rb's own ConfigMap (a later phase)" k get configmap own -n rb-home
rm rb/packages/core/cm.yaml
configmap rb/packages/core/cm2.yaml cm rb
sleep 1
distro rc rb-home
configmap rc/packages/core/cm.yaml own rc
t_ok "rb, its own objects only: applies" idpmake -C rb up
t_ok "and its Gadget is there" k get gadget g -n rb-home
sleep 1
t_exit 1 "rc, rb's ConfigMap without a namespace (-n): refused" idpmake -C rc up
t_grep "naming rb" "ConfigMap rb-home/own was applied by distro 'rb'" "$STDERR"

# ---- --adopt says what it takes over ------------------------------------------
t_ok "rc --adopt" idpmake -C rc up --adopt
t_grep "naming what it took over, and whose it was" \
	"sync a/core:sync: adopted \\(--adopt\\): ConfigMap rb-home/own from distro 'rb' \\(its annotation idpmake.io/distro\\)" "$STDOUT"
t_grep "and sums it up by kind at the end (issue 35 #14)" '^idpmake: adopted \(--adopt\): 1 kubectl object \(ConfigMap rb-home/own\)$' "$STDOUT"
t_eq "rc's now" rc "$(k get configmap own -n rb-home -o 'jsonpath={.data.who}')"

# ---- two distros at the same second: neither takes it silently ---------------
distro tie tiens
namespace tiens
configmap tie/packages/core/cm.yaml same tie
kemu_post object '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"same","namespace":"tiens","managedFields":[{"manager":"idpmake/other","operation":"Apply","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{}},{"manager":"idpmake/tie","operation":"Apply","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{}}]},"data":{"who":"other"}}'
t_exit 1 "tie's and other's entries at one second: refused" idpmake -C tie up
t_grep "naming the other" "ConfigMap tiens/same was applied by distro 'other'" "$STDERR"

# ---- a hostile manager's name -------------------------------------------------
distro h hostile
namespace hostile
configmap h/packages/core/cm.yaml evil h
kemu_post object '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"evil","namespace":"hostile","managedFields":[{"manager":"idpmake/x\u001b]0;pwned\u0007\u001b[2J\nFAKE","operation":"Apply","time":"2099-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{}}]},"data":{"who":"x"}}'
t_exit 1 "an object a hostile manager applied: refused" idpmake -C h up
t_nostring "no escape reaches the terminal" $'\x1b' "$OUTPUT"
t_grep "its name escaped, on one line" "ConfigMap hostile/evil was applied by distro 'x\\\\x1b\\]0;pwned\\\\x07\\\\x1b\\[2J\\\\x0aFAKE'" "$STDERR"

# a hostile mark: the distro it names reaches the terminal escaped too
configmap h/packages/core/cm.yaml evil2 h
kemu_post object '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"evil2","namespace":"hostile","annotations":{"idpmake.io/distro":"y\u001b[2J\nFAKE"}},"data":{"who":"y"}}'
t_exit 1 "an object a hostile mark names as another's: refused" idpmake -C h up
t_nostring "no escape reaches the terminal" $'\x1b' "$OUTPUT"
t_grep "its name escaped, on one line" "ConfigMap hostile/evil2 was applied by distro 'y\\\\x1b\\[2J\\\\x0aFAKE' \\(its annotation idpmake.io/distro\\)" "$STDERR"

t_done
