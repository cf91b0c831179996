#!/bin/bash
# Rule files: a distro's `rules:` adds a renderer (`rule: NAME`, `command`,
# `version`, `inputs`); packages of `type: NAME` render with it; a change in
# the rule file, or in its tool's version, re-renders; the distro's rules/
# folder is read too; an unknown type is an error with "did you mean"; a bad
# rule file is a located error.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# A tool of our own on PATH: `cattool DIR` prints DIR's *.yaml files as one
# stream; `cattool --version` prints its version.
mkdir -p bin
cat >bin/cattool <<'EOF'
#!/bin/sh
# cattool 1.0
case $1 in
--version) echo "cattool 1.0"; exit 0 ;;
esac
for f in "$1"/*.yaml; do
	echo ---
	cat "$f"
done
EOF
chmod +x bin/cattool
export PATH=$T/bin:$PATH

# set_rules LIST: the distro's rules: line.
set_rules() {
	sed -i "s#^rules: .*#rules: $1#" distro.yaml
}

mkdir -p d/rules d/packages/c d/packages/s
cd d || exit 1
cat >distro.yaml <<'EOF'
idpmake: 1
name: rules
vars: {domain: prod.example}
rules: [rules/cat.yaml]
packages:
  c:
    type: cat
    path: packages/c
    rewrite:
      - {match: 'dev\.example', replace: '${domain}'}
  s:
    type: shcat
    path: packages/s
EOF
cat >rules/cat.yaml <<'EOF'
rule: cat
description: print the package's yaml files with cattool
command: [cattool, "${src}"]
version: [cattool, --version]
inputs: ["*.yaml"]
EOF
mkmanifest packages/c/one.yaml ConfigMap one
printf '  url: https://dev.example/\n' >>packages/c/one.yaml
mkmanifest packages/c/two.yaml Service two
echo 'ignored by the rule: not an input' >packages/c/notes.txt
mkmanifest packages/s/cm.yaml ConfigMap shell-made
# A rule run through sh -c, its folder as an argument (variables never become
# part of the shell's script text).
cat >rules/shcat.yaml <<'EOF'
rule: shcat
description: cat through a shell
command: [sh, -c, 'cat "$1"/*.yaml', sh, "${src}"]
version: [sh, -c, 'echo shcat 1']
EOF
set_rules "[rules/cat.yaml, rules/shcat.yaml]"

# ---- a rule renders ---------------------------------------------------------------
t_ok "validate with rule files" idpmake validate
t_ok "render -o out" idpmake render -o out
t_ok "the rule's output is split into objects: configmap.one.yaml" test -f out/in-cluster/c/configmap.one.yaml
t_ok "and service.two.yaml" test -f out/in-cluster/c/service.two.yaml
t_grep "rewrite applies to a rule's output" 'https://prod\.example/' out/in-cluster/c/configmap.one.yaml
t_ok "the sh -c rule renders" test -f out/in-cluster/s/configmap.shell-made.yaml
t_grep "keys sorted like any output" '^apiVersion: v1$' out/in-cluster/c/service.two.yaml
t_ok "render -o out2" idpmake render -o out2
t_ok "stable: identical bytes" diff -r out out2

# ---- state and re-rendering ------------------------------------------------------------
t_ok "up" idpmake up
t_ok "up made a commit" git --git-dir=.idpmake/gitops.git rev-parse --verify -q main
t_ok "plan after up: nothing to do" idpmake plan --exit-code
t_ok "a no-op up" idpmake up
t_grep "renders nothing" ' 0 rendered' "$OUTPUT"

echo 'also ignored' >>packages/c/notes.txt
t_ok "a change to a file outside the rule's inputs: nothing to do" idpmake plan --exit-code

echo '# a comment' >>packages/c/two.yaml
t_exit 1 "a change to an input: plan --exit-code exits 1" idpmake plan --exit-code
t_grep "c's render would run" 'in-cluster/c:render' "$STDOUT"
t_nogrep "s's would not" 'in-cluster/s:render' "$STDOUT"
t_ok "up" idpmake up

sed -i 's/^description: .*/description: print the yaml files, described anew/' rules/cat.yaml
t_exit 1 "a change in the rule file: plan --exit-code exits 1" idpmake plan --exit-code
t_grep "plan shows c's render" 'in-cluster/c:render' "$STDOUT"
t_grep "the reason is the rule" 'in-cluster/c:render: .*rule' "$STDOUT"
t_nogrep "the other rule's package does not re-render" 'in-cluster/s:render' "$STDOUT"
t_ok "explain names the rule as what changed" idpmake explain in-cluster/c:render
t_grep "explain: the rule changed" 'changed.*rule|rule.*changed' "$STDOUT"
head1=$(git --git-dir=.idpmake/gitops.git rev-parse main)
t_ok "up re-renders c" idpmake up
t_grep "c rendered" 'in-cluster/c:render' "$OUTPUT"
t_eq "the output is the same: no new commit" "$head1" "$(git --git-dir=.idpmake/gitops.git rev-parse main)"
t_ok "plan: nothing to do" idpmake plan --exit-code

# The tool's version is part of the key: a new cattool re-renders.
sleep 0.01
sed -i 's/cattool 1\.0/cattool 2.0/' "$T/bin/cattool"
t_exit 1 "a new version of the rule's tool: plan --exit-code exits 1" idpmake plan --exit-code
t_grep "plan shows c's render" 'in-cluster/c:render' "$STDOUT"
t_nogrep "not s's (another rule)" 'in-cluster/s:render' "$STDOUT"
t_ok "up" idpmake up
t_ok "plan: nothing to do" idpmake plan --exit-code

# A change in the command re-renders.
# shellcheck disable=SC2016
sed -i 's/^command: .*/command: [cattool, "${src}", extra]/' rules/cat.yaml
t_exit 1 "a change in the rule's command: plan exits 1" idpmake plan --exit-code
t_grep "plan shows c's render" 'in-cluster/c:render' "$STDOUT"
# shellcheck disable=SC2016
sed -i 's/^command: .*/command: [cattool, "${src}"]/' rules/cat.yaml

# ---- the distro's rules/ folder is read too ------------------------------------------------
mkdir -p ../auto/rules ../auto/packages/x
cp rules/shcat.yaml ../auto/rules/
mkmanifest ../auto/packages/x/cm.yaml ConfigMap auto
cat >../auto/distro.yaml <<'EOF'
idpmake: 1
name: auto
packages:
  x: {type: shcat, path: packages/x}
EOF
t_ok "a rule in rules/ without a rules: list validates" idpmake -C ../auto validate
t_ok "and renders" idpmake -C ../auto render
t_grep "its output" 'configmap\.auto\.yaml' "$STDOUT"

# ---- errors --------------------------------------------------------------------------------
sed -i 's/type: cat$/type: catt/' distro.yaml
t_exit 2 "an unknown type: exit 2" idpmake validate
t_grep "located, with did you mean 'cat'" "^distro\.yaml:7:11: error: .*unknown package type 'catt'.*did you mean 'cat'" "$STDERR"
t_exit 2 "plan refuses it too" idpmake plan
sed -i 's/type: catt$/type: cat/' distro.yaml

sed -i 's/^command:/commnd:/' rules/cat.yaml
t_exit 2 "a misspelt key in a rule file: exit 2" idpmake validate
t_grep "located in the rule file, with did you mean" "^rules/cat\.yaml:3:1: error: .*unknown key 'commnd'.*did you mean 'command'" "$STDERR"
sed -i 's/^commnd:/command:/' rules/cat.yaml

set_rules "[rules/nope.yaml, rules/shcat.yaml]"
t_exit 2 "a rule file that does not exist: exit 2" idpmake validate
t_grep "located at the rules: entry" "^distro\.yaml:4:[0-9]+: error: .*rules/nope\.yaml" "$STDERR"
set_rules "[rules/cat.yaml, rules/shcat.yaml]"

set_rules "[../outside.yaml]"
cp rules/cat.yaml ../outside.yaml
t_exit 2 "a rule file outside the distro folder: exit 2" idpmake validate
t_grep "says it escapes" "^distro\.yaml:4:[0-9]+: error: .*escapes" "$STDERR"
set_rules "[rules/cat.yaml, rules/shcat.yaml]"

printf 'rule: cat\ndescription: [unclosed\n' >rules/broken.yaml
set_rules "[rules/cat.yaml, rules/shcat.yaml, rules/broken.yaml]"
t_exit 2 "a malformed rule file: exit 2" idpmake validate
t_grep "located in the rule file" "^rules/broken\.yaml:[0-9]+:[0-9]+: error: .*malformed YAML" "$STDERR"
rm rules/broken.yaml

printf 'rule: cat\ncommand: [cat]\n' >rules/again.yaml
set_rules "[rules/cat.yaml, rules/shcat.yaml, rules/again.yaml]"
t_exit 2 "a rule defined twice: exit 2" idpmake validate
t_grep "says so" "error: .*rule 'cat' is defined twice" "$STDERR"
rm rules/again.yaml
set_rules "[rules/cat.yaml, rules/shcat.yaml]"

# ---- a failing rule command -------------------------------------------------------------
t_ok "the distro is valid again" idpmake validate
cat >rules/shcat.yaml <<'EOF'
rule: shcat
description: fails
command: [sh, -c, 'echo "shcat: something broke" >&2; exit 3']
version: [sh, -c, 'echo shcat 1']
EOF
t_exit 1 "a rule command that exits 3: render exits 1" idpmake render -k 0 -o out3
t_grep "its stderr is shown" 'shcat: something broke' "$STDERR"
t_ok "the other package renders" test -f out3/in-cluster/c/configmap.one.yaml
cat >rules/shcat.yaml <<'EOF'
rule: shcat
description: prints no YAML
command: [sh, -c, 'echo "this: [is not"']
EOF
t_exit 1 "a rule that prints malformed YAML: render exits 1" idpmake render -k 0 -o out4
t_grep "the error names the package's render" 'in-cluster/s:render' "$STDERR"

t_done
