#!/bin/bash
# Fleet fields of distro.yaml (fleet.md): cluster labels, mode and register,
# rollout.waves, sync.automated; each mistake is refused with
# FILE:LINE:COL and exit 2, and a good fleet distro validates.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

n=0
mkmanifest "$T/template/packages/a/cm.yaml" ConfigMap a
newdistro() {
	n=$((n + 1))
	d=$T/c$n
	cp -R "$T/template" "$d"
	{
		printf 'idpmake: 1\nname: fleet\n'
		cat
		printf 'packages:\n  a: {type: manifests, path: packages/a}\n'
	} >"$d/distro.yaml"
}
bad() {
	local desc=$1 loc=$2 re=$3
	newdistro
	t_exit 2 "$desc: validate exits 2" idpmake -C "$d" validate
	t_grep "$desc: distro.yaml:$loc: error: /$re/" "^distro\.yaml:$loc: error: .*$re" "$STDERR"
	[ ! -e "$d/.idpmake/state.db" ]
	t_report $? "$desc: no state written"
}

bad "mode" 4:41 "mode must be 'linked' or 'cloned', not 'copied'" <<'EOF'
clusters:
  c1: {server: "https://c1:6443", mode: copied}
EOF
bad "register with both sources" 4:45 "register needs either 'token-env'.*not both" <<'EOF'
clusters:
  c1: {server: "https://c1:6443", register: {token-env: T, kubeconfig: k.yaml}}
EOF
bad "register with neither" 4:45 "not neither" <<'EOF'
clusters:
  c1: {server: "https://c1:6443", register: {insecure: true}}
EOF
bad "register on a name-only cluster" 4:32 "named only by 'name'" <<'EOF'
clusters:
  c1: {name: legacy, register: {token-env: T}}
EOF
bad "unknown register key" 4:46 "unknown key 'token' in register" <<'EOF'
clusters:
  c1: {server: "https://c1:6443", register: {token: T}}
EOF
bad "labels must be strings" 4:50 "label 'tier' must be a string" <<'EOF'
clusters:
  c1: {server: "https://c1:6443", labels: {tier: [a]}}
EOF
bad "a wave that selects nothing" 6:7 "wave 'eu' selects no cluster" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  waves:
    - {name: eu, max-parallel: 2}
EOF
bad "max-failed" 6:47 "max-failed must be a count or a percentage such as 10%, not '10 percent'" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  waves:
    - {name: eu, clusters: ["*"], max-failed: 10 percent}
EOF
bad "a percentage over 100" 6:47 "not '120%'" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  waves:
    - {name: eu, clusters: ["*"], max-failed: 120%}
EOF
bad "a wave named rest" 6:7 "wave 'rest' is the name of the wave of unmatched clusters" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}, c2: {server: "https://c2:6443"}}
rollout:
  waves:
    - {name: rest, clusters: [c1]}
EOF
bad "a wave defined twice" 7:7 "wave 'eu' is defined twice" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  waves:
    - {name: eu, clusters: [c1]}
    - {name: eu, clusters: [c2]}
EOF
# found by fuzz-distro: a wave that is not a map had no name, and the
# unmatched clusters' wave compared against it (a NULL strcmp under UBSan)
bad "a wave that is not a map, with an unmatched cluster" 6:7 "a wave must be a map" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}, c2: {server: "https://c2:6443"}}
rollout:
  waves:
    - 5
    - {name: eu, clusters: [c1]}
EOF
bad "a check without run" 6:42 "a check needs 'run'" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  waves:
    - {name: eu, clusters: ["*"], check: {timeout: 5}}
EOF
bad "unknown rollout key" 5:3 "unknown key 'wave' in rollout; did you mean 'waves'" <<'EOF'
clusters: {c1: {server: "https://c1:6443"}}
rollout:
  wave: []
EOF

# a package's sync
n=$((n + 1)); d=$T/c$n; cp -R "$T/template" "$d"
cat >"$d/distro.yaml" <<'EOF'
idpmake: 1
name: fleet
packages:
  a: {type: manifests, path: packages/a, sync: {self-heal: true}}
EOF
t_exit 2 "self-heal without automated" idpmake -C "$d" validate
t_grep "self-heal without automated: located" '^distro\.yaml:4:60: error: self-heal needs automated: true' "$STDERR"

# a good fleet distro
newdistro <<'EOF'
clusters:
  canary: {server: "https://canary:6443", labels: {ring: "0"}, mode: linked}
  eu-1: {server: "https://eu-1:6443", labels: {region: eu}, mode: cloned,
         register: {token-env: EU1_TOKEN, ca-file: ca.pem}}
  eu-2: {server: "https://eu-2:6443", labels: {region: eu},
         register: {kubeconfig: kube.yaml, context: eu-2}}
  legacy: {name: legacy}
rollout:
  waves:
    - {name: canary, clusters: [canary]}
    - {selector: {region: eu}, max-parallel: 1, bake: 0, max-failed: 50%}
EOF
t_ok "a fleet distro validates" idpmake -C "$d" validate
t_ok "plan" idpmake -C "$d" plan
t_grep "an unnamed wave is wave-N" '^wave +wave-2: eu-1, eu-2 \(max-parallel 1, max-failed 50%\)$' "$STDOUT"
t_grep "legacy is in rest" '^wave +rest: legacy$' "$STDOUT"
t_done
