#!/bin/bash
# shellcheck disable=SC2016 # $builddir is build.ninja's, not the shell's
# configure writes a build line per engine/FOLDER/*.c (issue 22), and
# build.ninja depends on engine/ and each folder: a file or a folder added
# reruns configure at the next ninja and is built without editing
# build.ninja.in; a folder removed (or gone after a checkout) reruns it too
# instead of stopping ninja ("'engine/F', needed by 'build.ninja', missing").
# Only build.ninja is rebuilt here (ninja build.ninja), not the program.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v ninja >/dev/null || t_skip_rest "ninja is not installed"
t_ok "setup: a copy of the sources" git clone -q "$top" "$T/src"
cd "$T/src" || t_bail "no copy"
# the working tree's own changes, so that the copy is what is tested
git -C "$top" diff HEAD -- configure build.ninja.in | git apply --allow-empty || t_bail "cannot apply the working tree's changes"
t_ok "configure" ./configure
t_grep "engine/ is one of build.ninja's inputs" "^build build.ninja: configure \| configure build.ninja.in engine engine/argo " build.ninja
t_grep "each folder a phony target" "^build engine/base: phony$" build.ninja

mkdir engine/zz && printf 'int zz_fn(void) { return 1; }\n' >engine/zz/zz.c
touch -d '+2 seconds' engine engine/zz 2>/dev/null
t_ok "a new folder: ninja reruns configure" ninja build.ninja
t_grep "and its file has a build line" '^build \$builddir/zz/zz\.o: cc engine/zz/zz\.c$' build.ninja
t_grep "and is in the library" '^build \$builddir/libidpmake\.a: ar.* \$builddir/zz/zz\.o' build.ninja

rm -r engine/zz
touch -d '+4 seconds' engine 2>/dev/null
t_ok "the folder removed: ninja reruns configure instead of stopping" ninja build.ninja
t_nogrep "and it is gone from build.ninja" "engine/zz" build.ninja
t_ok "a run after it has nothing to do with build.ninja" ninja -n build.ninja
t_grep "(no work)" "no work to do" "$STDOUT"
t_done
