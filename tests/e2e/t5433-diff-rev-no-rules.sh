#!/bin/bash
# diff --rev renders the other revision, and so runs the rules it defines: a
# pull request that adds a rule gets its command run by the CI job that
# comments on it (issue 20, suspected, last bullet).  diff --rev --no-rules
# runs none: a package whose rule the distro defines is left out on both
# sides, named on standard error, in the markdown comment and in --json;
# neither the rule's command nor its version command runs, and the packages
# of built-in renderers are compared as before.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p repo && git -C repo init -q -b main || t_bail "git init"
mkdistro repo <<'EOF'
idpmake: 1
name: pr
packages:
  base: {type: manifests, path: packages/base, namespace: base}
EOF
mkmanifest repo/packages/base/cm.yaml ConfigMap base base
printf '.idpmake/\n' >repo/.gitignore
git -C repo add -A && git -C repo commit -qm "main" || t_bail "first commit"
A=$(git -C repo rev-parse HEAD)

# the pull request: a rule whose command (and version command) would run on the CI runner
mkdir -p repo/rules
cat >repo/rules/evil.yaml <<EOF
rule: evil
description: a command from a pull request
command: [sh, -c, 'echo ran >>$T/pwned; for f in "\$1"/*.yaml; do echo ---; cat "\$f"; done', sh, "\${src}"]
version: [sh, -c, 'echo ran >>$T/pwned-version; echo 1']
EOF
cat >>repo/distro.yaml <<'EOF'
  web: {type: evil, path: packages/web, namespace: web}
EOF
sed -i 's/^packages:/rules: [rules\/evil.yaml]\npackages:/' repo/distro.yaml
mkmanifest repo/packages/web/cm.yaml ConfigMap web web
echo '  level: debug' >>repo/packages/base/cm.yaml
git -C repo add -A && git -C repo commit -qm "pull request" || t_bail "second commit"
B=$(git -C repo rev-parse HEAD)
cd repo || exit 1

t_ok "diff --rev A..B --no-rules" idpmake diff --rev "$A..$B" --no-rules
t_grep "the package left out is named, with its rule" \
	'--no-rules: not rendered, their rules are the distro.s own commands: in-cluster/web \(rule evil\)' "$STDERR"
t_grep "the built-in renderer's package is compared" '^\+  level: debug' "$STDOUT"
t_nogrep "the rule's package is not" 'in-cluster/web' "$STDOUT"
t_ok "the rule's command did not run" test ! -e "$T/pwned"
t_ok "nor its version command" test ! -e "$T/pwned-version"
t_ok "--format markdown --no-rules" idpmake diff --rev "$A..$B" --no-rules --format markdown
t_grep "the comment says what was not rendered" \
	'^> \*\*Not rendered\*\* \(`--no-rules`.*<code>in-cluster/web</code> \(rule <code>evil</code>\)' "$STDOUT"
t_ok "--json --no-rules" idpmake --json diff --rev "$A..$B" --no-rules
t_eq "--json lists it" "in-cluster/web evil" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*[x["package"] + " " + x["rule"] for x in d["not_rendered"]])' "$STDOUT")"
t_ok "still nothing ran" test ! -e "$T/pwned" -a ! -e "$T/pwned-version"
t_exit 2 "--no-rules without --rev: a usage error" idpmake diff --no-rules
t_grep "saying so" '--no-rules goes with diff --rev' "$STDERR"

# without it, the pull request's command runs: what the man page warns about
t_ok "diff --rev A..B" idpmake diff --rev "$A..$B"
t_ok "the rule's command ran" test -s "$T/pwned"
t_done
