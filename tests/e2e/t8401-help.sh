#!/bin/bash
# Help and the command line (issue 25, Help): `idpmake CMD --help` gives the
# command's synopsis, its options and examples, from main.c's tables, which
# the man page's SYNOPSIS must match line for line, and --help names every
# option; options go anywhere on the line (before or after the command and
# the targets), `--` ends them; a typo'd command or target gets "did you
# mean"; --json on a command with no machine-readable output is a usage
# error; a missing distro.yaml and a tab in YAML get a hint.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

man=$top/man/idpmake.1

# ---- CMD --help -------------------------------------------------------------------------
t_ok "the commands" idpmake __complete commands
grep -v '^help$' "$STDOUT" >commands.txt
t_ok "there are some" test "$(wc -l <commands.txt)" -ge 15
: >table.txt
while read -r c; do
	t_ok "$c --help" idpmake "$c" --help
	cp "$STDOUT" "help-$c.txt"
	t_grep "$c --help: the synopsis" "^usage: idpmake \[OPTIONS\] $c\b" "help-$c.txt"
	t_grep "$c --help: examples" "^  idpmake .*$c|^  idpmake +#|^  idpmake \$" "help-$c.txt"
	t_ok "help $c says the same" idpmake help "$c"
	t_eq "help $c: the same text" "$(cat "help-$c.txt")" "$(cat "$STDOUT")"
	sed -n 's/^\(usage:\|      \) idpmake \[OPTIONS\] //p' "help-$c.txt" >>table.txt
done <commands.txt
t_grep "plan --help: its options" '^  --exit-code ' help-plan.txt
t_nogrep "plan --help: not another command's" '^  --overwrite ' help-plan.txt
t_grep "up --help: more than one synopsis line" '^       idpmake \[OPTIONS\] up --plan FILE$' help-up.txt

# the man page's SYNOPSIS, line for line, is the table's
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$man" | grep -v '^\.' |
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^idpmake \(\[options\] \)\{0,1\}//' |
	grep -v -e '^help ' -e '^command --help$' >man.txt
t_ok "the man page's synopsis has lines" test -s man.txt
t_eq "the man page's SYNOPSIS is the command table's" \
	"$(tr 'A-Z' 'a-z' <table.txt | sort)" "$(tr 'A-Z' 'a-z' <man.txt | sort)"

# --help names every option the parser takes
t_ok "--help" idpmake --help
cp "$STDOUT" help.txt
t_ok "the options" idpmake __complete options
for o in $(cat "$STDOUT"); do
	t_grep "--help names $o" "(^|[ ,])$o([ =,]|$)" help.txt
done

# ---- options anywhere, -- ---------------------------------------------------------------
mkdistro d <<EOF2
idpmake: 1
name: opts
clusters: {in-cluster: {}, prod: {}}
packages:
  web: {type: manifests, path: packages/web}
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web
t_ok "an option after a target" idpmake graph web --format json -C d
cp "$STDOUT" graph.json
t_ok "graph gave JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' graph.json
t_ok "-C after the command" idpmake plan -C d web
t_grep "the plan for web" '^render +(in-cluster/)?web' "$STDOUT"
t_exit 2 "an unknown option after a target is a usage error" idpmake -C d plan web --nosuch
t_exit 2 "-- ends the options: what follows is a target" idpmake -C d plan -- -x
t_grep "the target -x is unknown" "unknown target '-x'" "$STDERR"
t_exit 2 "without --, -x is an option" idpmake -C d plan -x
t_nogrep "not a target" "unknown target" "$STDERR"

# ---- did you mean -----------------------------------------------------------------------
t_exit 2 "a typo'd command" idpmake -C d upp
t_grep "did you mean up" "no command 'upp'; did you mean 'up'" "$STDERR"
t_exit 2 "another" idpmake -C d staus
t_grep "did you mean status" "did you mean 'status'" "$STDERR"
t_exit 2 "far from any command" idpmake -C d zzzzzzzz
t_nogrep "no suggestion" 'did you mean' "$STDERR"
t_exit 2 "a typo'd target" idpmake -C d plan wbe
t_grep "did you mean web" "unknown target 'wbe'.*did you mean 'web'" "$STDERR"
t_exit 2 "a typo'd cluster" idpmake -C d plan prd/
t_grep "did you mean prod" "did you mean 'prod'" "$STDERR"

# ---- --json: every command that reports, or a usage error --------------------------------
for c in forget render; do
	t_exit 2 "$c --json is a usage error" idpmake -C d "$c" --json
	t_grep "$c --json: says so" "--json: $c has no machine-readable output" "$STDERR"
	t_exit 2 "--json $c too" idpmake -C d --json "$c"
done
t_ok "status --json, after the command" idpmake -C d status --json
cp "$STDOUT" status.json
t_ok "status gave JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' status.json
t_ok "context list --json" env HOME="$T" "$IDPMAKE" context list --json
t_eq "an empty list" "[]" "$(cat "$STDOUT")"
t_ok "--json context list" env HOME="$T" "$IDPMAKE" --json context list
t_eq "the same" "[]" "$(cat "$STDOUT")"

# ---- hints ------------------------------------------------------------------------------
mkdir empty
t_exit 2 "no distro.yaml" idpmake -C empty plan
t_grep "says where it looked" "no distro.yaml in .*/empty" "$STDERR"
t_grep "and the ways on" "idpmake init.*-C DIR.*-f FILE" "$STDERR"
t_exit 2 "-f names a missing file" idpmake -C d -f nope.yaml plan
t_grep "names it" "no nope.yaml in" "$STDERR"
printf 'idpmake: 1\nname: tabs\npackages:\n  web:\n\ttype: manifests\n' >d/tab.yaml
t_exit 2 "a tab in YAML" idpmake -C d -f tab.yaml validate
t_grep "file:line:col: a tab is not allowed for indentation" \
	'^tab\.yaml:5:1: error: malformed YAML: a tab is not allowed for indentation' "$STDERR"
printf 'idpmake: 1\nname: tabs\nclusters:\n\tin-cluster: {}\n' >d/tab2.yaml
t_exit 2 "a tab where libyaml says 'cannot start any token'" idpmake -C d -f tab2.yaml validate
t_grep "said as a tab" '^tab2\.yaml:4:1: error: malformed YAML: a tab is not allowed for indentation' "$STDERR"

t_done
