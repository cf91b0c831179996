"""GET /api/v1/stream/applications: Argo CD's watch stream, as the API server serves it over HTTP (issue 26).

server/application/application.go Watch: with no resourceVersion (or with a name) every Application the query
matches (selector, name with appNamespace, projects; one the account may not get is left out, as RBAC says)
is sent first, as ADDED, sorted by name; then each change
the controller or API makes, as MODIFIED (DELETED when it goes); an Application whose resourceVersion is below
the query's is left out.  It does not replay: a client that reconnects with a resourceVersion gets only what
changes after it subscribed.  The HTTP side (argoproj/pkg grpc/http NewStreamForwarder): with
`Accept: text/event-stream`, `data: {"result": {...}} ` and a blank line per event, and ":" every 15 s
(keepalive_ms here); otherwise one `{"result": {...}}` line per event.  An event equal to the last one sent for
that name is not sent again.

Faults (the emulator's config): stream_drop_after N ends the connection after N events (a proxy's idle cut);
stream_buffer true sends the headers and then nothing (a proxy that buffers the response until it ends).
"""
import json
import time
from urllib.parse import parse_qs

POLL_S = 0.02


def serve_watch(h, emu, rawq, parse_selector, sel_match, control_ns):
    q = parse_qs(rawq, keep_blank_values=True)
    one = lambda k: (q.get(k) or [""])[0]  # noqa: E731
    try:
        sel = parse_selector(one("selector"))
    except ValueError as e:
        return h.send(400, "application/json", json.dumps({"error": "error parsing labels with selectors: %s" % e,
                                                           "code": 3, "message": str(e)}).encode())
    name, ns = one("name"), one("appNamespace") or control_ns
    projects = set(q.get("projects") or []) | set(q.get("project") or [])
    try:
        minv = int(one("resourceVersion") or 0)
    except ValueError:
        minv = 0
    initial = not one("resourceVersion") or bool(name)
    sse = (h.headers.get("Accept") or "") == "text/event-stream"
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream" if sse else "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.send_header("X-Content-Type-Options", "nosniff")
    h.end_headers()
    h.close_connection = True

    def chunk(data):
        h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        h.wfile.flush()

    def permitted(rec):
        md, sp = rec.obj["metadata"], rec.obj["spec"]
        if projects and sp.get("project") not in projects:
            return False
        try:
            if int(md.get("resourceVersion") or 0) < minv:
                return False
        except ValueError:
            pass
        if name and (md.get("name") != name or (md.get("namespace") or control_ns) != ns):
            return False
        if not sel_match(sel, md.get("labels") or {}):
            return False
        # isApplicationPermitted: an Application the account may not get is left out, silently
        return emu.allowed("applications", "get", emu.rbac_name(sp.get("project") or "default",
                                                                md.get("namespace") or control_ns, md.get("name")))

    sent, last, events, first, seen = {}, {}, 0, True, None
    last_write = time.time()
    with emu.lock:
        emu.watchers += 1
        emu.watch_opens += 1
    try:
        while True:
            out = []
            with emu.lock:
                drop_after, buffered, keepalive = emu.stream_drop_after, emu.stream_buffer, emu.keepalive_ms
                # every change bumps emu.rv (touch) or the count: nothing to look at without one (the scan of
                # every Application, under the lock, every 20 ms, was the cost of a stream at 2,000 Applications)
                now_seen = (emu.rv, len(emu.apps))
                todo = sorted(emu.apps.items()) if now_seen != seen else []
                seen = now_seen
                for key, rec in todo:
                    rv = rec.obj["metadata"].get("resourceVersion")
                    if sent.get(key) == rv:
                        continue
                    if first and not initial:
                        sent[key] = rv  # no first list: only what changes from now on
                        continue
                    sent[key] = rv
                    if not permitted(rec):
                        continue
                    app = emu.render(rec)
                    data = json.dumps({"result": {"type": "MODIFIED" if key in last or not first else "ADDED",
                                                  "application": app}}, separators=(",", ":"))
                    if last.get(key) != data:
                        last[key] = data
                        out.append(data)
                for key in [k for k in last if k not in emu.apps] if todo or len(last) > len(emu.apps) else []:
                    gone = json.loads(last.pop(key))["result"]["application"]
                    sent.pop(key, None)
                    out.append(json.dumps({"result": {"type": "DELETED", "application": gone}}, separators=(",", ":")))
            first = False
            if not buffered:
                for data in out:
                    chunk(("data: %s \n\n" % data if sse else data + "\n").encode())
                    events += 1
                    last_write = time.time()
                    if drop_after and events >= drop_after:
                        return  # the connection ends without the final chunk: a cut
                if sse and keepalive > 0 and time.time() - last_write >= keepalive / 1000.0:
                    chunk(b":\n")
                    last_write = time.time()
            time.sleep(POLL_S)
    except (BrokenPipeError, ConnectionResetError, OSError):
        return
    finally:
        with emu.lock:
            emu.watchers -= 1
