#!/bin/bash
# A bundle member whose name holds a control character, and is not in the
# index, is refused with the name shown escaped (\x1b), never raw: the
# escape would reach the terminal.  The message says why (names.c's
# reason), not "an absolute name or a '..'".  (Found in review of names.c:
# the refusal quoted the hostile name as it was.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PYTHONPATH=$top/tests/e2e/py python3 -c 'import sys, xxh3; sys.exit(not xxh3.available())' ||
	t_skip_rest "no libxxhash for python3 ctypes (the test writes archives with their digests)"

mkdir -p plain/distro/0/packages/web
cat >plain/distro/0/distro.yaml <<'EOF'
idpmake: 1
name: packed
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
mkmanifest plain/distro/0/packages/web/cm.yaml ConfigMap web
python3 "$top/tests/e2e/py/mkpack.py" plain bad.tar || t_bail "cannot write the archive"
python3 - bad.tar <<'PY' || t_bail "cannot add the hostile member"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "a", format=tarfile.PAX_FORMAT) as t:
    x = tarfile.TarInfo("distro/0/esc\x1b]0;owned\x07.yaml")
    x.size = 3
    t.addfile(x, io.BytesIO(b"hi\n"))
PY
t_exit 2 "a member named with an escape is refused" idpmake -f "$T/bad.tar" validate
t_grep "named escaped, with why" "member 'distro/0/esc\\\\x1b\]0;owned\\\\x07\.yaml' holds a control character" "$STDERR"
t_nogrep "no escape reaches the terminal" $'\x1b' "$STDERR"
t_done
