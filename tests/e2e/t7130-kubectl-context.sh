#!/bin/bash
# deploy: kubectl goes where the distro says (issue 19 #3): the kube context
# comes from --kube-context, the cluster's kube-context or register.context,
# and only then the kubeconfig's current-context, always named (in the
# "acting on" line and as kubectl --context, in the pre-flight's check as in
# the apply); the context's server must be the cluster's `server`, or nothing
# is applied and nothing pushed.  A fake kubectl records its arguments, and
# fails its applies when told to.  The real kubectl against an emulated API
# server: t7140 (apply), t7141 (its failures), t7142 (the pre-flight).
# plancheck: off (it counts the calls of a fake kubectl, and plan calls it too (its kube check))
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p bin
cat >bin/kubectl <<EOF
#!/bin/sh
echo "\$*" >>"$T/kubectl.log"
case "\$*" in *" apply "*)	# the pre-flight's get --raw /api answers
	if [ -e "$T/kubectl.fail" ]; then
		echo "error: the server has asked for the client to provide credentials" >&2
		exit 1
	fi
esac
[ -t 0 ] || cat >/dev/null
exit 0
EOF
chmod +x bin/kubectl
export PATH=$T/bin:$PATH
: >kubectl.log
cat >kubeconfig <<'EOF'
apiVersion: v1
kind: Config
current-context: PROD-DO-NOT-TOUCH
clusters:
- name: prod
  cluster: {server: "https://prod.example.com:6443"}
- name: a
  cluster: {server: "https://a.example.com:6443"}
- name: b
  cluster: {server: "https://B.example.com:6443/"}
contexts:
- name: PROD-DO-NOT-TOUCH
  context: {cluster: prod, user: u}
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
users:
- name: u
  user: {token: not-a-real-token}
EOF
export KUBECONFIG=$T/kubeconfig
git init -q --bare -b main "$T/gitops.git" || t_bail "git init failed"
head_of() { git --git-dir="$T/gitops.git" rev-parse -q --verify main; }

# ---- no kube context in the distro: the current one, named -------------------
mkdistro one <<EOF
idpmake: 1
name: one
git: {remote: "$T/gitops.git"}
packages:
  core: {type: manifests, path: packages/core, deploy: kubectl}
EOF
mkmanifest one/packages/core/cm.yaml ConfigMap core
t_ok "plan names the ambient kube context" idpmake -C one plan
t_grep "current-context, and the file" "kubectl in-cluster: context PROD-DO-NOT-TOUCH \(current-context\) in $T/kubeconfig" "$STDERR"
t_eq "plan asks that context whether it answers, as up's pre-flight will (issue 32 #1)" 1 "$(grep -c 'get --raw' kubectl.log)"
: >kubectl.log
t_ok "up" idpmake -C one up
t_grep "the line again" "kubectl in-cluster: context PROD-DO-NOT-TOUCH \(current-context\)" "$STDERR"
t_grep "kubectl is given --context, never left to what is current" '^--context PROD-DO-NOT-TOUCH apply --server-side' kubectl.log
t_grep "the pre-flight asks that context first" '^--context PROD-DO-NOT-TOUCH get --raw /api --request-timeout=30s$' kubectl.log
t_eq "once" 1 "$(grep -c 'get --raw' kubectl.log)"

# ---- two clusters at two servers ---------------------------------------------
mkdistro two <<EOF
idpmake: 1
name: two
git: {remote: "$T/gitops.git"}
clusters:
  a: {server: "https://a.example.com:6443"}
  b: {server: "https://b.example.com:6443"}
packages:
  core: {type: manifests, path: packages/core, deploy: kubectl}
EOF
mkmanifest two/packages/core/cm.yaml ConfigMap core
before=$(head_of)
: >kubectl.log
t_exit 1 "both on the current context: refused" idpmake -C two up
t_grep "naming the cluster, both servers and the way out" \
	"a: cluster 'a' is at https://a.example.com:6443, and the kube context 'PROD-DO-NOT-TOUCH' \(current-context, in $T/kubeconfig\) is https://prod.example.com:6443: refusing to apply there; give the cluster kube-context" "$STDERR"
t_grep "and b" "b: cluster 'b' is at https://b.example.com:6443" "$STDERR"
t_eq "the 'acting on' line is said first, refused or not (issue 33 #4)" "acting on" "$(head -1 "$STDERR" | cut -c1-9)"
t_grep "naming both clusters as refused" "^acting on .*kubectl a: refused \(below\), kubectl b: refused \(below\)" "$STDERR"
t_eq "kubectl never ran" "" "$(cat kubectl.log)"
t_eq "nothing was pushed" "$before" "$(head_of)"
t_exit 3 "plan says so too (exit 3: up would refuse)" idpmake -C two plan

# ---- the cluster's kube-context, --kube-context ----------------------------------
sed -i 's|a: {server: "https://a.example.com:6443"}|a: {server: "https://a.example.com:6443", kube-context: ctx-a}|;s|b: {server: "https://b.example.com:6443"}|b: {server: "https://b.example.com:6443", kube-context: ctx-b}|' two/distro.yaml
t_ok "each cluster its kube-context" idpmake -C two up
t_grep "both named" "kubectl a: context ctx-a \(kube-context\) in .*kubectl b: context ctx-b \(kube-context\)" "$STDERR"
t_grep "applied to ctx-a" '^--context ctx-a apply' kubectl.log
t_grep "and to ctx-b (its server written otherwise, the same)" '^--context ctx-b apply' kubectl.log
t_grep "2 synced" '2 synced' "$STDOUT"
: >kubectl.log
t_exit 3 "--kube-context ctx-a for both: b is refused" idpmake --kube-context ctx-a -C two plan
t_grep "naming b" "cluster 'b' is at https://b.example.com:6443, and the kube context 'ctx-a' \(--kube-context" "$STDERR"
sed -i 's|kube-context: ctx-b|kube-context: nope|' two/distro.yaml
t_exit 3 "a kube-context the kubeconfig lacks" idpmake -C two plan
t_grep "naming it" "has no context 'nope' \(kube-context\)" "$STDERR"
sed -i 's|kube-context: nope|kube-context: ctx-b|' two/distro.yaml

# ---- a kubectl that fails ----------------------------------------------------
mkmanifest two/packages/core/cm2.yaml ConfigMap core2
touch kubectl.fail
before=$(head_of)
t_exit 1 "kubectl fails: up fails" idpmake -C two up
t_grep "the step and kubectl's cause" "FAILED: a/core:sync: kubectl apply: .*exit" "$STDERR"
t_grep "kubectl's own message in the step's log" "the server has asked for the client to provide credentials" "$OUTPUT"
rm -f kubectl.fail
t_ok "plan" idpmake -C two plan
t_grep "the failed sync is not recorded as done" '^sync +a/core:sync' "$STDOUT"
t_ok "up once kubectl works" idpmake -C two up
t_grep "synced now" '2 synced' "$STDOUT"

t_done
