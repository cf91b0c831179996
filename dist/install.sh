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
install -m 644 "$src/man/idpmake.1" "$d/share/man/man1/"
install -m 644 "$src/man/idpmake-distro.5" "$d/share/man/man5/"
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
