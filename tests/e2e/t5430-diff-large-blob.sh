#!/bin/bash
# Reads of a hand-edited folder are capped (issue 20 item 6): diff reads a
# folder's files from the GitOps repository, and anyone who can push can put
# a huge file there.  A file over 64 MiB (the cap on a file; 512 MiB on a
# folder) is never loaded: its size comes from the object's header, and diff
# names it, with its size and the cap, and counts it as differing.  Memory
# is measured (/usr/bin/time -v's peak RSS), against the same diff without
# the large file, so that the sanitizer build's own overhead does not count.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || t_skip_rest "/usr/bin/time (GNU time) is not installed: peak RSS cannot be measured"
mkdistro d <<'EOF'
idpmake: 1
name: big
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
cd d || exit 1
remote=$PWD/.idpmake/gitops.git
# peak RSS in KiB of `idpmake diff`, its output in $STDOUT/$STDERR as t_ok leaves them
rss() { /usr/bin/time -v -o "$T/time.txt" "$IDPMAKE" diff; }
peak() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$T/time.txt"; }

t_ok "up" idpmake up
# a small hand edit: read and shown as before
rm -rf "$T/hand" && git clone -q "$remote" "$T/hand" || t_bail "clone failed"
echo '  edited: by-hand' >>"$T/hand/in-cluster/web/configmap.web.yaml"
GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.com git -C "$T/hand" commit -qam "small edit" &&
	git -C "$T/hand" push -q origin main || t_bail "push failed"
t_ok "diff with a small hand edit" rss
base=$(peak)
t_grep "the small edit is shown as a patch" '^-  edited: by-hand' "$STDOUT"

# an 80 MiB file (compressible: small in git, large when read) beside it
head -c $((80 << 20)) /dev/zero | tr '\0' 'a' >"$T/hand/in-cluster/web/huge.yaml"
git -C "$T/hand" add -A && GIT_AUTHOR_NAME=Mallory GIT_AUTHOR_EMAIL=m@example.com git -C "$T/hand" commit -qm "huge file" &&
	git -C "$T/hand" push -q origin main || t_bail "push failed"
rm -rf "$T/hand"
t_ok "diff with an 80 MiB file in the folder" rss
t_grep "names the file, its size and the cap" \
	"in-cluster/web/huge.yaml in the GitOps repository is 80.0 MiB, over the cap of 64 MiB on a file .*not read" "$STDERR"
t_grep "counts it as a difference, with the small edit" '2 objects differ from the GitOps repository' "$STDERR"
t_grep "the small edit is still shown" '^-  edited: by-hand' "$STDOUT"
t_nogrep "the large file's content is not printed" 'aaaaaaaa' "$STDOUT"
grown=$(( $(peak) - base ))
t_ok "the large file was not loaded: peak RSS grew by $grown KiB (less than 16 MiB)" test "$grown" -lt $((16 << 10))
t_exit 1 "diff --exit-code: it differs" idpmake --exit-code diff
t_done
