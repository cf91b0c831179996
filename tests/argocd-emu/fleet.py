"""The emulator's clusters, repositories and ApplicationSets (server/cluster, server/repository,
server/applicationset and the ApplicationSet controller's list and cluster generators)."""
import base64
import binascii
import copy
import ipaddress
import json
import re
import socket
import uuid
from urllib.parse import unquote, urlsplit

from emucommon import ApiError, GitError, ts, ordered, prune, norm_url, CONTROL_NS, IN_CLUSTER

RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"

AUTH_REQUIRED = "authentication required"
DEFAULT_KINDS = {
    "v1": "ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume PersistentVolumeClaim Pod "
          "PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount",
    "apps/v1": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "batch/v1": "CronJob Job",
    "autoscaling/v2": "HorizontalPodAutoscaler",
    "policy/v1": "PodDisruptionBudget",
    "networking.k8s.io/v1": "Ingress IngressClass NetworkPolicy",
    "rbac.authorization.k8s.io/v1": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "apiextensions.k8s.io/v1": "CustomResourceDefinition",
    "admissionregistration.k8s.io/v1": "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
    "storage.k8s.io/v1": "CSIDriver StorageClass",
    "coordination.k8s.io/v1": "Lease",
    "scheduling.k8s.io/v1": "PriorityClass",
    "discovery.k8s.io/v1": "EndpointSlice",
    "node.k8s.io/v1": "RuntimeClass",
    "certificates.k8s.io/v1": "CertificateSigningRequest",
    "apiregistration.k8s.io/v1": "APIService",
    "argoproj.io/v1alpha1": "AppProject Application ApplicationSet",
}
CLUSTER_FIELDS = ("name", "namespaces", "config", "shard", "clusterResources", "labels", "annotations", "project")


def default_api_versions():
    """Argo CD's cluster info lists each group/version and each group/version/Kind (APIResourcesToStrings)."""
    out = []
    for gvs, kinds in DEFAULT_KINDS.items():
        out.append(gvs)
        out += ["%s/%s" % (gvs, k) for k in kinds.split()]
    return sorted(out)


def sanitized(c):
    """Cluster.Sanitized(): the config keeps only non-secret fields."""
    c = copy.deepcopy(c)
    cfg = c.get("config") or {}
    tls = cfg.get("tlsClientConfig") or {}
    keep = {k: cfg[k] for k in ("awsAuthConfig", "proxyUrl", "disableCompression") if k in cfg}
    keep["tlsClientConfig"] = {k: tls[k] for k in ("insecure", "serverName") if k in tls}
    keep["tlsClientConfig"].setdefault("insecure", False)
    c["config"] = keep
    return c


def go_paths(a, b, path=()):
    """Changed paths with Go field names, like r3labs/diff on the Cluster struct (approximation)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            name = k[:1].upper() + k[1:] if len(path) == 0 or path[-1] in ("Config", "TLSClientConfig") else k
            out += go_paths(a.get(k), b.get(k), path + (name,))
        return out
    return [] if a == b else [",".join(path)]


# ---------------------------------------------------------------------------- templates
def go_template(tmpl, params, where):
    """The subset of text/template ApplicationSets use: {{ .a.b }}, {{ index .a "k" }}, missingkey=error."""
    def sub(m):
        expr = m.group(1).strip()
        mi = re.fullmatch(r'index\s+\.([\w.]*)\s+"([^"]*)"', expr)
        path = (mi.group(1).split(".") + [mi.group(2)]) if mi else None
        if path is None:
            if not re.fullmatch(r"\.[\w.]+", expr):
                raise ApiError(3, "failed to execute go template %s: the emulator only supports field paths" % expr)
            path = expr[1:].split(".")
        cur = params
        for p in path:
            if not isinstance(cur, dict) or p not in cur:
                raise ApiError(3, 'failed to execute go template %s: template: :1:%d: executing "" at <%s>: '
                               'map has no entry for key "%s"' % (where, m.start() + 3, expr, p))
            cur = cur[p]
        return cur if isinstance(cur, str) else json.dumps(cur)
    return re.sub(r"\{\{-?(.*?)-?\}\}", sub, tmpl)


def fast_template(tmpl, flat):
    """fasttemplate with {{ }} tags: known string keys replaced (spaces trimmed), unknown tags left as they are."""
    def sub(m):
        v = flat.get(m.group(1).strip())
        return v if isinstance(v, str) and m.group(1).strip() else m.group(0)
    return re.sub(r"\{\{(.*?)\}\}", sub, tmpl)


def flatten(params, prefix=""):
    out = {}
    for k, v in params.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def render_template(obj, params, gotemplate):
    if isinstance(obj, dict):
        return {render_template(k, params, gotemplate): render_template(v, params, gotemplate) for k, v in obj.items()}
    if isinstance(obj, list):
        return [render_template(v, params, gotemplate) for v in obj]
    if isinstance(obj, str):
        return go_template(obj, params, obj) if gotemplate else fast_template(obj, flatten(params))
    return obj


def match_selector(sel, labels):
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        has, val, vals = e.get("key") in labels, labels.get(e.get("key")), e.get("values") or []
        op = e.get("operator")
        if (op == "In" and val not in vals) or (op == "NotIn" and has and val in vals) or \
                (op == "Exists" and not has) or (op == "DoesNotExist" and has):
            return False
    return True


# ---------------------------------------------------------------------------- the mixin
class FleetMixin:
    def fleet_init(self, a):
        self.api_versions = [v.strip() for v in a.api_versions.split(",") if v.strip()] or default_api_versions()
        self.cluster_list = [{"server": IN_CLUSTER, "name": "in-cluster", "config": {"tlsClientConfig": {"insecure": False}},
                              "_builtin": True}]
        for c in a.cluster:
            n, u = c.split("=", 1)
            self.cluster_list.append({"server": u.rstrip("/"), "name": n, "config": {"tlsClientConfig": {"insecure": False}},
                                      "_builtin": True})
        self.cluster_api = {}    # server -> info.apiVersions set by POST /_emu/cluster
        self.require_repo_creds = a.require_repo_creds
        self.repo_passwords = {norm_url(u): p for u, _, p in (x.partition("=") for x in a.repo_creds)}
        self.repositories = {}   # norm_url -> Repository as registered
        self.appsets = {}        # (ns, name) -> ApplicationSet
        self.appset_ms = a.appset_ms   # the ApplicationSet controller's delay after a change to a set
        # server/cluster Create and Update reach the cluster (GetServerVersion) before they save: a loopback
        # server is really dialled; cluster_tokens {SERVER: TOKEN} says which bearer token a cluster accepts
        # (others: any), as the cluster's API server would answer 401 "Unauthorized"
        self.cluster_tokens = {}
        # namespaces: a sync into one the cluster lacks fails (gitops-engine's dry run: namespaces "X" not found)
        # unless CreateNamespace=true names it the destination or the sync applies its Namespace object;
        # namespaces_exist (--namespaces-exist) is a cluster whose admin made every namespace
        self.namespaces_exist = a.namespaces_exist
        self.cluster_namespaces = {}   # server -> namespaces created there (CreateNamespace, /_emu/cluster)
        self.cluster_watched = set()   # servers whose cache is synced without an Application (/_emu/cluster "watched")

    # -- clusters
    def cluster_by_server(self, server):
        return next((c for c in self.cluster_list if c["server"] == server), None)

    def cluster_by_name(self, name):
        return next((c for c in self.cluster_list if c.get("name") == name), None)

    def dest_error(self, spec):
        """util/argo/argo.go GetDestinationCluster's refusal of a destination.name that names no cluster or
        more than one (a cluster made again and registered at its new server beside the old one), or None"""
        d = spec.get("destination") or {}
        if not d.get("name") or d.get("server"):
            return None
        urls = [c["server"] for c in self.cluster_list if c.get("name") == d["name"]]
        if not urls:
            return "there are no clusters with this name: %s" % d["name"]
        if len(urls) > 1:
            return "there are %d clusters with the same name: [%s]" % (len(urls), " ".join(urls))
        return None

    def cluster_out(self, c):
        out = sanitized({k: v for k, v in c.items() if not k.startswith("_")})
        apps = sum(1 for r in self.apps.values() if (r.obj["spec"].get("destination") or {}).get("server") == c["server"]
                   or (r.obj["spec"].get("destination") or {}).get("name") == c.get("name"))
        now = ts()
        if apps == 0 and c["server"] not in self.cluster_api and c["server"] not in self.cluster_watched:
            # controller/clusterinfoupdater.go: a cluster no Application deploys to is not monitored, no cache info
            info = {"connectionState": {"status": "Unknown", "message": "Cluster has no applications and is not being "
                                        "monitored.", "attemptedAt": now}, "cacheInfo": {}, "applicationsCount": 0}
            out.update(info=info, connectionState=info["connectionState"])
            return ordered(out, ["server", "name", "config", "connectionState", "serverVersion", "namespaces",
                                 "info", "labels", "annotations", "project"])
        live = self.live_api_versions(c["server"]) if c["server"] not in self.cluster_api else None
        down = self.live_down(c["server"]) if live is None and c["server"] not in self.cluster_api else None
        if down:
            # a cluster that does not answer: Failed, with the error (controller/clusterinfoupdater.go)
            info = {"connectionState": {"status": "Failed", "message": down, "attemptedAt": now}, "cacheInfo": {},
                    "applicationsCount": apps}
            out.update(info=info, connectionState=info["connectionState"])
            return ordered(out, ["server", "name", "config", "connectionState", "serverVersion", "namespaces",
                                 "info", "labels", "annotations", "project"])
        versions = list(live if live is not None else self.cluster_api.get(c["server"], self.api_versions))
        for r in self.apps.values():  # CRDs synced to this cluster add their kinds, as the cluster cache would
            if (r.obj["spec"].get("destination") or {}).get("server", IN_CLUSTER) != c["server"]:
                continue
            for (g, k, _, _), o in r.live.items():
                if k == "CustomResourceDefinition":
                    sp = o.get("spec") or {}
                    for v in sp.get("versions") or []:
                        gvs = "%s/%s" % (sp.get("group"), v.get("name"))
                        versions += [gvs, "%s/%s" % (gvs, (sp.get("names") or {}).get("kind"))]
        info = {"connectionState": {"status": "Successful", "attemptedAt": now}, "serverVersion": "1.34",
                "cacheInfo": {"resourcesCount": sum(len(r.live) for r in self.apps.values()), "apisCount": len(versions),
                              "lastCacheSyncTime": now},
                "applicationsCount": apps, "apiVersions": sorted(set(versions))}
        out.update(info=info, serverVersion="1.34", connectionState=info["connectionState"])
        return ordered(out, ["server", "name", "config", "connectionState", "serverVersion", "namespaces",
                             "info", "labels", "annotations", "project"])

    BASE_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", CONTROL_NS)

    def dest_server(self, spec):
        d = spec.get("destination") or {}
        if d.get("server"):
            return d["server"].rstrip("/")
        cl = self.cluster_by_name(d.get("name") or "")
        return cl["server"] if cl else IN_CLUSTER

    def namespace_exists(self, server, ns):
        if self.namespaces_exist or ns in self.BASE_NAMESPACES or ns in self.cluster_namespaces.get(server, ()):
            return True
        return any(k[1] == "Namespace" and k[0] == "" and k[3] == ns for r in self.apps.values()
                   if self.dest_server(r.obj["spec"]) == server for k in r.live)

    def missing_namespaces(self, spec, target, opts):
        """{namespace: [objects]} of target objects whose namespace the destination cluster lacks, after what
        the sync itself creates (CreateNamespace=true: the destination namespace; its Namespace objects)."""
        server, dest = self.dest_server(spec), (spec.get("destination") or {}).get("namespace") or ""
        made = {k[3] for k in target if k[0] == "" and k[1] == "Namespace"}
        if dest and "CreateNamespace=true" in (opts or []):
            made.add(dest)
        out = {}
        for k, obj in sorted(target.items()):
            if k[2] and k[2] not in made and not self.namespace_exists(server, k[2]):
                out.setdefault(k[2], []).append(obj)
        return out

    def set_cluster_api(self, payload):
        """POST /_emu/cluster: {"server": S} or {"name": N}, "api_versions": [...] (that cluster's
        info.apiVersions from now on; null: the emulator-wide list again), "namespaces": [...] (namespaces
        that exist there from now on), "watched": true (Argo CD watches it though no Application deploys there)."""
        if not isinstance(payload, dict) or ("server" in payload) == ("name" in payload):
            raise ValueError('give one of "server" and "name"')
        cl = self.cluster_by_server(payload["server"].rstrip("/")) if "server" in payload \
            else self.cluster_by_name(payload["name"])
        if cl is None:
            raise LookupError("no cluster %s" % json.dumps({k: payload[k] for k in ("server", "name") if k in payload}))
        if payload.get("watched"):
            self.cluster_watched.add(cl["server"])
            if "api_versions" not in payload and "namespaces" not in payload:
                return {"server": cl["server"], "name": cl.get("name"), "watched": True}
        if "namespaces" in payload:
            if not isinstance(payload["namespaces"], list):
                raise ValueError('"namespaces" needs a list of strings')
            self.cluster_namespaces.setdefault(cl["server"], set()).update(payload["namespaces"])
            if "api_versions" not in payload:
                return {"server": cl["server"], "name": cl.get("name"), "namespaces": sorted(self.cluster_namespaces[cl["server"]])}
        v = payload.get("api_versions")
        if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
            raise ValueError('"api_versions" needs a list of strings or null')
        if v is None:
            self.cluster_api.pop(cl["server"], None)
        else:
            self.cluster_api[cl["server"]] = list(v)   # by server, as the controller's cluster cache: upserts keep it
        return {"server": cl["server"], "name": cl.get("name"), "api_versions": v}

    def find_cluster(self, c):
        value = c.params.get("id.value", "")
        typ = c.q("id.type") or c.q("idType")
        if typ == "name":
            cl = self.cluster_by_name(value)
        elif typ == "name_escaped":
            cl = self.cluster_by_name(unquote(value))
        else:
            cl = self.cluster_by_server(value)
        if cl is None:
            raise ApiError(7, "permission denied")
        return cl

    def h_cluster_list(self, c):
        items = [x for x in self.cluster_list if (not c.q("server") or x["server"] == c.q("server"))
                 and (not c.q("name") or x.get("name") == c.q("name"))]
        if c.q("id.value"):
            key = "name" if c.q("id.type") in ("name", "name_escaped") else "server"
            items = [x for x in items if x.get(key) == c.q("id.value")][:1]
        return {"metadata": {}, "items": [self.cluster_out(x) for x in items]}

    def h_cluster_get(self, c):
        return self.cluster_out(self.find_cluster(c))

    def clean_cluster(self, body):
        cl = prune(copy.deepcopy(body if isinstance(body, dict) else {}))
        for k in ("info", "connectionState", "serverVersion", "refreshRequestedAt"):
            cl.pop(k, None)
        if cl.get("server"):
            cl["server"] = cl["server"].rstrip("/")
        cl.setdefault("config", {}).setdefault("tlsClientConfig", {}).setdefault("insecure", False)
        return cl

    def server_version_error(self, cl):
        """Why kubectl.GetServerVersion fails for this cluster config, or None (gitops-engine kube/ctl.go:
        "failed to create discovery client: ..." or "failed to get server version: ...", client-go's text)."""
        live = self.live_version_error(cl)     # live.py (--live-clusters): GET {server}/version for real
        if live is not False:
            return live
        if cl.get("_builtin"):
            return None
        cfg = cl.get("config") or {}
        ca = (cfg.get("tlsClientConfig") or {}).get("caData")
        if ca:
            pem = base64.b64decode(ca)
            if b"-----BEGIN CERTIFICATE-----" not in pem:
                return "failed to create discovery client: unable to load root certificates: unable to parse bytes as PEM block"
        u = urlsplit(cl["server"])
        try:
            loop = u.hostname == "localhost" or ipaddress.ip_address(u.hostname or "").is_loopback
        except ValueError:
            loop = False
        port = u.port or (443 if u.scheme == "https" else 80)
        if loop:
            try:
                socket.create_connection((u.hostname, port), timeout=2).close()
            except OSError as e:
                why = "connect: connection refused" if isinstance(e, ConnectionRefusedError) else "i/o timeout"
                return 'failed to get server version: Get "%s/version?timeout=32s": dial tcp %s:%d: %s' % (
                    cl["server"], u.hostname, port, why)
        want = self.cluster_tokens.get(cl["server"])
        if want is not None and cfg.get("bearerToken") != want:
            return "failed to get server version: Unauthorized"
        return None

    def check_ca(self, body):
        """caData is []byte: the gateway's JSON decoder wants standard base64 (encoding/json's error text)."""
        ca = (((body or {}).get("config") or {}).get("tlsClientConfig") or {}).get("caData")
        if isinstance(ca, str) and ca:
            try:
                base64.b64decode(ca, validate=True)
            except (binascii.Error, ValueError):
                bad = next((i for i, ch in enumerate(ca) if not re.match(r"[A-Za-z0-9+/=]", ch)), len(ca) - len(ca) % 4)
                raise ApiError(3, "illegal base64 data at input byte %d" % bad)

    def h_cluster_create(self, c):
        self.check_ca(c.body)
        cl = self.clean_cluster(c.body)
        if not cl.get("server"):
            raise ApiError(2, "error getting REST config: host must be a URL or a host:port pair")
        why = self.server_version_error(cl)
        if why:
            raise ApiError(2, "error getting server version: " + why)
        old = self.cluster_by_server(cl["server"])
        if old is None:
            self.cluster_list.append(cl)
            return self.cluster_out(cl)
        mine = {k: v for k, v in old.items() if not k.startswith("_")}
        if mine == cl:
            return self.cluster_out(old)
        if not c.bools["upsert"]:
            msg = "existing cluster spec is different; use upsert flag to force update"
            paths = go_paths(mine, cl)
            raise ApiError(3, msg + ("; difference in keys %s" % json.dumps(",".join(paths)) if paths else ""))
        self.cluster_list[self.cluster_list.index(old)] = cl
        return self.cluster_out(cl)

    def h_cluster_update(self, c):
        self.check_ca(c.body)
        body = self.clean_cluster(c.body)
        old = self.find_cluster(c)
        fields = [f for v in c.qall("updatedFields") for f in v.split(",") if f]
        if fields:
            new = copy.deepcopy(old)
            for f in fields:
                if f in CLUSTER_FIELDS:
                    new.pop(f, None)
                    if f in body:
                        new[f] = copy.deepcopy(body[f])
        else:
            new = dict(body, server=old["server"])
        why = self.server_version_error(new)   # "Test the token ... before persisting it", labels-only PUTs too
        if why:
            raise ApiError(2, "failed to get server version: " + why)
        self.cluster_list[self.cluster_list.index(old)] = new
        return self.cluster_out(new)

    def h_cluster_delete(self, c):
        cl = self.find_cluster(c)
        if cl["server"] == IN_CLUSTER and cl.get("_builtin"):
            return {}  # the local cluster has no secret to delete; it stays
        self.cluster_list = [x for x in self.cluster_list if x["server"] != cl["server"]]
        return {}

    # -- repositories
    def repo_guard(self, url):
        if not self.require_repo_creds:
            return
        r = self.repositories.get(norm_url(url))
        want = self.repo_passwords.get(norm_url(url))
        if r is None or not r.get("username") or not r.get("password") or \
                (want is not None and "%s:%s" % (r["username"], r["password"]) != want):
            raise GitError("failed to list refs: " + AUTH_REQUIRED)

    @staticmethod
    def repo_out(r):
        out = {k: v for k, v in r.items() if k not in ("password", "sshPrivateKey", "tlsClientCertKey",
                                                         "githubAppPrivateKey", "bearerToken")}
        out["connectionState"] = {"status": "Successful", "message": "", "attemptedAt": ts()}
        out.setdefault("type", "git")
        return out

    def h_repo_create(self, c):
        r = prune(copy.deepcopy(c.body if isinstance(c.body, dict) else {}))
        if not r.get("repo"):
            raise ApiError(3, "repo URL is required")
        key = norm_url(r["repo"])
        old = self.repositories.get(key)
        if old is not None and old != r and not c.bools["upsert"]:
            raise ApiError(3, "existing repository spec is different; use upsert flag to force update")
        saved = self.require_repo_creds, self.repositories.get(key)
        self.repositories[key] = r
        try:
            if key in self.repos.map:
                self.repo_guard(r["repo"])  # Argo CD tests the connection before saving
        except GitError as e:
            self.repositories.pop(key)
            if saved[1] is not None:
                self.repositories[key] = saved[1]
            raise ApiError(3, "Unable to connect to repository: %s" % str(e).split(": ", 1)[-1])
        return self.repo_out(r)

    def h_repo_list(self, c):
        return {"metadata": {}, "items": [self.repo_out(r) for _, r in sorted(self.repositories.items())]}

    def h_repo_get(self, c):
        r = self.repositories.get(norm_url(c.params["repo"]))
        if r is None:
            raise ApiError(7, "permission denied")
        return self.repo_out(r)

    def h_repo_delete(self, c):
        if self.repositories.pop(norm_url(c.params["repo"]), None) is None:
            raise ApiError(7, "permission denied")
        return {}

    # -- ApplicationSets
    def appset_params(self, gen):
        if "list" in gen:
            return [e for e in ((gen["list"] or {}).get("elements") or []) if isinstance(e, dict)]
        if "clusters" in gen:
            g = gen["clusters"] or {}
            sel, out = g.get("selector") or {}, []
            for cl in self.cluster_list:
                labels = cl.get("labels") or {}
                if sel and (cl["server"] == IN_CLUSTER and cl.get("_builtin") or not match_selector(sel, labels)):
                    continue
                name = cl.get("name") or cl["server"]
                out.append({"name": name, "nameNormalized": re.sub(r"[^a-z0-9.-]", "-", name.lower()),
                            "server": cl["server"], "project": cl.get("project", ""),
                            "metadata": {"labels": dict(labels), "annotations": dict(cl.get("annotations") or {})},
                            "values": dict(g.get("values") or {})})
            return out
        kinds = ",".join(sorted(gen)) or "(none)"
        raise ApiError(12, "ApplicationSet generator %s is not implemented by the Argo CD emulator" % kinds)

    def appset_apps(self, aset):
        spec, out = aset["spec"], []
        preserve = (spec.get("syncPolicy") or {}).get("preserveResourcesOnDeletion")
        for gen in spec.get("generators") or []:
            for p in self.appset_params(gen):
                if not spec.get("goTemplate"):
                    p = {k: (v if isinstance(v, (str, dict)) else json.dumps(v)) for k, v in p.items()}
                app = render_template(copy.deepcopy(spec.get("template") or {}), p, spec.get("goTemplate"))
                # applicationset/utils/utils.go RenderTemplateParams: a template without finalizers gets the
                # resources finalizer unless syncPolicy.preserveResourcesOnDeletion, so deleting the generated
                # Application (element gone, set deleted) deletes what it deployed
                md = app.setdefault("metadata", {})
                if not md.get("finalizers") and not preserve:
                    md["finalizers"] = [RESOURCES_FINALIZER]
                out.append(app)
        return out

    @staticmethod
    def appset_policy(aset):
        """applicationset/utils/policy.go DefaultPolicy with the controller's --policy left "" (its default):
        the set's syncPolicy.applicationsSync, else "sync".  (allow update, allow delete) as
        applicationset_types.go AllowUpdate and AllowDelete."""
        policy = (aset["spec"].get("syncPolicy") or {}).get("applicationsSync") or "sync"
        return policy in ("sync", "create-update"), policy in ("sync", "create-delete")

    def appset_delete_app(self, key, rec):
        """A client's delete of a generated Application (the controller's deleteInCluster, or the garbage
        collector once its set is gone): a finalizer keeps it, with a deletionTimestamp, until the finalizer's
        work is done (emulator.py finalize); without one it goes at once, and its set hears of it."""
        meta = rec.obj["metadata"]
        if meta.get("deletionTimestamp"):
            return
        fins = list(meta.get("finalizers") or [])
        if self.live_clusters and not self.live_registered(rec):
            # deleteInCluster's removeFinalizerOnInvalidDestination: no cluster to delete from
            fins = [f for f in fins if not f.startswith(RESOURCES_FINALIZER)]
        if not fins:
            meta.pop("finalizers", None)
            del self.apps[key]
            rec.seq += 1
            self.appset_app_gone(rec)
            return
        meta.update(finalizers=fins, deletionTimestamp=ts(), deletionGracePeriodSeconds=0)
        self.touch(rec)
        if any(f.startswith(RESOURCES_FINALIZER) for f in fins):
            self.later(self.delete_ms, self.finalize, key, rec)

    def appset_app_gone(self, rec):
        """applicationset_controller.go SetupWithManager: the controller Owns() its Applications, and
        getApplicationOwnsHandler's DeleteFunc requeues the owning set when one is deleted, whoever deleted
        it: the set's next reconcile (Reconcile, createOrUpdateInCluster) creates it again while a generator
        still yields it."""
        for ref in rec.obj["metadata"].get("ownerReferences") or []:
            if ref.get("kind") != "ApplicationSet" or not ref.get("controller"):
                continue
            for key, aset in self.appsets.items():
                if aset["metadata"]["uid"] == ref.get("uid"):
                    self.later(self.appset_ms, self.appset_controller, key, ref["uid"], None)

    def appset_reconcile(self, key):
        aset = self.appsets[key]
        errors = []
        try:
            apps = self.appset_apps(aset)
        except ApiError as e:  # the controller reports it as a condition; existing Applications stay
            apps, errors = None, [e.message]
        owner = {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": aset["metadata"]["name"],
                 "uid": aset["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        may_update, may_delete = self.appset_policy(aset)
        names = set()
        for a in apps or []:
            meta, spec = self.normalize(a)
            meta["namespace"] = meta.get("namespace") or aset["metadata"]["namespace"]
            names.add((meta["namespace"], meta.get("name")))
            try:
                self.validate(meta, spec, True)
            except ApiError as e:
                errors.append(e.message)
                continue
            rec = self.apps.get((meta["namespace"], meta["name"]))
            if rec is None:
                meta["ownerReferences"] = [owner]
                self.new_rec(meta, spec)
            elif may_update and rec.obj["spec"] != spec:
                self.apply_update(rec, spec, meta.get("finalizers"))
        if may_delete and apps is not None:
            # deleteInCluster: an Application the set owns that no generator yields any more is deleted
            for k, rec in list(self.apps.items()):
                refs = rec.obj["metadata"].get("ownerReferences") or []
                if any(r.get("uid") == aset["metadata"]["uid"] for r in refs) and k not in names:
                    self.appset_delete_app(k, rec)
        st = {"conditions": [{"type": "ErrorOccurred", "status": "True" if errors else "False",
                              "message": "; ".join(errors) or "Successfully generated parameters for all Applications",
                              "lastTransitionTime": ts(), "reason": "ApplicationGenerationFromParamsError" if errors
                              else "ApplicationSetUpToDate"}]}
        st["resources"] = [{"name": n, "namespace": ns, "kind": "Application", "group": "argoproj.io", "version": "v1alpha1"}
                           for ns, n in sorted(names) if (ns, n) in self.apps]
        aset["status"] = st

    def appset_rbac(self, aset):
        """ApplicationSet.RBACName: the template's project, the set's namespace and name."""
        proj = ((aset.get("spec") or {}).get("template") or {}).get("spec", {}).get("project") or "default"
        return self.rbac_name(proj, aset["metadata"]["namespace"], aset["metadata"]["name"])

    def appset_lookup(self, c, name, action="get"):
        """getAppSetEnforceRBAC: appsetNamespace (default the control namespace) must be an enabled one, else
        a plain error (HTTP 500); a set the account may not see is a 403 that names the permission."""
        ns = c.q("appsetNamespace") or CONTROL_NS
        if ns not in self.namespaces:
            raise ApiError(2, "namespace '%s' is not permitted" % ns)
        a = self.appsets.get((ns, name))
        if a is None:
            raise ApiError(5, 'error getting ApplicationSet: applicationsets.argoproj.io "%s" not found' % name)
        self.enforce(c.user, "applicationsets", action, self.appset_rbac(a))
        return a

    def appset_controller(self, key, uid, gen):
        """The ApplicationSet controller's reconcile of one set, some time after the API stored it (gen: that
        generation only), or after one of its Applications was deleted (gen None: whatever it is now)."""
        a = self.appsets.get(key)
        if a is not None and a["metadata"]["uid"] == uid and gen in (None, a["metadata"]["generation"]):
            self.appset_reconcile(key)

    def h_appset_create(self, c):
        body = c.body if isinstance(c.body, dict) else None
        if body is None:
            raise ApiError(3, "ApplicationSet creation request is missing")
        m = body.get("metadata") or {}
        if not m.get("name"):
            raise ApiError(2, "error validating ApplicationSets: ApplicationSet name cannot be empty")
        ns = m.get("namespace") or CONTROL_NS
        spec = prune(copy.deepcopy(body.get("spec") or {}))
        meta = {k: copy.deepcopy(m[k]) for k in ("name", "labels", "annotations", "finalizers") if m.get(k)}
        meta["namespace"] = ns
        if not (spec.get("template") or {}).get("spec", {}).get("project") and not spec.get("templatePatch"):
            raise ApiError(3, "ApplicationSet %s contains applications with an empty project" % m["name"])
        for gen in spec.get("generators") or []:
            self.appset_params(gen)  # 501 for generators the emulator does not model
        if ns not in self.namespaces:
            raise ApiError(2, "namespace '%s' is not permitted" % ns)
        self.enforce(c.user, "applicationsets", "create", self.appset_rbac({"metadata": meta, "spec": spec}))
        old = self.appsets.get((ns, m["name"]))
        if c.bools.get("dryRun"):
            tmp = {"metadata": meta, "spec": spec}
            return dict(tmp, status={"resources": [{"name": a["metadata"]["name"], "kind": "Application"}
                                                   for a in self.appset_apps(tmp)]})
        if old is not None:
            if old["spec"] == spec and (old["metadata"].get("labels") or {}) == (meta.get("labels") or {}):
                return copy.deepcopy(old)
            if not c.bools["upsert"]:
                raise ApiError(3, "existing ApplicationSet spec is different, use upsert flag to force update")
            self.enforce(c.user, "applicationsets", "update", self.appset_rbac({"metadata": meta, "spec": spec}))
            old["spec"] = spec
            old["metadata"]["generation"] += 1
            for k in ("labels", "annotations"):
                if meta.get(k):
                    old["metadata"][k] = meta[k]
        else:
            meta.update(uid=str(uuid.uuid4()), generation=1, creationTimestamp=ts())
            self.appsets[(ns, m["name"])] = {"metadata": meta, "spec": spec, "status": {}}
        self.rv += 1
        stored = self.appsets[(ns, m["name"])]
        stored["metadata"]["resourceVersion"] = str(self.rv)
        # the API server only stores the set: its controller generates the Applications later
        self.later(self.appset_ms, self.appset_controller, (ns, m["name"]), stored["metadata"]["uid"],
                   stored["metadata"]["generation"])
        return copy.deepcopy(stored)

    def h_appset_get(self, c):
        return copy.deepcopy(self.appset_lookup(c, c.params["name"]))

    def h_appset_list(self, c):
        projects = c.qall("projects")
        items = [copy.deepcopy(a) for _, a in sorted(self.appsets.items())
                 if not projects or (a["spec"].get("template") or {}).get("spec", {}).get("project") in projects]
        return {"metadata": {"resourceVersion": str(self.rv)}, "items": items}

    def h_appset_delete(self, c):
        a = self.appset_lookup(c, c.params["name"], "delete")
        del self.appsets[(a["metadata"]["namespace"], a["metadata"]["name"])]
        _, may_delete = self.appset_policy(a)
        for k, rec in list(self.apps.items()):
            refs = rec.obj["metadata"].get("ownerReferences") or []
            if not any(r.get("uid") == a["metadata"]["uid"] for r in refs):
                continue
            if may_delete:
                # Kubernetes' garbage collector deletes the dependents (ownerReferences) of the deleted set; each
                # goes as a delete of it does: with its resources unless preserveResourcesOnDeletion left it no
                # resources finalizer (docs/operator-manual/applicationset/Application-Deletion.md)
                self.appset_delete_app(k, rec)
            else:
                # Reconcile, DeletionTimestamp set, policy without delete: removeOwnerReferencesOnDeleteAppSet
                rec.obj["metadata"].pop("ownerReferences")  # SetOwnerReferences(empty): omitted
                self.touch(rec)
        return {}
