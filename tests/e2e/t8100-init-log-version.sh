#!/bin/bash
# init writes a distro that validates and runs as is; log lists runs newest
# first; version names every library; the quickstart example runs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

t_ok "init a new distro" idpmake init newd
t_grep "it says what to do next" "idpmake -C newd plan" "$OUTPUT"
t_ok "it validates" idpmake -C newd validate
t_ok "it runs" idpmake -C newd up
t_grep "rendering its two packages" '2 rendered, 1 commit pushed' "$OUTPUT"
git init -q newd
t_eq "git sees the distro, not the state folder (init's .gitignore)" "?? .gitignore ?? distro.yaml ?? packages/" \
	"$(git -C newd status --porcelain | tr '\n' ' ' | sed 's/ $//')"
t_grep "the .gitignore names .idpmake/" '^\.idpmake/$' newd/.gitignore
mkdir other && printf 'node_modules' >other/.gitignore
t_ok "init where a .gitignore is" idpmake init other
t_eq "it is added to, once, on a line of its own" "node_modules .idpmake/" "$(tr '\n' ' ' <other/.gitignore | sed 's/ $//')"
t_exit 2 "init refuses to overwrite" idpmake init newd
t_grep "naming the file" 'newd/distro.yaml exists already' "$OUTPUT"

# ${greeting} in a manifest is left as it is: validate says so, where
mkdir unexp && cp -R newd/distro.yaml newd/packages unexp/
printf '  note: "${greeting}, world"\n  also: ${nosuch}\n  where: ${region}\n' >>unexp/packages/hello/configmap.yaml
printf 'clusters:\n  a: {server: "https://a.example:6443", vars: {region: eu}}\n  b: {server: "https://b.example:6443"}\n' >>unexp/distro.yaml
t_ok "validate with \${greeting} in a manifest: still valid" idpmake -C unexp validate
t_grep "a warning at its file, line and column, naming the variable" \
	'packages/hello/configmap.yaml:8:10: warning: \$\{greeting\} is left as it is: a manifests package.s files are not templated \(the distro has a variable .greeting.\); give the package rewrite' "$STDERR"
t_grep "and one for a name that is no variable, saying so (no rewrite that would fail)" \
	'configmap.yaml:9:9: warning: \$\{nosuch\} is left as it is: a manifests package.s files are not templated, and no variable .nosuch. is defined' "$STDERR"
t_grep "a cluster's variable is a variable" 'configmap.yaml:10:10: warning: \$\{region\} .*the distro has a variable .region.' "$STDERR"
t_eq "once, however many clusters (two here)" 1 "$(grep -c 'nosuch' "$STDERR")"
sed -i 's|    labels: {tier: apps}|    labels: {tier: apps}\n    rewrite: [{match: "\\\\$\\\\{greeting\\\\}", replace: "${greeting}"}]|' unexp/distro.yaml
t_ok "with a rewrite rule in the package" idpmake -C unexp validate
t_nogrep "no warning: the rule may expand them" 'warning' "$STDERR"
t_ok "a second run" idpmake -C newd up
t_ok "log" idpmake -C newd log
t_eq "two runs, newest first" "run 2 run 1" "$(grep -o '^run [0-9]*' "$STDOUT" | tr '\n' ' ' | sed 's/ $//')"
t_ok "log --json" idpmake -C newd --json log
cp "$STDOUT" log.json
t_ok "one object per run" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["run"] for r in rows] == [2, 1], rows
assert all(r["result"] == 0 and r["command"] == "up" for r in rows), rows
assert rows[1]["commit"] and rows[0]["commit"] is None, rows' log.json

t_ok "version" idpmake version
for lib in libyaml SQLite xxHash libgit2 libcurl PCRE2 jansson; do
	t_grep "version names $lib" "^  $lib  *[0-9]" "$STDOUT"
done

# the README's first command, on a copy of the quickstart
cp -R "$top/examples/quickstart" qs && rm -rf qs/.idpmake
t_ok "the quickstart runs" idpmake -C qs up
t_grep "its three packages, one commit" '3 rendered, 1 commit pushed' "$OUTPUT"
t_ok "its hook ran" grep -q 'hello on in-cluster is at commit' qs/.idpmake/logs/in-cluster_hello_post_announce.log
t_ok "the built-in default distro was extended: podinfo's host rewritten" \
	sh -c 'git --git-dir=qs/.idpmake/gitops.git show main:in-cluster/podinfo/ingress.podinfo.yaml | grep -q "host: podinfo.quickstart.localtest.me"'
t_ok "and again: nothing to do" idpmake -C qs up
t_grep "nothing rendered" ' 0 rendered, nothing pushed' "$OUTPUT"
t_done
