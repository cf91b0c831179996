"""The Kubernetes emulator's objects: resource types and a store (Python 3 standard library only).

A resource type (ResType) is what discovery lists: group, version, plural, kind, scope.  The built-in
ones are BUILTIN; a CustomResourceDefinition, once stored, adds its served versions (and removes them
when it is deleted, with its objects).

The store holds every object under (group, kind, namespace, name): one stored version per object, as
the API server (an object read through another served version of its group is the same object).  Each
write stamps what the API server stamps: metadata.uid and creationTimestamp at creation,
resourceVersion (one counter for the whole store, a string as in Kubernetes) on every change (a write
that changes nothing keeps it), generation (1 at creation, +1 when anything but metadata and status
changes), and the writer's managedFields entry, its time only when the write changed the object
(_managed).  DELETE of an object with metadata.finalizers only sets its deletionTimestamp; the write that
removes the last finalizer deletes it.  Each change is an event (ADDED, MODIFIED, DELETED) in a log that watches read.

Controllers (here, for now, what a rollout needs): react(obj) fills the status a real controller would
write once the object settles: a Deployment, StatefulSet or DaemonSet is rolled out at once, a CRD is
Established.  The fake Cluster API controller (capi.py) subclasses Store (react, view) for the management
cluster and for each workload cluster.
"""
import copy
import re
import threading
import time
import uuid

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


class ApiError(Exception):
    """A Kubernetes Status error: code (HTTP), reason, message, details."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            s["details"] = self.details
        return s


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.qualified(), name),
                    {"name": name, "group": res.group, "kind": res.plural} if res.group else
                    {"name": name, "kind": res.plural})


def ts(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def _content(obj):
    """what a write compares to tell whether it changed the object: all of it but managedFields and
    resourceVersion (structured-merge-diff merge/update.go Updater.Apply compares the live and the new
    object, managedFields set aside by the apiserver's field manager)"""
    out = copy.deepcopy(obj)
    out["metadata"].pop("managedFields", None)
    out["metadata"].pop("resourceVersion", None)
    return out


def _managed(old, manager, op, gv, changed):
    """the managedFields after a write by `manager` (operation Apply or Update), as the apiserver writes
    them (k8s.io/apimachinery pkg/util/managedfields/internal/managedfieldsupdater.go):
      - Apply (managedFieldsUpdater.Apply): the applier always has its entry, but its time is set only
        when the apply changed the object (Updater.Apply gives no new object when the merge leaves it
        equal to the live one); an apply of what is already there keeps the applier's old time, and a
        new applier gets an entry with no time at all (kubernetes/kubernetes#127938);
      - Update (managedFieldsUpdater.Update): an entry, with the time, only when the update changed
        something; a no-op update leaves managedFields as they were.
    Entries in the apiserver's order (managedfields.go sortEncodedManagedFields): by operation, by time
    in seconds (none first), by manager, by apiVersion."""
    mf = copy.deepcopy((old or {}).get("metadata", {}).get("managedFields", []))
    mine = next((m for m in mf if m.get("manager") == manager and m.get("operation") == op), None)
    if op != "Apply" and not changed:
        return mf
    mf = [m for m in mf if m is not mine]
    entry = {"manager": manager, "operation": op, "apiVersion": gv, "fieldsType": "FieldsV1", "fieldsV1": {}}
    if changed:
        entry["time"] = ts()
    elif mine and "time" in mine:
        entry["time"] = mine["time"]
    mf.append(entry)
    mf.sort(key=lambda m: (m.get("operation", ""), m.get("time") or "", m.get("manager", ""),
                           m.get("apiVersion", "")))
    return mf


class ResType:
    def __init__(self, group, version, plural, kind, namespaced, short=(), singular=None, crd=None):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespaced, self.short = namespaced, list(short)
        self.singular = singular or kind.lower()
        self.crd = crd    # the CRD's name when a CRD made it

    def gv(self):
        return self.group + "/" + self.version if self.group else self.version

    def qualified(self):
        """configmaps, deployments.apps: as the API server names a resource in its messages"""
        return self.plural + "." + self.group if self.group else self.plural

    def discovery(self):
        r = {"name": self.plural, "singularName": self.singular, "namespaced": self.namespaced,
             "kind": self.kind, "verbs": VERBS}
        if self.short:
            r["shortNames"] = self.short
        return r


BUILTIN = [
    ResType("", "v1", "namespaces", "Namespace", False, ["ns"]),
    ResType("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
    ResType("", "v1", "secrets", "Secret", True),
    ResType("", "v1", "services", "Service", True, ["svc"]),
    ResType("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"]),
    ResType("", "v1", "pods", "Pod", True, ["po"]),
    ResType("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"]),
    ResType("apps", "v1", "deployments", "Deployment", True, ["deploy"]),
    ResType("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"]),
    ResType("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"]),
    ResType("batch", "v1", "jobs", "Job", True),
    ResType("networking.k8s.io", "v1", "ingresses", "Ingress", True, ["ing"]),
    ResType("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    ResType("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ResType("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    ResType("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    ResType("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ["crd"]),
]


def _spec_of(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class Store:
    def __init__(self, namespaces=("default", "kube-system", "kube-public", "kube-node-lease")):
        self.lock = threading.Condition()
        self.rv = 0
        self.types = list(BUILTIN)
        self.objects = {}       # (group, kind, namespace or "", name) -> object
        self.applied = {}       # (group, kind, namespace or "", name, manager) -> last applied configuration
        self.events = []        # (rv, type, group, kind, object)
        self.stalled = set()    # kinds whose controller does nothing (a rollout that never ends)
        with self.lock:
            for ns in namespaces:
                self.write(self.find("", "v1", "namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                  "metadata": {"name": ns}})

    # ---- resource types -----------------------------------------------------
    def find(self, group, version, plural):
        for t in self.types:
            if t.group == group and t.version == version and t.plural == plural:
                return t
        return None

    def by_kind(self, group, kind):
        return next((t for t in self.types if t.group == group and t.kind == kind), None)

    def groups(self):
        """{group: [versions]}, in the order the types were added"""
        out = {}
        for t in self.types:
            if t.group:
                vs = out.setdefault(t.group, [])
                if t.version not in vs:
                    vs.append(t.version)
        return out

    def _crd_types(self, crd):
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        out = []
        for v in spec.get("versions") or []:
            if v.get("served", True) and v.get("name") and names.get("plural") and names.get("kind"):
                out.append(ResType(spec.get("group", ""), v["name"], names["plural"], names["kind"],
                                   spec.get("scope", "Namespaced") == "Namespaced", names.get("shortNames") or (),
                                   names.get("singular"), crd["metadata"]["name"]))
        return out

    # ---- objects ------------------------------------------------------------
    def key(self, res, ns, name):
        return (res.group, res.kind, ns if res.namespaced else "", name)

    def get(self, res, ns, name):
        obj = self.objects.get(self.key(res, ns, name))
        if obj is None:
            raise not_found(res, name)
        return self.view(res, obj)

    def view(self, res, obj):
        out = copy.deepcopy(obj)
        out["apiVersion"] = res.gv()
        out["kind"] = res.kind
        return out

    def exists(self, res, ns, name):
        return self.key(res, ns, name) in self.objects

    def list(self, res, ns=None):
        out = [self.view(res, o) for (g, k, n, _), o in sorted(self.objects.items())
               if g == res.group and k == res.kind and (ns is None or n == ns)]
        return out

    def check_namespace(self, res, ns):
        """a namespaced object is created only in a namespace that exists and is not going away"""
        if not res.namespaced:
            return
        nso = self.objects.get(("", "Namespace", "", ns))
        if nso is None:
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns, {"name": ns, "kind": "namespaces"})
        if (nso.get("status") or {}).get("phase") == "Terminating":
            raise ApiError(403, "Forbidden", "unable to create new content in namespace %s because it is being "
                           "terminated" % ns, {"name": ns, "kind": "namespaces"})

    def write(self, res, ns, obj, manager=None, op="Update"):
        """create or replace: returns (stored view, created)"""
        md = obj.setdefault("metadata", {})
        name = md.get("name", "")
        k = self.key(res, ns, name)
        old = self.objects.get(k)
        new = copy.deepcopy(obj)
        new["apiVersion"], new["kind"] = res.gv(), res.kind
        nmd = new["metadata"]
        if res.namespaced:
            nmd["namespace"] = ns
        else:
            nmd.pop("namespace", None)
        if old is None:
            nmd["uid"] = str(uuid.uuid4())
            nmd["creationTimestamp"] = ts()
            nmd["generation"] = 1
        else:
            omd = old["metadata"]
            for f in ("uid", "creationTimestamp"):
                nmd[f] = omd[f]
            nmd["generation"] = omd.get("generation", 1) + (_spec_of(old) != _spec_of(new))
            if "status" not in new and "status" in old:
                new["status"] = copy.deepcopy(old["status"])
        if old is not None and old["metadata"].get("deletionTimestamp"):
            nmd["deletionTimestamp"] = old["metadata"]["deletionTimestamp"]    # a deletion is not undone
            if not nmd.get("finalizers"):
                return self.delete(res, ns, name, force=True), False    # the last finalizer went: it goes
        self.react(res, new)
        changed = old is None or _content(old) != _content(new)
        if manager:
            nmd["managedFields"] = _managed(old, manager, op, res.gv(), changed)
            if not nmd["managedFields"]:
                del nmd["managedFields"]
        elif old is not None and "managedFields" in old["metadata"] and "managedFields" not in nmd:
            nmd["managedFields"] = old["metadata"]["managedFields"]
        if not changed and nmd.get("managedFields") == old["metadata"].get("managedFields"):
            return self.view(res, old), False
        self.rv += 1
        nmd["resourceVersion"] = str(self.rv)
        self.objects[k] = new
        self.events.append((self.rv, "ADDED" if old is None else "MODIFIED", res.group, res.kind, copy.deepcopy(new)))
        if res.kind == "CustomResourceDefinition" and res.group == "apiextensions.k8s.io":
            self.types = [t for t in self.types if t.crd != name] + self._crd_types(new)
        self.lock.notify_all()
        return self.view(res, new), old is None

    def delete(self, res, ns, name, force=False):
        """an object with finalizers gets a deletionTimestamp and stays until a write removes the last one;
        force: gone at once"""
        k = self.key(res, ns, name)
        obj = self.objects.get(k)
        if obj is None:
            raise not_found(res, name)
        if obj["metadata"].get("finalizers") and not force:
            if obj["metadata"].get("deletionTimestamp"):
                return self.view(res, obj)
            dying = copy.deepcopy(obj)
            dying["metadata"]["deletionTimestamp"] = ts()
            dying["metadata"]["deletionGracePeriodSeconds"] = 0
            self.rv += 1
            dying["metadata"]["resourceVersion"] = str(self.rv)
            self.objects[k] = dying
            self.events.append((self.rv, "MODIFIED", res.group, res.kind, copy.deepcopy(dying)))
            self.lock.notify_all()
            return self.view(res, dying)
        del self.objects[k]
        for a in [a for a in self.applied if a[:4] == k]:
            del self.applied[a]
        self.rv += 1
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, "DELETED", res.group, res.kind, gone))
        if res.kind == "Namespace" and not res.group:
            for ok in [ok for ok in self.objects if ok[2] == name]:
                t = self.by_kind(ok[0], ok[1])
                self.delete(t, ok[2], ok[3], force=True)
        if res.kind == "CustomResourceDefinition" and res.group == "apiextensions.k8s.io":
            for t in [t for t in self.types if t.crd == name]:
                for ok in [ok for ok in self.objects if ok[0] == t.group and ok[1] == t.kind]:
                    self.delete(t, ok[2], ok[3], force=True)
            self.types = [t for t in self.types if t.crd != name]
        self.lock.notify_all()
        return self.view(res, gone)

    # ---- controllers --------------------------------------------------------
    def react(self, res, obj):
        """the status a controller writes once the object settles (here: at once)"""
        gen = obj["metadata"]["generation"]
        spec = obj.get("spec") or {}
        if res.kind in self.stalled:
            return
        if res.group == "apps" and res.kind in ("Deployment", "StatefulSet"):
            n = spec.get("replicas", 1)
            st = {"observedGeneration": gen, "replicas": n, "updatedReplicas": n, "readyReplicas": n,
                  "availableReplicas": n}
            if res.kind == "Deployment":
                st["conditions"] = [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                     "message": "Deployment has minimum availability."},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                     "message": 'ReplicaSet "%s" has successfully progressed.' % obj["metadata"]["name"]}]
            else:
                st["currentReplicas"] = n
                st["currentRevision"] = st["updateRevision"] = "%s-%d" % (obj["metadata"]["name"], gen)
            obj["status"] = st
        elif res.group == "apps" and res.kind == "DaemonSet":
            obj["status"] = {"observedGeneration": gen, "desiredNumberScheduled": 1, "currentNumberScheduled": 1,
                             "updatedNumberScheduled": 1, "numberReady": 1, "numberAvailable": 1,
                             "numberMisscheduled": 0}
        elif res.kind == "Namespace" and not res.group:
            obj["status"] = {"phase": "Active"}
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        elif res.kind == "CustomResourceDefinition" and res.group == "apiextensions.k8s.io":
            names = spec.get("names") or {}
            obj["status"] = {"acceptedNames": names, "storedVersions": [v.get("name") for v in
                                                                         spec.get("versions") or [] if v.get("storage")],
                             "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                                             "message": "no conflicts found"},
                                            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                             "message": "the initial names have been accepted"}]}

    def dump(self):
        return [copy.deepcopy(o) for _, o in sorted(self.objects.items())]
