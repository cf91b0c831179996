"""Live clusters (--live-clusters, config live_clusters): the emulator's Applications deploy to real Kubernetes API
servers (tests/kube-emu/kubeemu.py) instead of the in-memory model of resources.py.

Only a registered cluster whose server is a loopback https URL is live (and the in-cluster destination
https://kubernetes.default.svc when --in-cluster-kube URL is given, with --in-cluster-kube-token and
--in-cluster-kube-ca).  The cluster config's credentials are used as Argo CD's client-go would: bearerToken,
tlsClientConfig caData (verification), insecure, certData/keyData (client certificate), serverName.

What it does, as Argo CD (behaviour read from argo-cd and gitops-engine; no code copied):
  - cluster create/upsert/update: GET {server}/version with those credentials; a failure is the emulator's
    "error getting server version: failed to get server version: ..." (server/cluster Create);
  - comparison: the live objects of an app are the cluster's objects whose argocd.argoproj.io/tracking-id
    is APP:GROUP/KIND:NS/NAME (annotation tracking); a connection failure is ComparisonError
    "failed to sync cluster SERVER: connection refused" and health Unknown;
  - sync: a dry run of every object (dryRun=All) first ("one or more objects failed to apply (dry run)"),
    then server-side apply (fieldManager argocd-controller, force) in sync-wave order, then kind order
    (gitops-engine's kind order), prune of tracked objects no longer in the revision (PruneLast=true: after
    the others); an API error fails the operation "one or more objects failed to apply, reason: MSG";
  - GET/DELETE .../resource on the live object (Secrets masked as HideSecretData), resource-tree with the
    objects' owner-ref children (recursively), their uid, resourceVersion, health and parentRefs;
  - cascaded deletion (finalizeApplicationDeletion): reverse sync-wave order, a wave whose objects still exist
    (deletionTimestamp, finalizers) blocks the next; an unreachable cluster blocks it all; an app whose destination
    is not registered loses its resources finalizer at once;
  - the cluster cache: every live_resync_ms (config, default 300) each live app's tracked objects, their owner-ref
    children and the cluster's reachability are listed; a change is a new comparison (an unchanged app is left
    alone, its resourceVersion too);
  - health (resource-tree nodes; the app's health once its post-sync Progressing is over: the worst of its
    resources'): Deployment/StatefulSet/DaemonSet rollout, cluster.x-k8s.io Cluster (Provisioned Healthy, Failed
    Degraded, else Progressing), Machine/MachineDeployment (Running), then any Ready=False Degraded (Argo CD <= 3.5.1;
    v1beta2 objects carry no Ready), spec.paused Suspended; ClusterResourceSet by ResourcesApplied.

Not modelled for live apps: hooks, /_emu/live drift (it edits the in-memory model; edit the cluster instead),
the cluster's connectionState in GET /api/v1/clusters, awsAuthConfig (an eks cluster), health messages word for word.
"""
import base64
import http.client
import ipaddress
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from urllib.parse import quote, urlencode, urlsplit

from emucommon import IN_CLUSTER, ApiError, ts
from resources import health_of, set_tracking, tracked_as, hide_secret_data, normalize_secret, rkey

MANAGER = "argocd-controller"
# gitops-engine sync/sync_tasks.go kindOrder (its ordering of objects of one wave)
KIND_ORDER = ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
              "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
              "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
              "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
              "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
              "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService"]
HEALTH_ORDER = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"]


class KubeDown(Exception):
    """The cluster could not be reached (client-go's dial/transport error text)."""


class KubeError(Exception):
    """An API answer other than 2xx: code and the Status message."""

    def __init__(self, code, message, body=None):
        super().__init__(message)
        self.code, self.message, self.body = code, message, body


def loopback_https(server):
    u = urlsplit(server or "")
    if u.scheme != "https":
        return False
    try:
        return u.hostname == "localhost" or ipaddress.ip_address(u.hostname or "").is_loopback
    except ValueError:
        return False


def wave(obj):
    try:
        return int(((obj.get("metadata") or {}).get("annotations") or {}).get("argocd.argoproj.io/sync-wave", "0"))
    except ValueError:
        return 0


def sync_order(obj):
    k = obj.get("kind")
    return (wave(obj), KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k, rkey(obj)[2], rkey(obj)[3])


def tracking_id(app, obj):
    g, k, ns, n = rkey(obj)
    return "%s:%s/%s:%s/%s" % (app, g, k, ns, n)


def has_option(obj, opt):
    """the object's own argocd.argoproj.io/sync-options annotation names opt"""
    ann = ((obj.get("metadata") or {}).get("annotations") or {}).get("argocd.argoproj.io/sync-options") or ""
    return opt in [o.strip() for o in ann.split(",")]


def conditions(obj):
    return {c.get("type"): c for c in ((obj.get("status") or {}).get("conditions") or []) if isinstance(c, dict)}


def live_health(obj):
    """The health Argo CD's checks give a live object (None: no health check)."""
    if obj is None:
        return {"status": "Missing"}
    g, k = rkey(obj)[:2]
    st = obj.get("status") or {}
    if g == "cluster.x-k8s.io" and k in ("Cluster", "Machine", "MachineDeployment"):
        # resource_customizations/cluster.x-k8s.io/*: paused is Suspended, the phase, then (Argo CD <= 3.5.1) any
        # Ready=False condition is Degraded; v1beta2 objects carry no Ready, so their health is the phase alone
        if (obj.get("spec") or {}).get("paused"):
            return {"status": "Suspended", "message": "%s is paused" % k}
        phase, good = st.get("phase"), "Provisioned" if k == "Cluster" else "Running"
        if phase == good:
            h = {"status": "Healthy", "message": "%s is running" % k}
        elif phase == "Failed":
            h = {"status": "Degraded", "message": st.get("failureMessage") or ""}
        else:
            h = {"status": "Progressing", "message": "Waiting for %s" % ("clusters" if k == "Cluster" else "machines")}
        ready = conditions(obj).get("Ready")
        if ready and ready.get("status") == "False":
            h = {"status": "Degraded", "message": ready.get("message") or ""}
        return h
    if g == "addons.cluster.x-k8s.io" and k == "ClusterResourceSet":
        c = conditions(obj).get("ResourcesApplied")
        if not c or c.get("status") not in ("True", "False"):
            return {"status": "Progressing", "message": "Waiting for ResourcesApplied"}
        return {"status": "Healthy" if c["status"] == "True" else "Degraded", "message": c.get("message") or ""}
    if g == "apps" and k in ("Deployment", "StatefulSet", "DaemonSet"):
        want = (obj.get("spec") or {}).get("replicas", 1) if k != "DaemonSet" else st.get("desiredNumberScheduled", 0)
        if (obj.get("spec") or {}).get("paused"):
            return {"status": "Suspended", "message": "Deployment is paused"}
        if obj["metadata"].get("generation", 1) > st.get("observedGeneration", 0):
            return {"status": "Progressing", "message": "Waiting for rollout to finish: observed generation less "
                    "than desired generation"}
        have = st.get("availableReplicas", 0) if k == "Deployment" else \
            st.get("readyReplicas", 0) if k == "StatefulSet" else st.get("numberAvailable", 0)
        if have < (want or 0):
            return {"status": "Progressing", "message": "Waiting for rollout to finish: %d of %d updated replicas "
                    "are available..." % (have, want)}
        return {"status": "Healthy"}
    return health_of(obj)     # the in-memory model's rule for the other kinds


def worst(healths):
    out = "Healthy"
    for h in healths:
        if h and h.get("status") in HEALTH_ORDER and HEALTH_ORDER.index(h["status"]) > HEALTH_ORDER.index(out):
            out = h["status"]
    return out


class Kube:
    """A client of one cluster's API, with the Argo CD cluster config's credentials."""

    def __init__(self, server, cfg):
        u = urlsplit(server)
        self.server, self.host, self.port, self.prefix = server, u.hostname, u.port or 443, u.path.rstrip("/")
        tls = cfg.get("tlsClientConfig") or {}
        self.ctx = ssl.create_default_context()
        self.sni = tls.get("serverName") or self.host
        if tls.get("insecure"):
            self.ctx.check_hostname, self.ctx.verify_mode = False, ssl.CERT_NONE
        elif tls.get("caData"):
            self.ctx.load_verify_locations(cadata=base64.b64decode(tls["caData"]).decode())
        elif tls.get("caFile"):
            self.ctx.load_verify_locations(cafile=tls["caFile"])
        if tls.get("certData") and tls.get("keyData"):
            with tempfile.TemporaryDirectory() as d:
                for n in ("certData", "keyData"):
                    with open(os.path.join(d, n), "wb") as f:
                        f.write(base64.b64decode(tls[n]))
                try:
                    self.ctx.load_cert_chain(os.path.join(d, "certData"), os.path.join(d, "keyData"))
                except ssl.SSLError:
                    raise ValueError("tls: failed to find any PEM data in certificate input")
        self.token = cfg.get("bearerToken")
        self.types = None   # (group, kind) -> (version, plural, namespaced)
        self.conn, self.lock = None, threading.Lock()
        self.writes = 0     # requests that change the cluster: a read taken before one is stale (live_loop)

    def roundtrip(self, method, full, data, hdrs, timeout):
        """one request on the kept-alive connection (a new one when it was closed)"""
        for attempt in (0, 1):
            fresh = self.conn is None
            if fresh:
                self.conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)
                if self.sni != self.host:
                    self.conn.host = self.sni
            try:
                self.conn.request(method, full, body=data, headers=hdrs)
                r = self.conn.getresponse()
                raw = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r, raw
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if fresh or attempt:
                    raise
        raise OSError("unreachable")

    def url(self, path):
        return self.server + path

    def request(self, method, path, body=None, ctype="application/json", query=None, timeout=5):
        full = self.prefix + path + ("?" + urlencode(query) if query else "")
        hdrs = {"Accept": "application/json", "User-Agent": "argocd-application-controller/v3.6.0"}
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = ctype
        try:
            with self.lock:
                if method != "GET":
                    self.writes += 1
                r, raw = self.roundtrip(method, full, data, hdrs, timeout)
        except ssl.SSLCertVerificationError as e:
            raise KubeDown('Get "%s": tls: failed to verify certificate: x509: %s' % (
                self.url(path), "certificate signed by unknown authority" if "self" in str(e) or "issuer" in str(e)
                else e.verify_message))
        except ConnectionRefusedError:
            raise KubeDown('Get "%s": dial tcp %s:%d: connect: connection refused' % (self.url(path), self.host, self.port))
        except (socket.timeout, TimeoutError):
            raise KubeDown('Get "%s": dial tcp %s:%d: i/o timeout' % (self.url(path), self.host, self.port))
        except (OSError, http.client.HTTPException):
            raise KubeDown('Get "%s": EOF' % self.url(path))
        try:
            obj = json.loads(raw) if raw else {}
        except ValueError:
            obj = {"message": raw.decode("utf-8", "replace")}
        if r.status >= 300:
            msg = obj.get("message") if isinstance(obj, dict) else None
            if r.status == 401:
                msg = "Unauthorized"
            raise KubeError(r.status, msg or "the server responded with the status code %d" % r.status, obj)
        return obj

    # -- discovery
    def discover(self, force=False):
        if self.types is not None and not force:
            return self.types
        types = {}
        gvs = ["/api/v1"]
        for g in self.request("GET", "/apis").get("groups") or []:
            pv = (g.get("preferredVersion") or {}).get("groupVersion")
            gvs += ["/apis/" + v["groupVersion"] for v in g.get("versions") or []
                    if v.get("groupVersion") == pv] + ["/apis/" + v["groupVersion"] for v in g.get("versions") or []
                                                        if v.get("groupVersion") != pv]
        for p in gvs:
            try:
                rl = self.request("GET", p)
            except KubeError:
                continue
            gv = rl.get("groupVersion") or "v1"
            group, _, version = gv.rpartition("/")
            for r in rl.get("resources") or []:
                if "/" in r.get("name", ""):
                    continue
                types.setdefault((group, r["kind"]), (version, r["name"], bool(r.get("namespaced"))))
        self.types = types
        return types

    def rtype(self, group, kind):
        t = self.discover().get((group, kind))
        if t is None:
            t = self.discover(True).get((group, kind))
        return t

    def path(self, group, kind, ns, name=None):
        t = self.rtype(group, kind)
        if t is None:
            raise KubeError(404, 'The Kubernetes API could not find %s/%s for requested resource %s/%s. Make sure the '
                            '"%s" CRD is installed on the destination cluster.' % (group, kind, ns, name or "", kind))
        version, plural, namespaced = t
        p = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
        if namespaced and ns:
            p += "/namespaces/" + quote(ns)
        p += "/" + plural
        return p + ("/" + quote(name) if name else ""), namespaced

    def get(self, group, kind, ns, name):
        return self.request("GET", self.path(group, kind, ns, name)[0])

    def apply(self, obj, dry=False):
        g, k, ns, n = rkey(obj)
        p, namespaced = self.path(g, k, ns, n)
        q = {"fieldManager": MANAGER, "force": "true"}
        if dry:
            q["dryRun"] = "All"
        return self.request("PATCH", p, obj, "application/apply-patch+yaml", q)

    def delete(self, group, kind, ns, name, policy="Foreground", grace=None):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        return self.request("DELETE", self.path(group, kind, ns, name)[0], body)

    def everything(self):
        """every object of every listable kind (the cluster cache)"""
        out = []
        for (group, kind), (version, plural, namespaced) in sorted(self.discover(True).items()):
            p = ("/api/v1" if not group else "/apis/%s/%s" % (group, version)) + "/" + plural
            try:
                items = self.request("GET", p).get("items") or []
            except KubeError:
                continue
            for o in items:
                o.setdefault("apiVersion", (group + "/" if group else "") + version)
                o.setdefault("kind", kind)
                out.append(o)
        return out


class LiveMixin:
    """Hooks for emulator.py, resources.py and fleet.py (they call these only when live_clusters is on)."""

    def live_init(self, a):
        self.live_clusters = bool(getattr(a, "live_clusters", False))
        self.in_cluster_kube = (getattr(a, "in_cluster_kube", "") or "").rstrip("/")
        cfg = {"tlsClientConfig": {"insecure": not getattr(a, "in_cluster_kube_ca", None)}}
        if getattr(a, "in_cluster_kube_ca", None):
            with open(a.in_cluster_kube_ca, "rb") as f:
                cfg["tlsClientConfig"]["caData"] = base64.b64encode(f.read()).decode()
        if getattr(a, "in_cluster_kube_token", None):
            cfg["bearerToken"] = a.in_cluster_kube_token
        self.in_cluster_cfg = cfg
        self.kube_clients = {}
        # the controller's cluster cache is a watch: a live app is compared again every live_resync_ms (config)
        self.live_resync_ms = 300
        threading.Thread(target=self.live_loop, daemon=True).start()

    def live_loop(self):
        """the cluster cache's watch: every live_resync_ms a live app whose objects (or reachability) changed is
        compared again (requestAppRefresh on a managed resource's event); an unchanged one is left alone.
        As Argo CD's cache is one per cluster, each cluster is read once a pass, and outside the lock, so that
        API requests are not held behind the reads."""
        while True:
            time.sleep(max(self.live_resync_ms, 50) / 1000.0)
            if not self.live_clusters or self.live_resync_ms <= 0:
                continue
            with self.lock:
                recs = [(rec, self.live_app(rec)) for rec in self.apps.values()
                        if not rec.obj.get("operation") and not rec.obj["metadata"].get("deletionTimestamp")]
            reads, changed = {}, []
            for rec, k in recs:
                if k is None:
                    continue
                if id(k) not in reads:
                    w = k.writes
                    try:
                        reads[id(k)] = (w, k.everything())
                    except (KubeDown, KubeError) as e:
                        reads[id(k)] = (w, "down: %s" % e)
                objs = reads[id(k)][1]
                fp = self.fingerprint(objs if isinstance(objs, str) else self.tracked_and_children(rec, objs))
                if fp != getattr(rec, "live_fp", None):
                    changed.append(rec)
            if not changed:
                continue
            with self.lock:
                self.live_pass = reads     # live_refresh compares against this pass's read, not a new one
                try:
                    for rec in changed:
                        key = (rec.obj["metadata"]["namespace"], rec.obj["metadata"]["name"])
                        if (self.apps.get(key) is rec and not rec.obj.get("operation")
                                and not rec.obj["metadata"].get("deletionTimestamp")):
                            self.reconcile(rec)
                finally:
                    self.live_pass = None

    @staticmethod
    def fingerprint(objs_or_error):
        if isinstance(objs_or_error, str):
            return objs_or_error
        return tuple(sorted((o["metadata"].get("uid"), o["metadata"].get("resourceVersion")) for o in objs_or_error))

    def live_fingerprint(self, rec, k):
        try:
            objs = k.everything()
        except (KubeDown, KubeError) as e:
            return self.fingerprint("down: %s" % e)
        return self.fingerprint(self.tracked_and_children(rec, objs))

    def tracked_and_children(self, rec, objs):
        app = rec.obj["metadata"]["name"]
        out = [o for o in objs if tracked_as(o, app, self.tracking_method, tracking_id(app, o))]
        uids = {o["metadata"].get("uid") for o in out}
        more = True
        while more:
            more = [o for o in objs if o["metadata"].get("uid") not in uids and
                    any(r.get("uid") in uids for r in o["metadata"].get("ownerReferences") or [])]
            out += more
            uids |= {o["metadata"].get("uid") for o in more}
        return out

    # -- which clusters are live
    def live_down(self, server):
        """why a live cluster did not answer its last discovery, or None"""
        k = self.live_client(server)
        return getattr(k, "down", None) if k is not None else None

    def live_api_versions(self, server):
        """a live cluster's info.apiVersions, as the cluster cache learns them from discovery: every
        GROUP/VERSION it serves and GROUP/VERSION/Kind of its preferred versions (read again after 1 s);
        None when the server is not live or does not answer"""
        k = self.live_client(server)
        if k is None:
            return None
        now = time.time()
        if getattr(k, "apis_at", 0) > now - 1.0:
            return k.apis
        try:
            types = k.discover(force=True)
            gvs = ["v1"] + [v["groupVersion"] for g in k.request("GET", "/apis").get("groups") or []
                            for v in g.get("versions") or []]
        except KubeDown as e:
            # controller/cache: the cluster's connection state goes Failed; the list still answers
            # (server/cluster/cluster.go List never fails on one cluster's connection)
            k.down = str(e)
            return None
        except (KubeError, OSError, ValueError):
            return None
        k.down = None
        out = set(gvs)
        for (group, kind), (version, _, _) in types.items():
            gv = "%s/%s" % (group, version) if group else version
            out.add("%s/%s" % (gv, kind))
        k.apis, k.apis_at = sorted(out), now
        return k.apis

    def live_client(self, server, cfg=None):
        """a Kube for this server (registered config unless cfg), or None when the server is not live"""
        if not self.live_clusters:
            return None
        server = (server or "").rstrip("/")
        if server == IN_CLUSTER and self.in_cluster_kube:
            url, cfg = self.in_cluster_kube, self.in_cluster_cfg
        else:
            if not loopback_https(server):
                return None
            if cfg is None:
                cl = self.cluster_by_server(server)
                if cl is None:
                    return None
                cfg = cl.get("config") or {}
            url = server
        key = (url, json.dumps(cfg, sort_keys=True))
        k = self.kube_clients.get(key)
        if k is None:
            try:
                k = self.kube_clients[key] = Kube(url, cfg)
            except (ValueError, ssl.SSLError, OSError):
                return None     # credentials that cannot be loaded: not live (registration refuses them)
        return k

    def live_app(self, rec):
        """the Kube of a live app's destination, or None"""
        if not self.live_clusters:
            return None
        return self.live_client(self.dest_server(rec.obj["spec"]))

    def live_registered(self, rec):
        d = rec.obj["spec"].get("destination") or {}
        if d.get("name"):
            return self.cluster_by_name(d["name"]) is not None
        return self.cluster_by_server((d.get("server") or "").rstrip("/")) is not None

    # -- fleet hook: GetServerVersion
    def live_version_error(self, cl):
        """None when GET {server}/version answers with these credentials, else client-go's error text;
        False when the cluster is not live (the emulator's own check applies)"""
        if not self.live_clusters or (not loopback_https(cl.get("server")) and
                                      not (cl.get("server") == IN_CLUSTER and self.in_cluster_kube)):
            return False
        try:
            k = Kube(self.in_cluster_kube if cl["server"] == IN_CLUSTER else cl["server"],
                     self.in_cluster_cfg if cl["server"] == IN_CLUSTER else cl.get("config") or {})
            k.request("GET", "/version", query={"timeout": "32s"})
        except KubeDown as e:
            return "failed to get server version: " + str(e).replace("/version\"", "/version?timeout=32s\"")
        except KubeError as e:
            return "failed to get server version: " + e.message
        except ValueError as e:
            return "failed to create discovery client: %s" % e
        except ssl.SSLError as e:
            return "failed to create discovery client: unable to load root certificates: %s" % e
        return None

    # -- comparison hook
    def live_refresh(self, rec):
        """rec.live from the cluster: the objects tracked as this app's; rec.live_all every object (for the tree).
        Returns None, or the ComparisonError message when the cluster cannot be read."""
        k = self.live_app(rec)
        rec.live_error = None
        if k is None:
            return None
        app = rec.obj["metadata"]["name"]
        try:
            w, objs = (getattr(self, "live_pass", None) or {}).get(id(k)) or (None, None)
            if objs is None or w != k.writes:   # none, or the cluster was written to since (a sync): read it now
                objs = k.everything()
            elif isinstance(objs, str):     # this pass found the cluster down
                raise KubeDown(objs[len("down: "):])
        except (KubeDown, KubeError) as e:
            why = "connection refused" if "connection refused" in str(e) else str(e)
            rec.live_error = "failed to sync cluster %s: %s" % (self.dest_server(rec.obj["spec"]), why)
            rec.live_fp = self.fingerprint("down: %s" % e)
            return rec.live_error
        live = {}
        for o in objs:
            if tracked_as(o, app, self.tracking_method, tracking_id(app, o)):
                live[rkey(o)] = o
        rec.live, rec.live_all = live, objs
        rec.live_fp = self.fingerprint(self.tracked_and_children(rec, objs))
        rec.live_health = {key: h for key, h in ((key, live_health(o)) for key, o in live.items()) if h}
        if getattr(rec, "health_settled", False) and not rec.obj.get("operation") and rec.deployed is not None:
            st = rec.obj["status"]
            agg = self.live_aggregate(rec)
            if agg and (st.get("health") or {}).get("status") != agg:
                st["health"] = {"status": agg, "lastTransitionTime": ts()}
        return None

    def live_aggregate(self, rec):
        target = rec.target or {}
        hs = [rec.live_health.get(k) or ({"status": "Missing"} if k not in rec.live else None) for k in target]
        return worst(hs)

    def live_set_health(self, rec, status, message):
        """set_health hook: Unknown while the cluster is unreachable; the resources' worst health once settled"""
        if not self.live_app(rec):
            return status, message
        if getattr(rec, "live_error", None):
            return "Unknown", None
        rec.health_settled = status != "Progressing"
        if status == "Healthy" and rec.target is not None:
            return self.live_aggregate(rec), None
        return status, message

    # -- sync hook
    def live_sync(self, rec, target, so, sel=None):
        """(failure message or None, syncResult.resources) of a sync of target to the live cluster; sel: the keys
        of a selective sync (only those are pruned)"""
        k = self.live_app(rec)
        app = rec.obj["metadata"]["name"]
        opts = list(so.get("syncOptions") or []) + list((rec.obj["spec"].get("syncPolicy") or {}).get("syncOptions") or [])
        prune, prune_last = bool(so.get("prune")), "PruneLast=true" in opts
        err = self.live_refresh(rec)
        if err:
            return err, []
        objs = []
        for t in target.values():
            o = normalize_secret(json.loads(json.dumps(t)))
            set_tracking(o, app, self.tracking_method, tracking_id(app, o))
            o["metadata"].pop("resourceVersion", None)
            objs.append(o)
        objs.sort(key=sync_order)
        dest = (rec.obj["spec"].get("destination") or {}).get("namespace")
        results = []
        if dest and "CreateNamespace=true" in opts:
            try:
                k.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": dest}})
            except (KubeDown, KubeError) as e:
                return "%s" % e, []
        crd_kinds = {((o.get("spec") or {}).get("group"), ((o.get("spec") or {}).get("names") or {}).get("kind"))
                     for o in objs if o.get("kind") == "CustomResourceDefinition"}
        failed = []
        for o in objs:    # the dry run of every task first
            g, kind = rkey(o)[:2]
            if (g, kind) in crd_kinds:
                continue
            try:
                k.apply(o, dry=True)
            except KubeDown as e:
                return "failed to sync cluster %s: %s" % (k.server, e), []
            except KubeError as e:
                failed.append(dict(self.res_entry(o, "SyncFailed", e.message), hookPhase="Failed"))
        if failed:
            return "one or more objects failed to apply (dry run)", failed
        surplus = [o for key, o in sorted(rec.live.items()) if key not in target and
                   (not sel or key in sel or (key[0], key[1], "", key[3]) in sel)]
        surplus.sort(key=sync_order)
        tasks = [("apply", o) for o in objs] + [("prune", o) for o in surplus]
        # prune tasks run in their own wave (the object's), PruneLast ones after everything
        tasks.sort(key=lambda t: (1 if t[0] == "prune" and (prune_last or has_option(t[1], "PruneLast=true")) else 0,
                                  wave(t[1]), t[0] == "prune",
                                  sync_order(t[1])))
        msgs = []
        for what, o in tasks:
            g, kind, ns, n = rkey(o)
            label = "%s%s/%s" % (kind.lower(), "." + g if g else "", n)
            try:
                if what == "apply":
                    k.apply(o)
                    results.append(self.res_entry(o, "Synced", "%s serverside-applied" % label))
                elif prune:
                    k.delete(g, kind, ns, n)
                    e = self.res_entry(o, "Pruned", "pruned")
                    results.append(e)
                else:
                    results.append(self.res_entry(o, "PruneSkipped", "ignored (requires pruning)"))
            except KubeDown as e:
                return "failed to sync cluster %s: %s" % (k.server, e), results
            except KubeError as e:
                results.append(dict(self.res_entry(o, "SyncFailed", e.message), hookPhase="Failed"))
                msgs.append(e.message)
                break    # a failed wave stops the sync
        for r in results:
            if r["status"] != "SyncFailed":
                r["hookPhase"] = "Succeeded"
        self.live_refresh(rec)
        if msgs:
            return "one or more objects failed to apply, reason: %s" % ",".join(msgs[:3]), results
        return None, results

    # -- resource tree hook
    def live_tree(self, rec):
        err = self.live_refresh(rec)
        if err:
            raise ApiError(2, err)
        nodes, seen = [], {}
        byuid = {}
        for o in getattr(rec, "live_all", []):
            for ref in (o.get("metadata") or {}).get("ownerReferences") or []:
                byuid.setdefault(ref.get("uid"), []).append(o)

        def node(o, parents):
            m = o["metadata"]
            g, kind, ns, n = rkey(o)
            e = {"group": g, "version": o["apiVersion"].rpartition("/")[2], "kind": kind, "namespace": ns, "name": n,
                 "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion"), "createdAt": m.get("creationTimestamp")}
            e = {a: b for a, b in e.items() if b}
            if parents:
                e["parentRefs"] = parents
            h = live_health(o)
            if h:
                e["health"] = h
            return e

        def walk(o, parents):
            uid = o["metadata"].get("uid")
            if uid in seen:
                return
            seen[uid] = True
            nodes.append(node(o, parents))
            g, kind, ns, n = rkey(o)
            ref = {"group": g, "kind": kind, "namespace": ns, "name": n, "uid": uid}
            for child in byuid.get(uid, []):
                walk(child, [{a: b for a, b in ref.items() if b or a == "group"}])
        for key, o in sorted(rec.live.items()):
            walk(o, None)
        return {"nodes": nodes} if nodes else {}

    # -- resource API
    def live_find(self, rec, c):
        q = {f: c.q(f) for f in ("group", "kind", "namespace", "resourceName")}
        objs = (list(rec.live.values()) + [o for o in getattr(rec, "live_all", []) if o.get("metadata", {}).get("uid")
                                           in {n.get("uid") for n in self.live_tree(rec).get("nodes", [])}]) \
            if self.live_app(rec) else list(rec.live.values())
        for o in objs:
            g, kind, ns, n = rkey(o)
            if (g, kind, n) == (q["group"], q["kind"], q["resourceName"]) and (ns == q["namespace"] or not q["namespace"]):
                return o
        raise ApiError(3, "%s %s %s not found as part of application %s" % (q["kind"], q["group"], q["resourceName"],
                                                                           c.params["name"]))

    def h_resource_get(self, c):
        rec = self.lookup(c.params["name"], c.q("appNamespace"), c.q("project"))
        o = self.live_find(rec, c)
        k = self.live_app(rec)
        if k is not None:
            g, kind, ns, n = rkey(o)
            try:
                o = k.get(g, kind, ns, n)
            except (KubeDown, KubeError) as e:
                raise ApiError(2, "error getting resource: %s" % (e.message if isinstance(e, KubeError) else e))
        if o.get("kind") == "Secret" and rkey(o)[0] == "":
            _, o = hide_secret_data(None, o)
        return {"manifest": json.dumps(o, separators=(",", ":"))}

    def resource_lookup(self, c, action):
        """argo-cd server/application/application.go getAppLiveResource: for delete (and update) the checked action
        is ACTION/GROUP/KIND/NS/NAME; with fine-grained inheritance (argocd-cm
        server.rbac.disableApplicationFineGrainedRBACInheritance: false, the 2.x default) the plain action is
        tried first, the fine-grained one after a permission denied (util/settings/settings.go
        ApplicationFineGrainedRBACInheritanceDisabled: true when unset, 3.x).  Refusals as getAppEnforceRBAC."""
        fine = "%s/%s/%s/%s/%s" % (action, c.q("group") or "", c.q("kind") or "", c.q("namespace") or "",
                                   c.q("resourceName") or "")
        args = (c.params["name"], c.q("appNamespace"), c.q("project"))
        if not self.rbac_fine_grained_inheritance:
            return self.lookup(*args, action=fine)
        try:
            return self.lookup(*args, action=action)
        except ApiError as e:
            if e.code != 7:
                raise
        return self.lookup(*args, action=fine)

    def h_resource_delete(self, c):
        rec = self.resource_lookup(c, "delete")
        o = self.live_find(rec, c)
        g, kind, ns, n = rkey(o)
        k = self.live_app(rec)
        force, orphan = c.q("force") in ("true", "1"), c.q("orphan") in ("true", "1")
        if k is None:
            rec.live.pop(rkey(o), None)
            self.reconcile(rec)
            return {}
        try:
            # DeleteResource: orphan is propagation Orphan (else Foreground); force is a grace period of 0
            k.delete(g, kind, ns, n, "Orphan" if orphan else "Foreground", 0 if force else None)
        except KubeError as e:
            if e.code != 404:
                raise ApiError(2, "error deleting resource: %s" % e.message)
        except KubeDown as e:
            raise ApiError(2, "error deleting resource: %s" % e)
        self.reconcile(rec)
        return {}

    # -- cascaded deletion hook
    def live_finalize(self, rec):
        """one step of finalizeApplicationDeletion: True when the app's objects are all gone (or there is nothing
        to do: not live, destination not registered), False to be called again later"""
        if not self.live_clusters:
            return True
        if not self.live_registered(rec):
            return True     # "Resource entries removed from undefined cluster"
        k = self.live_app(rec)
        if k is None:
            return True
        if self.live_refresh(rec):
            return False    # unreachable: blocks the cascade
        objs = list(rec.live.values())
        if not objs:
            return True
        top = max(wave(o) for o in objs)
        policy = "Background" if "resources-finalizer.argocd.argoproj.io/background" in \
            rec.obj["metadata"].get("finalizers", []) else "Foreground"
        for o in sorted((o for o in objs if wave(o) == top), key=sync_order, reverse=True):
            if o["metadata"].get("deletionTimestamp"):
                continue
            g, kind, ns, n = rkey(o)
            try:
                k.delete(g, kind, ns, n, policy)
            except KubeError as e:
                if e.code != 404:
                    return False
            except KubeDown:
                return False
        return False
