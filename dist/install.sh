#!/bin/sh
# dist/install.sh BINARY PREFIX SRCDIR: what `ninja install` (and `ninja deb`)
# install under $DESTDIR$PREFIX: the program, its man pages, the rules and
# distros, and the shell completions, which the program writes from its own
# command table (bash-completion, zsh site-functions, fish vendor_completions.d).
set -eu
bin=$1 prefix=$2 src=$3
d=${DESTDIR:-}$prefix
install -d "$d/bin" "$d/share/man/man1" "$d/share/man/man5" "$d/share/idpmake" \
	"$d/share/bash-completion/completions" "$d/share/zsh/site-functions" \
	"$d/share/fish/vendor_completions.d"
install -m 755 "$bin" "$d/bin/idpmake"
# the man pages' title line says the program's own version (dist/version.sh)
v=$("$bin" version | sed -n '1s/^idpmake //p' | tr -c 'A-Za-z0-9.+~\n' '+')
for m in man1/idpmake.1 man5/idpmake-distro.5; do
	sed "/^\.TH /s/\"idpmake [^\"]*\"/\"idpmake ${v:-0.1.0}\"/" "$src/man/${m#*/}" >"$d/share/man/$m.tmp"
	chmod 644 "$d/share/man/$m.tmp"
	mv "$d/share/man/$m.tmp" "$d/share/man/$m"
done
rm -rf "$d/share/idpmake/rules" "$d/share/idpmake/distros"
cp -R "$src/rules" "$src/distros" "$d/share/idpmake/"
for sh in bash zsh fish; do
	case $sh in
	bash) f=$d/share/bash-completion/completions/idpmake ;;
	zsh) f=$d/share/zsh/site-functions/_idpmake ;;
	fish) f=$d/share/fish/vendor_completions.d/idpmake.fish ;;
	esac
	"$bin" completion $sh >"$f.tmp"
	chmod 644 "$f.tmp"
	mv "$f.tmp" "$f"
done
echo "installed in $d"
