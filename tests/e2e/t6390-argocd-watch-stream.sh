#!/bin/bash
# Waiting on Argo CD's watch stream (issue 26 §2, §3): a run waits for its
# syncs through one GET /api/v1/stream/applications?selector=idpmake.io/distro=...
# (server-sent events), not a GET per Application per poll; it falls back to
# polling, with a warning, when Argo CD has no stream (404), or a proxy
# buffers it (nothing in 15 s); a dropped stream is opened again, and the run
# still ends right.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd --op-ms 400 --health-ms 400
export IDPMAKE_ARGOCD_POLL_MS=100
mkdistro d <<EOF2
idpmake: 1
name: watched
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  c1: {server: https://kubernetes.default.svc}
  c2: {server: https://kubernetes.default.svc}
packages:
  a: {type: manifests, path: packages/a, namespace: a}
  b: {type: manifests, path: packages/b, namespace: b}
EOF2
mkmanifest d/packages/a/cm.yaml ConfigMap a a
mkmanifest d/packages/b/cm.yaml ConfigMap b b
cd d || exit 1

# counts of the requests since the last reset: app GETs (the polls), stream opens
count() {
	curl -sS -f "$emu/requests" | python3 -c '
import json, sys
log = json.load(sys.stdin)
gets = sum(1 for e in log if e["method"] == "GET" and e["path"].startswith("/api/v1/applications/"))
streams = [e for e in log if e["method"] == "GET" and e["path"] == "/api/v1/stream/applications"]
sel = sorted({a for e in streams for a in e["args"].get("selector", [])})
print(gets, len(streams), ",".join(sel))
'
}
change() { sed -i "/^  v: /d" packages/a/cm.yaml packages/b/cm.yaml; echo "  v: \"$1\"" >>packages/a/cm.yaml; echo "  v: \"$1\"" >>packages/b/cm.yaml; }

emu_reset
t_ok "up waits on the stream" idpmake up
read -r gets streams sel <<<"$(count)"
t_eq "one stream for the run" 1 "$streams"
t_eq "selecting the distro's Applications" "idpmake.io/distro=watched" "$sel"
t_ok "and no GET per Application per poll (at most one each: $gets for 4)" test "$gets" -le 4

emu_reset
change 2
polling_up() { IDPMAKE_ARGOCD_WATCH=0 idpmake up; }
t_ok "up, polling (IDPMAKE_ARGOCD_WATCH=0)" polling_up
read -r gets streams sel <<<"$(count)"
t_eq "no stream" 0 "$streams"
t_ok "polling GETs each Application many times ($gets for 4)" test "$gets" -gt 8

emu_reset
change 3
emu_post fault '{"path_regex": "^/api/v1/stream/applications$", "status": 404, "count": -1}'
t_ok "an Argo CD without the stream (404)" idpmake up
t_grep "warns, and polls" "warning: argocd: Argo CD answered the watch stream with HTTP 404; waiting by polling" "$STDERR"
t_eq "warned once" 1 "$(grep -c 'waiting by polling' "$STDERR")"
read -r gets streams sel <<<"$(count)"
t_eq "asked once" 1 "$streams"
emu_reset

change 4
# operations of 16 s: the run outlasts the 15 s in which the stream must say something
emu_post config '{"stream_buffer": true, "op_ms": 16000}'
t_ok "a proxy that buffers the stream" idpmake up
t_grep "warns, and polls" "warning: argocd: the watch stream sent nothing in 15 s \(a proxy that buffers it\?\); waiting by polling" "$STDERR"
emu_post config '{"stream_buffer": false, "op_ms": 400}'

emu_reset
change 5
emu_post config '{"stream_drop_after": 6}'
t_ok "a stream cut after six events each time" idpmake up
read -r gets streams sel <<<"$(count)"
t_ok "is opened again ($streams times), 30 times at most in a run" test "$streams" -ge 2 -a "$streams" -le 30
emu_post config '{"stream_drop_after": 0}'
t_ok "plan afterwards: all done" idpmake plan
t_grep "nothing left" '^idpmake: 0 steps would run' "$STDOUT"
t_done
