#!/bin/bash
# What a crash or the end of a run leaves of its secrets (issue 35 #7):
#   core    idpmake turns core dumps off at start (RLIMIT_CORE 0, which its
#           children inherit, and not dumpable): a hook sees its limit at 0, and
#           idpmake killed by SIGSEGV from that hook, with `ulimit -c unlimited`
#           and core_pattern a plain file name, writes no core into the distro
#           folder (where the package scan would read it);
#   memory  no copy of a cluster's bearer token alone (a string of its own) is
#           freed before it is zeroed (heapscan.c): the masked copy of the
#           register body for the log (argoreg.c note_body), the body and the
#           pre-flight's config are zeroed first.  (Other copies outlive the
#           run: libcurl's send buffer holds a small POST body with its
#           headers and is freed as it is, and a kubeconfig's token passes
#           through libyaml; no core file holds them.)
# (The git.credentials password in the environment: t8407.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

init_gitops
mkdistro d <<EOF
idpmake: 1
name: nocore
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  hello:
    type: manifests
    path: packages/hello
    hooks:
      post:
        - {name: limits, run: 'cat /proc/\$PPID/limits >"$T/limits"; test -z "\$CRASH" || kill -SEGV \$PPID', env: [CRASH]}
EOF
mkmanifest d/packages/hello/cm.yaml ConfigMap hello

# ---- core ---------------------------------------------------------------------------
ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -Hc)"
t_ok "up (its hook reads idpmake's limits)" idpmake -C d up
t_grep "idpmake's core file size is 0" '^Max core file size +0 ' "$T/limits"
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $(ulimit -c),$pattern in
0,*) t_skip "a crash writes no core here anyway: ulimit -c is 0 (hard limit)" ;;
*,*/*|*,"|"*|*,) t_skip "a crash writes no core into the working folder here anyway: core_pattern is '$pattern'" ;;
*)
	printf '  a: "1"\n' >>d/packages/hello/cm.yaml
	t_exit 139 "up killed by SIGSEGV from its hook" env CRASH=1 ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0" "$IDPMAKE" -C d up
	find d -name "${pattern%%%*}*" -newer d/distro.yaml >"$T/cores"
	t_eq "no core file in the distro folder" "" "$(cat "$T/cores")"
	;;
esac

# ---- memory -------------------------------------------------------------------------
why=$(heapscan_usable) || t_skip_rest "$why"
heapscan_build
export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=20
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 20 --health-ms 20 --reconcile-ms 10
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
EAST_TOKEN=east-$(random_string)$(random_string)
export EAST_TOKEN
sed -i 's|^packages:$|clusters:\n  east:\n    server: https://east.example:6443\n    register: {token-env: EAST_TOKEN}\n&|' d/distro.yaml
t_ok "up registers east with a bearer token, under heapscan" heapscan "$EAST_TOKEN" idpmake -C d up
t_grep "east registered" 'east:register' "$OUTPUT"
curl -fsS "$emu/requests" >"$T/req.json"
t_ok "set-up: Argo CD got the token" grep -q "$EAST_TOKEN" "$T/req.json"
grep ' freed$' "$T/heapscan.out" >"$T/freed"
t_eq "no copy of the token alone was freed before it was zeroed" "" "$(cat "$T/freed")"
# the stack is zeroed as far as the thread has one (secret_stack_wipe): a small ulimit -s is no crash
printf '  small: "1"\n' >>d/packages/hello/cm.yaml
t_ok "up with a 160 KiB stack limit" bash -c 'ulimit -s 160 && exec "$0" -C "$1" up' "$IDPMAKE" d
t_done
