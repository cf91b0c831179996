#!/bin/sh
# dist/deb.sh BINARY SRCDIR VERSION OUTDIR: what `ninja deb` does.  A Debian
# package, OUTDIR/idpmake_VERSION_ARCH.deb, built with dpkg-deb: the program
# (built with prefix /usr), its man pages (gzipped), the shell completions and
# the rules and built-in distros under /usr/share/idpmake, installed by
# dist/install.sh; Depends from dpkg-shlibdeps (dpkg-dev), or, without it,
# from the packages that hold the libraries the program links (dpkg -S).
set -eu
bin=$1 src=$2 version=$3 out=$4
arch=$(dpkg --print-architecture)
# a Debian version starts with a digit and has no '-' without a revision
case $version in v[0-9]*) version=${version#v} ;; esac
case $version in [0-9]*) ;; *) version=0.1.0+g$version ;; esac
version=$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+~\n' '+')
work=$(mktemp -d "${TMPDIR:-/tmp}/idpmake-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
DESTDIR=$root "$src/dist/install.sh" "$bin" /usr "$src" >/dev/null
gzip -9n "$root/usr/share/man/man1/idpmake.1" "$root/usr/share/man/man5/idpmake-distro.5"
install -d "$root/usr/share/doc/idpmake"
install -m 644 "$src/README.md" "$root/usr/share/doc/idpmake/README.md"
strip --strip-unneeded -o "$root/usr/bin/idpmake" "$bin" 2>/dev/null || true

depends=
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
	mkdir -p "$work/debian"
	printf 'Source: idpmake\n\nPackage: idpmake\nArchitecture: any\n' >"$work/debian/control"
	depends=$(cd "$work" && dpkg-shlibdeps -O "root/usr/bin/idpmake" 2>/dev/null |
		sed -n 's/^shlibs:Depends=//p') || depends=
fi
if [ -z "$depends" ]; then
	# the packages that hold the libraries the program links, at least at their versions here
	for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
		[ -n "$path" ] || continue
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1) ||
			pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
		[ -n "$pkg" ] || continue
		v=$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//')
		depends="${depends:+$depends, }$pkg (>= $v)"
	done
fi
[ -n "$depends" ] || { echo "deb.sh: cannot find the libraries' packages" >&2; exit 1; }

size=$(du -sk "$root" | cut -f1)
install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: idpmake
Version: $version
Architecture: $arch
Maintainer: idpmake developers <dev@idpmake>
Installed-Size: $size
Depends: $depends
Recommends: git
Suggests: kubectl
Section: admin
Priority: optional
Homepage: https://github.com/idpmake/idpmake
Description: make for internal developer platforms
 idpmake renders a distro's packages, commits them to the GitOps repository
 in one commit, syncs exactly the Argo CD applications whose output changed,
 and runs their hooks.  Keys and early cutoff as in ninja; state in SQLite.
CONTROL
(cd "$root" && find usr -type f -exec md5sum {} +) >"$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +
deb=$out/idpmake_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
