#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Two runs on one bundle's state folder (issue 20 #2): `-f A.tar up` is in a
# hook that waits; meanwhile `-f B.tar plan` and `-f B.tar up` on the same
# folder (the state beside both archives) must not touch A's unpacked tree:
# they refuse, naming the holder of the lock (or wait, with --wait).  A's
# hook then runs A's script, not B's, and a bad archive does not delete A's
# tree under it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir off && git init -q --bare -b main "$T/gitops.git" || t_bail "git init failed"
for v in a b; do
	mkdistro "src-$v" <<DISTRO
idpmake: 1
name: d-$v
git: {remote: "$T/gitops.git"}
packages:
  p:
    type: manifests
    path: manifests
    hooks:
      post:
        - {name: h, run: "sh wait.sh"}
DISTRO
	mkmanifest "src-$v/manifests/cm.yaml" ConfigMap "cm-$v" default
	# the hook says it started, waits for the test, then runs the archive's second.sh
	printf 'touch "%s/started"; while [ ! -e "%s/go" ] && [ -d "%s" ]; do sleep 0.05; done; sh second.sh\n' "$T" "$T" "$T" \
		>"src-$v/wait.sh"
	echo "echo this is $v >\"$T/ran\"" >"src-$v/second.sh"
	t_ok "pack $v" idpmake -C "src-$v" pack -o "$T/off/$v.tar"
done
cp off/b.tar bad.tar && printf 'garbage' | dd of=bad.tar bs=1 seek=600 conv=notrunc 2>/dev/null

cd off || t_bail "no off/"
"$IDPMAKE" -f a.tar up >up-a.out 2>&1 &
upa=$!
t_pids="$t_pids $upa"
t_wait_for 60 test -e "$T/started" || t_bail "a's hook never started: $(cat up-a.out)"

t_exit 1 "-f b.tar plan while a's up runs is refused" idpmake -f b.tar plan
t_grep "naming the lock's holder" "another idpmake \\(pid $upa, .*\\) holds .*\\.idpmake/lock" "$STDERR"
t_exit 1 "-f b.tar up as well" idpmake -f b.tar up
t_exit 1 "and a damaged archive too, before it is read" idpmake -f "$T/bad.tar" --state .idpmake plan
t_grep "it is refused for the lock" "another idpmake .* holds" "$STDERR"
t_ok "a's unpacked distro is still a's" grep -rq 'name: d-a' .idpmake/bundle/

# a second run that waits: it unpacks after a's run ended
"$IDPMAKE" --wait -f b.tar plan >plan-b.out 2>&1 &
planb=$!
t_pids="$t_pids $planb"
t_ok "plan --wait says it waits" t_wait_for 30 grep -q 'waiting for pid' plan-b.out
touch "$T/go"
wait "$upa"
t_eq "a's up succeeded" 0 "$?"
t_eq "a's hook ran a's script" "this is a" "$(cat "$T/ran")"
wait "$planb"
t_eq "b's plan --wait ran once a's up ended" 0 "$?"
t_grep "b's plan waited for a's run" "waiting for pid $upa to release" plan-b.out
t_done
