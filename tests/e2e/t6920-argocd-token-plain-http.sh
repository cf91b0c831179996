#!/bin/bash
# An Argo CD at a plain http:// URL: without --plaintext in ARGOCD_OPTS
# (the argocd CLI's opt-in) up refuses, naming why, and no request carries
# the token; with it, said knowingly, the token is sent.  (Found in review:
# the token went in clear text with no opt-in and no warning.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# the listener binds a port the kernel picks and says which (a port chosen
# before, then bound, can be another script's server by then)
python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.replace(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); d = c.recv(65536)
    open(sys.argv[2], "ab").write(d)
    c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); c.close()' "$T/listener.port" "$T/got.txt" &
t_pids="$t_pids $!"
port=$(read_port "$T/listener.port" $!) || t_bail "the listener did not start"
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF2
idpmake: 1
name: plainhttp
git: {remote: "$bare"}
argocd: {server: "http://127.0.0.1:$port", repo-url: "file://$bare"}
clusters:
  a: {server: "https://a.example:6443"}
packages:
  web: {type: manifests, path: packages/web}
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web
unset ARGOCD_OPTS
export ARGOCD_AUTH_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
t_exit 1 "up refuses an http:// Argo CD without --plaintext" "$IDPMAKE" -C d up
t_grep "the refusal says why and the way out" 'plain http, and the Argo CD token would go readable on the way: use https, or say --plaintext' "$OUTPUT"
t_nostring "the token is not in the message" "$ARGOCD_AUTH_TOKEN" "$OUTPUT"
touch "$T/got.txt"
t_nostring "the token was not sent over plain http without --plaintext" "$ARGOCD_AUTH_TOKEN" "$T/got.txt"
export ARGOCD_OPTS=--plaintext
"$IDPMAKE" -C d up >"$T/up2.txt" 2>&1
t_grep "with --plaintext, said knowingly, it is sent" 'Authorization: Bearer' "$T/got.txt"
t_done
