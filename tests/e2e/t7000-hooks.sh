#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Hooks: their environment (IDPMAKE_CLUSTER, _PACKAGE, _NAMESPACE, _COMMIT,
# _RENDERED, _VAR_<NAME>) and folder; when: once, changed, always; inputs; a
# failing hook fails its package, prints its log and runs again next time; a
# hook that outlives its timeout is killed; hook output in .idpmake/logs/.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: hooks
vars:
  domain: example.test
  team-name: platform
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
    hooks:
      pre:
        - name: env
          run: 'env | grep "^IDPMAKE_" | sort >out/pre-env.txt; pwd -P >out/pre-cwd.txt; ls "$IDPMAKE_RENDERED" >out/pre-rendered.txt; echo hello-from-the-pre-hook'
        - name: once
          run: echo once >>out/once.txt
          when: once
        - name: seeded
          run: echo seeded >>out/seeded.txt
          inputs: [hooks/seed.txt]
          when: changed
      post:
        - name: changed
          run: 'echo "$IDPMAKE_COMMIT" >>out/changed.txt; env | grep "^IDPMAKE_" | sort >out/post-env.txt'
          when: changed
        - name: always
          run: 'echo "$IDPMAKE_COMMIT" >>out/always.txt'
          when: always
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkdir -p d/out d/hooks
echo 1 >d/hooks/seed.txt
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/web/svc.yaml Service web
mkmanifest d/packages/db/cm.yaml ConfigMap db

bare=$T/d/.idpmake/gitops.git
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
envof() { sed -n "s/^$2=//p" "$1"; }
up() { idpmake -C "$T/d" up "$@"; }

t_ok "first up" up
head=$(git -C "$bare" rev-parse main)
t_eq "the pre hook ran" yes "$([ -s d/out/pre-env.txt ] && echo yes)"
t_eq "IDPMAKE_CLUSTER" in-cluster "$(envof d/out/pre-env.txt IDPMAKE_CLUSTER)"
t_eq "IDPMAKE_PACKAGE" web "$(envof d/out/pre-env.txt IDPMAKE_PACKAGE)"
t_eq "IDPMAKE_NAMESPACE" apps "$(envof d/out/pre-env.txt IDPMAKE_NAMESPACE)"
t_eq "IDPMAKE_COMMIT is the pushed commit" "$head" "$(envof d/out/pre-env.txt IDPMAKE_COMMIT)"
t_eq "IDPMAKE_VAR_DOMAIN" example.test "$(envof d/out/pre-env.txt IDPMAKE_VAR_DOMAIN)"
t_eq "IDPMAKE_VAR_TEAM_NAME (from team-name)" platform "$(envof d/out/pre-env.txt IDPMAKE_VAR_TEAM_NAME)"
t_ok "IDPMAKE_RENDERED is set" test -n "$(envof d/out/pre-env.txt IDPMAKE_RENDERED)"
t_eq "IDPMAKE_RENDERED holds the rendered objects" \
	"$(git -C "$bare" ls-tree --name-only main in-cluster/web/ | sed 's#.*/##' | sort | tr '\n' ' ')" \
	"$(sort d/out/pre-rendered.txt | tr '\n' ' ')"
t_eq "the hook runs in the distro folder" "$(cd d && pwd -P)" "$(cat d/out/pre-cwd.txt 2>&1)"
t_eq "the post hook has the same commit" "$head" "$(envof d/out/post-env.txt IDPMAKE_COMMIT)"
t_eq "and the package" web "$(envof d/out/post-env.txt IDPMAKE_PACKAGE)"
t_eq "when: once ran" 1 "$(lines d/out/once.txt)"
t_eq "when: changed ran" 1 "$(lines d/out/changed.txt)"
t_eq "when: always ran" 1 "$(lines d/out/always.txt)"
t_eq "the hook with inputs ran" 1 "$(lines d/out/seeded.txt)"

# ---- logs ------------------------------------------------------------------------
t_ok "the pre hook's output is in .idpmake/logs/" grep -r -q hello-from-the-pre-hook d/.idpmake/logs
t_nogrep "and not on the terminal" hello-from-the-pre-hook "$OUTPUT"

# ---- a no-op up ------------------------------------------------------------------
t_ok "a no-op up" up
t_eq "when: once did not run" 1 "$(lines d/out/once.txt)"
t_eq "when: changed did not run" 1 "$(lines d/out/changed.txt)"
t_eq "when: always ran again" 2 "$(lines d/out/always.txt)"
t_eq "with the current commit" "$head" "$(tail -n 1 d/out/always.txt)"
t_grep "the summary counts one hook" '1 hook' "$STDOUT"

# ---- another package changes -----------------------------------------------------------
printf '  more: "1"\n' >>d/packages/db/cm.yaml
t_ok "up after a change to db" up
t_eq "web's when: changed did not run" 1 "$(lines d/out/changed.txt)"
t_eq "web's when: always ran" 3 "$(lines d/out/always.txt)"

# ---- the package changes ------------------------------------------------------------------
sed -i 's/replicas: 1/replicas: 2/' d/packages/web/deploy.yaml
t_ok "up after a change to web" up
head2=$(git -C "$bare" rev-parse main)
t_eq "when: changed ran" 2 "$(lines d/out/changed.txt)"
t_eq "with the new commit" "$head2" "$(tail -n 1 d/out/changed.txt)"
t_eq "when: once did not run again" 1 "$(lines d/out/once.txt)"
t_eq "when: always ran" 4 "$(lines d/out/always.txt)"
t_eq "the hook with inputs ran (the package changed)" 2 "$(lines d/out/seeded.txt)"

# ---- a hook's inputs change ---------------------------------------------------------------
echo 2 >d/hooks/seed.txt
t_ok "up after a change to a hook's input" up
t_eq "the hook with that input ran" 3 "$(lines d/out/seeded.txt)"
t_eq "no render ran" 0 "$(sed -n 's/^idpmake: \([0-9]*\) rendered.*/\1/p' "$STDOUT")"
t_eq "web's other when: changed hook did not" 2 "$(lines d/out/changed.txt)"

# ---- when: once, with a new command --------------------------------------------------------
sed -i 's/run: echo once >>out\/once.txt/run: echo once-again >>out\/once.txt/' d/distro.yaml
t_ok "up after changing the once hook's command" up
t_eq "when: once runs once with the new command" 2 "$(lines d/out/once.txt)"
t_ok "and not after that" up
t_eq "when: once" 2 "$(lines d/out/once.txt)"

# ---- a failing hook ----------------------------------------------------------------------------
mkdistro f <<'EOF'
idpmake: 1
name: failing
packages:
  api:
    type: manifests
    path: packages/api
    namespace: apps
    hooks:
      pre:
        - name: check
          run: 'echo check-ran >>out/check.txt; echo "the-check-says-no-$((40 + 2))"; test -f out/ok'
      post:
        - name: after
          run: echo after >>out/after.txt
EOF
mkdir -p f/out
mkmanifest f/packages/api/cm.yaml ConfigMap api
t_exit 1 "up with a failing pre hook exits 1" idpmake -C "$T/f" up
cp "$OUTPUT" "$T/fail1.out"
t_grep "it prints the hook's log" 'the-check-says-no-42' "$T/fail1.out"
t_grep "it names the hook" 'in-cluster/api:pre:check' "$T/fail1.out"
t_eq "the hook ran once" 1 "$(lines f/out/check.txt)"
t_eq "the post hook after it did not run" 0 "$(lines f/out/after.txt)"
t_ok "the log is in .idpmake/logs/ too" grep -r -q 'the-check-says-no-42' f/.idpmake/logs
t_exit 1 "the next up runs the failed hook again" idpmake -C "$T/f" up
t_eq "the hook ran twice" 2 "$(lines f/out/check.txt)"
t_ok "fix what the hook checks" touch f/out/ok
t_ok "the next up runs it again and succeeds" idpmake -C "$T/f" up
t_eq "the hook ran three times" 3 "$(lines f/out/check.txt)"
t_eq "the post hook ran" 1 "$(lines f/out/after.txt)"
t_ok "a further up" idpmake -C "$T/f" up
t_eq "does not run the hook (when: changed, it succeeded)" 3 "$(lines f/out/check.txt)"

# ---- a hook timeout -------------------------------------------------------------------------
marker=31.$$
mkdistro s <<EOF
idpmake: 1
name: slow
packages:
  api:
    type: manifests
    path: packages/api
    namespace: apps
    hooks:
      post:
        - name: slow
          run: 'echo started >out/slow-started; sleep $marker; echo finished >out/slow-finished'
          timeout: 1
EOF
mkdir -p s/out
mkmanifest s/packages/api/cm.yaml ConfigMap api
t_exit 1 "up with a hook past its timeout exits 1" idpmake -C "$T/s" up
cp "$OUTPUT" "$T/slow.out"
t_ok "the hook started" test -f s/out/slow-started
t_grep "the output says it timed out" 'time(d)? ?out' "$T/slow.out"
# no_sleeper: no process runs `sleep $marker` (pgrep: 1 is none, 0 found, 2+ an error)
no_sleeper() { pgrep -f "sleep $marker" >/dev/null; [ $? = 1 ]; }
if command -v pgrep >/dev/null; then
	t_ok "the hook's children were killed too" t_wait_for 30 no_sleeper
	for pid in $(pgrep -f "sleep $marker"); do kill "$pid" 2>/dev/null; done
else
	t_skip "pgrep missing (procps): no check that the hook's children were killed"
fi
# the hook sleeps 31 s, then writes slow-finished: a run that waited for it
# instead of killing it at its timeout of 1 s leaves that file behind (no
# bound on the run's seconds: a loaded machine may take its time)
t_ok "the hook did not finish" test ! -e s/out/slow-finished

t_done
