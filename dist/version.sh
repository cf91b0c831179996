#!/bin/sh
# dist/version.sh [SRCDIR]: idpmake's version, one string for the program
# (idpmake version), its man pages and its Debian package (configure writes
# it into build.ninja), ordered as dpkg orders versions, so that a later
# build compares higher:
#   at a tag vX.Y.Z                 X.Y.Z
#   N commits after it              X.Y.Z+N.gHASH
#   no tag: N commits in all        0.1.0+N.gHASH
#   uncommitted changes             .dirty after any of these
#   (a shallow clone counts the commits it has: said on stderr)
#   not a git checkout (a tarball)  0.1.0
set -eu
base=0.1.0
cd "${1:-.}"
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
	echo "$base"
	exit 0
fi
hash=$(git rev-parse --short=7 HEAD)
# a shallow clone counts only the commits it has: its versions do not order
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
	echo "dist/version.sh: a shallow clone: its commit count is too low to order versions; git fetch --unshallow" >&2
fi
if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
	n=$(git rev-list --count "$tag..HEAD")
	v=${tag#v}
else
	n=$(git rev-list --count HEAD)
	v=$base
fi
# a Debian version: digits first, and no '-' (that would start a revision)
v=$(printf '%s' "$v" | tr -c 'A-Za-z0-9.+~\n' '+')
[ "$n" = 0 ] || v=$v+$n.g$hash
git diff --quiet HEAD -- 2>/dev/null || v=$v.dirty
echo "$v"
