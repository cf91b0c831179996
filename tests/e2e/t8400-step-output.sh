#!/bin/bash
# A step's output, as ninja shows a command's (issue 25, Output): a hook that
# prints something shows it under its line when it succeeds, a quiet one
# shows nothing, a failing one its log; with -v the output comes as it is
# printed, before the step ends; `log STEP` prints what a step printed the
# last time it ran, `log` alone still lists the runs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<EOF2
idpmake: 1
name: out
rules: [rules/warn.yaml]
packages:
  ruled:
    type: warncat
    path: packages/ruled
  talk:
    type: manifests
    path: packages/talk
    hooks:
      post:
        - name: say
          run: 'echo the-hook-says-hello; echo and-a-second-line'
        - name: quiet
          run: 'true'
        - name: escape
          run: 'printf "before\\033]0;title\\007after\\n"'
  slow:
    type: manifests
    path: packages/slow
    hooks:
      pre:
        - name: tick
          run: 'echo first-tick; while [ ! -e "$T/go" ] && [ -d "$T" ]; do sleep 0.05; done; echo second-tick'
EOF2
# a rule whose command warns on stderr (its stdout is the objects)
mkdir -p d/rules
cat >d/rules/warn.yaml <<'EOF2'
rule: warncat
command: [sh, -c, 'echo "warncat: deprecated field in $1" >&2; cat "$1"/*.yaml', sh, "${src}"]
version: [sh, -c, 'echo warncat 1']
EOF2
mkmanifest d/packages/ruled/cm.yaml ConfigMap ruled
mkmanifest d/packages/talk/cm.yaml ConfigMap talk
mkmanifest d/packages/slow/cm.yaml ConfigMap slow
touch "$T/go"

t_ok "up" idpmake -C d up
cp "$STDOUT" up.out
t_grep "a hook's output is shown after it succeeds" '^the-hook-says-hello$' up.out
t_ok "under the hook's own line" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
i = next(i for i, l in enumerate(lines) if "post in-cluster/talk:post:say" in l)
assert lines[i + 1:i + 3] == ["the-hook-says-hello", "and-a-second-line"], lines' up.out
t_ok "a hook that printed nothing adds no line" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
i = next(i for i, l in enumerate(lines) if "post in-cluster/talk:post:quiet" in l)
assert i + 1 == len(lines) or lines[i + 1].startswith(("[", "idpmake: ")), lines' up.out

t_ok "a render rule's stderr is shown under its line when it succeeds" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
i = next(i for i, l in enumerate(lines) if "render in-cluster/ruled:render" in l)
assert lines[i + 1].startswith("warncat: deprecated field in "), lines' up.out
t_ok "a built-in in-process render shows nothing" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
i = next(i for i, l in enumerate(lines) if "render in-cluster/talk:render" in l)
assert i + 1 == len(lines) or lines[i + 1].startswith(("[", "idpmake: ")), lines' up.out
t_grep "a hook's control characters are not passed to the terminal" '^before\?\]0;title\?after$' up.out

# log STEP: the last output of one step; log: the runs, as before
t_ok "log STEP" idpmake -C d log in-cluster/talk:post:say
t_eq "prints what the hook printed" "the-hook-says-hello
and-a-second-line" "$(cat "$STDOUT")"
t_ok "log" idpmake -C d log
t_grep "log alone lists the runs" '^run 1 ' "$STDOUT"
t_exit 2 "log of an unknown step" idpmake -C d log in-cluster/talk:post:nosuch
t_grep "names it" "no step 'in-cluster/talk:post:nosuch'" "$STDERR"
t_exit 1 "log of a step that has not run" idpmake -C d log in-cluster/talk:sync
t_grep "says so" 'in-cluster/talk:sync has no log' "$STDERR"

# a failing hook: its log, as before
sed -i 's/echo and-a-second-line/echo and-a-second-line; exit 4/' d/distro.yaml
t_exit 1 "up with a failing hook" idpmake -C d up
t_grep "the failure shows the log" 'and-a-second-line' "$STDERR"
t_ok "log STEP after a failure" idpmake -C d log in-cluster/talk:post:say
t_grep "the failed run's output" 'the-hook-says-hello' "$STDOUT"

# -v: as it comes.  The hook prints a line, then waits for a file that the
# test makes only once that line was shown: only output that comes as it is
# printed lets the hook finish.
rm -f "$T/go"
idpmake -C d forget slow >/dev/null 2>&1
"$IDPMAKE" -C d -v up slow >"$T/v.out" 2>"$T/v.err" &
pid=$!
t_ok "-v: the first line is shown while the hook still runs" t_wait_for 60 grep -q '^first-tick$' "$T/v.out"
t_nogrep "before the hook ended" 'pre in-cluster/slow:pre:tick' "$T/v.out"
touch "$T/go"
wait "$pid"
t_eq "up -v ends well" 0 "$?"
t_eq "each line once, in order" "first-tick second-tick" "$(grep -- '-tick$' "$T/v.out" | tr '\n' ' ' | sed 's/ $//')"

t_done
