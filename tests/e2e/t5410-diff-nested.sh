#!/bin/bash
# idpmake diff on an argocd-app package: the files of its cnoe:// subfolder are
# compared with their paths relative to the package folder, so right after
# `up` nothing differs; and diff takes the state lock, as up does.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: nested
packages:
  app: {type: argocd-app, path: packages/app}
EOF
mkdir -p d/packages/app/manifests/deep
cat >d/packages/app/app.yaml <<'EOF'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: tiny
  namespace: argocd
spec:
  destination: {namespace: tiny, server: "https://kubernetes.default.svc"}
  source: {repoURL: "cnoe://manifests", targetRevision: HEAD, path: "."}
  project: default
EOF
mkmanifest d/packages/app/manifests/cm.yaml ConfigMap tiny tiny
mkmanifest d/packages/app/manifests/deep/other.yaml ConfigMap other tiny
cd d || exit 1

t_ok "up" idpmake up
repo=.idpmake/gitops.git
t_ok "the nested file is pushed" git --git-dir=$repo cat-file -e main:in-cluster/app-tiny/manifests/cm.yaml
t_ok "and the one nested twice" git --git-dir=$repo cat-file -e main:in-cluster/app-tiny/manifests/deep/other.yaml
t_exit 0 "diff --exit-code right after up: nothing differs" idpmake --exit-code diff
t_eq "no patch is printed" "" "$(cat "$STDOUT")"
t_grep "and it says so" '0 objects differ' "$STDERR"

echo '  level: debug' >>packages/app/manifests/deep/other.yaml
t_exit 1 "diff --exit-code after a change in the nested file" idpmake --exit-code diff
t_grep "the patch names the file by its path in the repository" \
	'^--- a/in-cluster/app-tiny/manifests/deep/other.yaml' "$STDOUT"
t_grep "with the new line" '^[+]  level: debug' "$STDOUT"
t_nogrep "and nothing else" 'cm.yaml|app.yaml' "$STDOUT"
t_grep "one object differs" '1 object differs' "$STDERR"

# another run holds the state lock: diff says who, or waits with --wait
python3 - .idpmake/lock "$T/locked" <<'EOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, b"%d %d\n" % (os.getpid(), int(time.time())))
open(sys.argv[2], "w").close()
time.sleep(3)
EOF
holder=$!
t_pids="$t_pids $holder"
for _ in $(seq 100); do [ -e "$T/locked" ] && break; sleep 0.05; done
t_fail "diff while another run holds the lock" idpmake diff
t_grep "names the holder" "another idpmake \\(pid $holder, started .*\\) holds .*\\.idpmake/lock" "$STDERR"
t_eq "and prints no patch" "" "$(cat "$STDOUT")"
t_ok "diff --wait waits for it" idpmake --wait diff
t_grep "saying for whom" "waiting for pid $holder" "$STDERR"
t_grep "then diffs" '1 object differs' "$STDERR"
wait "$holder"
t_done
