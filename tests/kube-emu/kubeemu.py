#!/usr/bin/env python3
"""Kubernetes API server emulator: a test fixture for idpmake (Python 3 standard library only).

The real kubectl talks to it on loopback, over https (--tls-cert, --tls-key): kubectl sends no
credential over plain http (client-go reads a kubeconfig's user only for a TLS server), so plain http
(`server: http://127.0.0.1:PORT`) serves an anonymous kubectl only.

    python3 kubeemu.py --port 0 --port-file FILE --token TOKEN [--tls-cert F --tls-key F]
        [--namespace NS ...] [--no-anonymous]

What it answers, as kube-apiserver 1.32 does:
  - GET /version, /healthz, /livez, /readyz; discovery: /api, /apis (the legacy documents: kubectl asks
    for aggregated discovery first and takes these as the answer of a server without it), /api/v1,
    /apis/GROUP/VERSION (APIResourceList); /openapi/v3 as far as kubectl reads it to learn that the
    server validates (openapi.py); /openapi/v2 is 404.
  - Bodies as JSON (and YAML that is JSON), or, for the kinds kubectl's typed clients create that way
    (Secret, ConfigMap, Namespace, ServiceAccount, [Cluster]Role[Binding]), as application/vnd.kubernetes.protobuf
    (proto.py); answers are JSON.
  - Objects (store.py): GET, LIST (labelSelector k=v, k!=v, k, !k; fieldSelector metadata.name and
    metadata.namespace), WATCH (?watch=true: chunked JSON events), POST, PUT, PATCH (merge, JSON,
    strategic-merge and server-side apply, patch.py), DELETE, for the built-in kinds in store.BUILTIN and
    the kinds a CustomResourceDefinition serves.  Table output is not offered: kubectl prints the list.
  - Errors as Status bodies: 401 Unauthorized (a wrong bearer token, or none with --no-anonymous), 403
    Forbidden (anonymous beyond /version and the health paths; a kind refused by a fault; a namespace
    being deleted), 404 NotFound (the object; `namespaces "x" not found` for an object in a namespace that
    does not exist), 409 AlreadyExists and Conflict (a stale resourceVersion), 422 Invalid (a name that is
    missing or not a DNS subdomain), 400 BadRequest (a body of the wrong kind or namespace), 415.
  - Without a token a caller is system:anonymous (kubeadm's default): /version and the health paths only.

Control API (no auth, never faulted, not in the request log):
    POST /_emu/fault   JSON object, any of:
        {"refuse": {"kind": K, ["group": G], ["verbs": [..]], ["namespace": NS]}}: 403 Forbidden for that kind
        {"fail": N, ["status": 500], ["message": S], ["path_regex": RE]}: the next N API requests (whose
            path RE matches, re.search) fail (500 InternalError)
        {"delay_ms": MS}: every API request waits MS first (0: none)
        {"down": true}: every API request's connection is closed without an answer (false: up again)
        {"stall": K}: the controller of kind K writes no status (a rollout that never completes)
    POST /_emu/reset   clears the faults and the request log ({"objects": true} also empties the store)
    POST /_emu/quiet   {"on": true}: requests go unlogged and take no "fail" fault, until {"on": false}
                       (the e2e harness's plan check, tests/e2e/lib.sh plancheck)
    GET  /_emu/state   every stored object (JSON list)      GET /_emu/requests   the request log
    POST /_emu/object  stores the object in the body as a controller would (no validation, no faults)

With --capi (capi.py, capicrds.py) it is also a Cluster API management cluster:
    --capi [--capi-ms 200] [--capi-api v1beta2|v1beta1] [--capi-topology-gate true|false] [--ca-cert FILE]
  - the root face serves the CAPI CRDs (cluster.x-k8s.io v1beta2 preferred + v1beta1, or v1beta1 alone with
    --capi-api v1beta1; kubeadm control plane and bootstrap, docker infrastructure, clusterctl Provider,
    operator.cluster.x-k8s.io/v1alpha2 providers); a Cluster is stored as v1beta2 and read in the version asked;
  - a controller thread moves each Cluster one step a tick (--capi-ms): finalizer and Pending, Provisioning,
    Provisioned + controlPlaneInitialized (Secret NAME-kubeconfig, a bearer token, certificate-authority-data
    from --ca-cert), then one Machine a tick; version changes roll one machine a tick; DELETE (finalizer)
    removes one machine a tick, then the Cluster, its Secret and its generated objects;
  - each initialized Cluster NAME is a workload cluster at https://HOST:PORT/k8s/NAME (own store; Nodes NotReady
    until a CNI DaemonSet: label emu.idpmake.io/cni=true or calico-node/cilium/kube-flannel-ds; a token
    controller fills kubernetes.io/service-account-token Secrets, whose tokens it then accepts); before
    initialization and after deletion its connections are closed without an answer;
  - Cluster webhooks (dryRun too): version decrease, +2 minors, change while rolling out, spec.topology with the
    gate off, variables undeclared or of the wrong type in an existing ClusterClass; a missing class warns.
    GET  /_emu/capi   per-cluster state and time-stamped events (kept after deletion until a reset)
    POST /_emu/capi   {"cluster": NAME, ["namespace": NS], any of "fail_provision": "Reason: message",
        "rotate_kubeconfig": true, "expire_credentials": true|false, "delete_out_of_band": true,
        "stuck_delete": "Reason: message"}; without "cluster" too: "unreachable": true|false (the whole
        management face drops connections), "providers": {"clusterctl": [{name, type, version, [namespace]}],
        "operator": [{kind, name, version, [installed]}], "topology_gate": bool} (stored objects, and the
        Deployment capi-system/capi-controller-manager's --feature-gates)
    POST /_emu/reset  also clears the CAPI faults (and the gate set by "providers"); {"objects": true} also
        forgets the clusters, their faces and events, and installs the CRDs again

Extending it: kinds come from CRDs; a controller is a branch in Store.react (or a Store subclass, as capi.py's),
or a thread that writes through Store under Store.lock.
"""
import argparse
import base64
import copy
import json
import os
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi  # noqa: E402
import proto  # noqa: E402
from patch import PatchError, json_patch, merge_patch, server_side_apply, strategic_merge  # noqa: E402
from store import LABEL_NAME_RE, NAME_RE, ApiError, Store  # noqa: E402

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-kubeemu", "gitCommit": "0" * 40,
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
           "compiler": "gc", "platform": "linux/amd64"}
PUBLIC = ("/version", "/version/", "/healthz", "/livez", "/readyz")
MAX_BODY = 16 << 20


class Emu:
    def __init__(self, token, namespaces, anonymous, store=Store):
        self.token, self.anonymous = token, anonymous
        self.store = store(namespaces) if namespaces else store()
        self.capi = None    # capi.Capi with --capi
        self.faults = {"refuse": [], "fail": 0, "fail_status": 500, "fail_message": "", "fail_path": "", "delay_ms": 0,
                       "down": False}
        self.requests = []
        self.quiet = False  # POST /_emu/quiet


def status_body(code, reason, message, details=None):
    return ApiError(code, reason, message, details).status()


def keep_status(obj, live):
    """an update or patch of the main resource leaves the status as it is (none stays none: a ConfigMap
    gets no status: null, which would read as a change)"""
    if "status" in live:
        obj["status"] = live["status"]
    else:
        obj.pop("status", None)


def verb_of(method, name, query):
    watch = query.get("watch", [""])[0] in ("true", "1")
    return {"GET": "watch" if watch else ("get" if name else "list"), "POST": "create", "PUT": "update",
            "PATCH": "patch", "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())


def parse_labels(sel):
    out = []
    for term in filter(None, (t.strip() for t in sel.split(","))):
        m = re.match(r"^(!?)([^=!]+?)\s*(?:(==|=|!=)\s*(.*))?$", term)
        if not m:
            raise ApiError(400, "BadRequest", "unable to parse requirement: %s" % term)
        out.append((m.group(1), m.group(2).strip(), m.group(3), (m.group(4) or "").strip()))
    return out


def labels_match(obj, terms):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for neg, k, op, v in terms:
        if op is None and ((k in labels) == bool(neg)):
            return False
        if op in ("=", "==") and labels.get(k) != v:
            return False
        if op == "!=" and labels.get(k) == v:
            return False
    return True


def fields_match(obj, sel):
    md = obj.get("metadata") or {}
    for term in filter(None, (t.strip() for t in sel.split(","))):
        m = re.match(r"^([^=!]+?)(==|=|!=)(.*)$", term)
        if not m or m.group(1) not in ("metadata.name", "metadata.namespace"):
            raise ApiError(400, "BadRequest", 'field label not supported: %s' % term.split("=")[0].rstrip("!"))
        have = md.get(m.group(1).split(".")[1], "")
        if (have == m.group(3)) != (m.group(2) != "!="):
            return False
    return True


HANDSHAKE_SECONDS = 30     # a TLS client that has not finished its handshake by then is dropped


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubeemu"

    def setup(self):
        super().setup()
        # headers and body go out in two writes: without this, Nagle's algorithm and the client's
        # delayed ACK hold every answer back 40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # the TLS handshake runs here, in the connection's own thread (main() wraps the listener with
        # do_handshake_on_connect=False): in accept() it held the one thread that accepts, so a client that
        # connected and sent nothing (a probe, an aborted handshake) left every other connection unanswered
        self.tls_failed = False
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.settimeout(HANDSHAKE_SECONDS)
            try:
                self.connection.do_handshake()
            except (ssl.SSLError, OSError) as e:
                self.tls_failed = True
                sys.stderr.write("%s TLS handshake failed: %s\n" % (self.log_date_time_string(), e))
            self.connection.settimeout(self.timeout)

    def handle(self):
        if not self.tls_failed:
            super().handle()

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))

    # ---- plumbing -------------------------------------------------------------
    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        for w in getattr(self, "warnings", []):
            self.send_header("Warning", '299 - "%s"' % w.replace('"', "'"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
                if len(out) > MAX_BODY:
                    raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
        return b""

    def json_body(self):
        raw = self.read_body()
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype == "application/vnd.kubernetes.protobuf":
            # kubectl's typed clients (create secret, create configmap, ...) send protobuf: proto.py
            try:
                return proto.decode(raw)
            except proto.ProtoError as e:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format "
                               "- accepted media types include: application/json (%s)" % e)
        try:
            return json.loads(raw.decode("utf-8") or "null")
        except (ValueError, UnicodeDecodeError) as e:
            # kubectl sends JSON, also as application/apply-patch+yaml (JSON is YAML)
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json (%s)" % e)

    def do_GET(self):
        self.route()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def route(self):
        emu = self.server.emu
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if path == "/_emu" or path.startswith("/_emu/"):
            return self.control(path)
        self.st, self.face, self.warnings = emu.store, None, []
        if emu.capi is not None:
            # a workload cluster's face: /k8s/NAME/...; it answers once its control plane is initialized
            m = re.match(r"^/k8s/([^/]+)(/.*)?$", path)
            own = getattr(self.server, "face_name", None)
            if own is not None and (not m or m.group(1) != own):
                # a workload cluster's own endpoint answers for that cluster alone
                return self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                            "reason": "NotFound", "code": 404,
                                            "message": "the server could not find the requested resource"})
            with emu.store.lock:
                self.face = emu.capi.faces.get(m.group(1)) if m else None
                drop = (self.face is None) if m else emu.capi.unreachable
            if drop:
                return self.drop()
            if m:
                self.st, path = self.face.store, m.group(2) or "/"
        with emu.store.lock:
            if not emu.quiet:  # the e2e harness's own plan (lib.sh plancheck): unlogged, no counted fault
                emu.requests.append({"method": self.command, "path": path, "query": url.query,
                                     "content_type": self.headers.get("Content-Type", ""),
                                     "user_agent": self.headers.get("User-Agent", "")})
            f = emu.faults
            down, delay = f["down"], f["delay_ms"]
            fail = not emu.quiet and f["fail"] > 0 and re.search(f["fail_path"], path) is not None
            if fail:
                f["fail"] -= 1
        if down:
            return self.drop()
        if delay:
            time.sleep(delay / 1000.0)
        try:
            if fail:
                self.read_body()
                raise ApiError(f["fail_status"], "InternalError", f["fail_message"] or
                               "Internal error occurred: injected fault", {"causes": [{"message": "injected"}]})
            user = self.authenticate(path)
            self.api(path, query, user)
        except ApiError as e:
            self.send_json(e.code, e.status())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def drop(self):
        """the connection closed without an answer"""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def authenticate(self, path):
        emu = self.server.emu
        auth = self.headers.get("Authorization", "")
        if auth and self.face is not None:
            with emu.store.lock:
                user = self.face.user(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
            if user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            return user
        if self.face is not None and not auth:
            der = self.connection.getpeercert(binary_form=True) if isinstance(self.connection, ssl.SSLSocket) else None
            if der:
                with emu.store.lock:
                    user = self.face.cert_user(der)
                if user is None:
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                return user
        if auth:
            if auth != "Bearer " + emu.token:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            return "kubeemu-admin"
        if not emu.anonymous:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if path not in PUBLIC:
            raise ApiError(403, "Forbidden", 'forbidden: User "system:anonymous" cannot %s path "%s"' %
                           (self.command.lower(), path), {})
        return "system:anonymous"

    # ---- the API ----------------------------------------------------------------
    def api(self, path, query, user):
        st = self.st
        if path in ("/version", "/version/"):
            return self.send_json(200, VERSION)
        if path in ("/healthz", "/livez", "/readyz"):
            data = b"ok"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return self.wfile.write(data)
        parts = [p for p in path.split("/") if p]
        with st.lock:
            if parts == ["openapi", "v3"]:
                return self.send_json(200, openapi.root(st.types))
            if parts[:2] == ["openapi", "v3"] and len(parts) in (4, 5):
                gv = (parts[3], parts[4]) if parts[2] == "apis" and len(parts) == 5 else \
                    ("", parts[3]) if parts[2] == "api" and len(parts) == 4 else (None, None)
                doc = openapi.group_version(st.types, *gv) if gv[1] else None
                if doc is None:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                return self.send_json(200, doc)
            if parts == ["api"]:
                return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "%s:%d" % self.server.server_address[:2]}]})
            if parts == ["apis"]:
                groups = []
                for g, vs in st.groups().items():
                    gvs = [{"groupVersion": g + "/" + v, "version": v} for v in vs]
                    groups.append({"name": g, "versions": gvs, "preferredVersion": gvs[0]})
                return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
            if len(parts) == 2 and parts[0] == "apis":
                vs = st.groups().get(parts[1])
                if not vs:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                gvs = [{"groupVersion": parts[1] + "/" + v, "version": v} for v in vs]
                return self.send_json(200, {"kind": "APIGroup", "apiVersion": "v1", "name": parts[1],
                                            "versions": gvs, "preferredVersion": gvs[0]})
            if parts[:2] == ["api", "v1"]:
                group, version, rest = "", "v1", parts[2:]
            elif len(parts) >= 3 and parts[0] == "apis":
                group, version, rest = parts[1], parts[2], parts[3:]
            else:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            types = [t for t in st.types if t.group == group and t.version == version]
            if not types:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if not rest:
                return self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                            "groupVersion": types[0].gv(),
                                            "resources": [t.discovery() for t in types]})
            ns = None
            if len(rest) >= 3 and rest[0] == "namespaces":
                ns, rest = rest[1], rest[2:]
            res = st.find(group, version, rest[0])
            if res is None or (ns is not None and not res.namespaced) or len(rest) > 3:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            name = rest[1] if len(rest) > 1 else None
            sub = rest[2] if len(rest) > 2 else None
            if sub and sub != "status":
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if res.namespaced and ns is None and name is not None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            verb = verb_of(self.command, name, query)
            self.authorize(res, ns, name, verb, user)
        if verb == "watch":
            return self.watch(res, ns, query)
        with st.lock:
            return self.object(res, ns, name, sub, verb, query)

    def authorize(self, res, ns, name, verb, user):
        for r in self.server.emu.faults["refuse"]:
            if r.get("kind") == res.kind and r.get("group", res.group) == res.group and \
                    verb in r.get("verbs", [verb]) and r.get("namespace", ns) == ns:
                where = ' in the namespace "%s"' % ns if ns else " at the cluster scope"
                msg = '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s' % (
                    ('%s "%s"' % (res.qualified(), name)) if name else res.qualified(), user, verb, res.plural,
                    res.group, where)
                raise ApiError(403, "Forbidden", msg, {"name": name, "group": res.group, "kind": res.plural}
                               if name else {"group": res.group, "kind": res.plural})

    def object(self, res, ns, name, sub, verb, query):
        st = self.st
        if verb == "get":
            return self.send_json(200, st.get(res, ns, name))
        if verb == "list":
            items = [o for o in st.list(res, ns) if labels_match(o, parse_labels(query.get("labelSelector", [""])[0]))
                     and fields_match(o, query.get("fieldSelector", [""])[0])]
            return self.send_json(200, {"kind": res.kind + "List", "apiVersion": res.gv(),
                                        "metadata": {"resourceVersion": str(st.rv)}, "items": items})
        if verb == "delete":
            self.read_body()
            return self.send_json(200, st.delete(res, ns, name))
        if verb == "deletecollection":
            self.read_body()
            for o in st.list(res, ns):
                st.delete(res, o["metadata"].get("namespace"), o["metadata"]["name"])
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
        dry = "All" in query.get("dryRun", [])
        manager = query.get("fieldManager", [""])[0] or self.manager_from_agent()
        if verb == "create":
            obj = self.checked(res, ns, self.json_body(), None)
            name = obj["metadata"].get("name") or ""
            if not name and obj["metadata"].get("generateName"):
                name = obj["metadata"]["name"] = obj["metadata"]["generateName"] + os.urandom(3).hex()[:5]
            self.valid(res, obj, ns)
            st.check_namespace(res, ns)
            if st.exists(res, ns, name):
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (res.qualified(), name),
                               {"name": name, "group": res.group, "kind": res.plural})
            if dry:
                return self.send_json(201, st.view(res, obj))
            obj.pop("status", None)
            return self.send_json(201, st.write(res, ns, obj, manager)[0])
        if verb == "update":
            obj = self.checked(res, ns, self.json_body(), name)
            live = st.get(res, ns, name)
            rv = obj["metadata"].get("resourceVersion")
            if rv and rv != live["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been '
                               'modified; please apply your changes to the latest version and try again' %
                               (res.qualified(), name), {"name": name, "group": res.group, "kind": res.plural})
            if sub == "status":
                live["status"] = obj.get("status")
                obj = live
            else:
                keep_status(obj, live)
            self.valid(res, obj, ns)
            if dry:
                return self.send_json(200, obj)
            return self.send_json(200, st.write(res, ns, obj, manager)[0])
        if verb == "patch":
            return self.patch(res, ns, name, sub, query, dry, manager)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def manager_from_agent(self):
        return (self.headers.get("User-Agent") or "unknown").split("/")[0]

    def patch(self, res, ns, name, sub, query, dry, manager):
        st = self.st
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self.json_body()
        exists = st.exists(res, ns, name)
        if ctype == "application/apply-patch+yaml":
            if not query.get("fieldManager", [""])[0]:
                raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required '
                               'value: is required for apply patch')
            cfg = self.checked(res, ns, body, name)
            key = st.key(res, ns, name) + (manager,)
            if not exists:
                st.check_namespace(res, ns)
                obj = server_side_apply({}, cfg, None)
            else:
                obj = server_side_apply(st.get(res, ns, name), cfg, st.applied.get(key))
            self.valid(res, obj, ns)
            if dry:
                return self.send_json(200 if exists else 201, st.view(res, obj))
            out, created = st.write(res, ns, obj, manager, "Apply")
            st.applied[key] = copy.deepcopy(cfg)
            return self.send_json(201 if created else 200, out)
        live = st.get(res, ns, name)
        try:
            if ctype == "application/merge-patch+json":
                obj = merge_patch(live, body)
            elif ctype == "application/json-patch+json":
                obj = json_patch(live, body)
            elif ctype == "application/strategic-merge-patch+json":
                if res.crd:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                                   "format - accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, application/apply-patch+yaml")
                obj = strategic_merge(live, body)
            else:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                               "accepted media types include: application/json-patch+json, application/merge-patch"
                               "+json, application/apply-patch+yaml, application/strategic-merge-patch+json")
        except PatchError as e:
            raise ApiError(422, "Invalid", str(e))
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise ApiError(422, "Invalid", "the patch leaves no object")
        obj["metadata"]["name"] = name
        if sub != "status":
            keep_status(obj, live)
        self.valid(res, obj, ns)
        if dry:
            return self.send_json(200, obj)
        return self.send_json(200, st.write(res, ns, obj, manager)[0])

    def checked(self, res, ns, obj, name):
        """the body of a create, update or apply: of this kind, this namespace and this name"""
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body of the request is not an object")
        if obj.get("kind") not in (None, "", res.kind) or obj.get("apiVersion") not in (None, "", res.gv()):
            raise ApiError(400, "BadRequest", "the API version in the data (%s) does not match the expected API "
                           "version (%s)" % (obj.get("apiVersion"), res.gv()) if obj.get("kind") == res.kind else
                           "%s in version \"%s\" cannot be handled as a %s: no kind \"%s\" is registered for "
                           "version \"%s\"" % (obj.get("kind"), res.version, res.kind, obj.get("kind"), res.gv()))
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        if not isinstance(md, dict):
            raise ApiError(400, "BadRequest", "metadata is not an object")
        if res.namespaced and md.get("namespace") not in (None, "", ns):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace "
                           "sent on the request")
        if name is not None and md.get("name") not in (None, name):
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)"
                           % (md.get("name"), name))
        if name is not None:
            md["name"] = name
        return obj

    def valid(self, res, obj, ns=None):
        md = obj["metadata"]
        name = md.get("name") or ""
        causes = []
        if not name:
            causes.append(("metadata.name", "Required value: name or generateName is required"))
        elif not (LABEL_NAME_RE if res.kind in ("Namespace", "Service") else NAME_RE).match(name) or len(name) > 253:
            causes.append(("metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 %s must consist of lower case '
                           "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                           "character" % (name, "label" if res.kind in ("Namespace", "Service") else "subdomain")))
        for f in ("labels", "annotations"):
            v = md.get(f)
            if v is not None and (not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values())):
                causes.append(("metadata." + f, "Invalid value: values must be strings"))
        if res.kind in ("ConfigMap", "Secret") and not res.group:
            for f in ("data", "stringData", "binaryData"):
                v = obj.get(f)
                if v is not None and (not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values())):
                    causes.append((f, "Invalid value: values must be strings"))
            if res.kind == "Secret" and not obj.get("type"):
                obj["type"] = "Opaque"    # the API server's default
            if res.kind == "Secret" and isinstance(obj.get("stringData"), dict):
                data = obj.setdefault("data", {}) or {}
                for k, v in obj.pop("stringData").items():
                    data[k] = base64.b64encode(v.encode()).decode()
                obj["data"] = data
        capi = self.server.emu.capi
        if capi is not None and not causes:
            self.warnings += capi.admit(self.st, res, ns, obj)   # the Cluster API webhooks (422, warnings)
        if causes:
            raise ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (res.kind, name, ", ".join(
                "%s: %s" % c for c in causes)), {"name": name, "group": res.group, "kind": res.kind,
                                                 "causes": [{"field": f, "message": m} for f, m in causes]})

    # ---- watch ------------------------------------------------------------------
    def watch(self, res, ns, query):
        st = self.st
        labels = parse_labels(query.get("labelSelector", [""])[0])
        fsel = query.get("fieldSelector", [""])[0]
        try:
            timeout = min(int(query.get("timeoutSeconds", ["60"])[0]), 600)
        except ValueError:
            timeout = 60
        rv = query.get("resourceVersion", [""])[0]
        with st.lock:
            fields_match({}, fsel)  # a bad selector is a 400 before the stream starts
            if rv in ("", "0"):
                pending = [("ADDED", o) for o in st.list(res, ns)]
                since = st.rv
            else:
                pending, since = [], int(rv) if rv.isdigit() else st.rv
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        end = time.time() + timeout

        def send(kind, obj):
            if (ns is None or obj["metadata"].get("namespace", "") == ns) and labels_match(obj, labels) \
                    and fields_match(obj, fsel):
                data = json.dumps({"type": kind, "object": obj}, separators=(",", ":")).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

        try:
            for kind, obj in pending:
                send(kind, obj)
            while time.time() < end:
                with st.lock:
                    new = [(e[0], e[1], st.view(res, e[4])) for e in st.events
                           if e[0] > since and e[2] == res.group and e[3] == res.kind]
                    if not new:
                        st.lock.wait(0.5)
                if new:
                    since = new[-1][0]
                    for _, kind, obj in new:
                        send(kind, obj)
                r, _, _ = select.select([self.connection], [], [], 0)
                if r and not self.connection.recv(1, socket.MSG_PEEK):
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    # ---- control ------------------------------------------------------------------
    def control(self, path):
        emu = self.server.emu
        try:
            body = self.json_body() if self.command == "POST" else None
        except ApiError as e:
            return self.send_json(400, {"error": e.message})
        with emu.store.lock:
            if self.command == "GET" and path == "/_emu/state":
                return self.send_json(200, emu.store.dump())
            if self.command == "GET" and path == "/_emu/requests":
                return self.send_json(200, emu.requests)
            if self.command == "GET" and path == "/_emu/faults":
                return self.send_json(200, emu.faults)
            if path == "/_emu/capi" and emu.capi is not None:
                return self.send_json(*emu.capi.control(self.command, body))
            if self.command == "POST" and path == "/_emu/quiet":
                emu.quiet = bool(isinstance(body, dict) and body.get("on"))
                return self.send_json(200, {"quiet": emu.quiet})
            if self.command == "POST" and path == "/_emu/reset":
                emu.faults.update(refuse=[], fail=0, fail_status=500, fail_message="", fail_path="", delay_ms=0,
                                  down=False)
                emu.requests = []
                emu.store.stalled = set()
                if isinstance(body, dict) and body.get("objects"):
                    emu.store.__init__()
                if emu.capi is not None:
                    emu.capi.reset(isinstance(body, dict) and body.get("objects"))
                return self.send_json(200, {})
            if self.command == "POST" and path == "/_emu/object" and isinstance(body, dict):
                res = emu.store.by_kind((body.get("apiVersion") or "").rpartition("/")[0], body.get("kind"))
                if res is None:
                    return self.send_json(400, {"error": "no such kind"})
                ns = (body.get("metadata") or {}).get("namespace", "")
                return self.send_json(200, emu.store.write(res, ns, body)[0])
            if self.command == "POST" and path == "/_emu/fault" and isinstance(body, dict):
                f = emu.faults
                known = {"refuse", "fail", "status", "message", "path_regex", "delay_ms", "down", "stall"}
                if not body or set(body) - known:
                    return self.send_json(400, {"error": "unknown fault fields: %s" % sorted(set(body) - known)})
                if isinstance(body.get("refuse"), dict) and body["refuse"].get("kind"):
                    f["refuse"].append(body["refuse"])
                elif "refuse" in body:
                    return self.send_json(400, {"error": "refuse needs {\"kind\": K}"})
                if "fail" in body:
                    f["fail"] = int(body["fail"])
                    f["fail_status"] = int(body.get("status", 500))
                    f["fail_message"] = body.get("message", "")
                    f["fail_path"] = body.get("path_regex", "")
                if "delay_ms" in body:
                    f["delay_ms"] = int(body["delay_ms"])
                if "down" in body:
                    f["down"] = bool(body["down"])
                if "stall" in body:
                    emu.store.stalled.add(body["stall"])
                return self.send_json(200, f)
        self.send_json(404, {"error": "no such control endpoint: %s %s" % (self.command, path)})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def face_listeners(main_srv, host):
    """listen(name) -> port: a server of its own for workload cluster `name` (its controlPlaneEndpoint), with the
    main server's TLS and store, bound by the kernel to a free port (no race); close(port) ends it"""
    faces = {}

    def listen(name):
        srv = Server((host, 0), Handler)
        srv.emu, srv.face_name = main_srv.emu, name
        if isinstance(main_srv.socket, ssl.SSLSocket):
            srv.socket = main_srv.socket.context.wrap_socket(srv.socket, server_side=True,
                                                             do_handshake_on_connect=False)
        port = srv.server_address[1]
        faces[port] = srv
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        return port

    def close(port):
        srv = faces.pop(port, None)
        if srv is not None:
            # not under the store's lock: shutdown waits for the serving loop
            threading.Thread(target=lambda: (srv.shutdown(), srv.server_close()), daemon=True).start()

    return listen, close


def main(argv=None):
    ap = argparse.ArgumentParser(description="Kubernetes API server emulator (test fixture)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port (see --port-file)")
    ap.add_argument("--port-file", help="write the listening port here once listening")
    ap.add_argument("--token", required=True, help="the bearer token accepted")
    ap.add_argument("--namespace", action="append", default=[],
                    help="a namespace that exists at start (default: default, kube-system, kube-public, "
                         "kube-node-lease)")
    ap.add_argument("--no-anonymous", action="store_true", help="a request without a token is a 401")
    ap.add_argument("--tls-cert", help="serve https with this certificate (PEM)")
    ap.add_argument("--tls-key", help="and this key")
    ap.add_argument("--capi", action="store_true", help="a Cluster API management cluster (capi.py)")
    ap.add_argument("--capi-ms", type=int, default=200, help="the fake CAPI controller's tick (ms)")
    ap.add_argument("--capi-api", choices=("v1beta2", "v1beta1"), default="v1beta2",
                    help="v1beta1: cluster.x-k8s.io served as v1beta1 only (CAPI 1.10)")
    ap.add_argument("--capi-topology-gate", choices=("true", "false"), default="true",
                    help="false: the webhook refuses spec.topology (ClusterTopology feature gate off)")
    ap.add_argument("--ca-cert", help="the CA that signed --tls-cert: certificate-authority-data of the "
                                      "workload kubeconfigs and ca.crt of service-account tokens")
    a = ap.parse_args(argv)
    srv = Server((a.host, a.port), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    if a.capi:
        import capi
        srv.emu = Emu(a.token, a.namespace, not a.no_anonymous, capi.MgmtStore)
        ca = b""
        if a.ca_cert:
            with open(a.ca_cert, "rb") as f:
                ca = f.read()
        client_ca = None
        if a.tls_cert:
            # the workload kubeconfigs carry a client certificate of this CA too (CERT_OPTIONAL: a token is enough)
            client_ca = capi.ClientCA()
            srv.socket.context.verify_mode = ssl.CERT_OPTIONAL
            srv.socket.context.load_verify_locations(client_ca.cert)
        srv.emu.capi = capi.Capi(srv.emu, a.capi_ms, a.capi_api, a.capi_topology_gate == "true", ca, client_ca)
        srv.emu.capi.port = srv.server_address[1]
        srv.emu.capi.listen, srv.emu.capi.close = face_listeners(srv, a.host)
    else:
        srv.emu = Emu(a.token, a.namespace, not a.no_anonymous)
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(tmp, a.port_file)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    srv.server_close()
    if srv.emu.capi is not None and srv.emu.capi.client_ca is not None:
        srv.emu.capi.client_ca.close()


if __name__ == "__main__":
    main()
