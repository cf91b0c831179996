#!/bin/bash
# -j is capped at 256 (one thread per job): more is a usage error with a
# clear message, not a crash; -j 256 runs; --help says so.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: jobs
packages:
  a: {type: manifests, path: p/a}
  b: {type: manifests, path: p/b, needs: [a]}
EOF
mkmanifest d/p/a/cm.yaml ConfigMap a
mkmanifest d/p/b/cm.yaml ConfigMap b

t_exit 2 "up -j 100000 is a usage error" idpmake -C d -j 100000 up
t_grep "that names the cap" '^idpmake: -j 100000 is too many: at most 256 steps run at once' "$STDERR"
t_exit 2 "-j 257 too" idpmake -C d -j 257 up
t_ok "nothing ran" test ! -e d/.idpmake/gitops.git/refs/heads/main
t_ok "up -j 256 runs" idpmake -C d -j 256 up
t_ok "and pushed" git -C d/.idpmake/gitops.git rev-parse --verify -q main
t_ok "--help" idpmake --help
t_grep "--help names the cap" '-j N .*at most 256' "$STDOUT"

t_done
