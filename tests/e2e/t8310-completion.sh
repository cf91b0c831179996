#!/bin/bash
# Shell completion (issue 9 #7): `idpmake completion bash` is generated from
# the command and option tables, and completes commands, options and their
# values, and the packages, clusters and steps of the distro in the current
# folder (or -C); zsh and fish scripts are generated too; the install script
# puts all three where the shells look.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p bin && ln -s "$IDPMAKE" bin/idpmake
export PATH=$T/bin:$PATH
t_ok "init a distro" idpmake init d
t_ok "completion bash" idpmake completion bash
cp "$STDOUT" idpmake.bash
t_ok "it is bash" bash -n idpmake.bash
t_exit 2 "an unknown shell is a usage error" idpmake completion tcsh
t_ok "context add prod (for its name)" idpmake context add prod --argocd-server argocd.example.com
t_ok "context add dev" idpmake context add dev --argocd-server argocd.dev.example.com

# complete LINE: what the function offers for the cursor at the end of LINE,
# one per line, sorted; driven as bash's programmable completion drives it
# (COMP_WORDS split at COMP_WORDBREAKS, COMP_CWORD, COMP_LINE, COMP_POINT)
complete_line() {
	bash -c '
		. "$T/idpmake.bash"
		line=$1
		COMP_LINE=$line COMP_POINT=${#line}
		read -ra COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_idpmake idpmake "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$1"
}
# check DESC LINE EXPECTED...: the offers are exactly EXPECTED
check() {
	local desc=$1 line=$2
	shift 2
	t_eq "$desc" "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" "$(cd "${IN:-.}" && complete_line "$line" | tr '\n' ' ')"
}

t_ok "--help" idpmake --help
cmds=$(sed -n '/^commands:/,/^$/p' "$STDOUT" | awk 'NF > 1 {print $1}')
complete_line "idpmake " >offered.txt
for c in $cmds; do
	t_grep "the command '$c' of --help is offered" "^$c\$" offered.txt
done
t_nogrep "the hidden __complete is not" '^__complete$' offered.txt

check "a command from its start" "idpmake pl" plan
check "commands starting with c" "idpmake co" completion context
check "a long option" "idpmake --for" --format
check "short options too" "idpmake -" $(idpmake __complete options | grep -v -- '^--')  $(idpmake __complete options | grep -- '^--')
check "--format's values" "idpmake graph --format " dot json mermaid
check "--color's values" "idpmake --color " auto always never
check "a shell" "idpmake completion " bash zsh fish
check "context's subcommands" "idpmake context " add list rm set unset use
check "context use: the contexts" "idpmake context use " dev prod
check "--context: the contexts" "idpmake --context p" prod
IN=d check "up: the packages and clusters of the distro here" "idpmake up " \
	hello namespaces in-cluster/ in-cluster/hello in-cluster/namespaces
IN=d check "a package from its start" "idpmake up he" hello
IN=d check "cluster/package" "idpmake plan in-cluster/h" in-cluster/hello
check "-C DIR: the distro there" "idpmake -C d up n" namespaces
check "no distro here: no names" "idpmake up h"
# bash splits words at ':' (COMP_WORDBREAKS): it replaces the part after the last ':'
IN=d check "explain: step ids, after the ':'" "idpmake explain in-cluster/hello:" render sync
IN=d check "explain: a step" "idpmake explain pu" push
IN=d check "pack takes no targets" "idpmake pack "
IN=d check "validate: the packages and clusters" "idpmake validate h" hello
IN=d check "--bundle: a file" "idpmake --bundle dist" distro.yaml
IN=d check "up --plan: a file" "idpmake up --plan dist" distro.yaml

t_ok "completion zsh" idpmake completion zsh
cp "$STDOUT" _idpmake
t_grep "zsh: a #compdef file" '^#compdef idpmake' _idpmake
t_grep "zsh: the commands" "names=\\(up promote plan .*context completion help" _idpmake
if command -v zsh >/dev/null; then t_ok "it is zsh" zsh -n _idpmake; else t_skip "zsh is not installed: its syntax is unchecked"; fi
t_ok "completion fish" idpmake completion fish
cp "$STDOUT" idpmake.fish
t_grep "fish: a command with its help" "-a context -d 'named Argo CD" idpmake.fish
t_grep "fish: targets from the distro" "__complete targets" idpmake.fish
if command -v fish >/dev/null; then t_ok "it is fish" fish -n idpmake.fish; else t_skip "fish is not installed: its syntax is unchecked"; fi

# ninja install's script puts the three where the shells look
t_ok "install into a stage" env DESTDIR="$T/stage" "$top/dist/install.sh" "$IDPMAKE" /usr/local "$top"
t_ok "bash-completion's folder" cmp idpmake.bash stage/usr/local/share/bash-completion/completions/idpmake
t_ok "zsh's site-functions" cmp _idpmake stage/usr/local/share/zsh/site-functions/_idpmake
t_ok "fish's vendor_completions.d" cmp idpmake.fish stage/usr/local/share/fish/vendor_completions.d/idpmake.fish

t_done
