#!/bin/bash
# Names idpmake did not make are checked one way (names.c): a bundle
# member's name with a control character (an escape that would reach the
# terminal, a tab) is refused like one with '..', and nothing of the
# bundle is used; a clean archive still runs.  (Found in review: the
# bundle's safe_name accepted control characters.)
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
python3 "$top/tests/e2e/py/mkpack.py" plain good.tar || t_bail "cannot write the archive"
t_ok "a clean archive validates" idpmake -f "$T/good.tar" validate

for name in "$(printf 'tab\there.yaml')" "$(printf 'esc\033[31mred.yaml')" "$(printf 'del\177.yaml')"; do
	rm -rf bad bad.tar bad.idpmake .idpmake
	cp -r plain bad
	mkmanifest "bad/distro/0/packages/web/$name" ConfigMap other
	python3 "$top/tests/e2e/py/mkpack.py" bad bad.tar || t_bail "cannot write the archive"
	t_fail "a member named with a control character is refused ($(printf %q "$name"))" idpmake -f "$T/bad.tar" render web
	t_grep "naming the bundle and where" "bundle .*bad.tar: idpmake-pack.txt:[0-9]+: not a valid index line" "$OUTPUT"
	t_nogrep "nothing of it rendered" '^kind: ConfigMap' "$STDOUT"
done
t_done
