#!/bin/bash
# One version (issue 25 "Versions"): dist/version.sh, which configure writes
# into build.ninja, gives the program, its man pages and its Debian package
# one version, and a later commit compares higher as dpkg compares versions
# (a git hash, as before, did not: 00940e0 sorted above cc42d2f's 0.1.0+g...;
# packages built so are not upgraded from by these, which sort by commit count).
# `ninja install` writes that version into the man pages' title lines.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v dpkg >/dev/null || t_skip_rest "dpkg is not installed: versions cannot be compared as Debian does"
ver() { "$top/dist/version.sh" "$T/r"; }
newer() {	# newer DESC A B: dpkg says A > B
	dpkg --compare-versions "$2" gt "$3"
	t_report $? "$1 ($2 > $3)"
}

mkdir r
t_eq "not a git checkout: the base version" 0.1.0 "$(ver)"
git -C r init -q
t_eq "a repository with no commit: the base version" 0.1.0 "$(ver)"
echo 1 >r/f && git -C r add f && git -C r commit -q -m one
v1=$(ver)
t_eq "one commit, no tag: base+1.gHASH" "0.1.0+1.g$(git -C r rev-parse --short=7 HEAD)" "$v1"
echo 2 >r/f && git -C r commit -q -am two
v2=$(ver)
newer "a later commit compares higher" "$v2" "$v1"
# 9 more: 11 > 2 as numbers, not as text
for i in 3 4 5 6 7 8 9 10 11; do echo $i >r/f && git -C r commit -q -am "c$i"; done
v11=$(ver)
echo "$v11" >v11
t_grep "eleven commits" '^0\.1\.0\+11\.g[0-9a-f]{7}$' v11
newer "and the count compares as a number" "$v11" "$v2"
echo dirty >r/f
newer "uncommitted changes: .dirty, above the commit" "$(ver)" "$v11"
ver >vd
t_grep "... named so" '\.dirty$' vd
git -C r checkout -q f
git -C r tag v0.2.0
t_eq "at a tag: the tag's version" 0.2.0 "$(ver)"
newer "a tag compares above the commits before it" 0.2.0 "$v11"
echo 12 >r/f && git -C r commit -q -am c12
v12=$(ver)
t_eq "after a tag: tag+N.gHASH" "0.2.0+1.g$(git -C r rev-parse --short=7 HEAD)" "$v12"
newer "and compares above the tag" "$v12" 0.2.0

git clone -q --depth 1 "file://$T/r" shallow 2>/dev/null || t_bail "cannot clone shallow"
"$top/dist/version.sh" shallow >/dev/null 2>shallow.err
t_grep "a shallow clone: said, its count being too low to order" 'a shallow clone: its commit count is too low' shallow.err

# the built program says what configure wrote, and so does an install's man pages
built=$("$IDPMAKE" version | sed -n '1s/^idpmake //p')
t_eq "the program's version is build.ninja's" "$(sed -n 's/^version = //p' "$top/build.ninja" 2>/dev/null || echo "$built")" "$built"
t_ok "ninja install's script" env DESTDIR="$T/inst" "$top/dist/install.sh" "$IDPMAKE" /usr "$top"
for m in man1/idpmake.1 man5/idpmake-distro.5; do
	t_grep "$m's title line says $built" "^\\.TH .*\"idpmake ${built//+/\\+}\"" "$T/inst/usr/share/man/$m"
done
t_done
