#!/bin/bash
# Install with apt (issue 9 #10): dist/deb.sh (ninja deb) builds a Debian
# package with the program, its man pages, the shell completions and the
# built-in distros, its library dependencies declared; `apt-get install
# ./idpmake_*.deb` installs it on this machine, where `idpmake version` and
# `man -w idpmake` work; it is removed again at the end.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

for tool in dpkg-deb dpkg-query apt-get; do
	command -v $tool >/dev/null || t_skip_rest "$tool is not installed: not a Debian system"
done
[ "$(id -u)" = 0 ] || t_skip_rest "apt-get install needs root"
if dpkg-query -W -f='${Status}' idpmake 2>/dev/null | grep -q 'install ok'; then
	t_skip_rest "an idpmake package is installed on this machine already: not replacing it"
fi

t_ok "dist/deb.sh builds the package" "$top/dist/deb.sh" "$IDPMAKE" "$top" 1.2.3 "$T"
deb=$(cat "$STDOUT")
t_eq "named as Debian names it" "$T/idpmake_1.2.3_$(dpkg --print-architecture).deb" "$deb"
t_ok "dpkg-deb reads its control file" dpkg-deb -f "$deb" Package Version Depends
for lib in libc6 libyaml-0-2 libsqlite3-0 libxxhash0 libgit2 libcurl libpcre2-8-0 libjansson4; do
	t_grep "it depends on $lib" "^Depends: .*\\b$lib" "$STDOUT"
done
t_ok "its files" dpkg-deb -c "$deb"
for f in usr/bin/idpmake usr/share/man/man1/idpmake.1.gz usr/share/man/man5/idpmake-distro.5.gz \
	usr/share/bash-completion/completions/idpmake usr/share/zsh/site-functions/_idpmake \
	usr/share/fish/vendor_completions.d/idpmake.fish usr/share/idpmake/distros/default/distro.yaml \
	usr/share/idpmake/rules/helm.yaml; do
	t_grep "holds /$f" " \\./$f\$" "$STDOUT"
done

remove() { apt-get remove -y -o DPkg::Lock::Timeout=120 idpmake >/dev/null 2>&1; }
trap 'st=$?; remove; (exit $st); t_cleanup' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! timeout 600 apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=120 "$deb" >apt.log 2>&1; then
	if grep -Eq 'Could not get lock|Temporary failure|Failed to fetch|Unable to locate|held broken' apt.log; then
		t_skip_rest "apt-get install could not run here: $(grep -E 'E:|Err' apt.log | head -1)"
	fi
	t_report 1 "apt-get install ./idpmake_1.2.3_*.deb" apt.log
	t_done
fi
t_report 0 "apt-get install ./idpmake_1.2.3_*.deb"
t_eq "dpkg knows it" "install ok installed 1.2.3" "$(dpkg-query -W -f='${Status} ${Version}' idpmake)"
t_ok "idpmake version" /usr/bin/idpmake version
t_grep "says its version" '^idpmake ' "$STDOUT"
t_ok "man -w idpmake" man -w idpmake
t_grep "finds the installed page" '^/usr/share/man/man1/idpmake\.1\.gz$' "$STDOUT"
t_ok "man -w 5 idpmake-distro" man -w 5 idpmake-distro
t_ok "the installed program runs a distro that extends the built-in default" sh -c '
	mkdir q && printf "idpmake: 1\nname: q\nextends: default\n" >q/distro.yaml && /usr/bin/idpmake -C q validate'
t_ok "apt-get remove" remove
t_fail "it is gone" test -e /usr/bin/idpmake

t_done
