#!/bin/bash
# A keys index (.idpmake/keys) larger than its cap (64 MiB) pushed by
# someone else is not read at all: its size comes from the object's header,
# so an empty-state up and a push stay small in memory.  The run renders
# (nothing is proven) and its commit replaces the index.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $IDPMAKE in */asan/*) t_skip_rest "RSS under ASan says nothing about the program's" ;; esac
[ -x /usr/bin/time ] || t_skip_rest "no /usr/bin/time to measure the peak RSS"

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF
idpmake: 1
name: big-index
git: {remote: "$bare"}
packages:
  web: {type: manifests, path: packages/web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
cd d || exit 1
t_ok "first up" idpmake up

# another hand: an index of 80 MiB (a header, then one long garbage line)
git clone -q "$bare" "$T/w" || t_bail "clone failed"
{ echo "idpmake-keys 1"; head -c $((80 << 20)) /dev/zero | tr '\0' 'a'; echo; } >"$T/w/.idpmake/keys"
git -C "$T/w" add -A && git -C "$T/w" commit -qm "a big index" && git -C "$T/w" push -q origin HEAD:main ||
	t_bail "the big index was not pushed"
rm -rf .idpmake
t_ok "empty-state up with an 80 MiB index" /usr/bin/time -f '%M' -o "$T/rss" "$IDPMAKE" up
rss=$(tail -n 1 "$T/rss")
echo "# peak RSS ${rss} KiB"
[ "$rss" -lt $((48 << 10)) ]
t_report $? "the index was not read (peak RSS ${rss} KiB < 48 MiB)"
t_grep "web rendered (nothing proven)" 'idpmake: 1 rendered' "$STDOUT"
echo '  more: "1"' >>packages/web/cm.yaml
t_ok "up after a change" /usr/bin/time -f '%M' -o "$T/rss" "$IDPMAKE" up
rss=$(tail -n 1 "$T/rss")
[ "$rss" -lt $((48 << 10)) ]
t_report $? "the push did not read it either (peak RSS ${rss} KiB < 48 MiB)"
t_ok "the index after the push" git --git-dir="$bare" cat-file -s main:.idpmake/keys
[ "$(cat "$STDOUT")" -lt 4096 ]
t_report $? "the push wrote a fresh index ($(cat "$STDOUT") bytes)"
t_done
