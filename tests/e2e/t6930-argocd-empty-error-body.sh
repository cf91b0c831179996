#!/bin/bash
# Review finding: an Argo CD (or a proxy in front of it) that answers a
# request with a non-200 status and an empty body (a 404 from an ingress, a
# bare 401) crashes idpmake: argoapi.c decode() does strlen(r->body.s) with
# body.s NULL.  Expected: the sync fails (exit 1) naming the status.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

port=$(free_port)
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); d = c.recv(65536)
    open(sys.argv[2], "ab").write(d)
    c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); c.close()' "$port" "$T/got.txt" &
t_pids="$t_pids $!"
t_wait_for 10 sh -c "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port))' 2>/dev/null" || t_bail "the listener did not start"
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
mkdistro d <<EOF2
idpmake: 1
name: emptybody
git: {remote: "$bare"}
argocd: {server: "http://127.0.0.1:$port"}
clusters:
  a: {server: "https://a.example:6443"}
packages:
  web: {type: manifests, path: packages/web}
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web
export ARGOCD_OPTS=--plaintext
export ARGOCD_AUTH_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
t_exit 1 "a 404 with an empty body fails the sync, no crash" "$IDPMAKE" -C d up
t_grep "the error names the status" '404' "$OUTPUT"
t_done
