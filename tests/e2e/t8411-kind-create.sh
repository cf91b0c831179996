#!/bin/bash
# A cluster idpmake makes itself (issue 24 #2): clusters.NAME.create.kind
# gives a step NAME:kind that runs `kind create cluster` when the cluster is
# absent (a fake kind on PATH, lib.sh fake_kind, whose clusters are the
# Kubernetes API emulator the real kubectl talks to), and every kubectl of
# that cluster, the hooks' too, goes to its context kind-NAME whatever the
# current context is.  A no-op makes nothing; a cluster deleted behind
# idpmake's back is made again and filled again; a kind cluster this state
# never made is refused without --adopt; a run killed while kind works is
# resumed without a second cluster; kind missing and docker down say so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_kube_emulator
fake_kind "$T/bin"
export PATH=$T/bin:$PATH
# the current context reaches the same emulator with a token it refuses:
# a kubectl that goes there fails
kubeconfig_for "$T/kc" other "wrong-$(random_string)"
export KUBECONFIG=$T/kc
git init -q --bare gitops.git
creates() { cat "$T/kind.made" 2>/dev/null | wc -l; }	# clusters kind made (lib.sh fake_kind)

mkdistro d <<EOF
idpmake: 1
name: kindy
git: {remote: "$T/gitops.git"}
vars: {out: "$T/hook.out"}
clusters:
  in-cluster:
    create: {kind: {name: dev, host-port: 9443}}
packages:
  hello:
    type: manifests
    path: packages/hello
    namespace: hello
    deploy: kubectl
    hooks:
      post:
        - {name: where, run: 'kubectl config current-context >"\$IDPMAKE_VAR_OUT"; kubectl -n hello get configmap hello -o name >>"\$IDPMAKE_VAR_OUT"'}
EOF
mkmanifest d/packages/hello/cm.yaml ConfigMap hello

t_ok "plan before the cluster exists" idpmake -C d plan
t_grep "names the step that makes it" 'in-cluster:kind' "$STDOUT"
t_grep "and the apply after it" 'once in-cluster:kind has made the cluster' "$OUTPUT"
t_eq "plan makes nothing" 0 "$(creates)"

t_ok "up from nothing" idpmake -C d up
t_grep "says where before acting" 'kubectl in-cluster: kind cluster dev, context kind-dev' "$STDERR"
t_grep "the end of a first up names where the platform is" "^  gitops +$T/gitops.git\$" "$STDOUT"
t_grep "and idpmake secrets" '^its users and passwords: idpmake secrets' "$STDOUT"
t_eq "kind create cluster ran once" 1 "$(creates)"
t_grep "with the name and idpmake's config" '^create cluster --name dev --config .*/kind/dev\.yaml$' "$T/kind.log"
t_grep "the config maps the host port to the node's 443" 'containerPort: 443, hostPort: 9443' "$T/kind-config-dev.yaml"
t_grep "and labels the node for the ingress" 'ingress-ready: "true"' "$T/kind-config-dev.yaml"
t_ok "the package is applied in the new cluster" kubectl --context kind-dev -n hello get configmap hello
t_eq "the hook's kubectl went to kind-dev" "kind-dev configmap/hello" "$(tr '\n' ' ' <"$T/hook.out" | sed 's/ $//')"

t_ok "the current context is made another one" kubectl config use-context other
t_ok "a no-op up" idpmake -C d up
t_eq "makes no second cluster" 1 "$(creates)"
t_nogrep "and says nothing of the platform" 'idpmake secrets' "$STDOUT"
t_grep "nothing runs" ' 0 rendered, nothing pushed, 0 synced, 0 hooks, [0-9]+ up to date' "$STDOUT"

sed -i 's/^  name: hello$/  name: hello\n  v: "2"/' d/packages/hello/cm.yaml
rm -f "$T/hook.out"
t_ok "a change, with another current context" idpmake -C d up
t_eq "is applied in kind-dev" 2 "$(kubectl --context kind-dev -n hello get configmap hello -o jsonpath='{.data.v}')"
t_eq "and its hook ran in kind-dev too" "kind-dev configmap/hello" "$(tr '\n' ' ' <"$T/hook.out" | sed 's/ $//')"
t_grep "the hook's line names that context (issue 33 #2)" 'post in-cluster/hello:post:where: context kind-dev \(create.kind\)' "$STDOUT"
t_eq "the current context is left as it was" other "$(kubectl config current-context)"

t_exit 1 "--kube-context naming another context is refused" idpmake -C d up --kube-context other
t_grep "saying why" "kind cluster 'dev' idpmake creates .*refusing to apply elsewhere" "$STDERR"

# ---- deleted behind its back: made again, and filled again --------------------------
t_ok "kind delete cluster, outside idpmake" kind delete cluster --name dev
t_ok "plan says it is gone" idpmake -C d plan
t_grep "and made again" "the kind cluster 'dev' is gone" "$OUTPUT"
t_ok "up" idpmake -C d up
t_eq "makes it again" 2 "$(creates)"
t_grep "and applies the package again" '1 synced' "$STDOUT"

# ---- another state's cluster: --adopt ----------------------------------------
mkdir d2
cp -r d/packages d2/
sed 's/name: kindy/name: other-distro/' d/distro.yaml >d2/distro.yaml
t_exit 1 "a kind cluster this state never made is refused" idpmake -C d2 up
t_grep "naming the way out" "a kind cluster 'dev' exists, and this state never made it: .idpmake up --adopt" "$OUTPUT"
t_eq "nothing is made" 2 "$(creates)"
t_ok "up --adopt takes it on" idpmake -C d2 up --adopt
t_grep "and says so" 'taken on \(up --adopt\)' "$OUTPUT"
t_grep "summed up by kind at the end (issue 35 #14)" '^idpmake: adopted \(--adopt\): 1 kind cluster \(dev\), 1 kubectl object \(ConfigMap hello/hello\)$' "$STDOUT"
t_eq "without making one" 2 "$(creates)"
mkdir d2b
cp -r d/packages d2b/
sed 's/name: kindy/name: third-distro/' d/distro.yaml >d2b/distro.yaml
t_exit 1 "another state: refused" idpmake -C d2b up
t_exit 1 "and refused again: the refusal gave it nothing" idpmake -C d2b up
t_grep "the same refusal" "this state never made it" "$OUTPUT"

# ---- kind missing; docker down -------------------------------------------------
mkdistro d3 <<EOF
idpmake: 1
name: third
git: {remote: "$T/gitops3.git"}
clusters:
  in-cluster: {create: {kind: {name: three}}}
packages:
  hello: {type: manifests, path: packages/hello, namespace: hello3, deploy: kubectl}
EOF
git init -q --bare gitops3.git
cp -r d/packages d3/
mkdir nokind
for t in kubectl git; do ln -s "$(command -v $t)" "nokind/$t"; done
t_exit 2 "without kind on PATH: exit 2" env PATH="$T/nokind:/usr/bin:/bin" "$IDPMAKE" -C d3 up
t_grep "saying how to install it" 'kind is not on PATH.*install kind' "$STDERR"
echo 'ERROR: failed to create cluster: failed to get docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >kind.fail-create
t_exit 1 "docker not running: up fails" idpmake -C d3 up
t_grep "with kind's message, named as kind's" "Cannot connect to the Docker daemon.*\(kind's error\)" "$OUTPUT"
t_grep "and nothing pushed" 'nothing pushed' "$OUTPUT"
rm kind.fail-create
t_ok "once docker runs, up makes it" idpmake -C d3 up
t_eq "one more cluster" 3 "$(creates)"

# ---- killed while kind works: resumed, no second cluster ------------------------------
mkdir d4
cp -r d/packages d4/
sed 's/name: three/name: four/; s/name: third/name: fourth/; s/gitops3/gitops4/; s/hello3/hello4/' d3/distro.yaml >d4/distro.yaml
git init -q --bare gitops4.git
: >kind.hang-create
"$IDPMAKE" -C d4 up >"$T/killed.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e kind.hanging ] && break; sleep 0.1; done
t_ok "kind made the cluster and hangs" test -e kind.hanging
kill -TERM $pid
wait $pid
t_eq "the killed up ends as interrupted" 143 "$?"
rm -f kind.hang-create kind.hanging
t_eq "one create so far" 4 "$(creates)"
t_ok "the next up resumes" idpmake -C d4 up
t_grep "taking on the cluster the killed run made" 'taken on: an earlier run was making it' "$OUTPUT"
t_eq "with no second create" 4 "$(creates)"
t_ok "and fills it" kubectl --context kind-four -n hello4 get configmap hello

# ---- a created cluster the distro still uses: kept, never deleted ------------------
sed -i 's/  in-cluster: {create: {kind: {name: three}}}/  in-cluster: {kube-context: kind-three}/' d3/distro.yaml
t_ok "the distro no longer makes kind cluster three, but uses its context" idpmake -C d3 plan
t_grep "plan keeps it" "^keep +kind cluster three \(in-cluster:kind: no longer made by it, still used: cluster 'in-cluster' uses its context kind-three \(kube-context\)\)" "$STDOUT"
t_ok "plan --json" idpmake -C d3 plan --json
cp "$STDOUT" plan3.json
t_ok "keeps it too" python3 -c '
import json
k = json.load(open("plan3.json"))["kind_clusters"]
assert [(e["name"], e["action"], e["step"]) for e in k] == [("three", "keep", "in-cluster:kind")], k
assert "kind-three (kube-context)" in k[0]["reason"], k'
t_ok "up --prune --delete-clusters" idpmake -C d3 up --prune --delete-clusters
t_grep "keeps it, saying why" "the kind cluster 'three' .* is still used .*: kept, never deleted" "$OUTPUT"
t_nogrep "kind delete is not run" '^delete cluster --name three$' "$T/kind.log"
t_ok "it is there" grep -qx three <(kind get clusters 2>/dev/null)
t_ok "and still filled through its context" kubectl --context kind-three -n hello3 get configmap hello

# ---- a created cluster gone from the distro: said, --delete-clusters deletes it -----------
mkdistro d5 <<EOF
idpmake: 1
name: fifth
git: {remote: "$T/gitops5.git"}
clusters:
  in-cluster: {create: {kind: {name: five}}}
packages: {}
EOF
git init -q --bare gitops5.git
t_ok "a distro makes kind cluster five" idpmake -C d5 up
t_ok "it is there" grep -qx five <(kind get clusters 2>/dev/null)
sed -i 's/  in-cluster: {create: {kind: {name: five}}}/  in-cluster: {}/' d5/distro.yaml
t_ok "then no longer, while kind made its context the current one" idpmake -C d5 plan
t_grep "the current context still reaches it: kept" "^keep +kind cluster five \(in-cluster:kind: .*uses its context kind-five \(current-context\)\)" "$STDOUT"
t_ok "the current context is made another one" kubectl config use-context other
t_ok "then no longer" idpmake -C d5 plan
t_grep "plan lists it, left as up leaves it" '^leave +kind cluster five \(in-cluster:kind: gone from the distro; up --prune --delete-clusters deletes it\)' "$STDOUT"
t_grep "and counts it" '; 1 kind cluster left$' "$STDOUT"
# plan --json lists it too (issue 35 #11), with what up would do
t_ok "plan --json" idpmake -C d5 plan --json
cp "$STDOUT" plan5.json
t_ok "kind_clusters: its name, cluster, step, action and reason" python3 -c '
import json
k = json.load(open("plan5.json"))["kind_clusters"]
assert k == [{"name": "five", "cluster": "in-cluster", "step": "in-cluster:kind", "action": "leave",
              "reason": "gone from the distro; up --prune --delete-clusters deletes it"}], k'
t_ok "plan --json --prune --delete-clusters" idpmake -C d5 plan --json --prune --delete-clusters
cp "$STDOUT" plan5d.json
t_ok "its action is delete" python3 -c '
import json
k = json.load(open("plan5d.json"))["kind_clusters"]
assert [(e["name"], e["action"]) for e in k] == [("five", "delete")], k'
t_exit 1 "plan --exit-code --prune --delete-clusters: a kind cluster to delete is work" idpmake -C d5 plan --exit-code --prune --delete-clusters
t_grep "counted as such" '; 1 kind cluster to delete$' "$STDOUT"
t_ok "up leaves it" idpmake -C d5 up
t_grep "and says so" "the kind cluster 'five' .* is gone from the distro; it stays" "$OUTPUT"
t_exit 2 "--delete-clusters alone is a usage error" idpmake -C d5 up --delete-clusters
# (with an Argo CD, --prune alone refuses to delete it, naming --delete-clusters; without one it is a usage error)
t_exit 2 "up --prune without argocd and --delete-clusters: a usage error" idpmake -C d5 up --prune
t_ok "up --prune --delete-clusters" idpmake -C d5 up --prune --delete-clusters
t_grep "deletes it" "deleted the kind cluster 'five'" "$OUTPUT"
t_grep "with kind delete cluster" '^delete cluster --name five$' "$T/kind.log"
t_fail "it is gone" grep -qx five <(kind get clusters 2>/dev/null)
t_ok "a later plan" idpmake -C d5 plan
t_nogrep "has nothing more to say of it" "kind cluster five" "$OUTPUT"

# ---- kind fails: the name is not this state's afterwards ------------------------------
echo 'ERROR: failed to create cluster: node(s) already exist for a cluster with the name "six"' >kind.fail-create
mkdir d6
sed 's/name: fifth/name: sixth/; s/gitops5/gitops6/; s/  in-cluster: {}/  in-cluster: {create: {kind: {name: six}}}/' d5/distro.yaml >d6/distro.yaml
git init -q --bare gitops6.git
t_exit 1 "kind fails" idpmake -C d6 up
rm kind.fail-create
t_ok "someone else makes a kind cluster six" kind create cluster --name six
t_exit 1 "the next up refuses it: the failed run made it no one's" idpmake -C d6 up
t_grep "saying so" "a kind cluster 'six' exists, and this state never made it" "$OUTPUT"

# ---- a cluster renamed: its kind cluster is taken on only as it was made (issue 35 #10) ----
mkdistro d7 <<EOF
idpmake: 1
name: seventh
git: {remote: "$T/gitops7.git"}
clusters:
  alpha: {create: {kind: {name: seven, host-port: 9447}}}
packages: {}
EOF
git init -q --bare gitops7.git
t_ok "a distro makes kind cluster seven for cluster alpha" idpmake -C d7 up
made=$(creates)
sed -i 's/  alpha: {create: {kind: {name: seven, host-port: 9447}}}/  beta: {create: {kind: {name: seven, host-port: 9448}}}/' d7/distro.yaml
t_ok "alpha renamed beta, with another host port: plan" idpmake -C d7 plan
t_grep "plan says the cluster alpha made has another host port" \
	"beta:kind: the kind cluster 'seven' that alpha:kind made has another image or host port: refused while it exists" "$STDOUT"
t_exit 1 "up refuses to take it on" idpmake -C d7 up
t_grep "naming both steps, and the way out" \
	"beta:kind.*the kind cluster 'seven' was made by alpha:kind .*with another image or host port.*kind delete cluster --name seven" "$OUTPUT"
t_eq "nothing is made" "$made" "$(creates)"
t_exit 1 "and again: the refusal recorded nothing" idpmake -C d7 up
sed -i 's/host-port: 9448/host-port: 9447/' d7/distro.yaml
t_ok "beta with alpha's host port: up" idpmake -C d7 up
t_grep "takes it on, saying from where" "taken on: alpha:kind made it" "$OUTPUT"
t_eq "without making one" "$made" "$(creates)"
t_ok "a later plan" idpmake -C d7 plan
t_nogrep "has nothing to say of alpha's cluster" "alpha:kind" "$OUTPUT"
t_nogrep "nor of beta:kind" "beta:kind" "$STDOUT"
# a run killed while kind made it, then the host port changed: the config it wrote tells
mkdistro d8 <<EOF
idpmake: 1
name: eighth
git: {remote: "$T/gitops8.git"}
clusters:
  in-cluster: {create: {kind: {name: eight, host-port: 9450}}}
packages: {}
EOF
git init -q --bare gitops8.git
: >kind.hang-create
"$IDPMAKE" -C d8 up >"$T/killed8.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -e kind.hanging ] && break; sleep 0.1; done
t_ok "kind made cluster eight and hangs" test -e kind.hanging
kill -TERM $pid
wait $pid
rm -f kind.hang-create kind.hanging
sed -i 's/host-port: 9450/host-port: 9451/' d8/distro.yaml
t_exit 1 "another host port than the killed run's: refused" idpmake -C d8 up
t_grep "naming the config it was made with" "the kind cluster 'eight' that an earlier run was making \(.*/kind/eight.yaml\) has another image or host port" "$OUTPUT"
sed -i 's/host-port: 9451/host-port: 9450/' d8/distro.yaml
t_ok "its own host port again: taken on" idpmake -C d8 up
t_grep "as the killed run's" 'taken on: an earlier run was making it' "$OUTPUT"

# ---- bad input --------------------------------------------------------------------
mkdistro bad <<'EOF'
idpmake: 1
name: bad
clusters:
  in-cluster:
    kube-context: mine
    create: {kind: {name: Bad_Name}}
packages: {}
EOF
t_exit 2 "create with kube-context, and a bad kind name" idpmake -C bad validate
t_grep "the name, located" 'distro.yaml:6:[0-9]+: error: create.kind.name .Bad_Name. is not a kind cluster name' "$STDERR"
t_grep "the kube-context, located" "distro.yaml:6:[0-9]+: error: cluster 'in-cluster' is created \(create.kind\) and has kube-context 'mine'" "$STDERR"
t_done
