#!/bin/bash
# Hostile text from Argo CD does not reach the terminal as control sequences
# (issue 20 item 9): a sync failure whose message holds ESC ] 0 ; ... BEL, DEL
# and the C1 CSI U+009B, and live objects whose name and values hold ESC
# sequences, are shown by up and diff --live with each control character
# escaped as \xHH; no raw ESC, BEL, DEL or C1 byte is printed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: escapes
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web, sync: {prune: true}}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap cfg web
cd d || exit 1
# raw control characters (ESC, BEL, DEL, CSI) in FILE
raw() { LC_ALL=C grep -c $'[\x1b\x07\x7f]\|\xc2\x9b' "$1"; }

t_ok "setup: up" idpmake up

# ---- objects Argo CD reports live -----------------------------------------------------
emu_post live '{"app": "in-cluster-web", "kind": "ConfigMap", "name": "cfg", "namespace": "web", "set": {"data.name": "\u001b[31mred\u009b2J"}}'
emu_post live '{"app": "in-cluster-web", "create": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "evil\u001b]0;title\u0007x", "namespace": "web"}}}'
t_ok "diff --live" idpmake diff --live
t_eq "diff --live printed no raw control character" 0 "$(raw "$OUTPUT")"
t_grep "the live object's name, escaped" '^prune +ConfigMap web/evil\\x1b\]0;title\\x07x' "$STDOUT"
t_grep "the live value, escaped (as YAML escapes it)" '^-  name: "\\e\[31mred\\x9B2J"$' "$STDOUT"
t_ok "diff --live -o saved.json" idpmake diff --live -o saved.json
t_ok "diff --from saved.json" idpmake diff --from saved.json
t_eq "diff --from printed no raw control character" 0 "$(raw "$OUTPUT")"

# ---- a sync that fails with a hostile message ------------------------------------------
emu_post fault '{"app": "in-cluster-web", "sync_fail": "denied \u001b]0;pwned\u0007 \u009b31m del\u007f end"}'
echo '  level: debug' >>packages/web/cm.yaml
t_exit 1 "up: the sync fails" idpmake up
t_eq "up printed no raw control character" 0 "$(raw "$OUTPUT")"
t_grep "Argo CD's message, escaped" 'denied \\x1b\]0;pwned\\x07 \\xc2\\x9b31m del\\x7f end' "$OUTPUT"
t_done
