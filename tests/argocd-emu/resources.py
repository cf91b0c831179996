"""The emulator's resource model: live objects, comparison, managed-resources, resource-tree, drift.

The live objects of an Application are the manifests of the revision it last synced, read from the GitOps
repository with `git show` (PyYAML when installed, else a reader for the block YAML idpmake writes, else JSON).
The comparison is Argo CD's in miniature: a target object is in sync when every field it sets has the same value
live and no field of the last-applied configuration the target dropped is still live (gitops-engine diff.Diff: a
three-way diff against kubectl.kubernetes.io/last-applied-configuration; fields only live and not in last-applied,
set by the server or a controller, do not count; `status` never counts; `ignoreDifferences` `jsonPointers` are
honoured); a live object no longer in the target requires pruning.  A sync applies as `kubectl apply` does: the
fields last-applied holds and the target dropped are removed, the others only live are kept, and last-applied
becomes the applied object.  Secrets are masked as gitops-engine's HideSecretData does.
"""
import base64
import copy
import json
import re
import uuid

from emucommon import ApiError, GitError, ts, sources_of

try:
    import yaml as _yaml
except ImportError:  # pragma: no cover - depends on the machine
    _yaml = None

CLUSTER_SCOPED = {"Namespace", "Node", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding",
                  "CustomResourceDefinition", "PriorityClass", "ValidatingWebhookConfiguration", "IngressClass",
                  "MutatingWebhookConfiguration", "APIService", "CSIDriver", "RuntimeClass", "ClusterIssuer",
                  "VolumeSnapshotClass"}
HEALTH_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Service", "Ingress",
                "PersistentVolumeClaim", "Job", "Application", "HorizontalPodAutoscaler", "Namespace"}
TRACKING = "argocd.argoproj.io/tracking-id"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
INSTANCE_LABEL = "app.kubernetes.io/instance"   # argocd-cm application.instanceLabelKey's default
TRACKING_METHODS = ("annotation", "label", "annotation+label")   # argocd-cm application.resourceTrackingMethod


# ---------------------------------------------------------------------------- resource tracking
# As argo-cd util/argo/resource_tracking.go (SetAppInstance, GetAppName, TruncateLabel): "annotation" (3.x default)
# sets the tracking-id annotation; "label" (2.x default) the instance label to the app name, untruncated;
# "annotation+label" both, the label truncated to 63 characters without a trailing special character.
def truncate_label(val):
    val = val[:63]
    while val and not val[-1].isalnum():
        val = val[:-1]
    return val


def set_tracking(obj, app, method, tid):
    """SetAppInstance on obj (a copy being applied): tid is APP:GROUP/KIND:NS/NAME"""
    m = obj.setdefault("metadata", {})
    if method != "label":
        m.setdefault("annotations", {})[TRACKING] = tid
    if method != "annotation":
        m.setdefault("labels", {})[INSTANCE_LABEL] = app if method == "label" else truncate_label(app)


def tracked_as(obj, app, method, tid):
    """GetAppName(obj) == app: the label's value in label mode, else the annotation (here the whole id)"""
    m = obj.get("metadata") or {}
    if method == "label":
        return (m.get("labels") or {}).get(INSTANCE_LABEL) == app
    return (m.get("annotations") or {}).get(TRACKING) == tid


def drop_tracking(obj, method):
    """what Argo CD sets on both sides of its comparison (the target gets SetAppInstance too) cannot differ"""
    m = (obj or {}).get("metadata") or {}
    (m.get("annotations") or {}).pop(TRACKING, None)
    if method != "annotation":
        (m.get("labels") or {}).pop(INSTANCE_LABEL, None)


# ---------------------------------------------------------------------------- YAML
def _scalar(s):
    s = s.strip()
    if s in ("", "~", "null"):
        return None
    if s in ("true", "false"):
        return s == "true"
    if s[0] in "'\"":
        return json.loads(s) if s[0] == '"' else s[1:-1].replace("''", "'")
    if s[0] in "[{":
        try:
            return json.loads(s)
        except ValueError:
            raise ValueError("flow collections need PyYAML: %s" % s)
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if re.fullmatch(r"-?\d+\.\d+", s):
        return float(s)
    return s


def _block(lines, i, indent):
    """Parse the block node starting at lines[i] (indent = its column); returns (value, next index)."""
    if lines[i][1].startswith("- ") or lines[i][1] == "-":
        out = []
        while i < len(lines) and lines[i][0] == indent and (lines[i][1].startswith("- ") or lines[i][1] == "-"):
            rest = lines[i][1][2:]
            if not rest.strip():
                v, i = _block(lines, i + 1, lines[i + 1][0])
                out.append(v)
                continue
            # "- key: v" opens a mapping at column indent+2
            lines[i] = (indent + 2, rest)
            if re.match(r"^[^'\"\s][^:]*:(\s|$)", rest):
                v, i = _block(lines, i, indent + 2)
            else:
                v, i = _scalar(rest), i + 1
            out.append(v)
        return out, i
    out = {}
    while i < len(lines) and lines[i][0] == indent:
        m = re.match(r"^(\"[^\"]*\"|'[^']*'|[^:]+?):(?:\s+(.*))?$", lines[i][1])
        if not m:
            raise ValueError("cannot read YAML line: %s" % lines[i][1])
        key = _scalar(m.group(1))
        val = (m.group(2) or "").strip()
        if val in ("|", "|-", ">", ">-"):
            j, buf = i + 1, []
            while j < len(lines) and lines[j][0] > indent:
                buf.append(" " * (lines[j][0] - lines[i + 1][0]) + lines[j][1])
                j += 1
            text = ("\n" if val[0] == "|" else " ").join(buf)
            out[key] = text + ("" if val.endswith("-") else "\n")
            i = j
        elif val and not val.startswith("#"):
            out[key], i = _scalar(val), i + 1
        elif i + 1 < len(lines) and (lines[i + 1][0] > indent or
                                      (lines[i + 1][0] == indent and lines[i + 1][1].startswith("-"))):
            out[key], i = _block(lines, i + 1, lines[i + 1][0])
        else:
            out[key], i = None, i + 1
    return out, i


def load_yaml_docs(text):
    """All documents of a YAML (or JSON) text."""
    if text.lstrip().startswith(("{", "[")):
        return [json.loads(text)]
    if _yaml is not None:
        return [d for d in _yaml.safe_load_all(text)]
    docs, cur = [], []
    for raw in text.split("\n") + ["---"]:
        if raw.rstrip() == "---" or raw.startswith("--- "):
            lines = [(len(x) - len(x.lstrip(" ")), x.strip()) for x in cur if x.strip() and not x.strip().startswith("#")]
            if lines:
                docs.append(_block(lines, 0, lines[0][0])[0])
            cur = []
        else:
            cur.append(raw.rstrip())
    return docs


# ---------------------------------------------------------------------------- objects
def gv(obj):
    api = obj.get("apiVersion") or ""
    return (api.split("/")[0], api.split("/")[1]) if "/" in api else ("", api)


def rkey(obj):
    """(group, kind, namespace, name) of an object."""
    m = obj.get("metadata") or {}
    return (gv(obj)[0], obj.get("kind") or "", m.get("namespace") or "", m.get("name") or "")


def normalize_secret(obj):
    if obj and obj.get("kind") == "Secret" and gv(obj)[0] == "" and isinstance(obj.get("stringData"), dict):
        data = obj.setdefault("data", {}) or {}
        for k, v in obj.pop("stringData").items():
            data[k] = base64.b64encode(v.encode()).decode() if isinstance(v, str) else v
        obj["data"] = data
    return obj


def hide_secret_data(target, live):
    """gitops-engine diff.HideSecretData: every data value becomes a run of '+', equal values the same run."""
    if not any(o and o.get("kind") == "Secret" and gv(o)[0] == "" for o in (target, live)):
        return target, live
    target, live = normalize_secret(copy.deepcopy(target)), normalize_secret(copy.deepcopy(live))
    keys = set()
    for o in (target, live):
        if o and isinstance(o.get("data"), dict):
            keys |= set(o["data"])
    for k in sorted(keys):
        nxt, seen = "+" * 8, {}
        for o in (target, live):
            if not o or not isinstance(o.get("data"), dict) or k not in o["data"]:
                continue
            val = json.dumps(o["data"][k])
            if val not in seen:
                seen[val], nxt = nxt, nxt + "++++"
            o["data"][k] = seen[val]
    for o in (target, live):
        ann = ((o or {}).get("metadata") or {}).get("annotations") or {}
        if "kubectl.kubernetes.io/last-applied-configuration" in ann:
            ann["kubectl.kubernetes.io/last-applied-configuration"] = "+" * 8
    return target, live


def drop_pointer(obj, ptr):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ptr.split("/")[1:]]
    cur = obj
    for p in parts[:-1]:
        if isinstance(cur, dict):
            cur = cur.get(p)
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            return
    if parts and isinstance(cur, dict):
        cur.pop(parts[-1], None)


def ignore_rules(spec, obj):
    out = []
    for r in spec.get("ignoreDifferences") or []:
        if (r.get("group") or "") == gv(obj)[0] and r.get("kind") == obj.get("kind") and \
                (not r.get("name") or r["name"] == rkey(obj)[3]) and \
                (not r.get("namespace") or r["namespace"] == rkey(obj)[2]):
            out += r.get("jsonPointers") or []
    return out


def normalized(spec, obj):
    if obj is None:
        return None
    obj = normalize_secret(copy.deepcopy(obj))
    for p in ignore_rules(spec, obj):
        drop_pointer(obj, p)
    return obj


def covers(target, live):
    """True when every field the target sets has the same value live."""
    if isinstance(target, dict):
        return isinstance(live, dict) and all(covers(v, live.get(k)) for k, v in target.items())
    if isinstance(target, list):
        return isinstance(live, list) and len(target) == len(live) and all(covers(a, b) for a, b in zip(target, live))
    return target == live


def last_applied(live):
    """The live object's last-applied configuration (GetLastAppliedConfigAnnotation), or None."""
    ann = ((live or {}).get("metadata") or {}).get("annotations") or {}
    try:
        v = json.loads(ann[LAST_APPLIED]) if LAST_APPLIED in ann else None
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def removed(last, target, live):
    """True when a field last-applied holds, the target no longer sets, is still live (a three-way diff's deletion)."""
    if not isinstance(last, dict) or not isinstance(live, dict):
        return False
    for k, v in last.items():
        if k not in live:
            continue
        if not isinstance(target, dict) or k not in target:
            if not isinstance(v, dict) or not isinstance(live[k], dict) or any(x in live[k] for x in v):
                return True
            continue
        if removed(v, target[k], live[k]):
            return True
    return False


def without_removed(last, target, live):
    """live less the fields last-applied holds and the target dropped (kubectl apply's deletions)."""
    if not isinstance(last, dict) or not isinstance(live, dict):
        return live
    out = {}
    for k, v in live.items():
        if k in last and (not isinstance(target, dict) or k not in target):
            continue
        out[k] = without_removed(last.get(k), target.get(k) if isinstance(target, dict) else None, v)
    return out


def merged(live, target):
    """target over live, maps merged key by key, anything else replaced (the apply of a JSON merge patch)."""
    if not isinstance(live, dict) or not isinstance(target, dict):
        return copy.deepcopy(target)
    out = dict(live)
    for k, v in target.items():
        out[k] = merged(live.get(k), v)
    return out


def in_sync(spec, target, live, method="annotation"):
    if target is None or live is None:
        return False
    t, lv = normalized(spec, target), normalized(spec, live)
    t.pop("status", None)
    last = normalized(spec, last_applied(live))
    if method != "annotation":
        drop_tracking(t, method), drop_tracking(lv, method)
    if last is not None:
        for o in (t, lv, last):
            ((o.get("metadata") or {}).get("annotations") or {}).pop(LAST_APPLIED, None)
            drop_tracking(o, method)
        last.pop("status", None)
        (last.get("metadata") or {}).pop("namespace", None)   # ThreeWayDiff: removeNamespaceAnnotation
        if removed(last, t, lv):
            return False
    return covers(t, lv)


HOOK_TYPES = ("PreSync", "Sync", "PostSync", "SyncFail", "Skip")


def is_hook(obj):
    """gitops-engine hook.IsHook: an argocd.argoproj.io/hook annotation (unless its only valid type is Skip), else
    helm.sh/hook other than crd-install.  Hooks are run by a sync, never compared nor listed as managed."""
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    if "argocd.argoproj.io/hook" in ann:
        types = {t.strip() for t in str(ann["argocd.argoproj.io/hook"]).split(",") if t.strip() in HOOK_TYPES}
        return types != {"Skip"}    # GetAnnotationCSVs drops duplicates: "Skip, Skip" is Skip only
    return "helm.sh/hook" in ann and ann["helm.sh/hook"] != "crd-install"


def health_of(obj):
    if obj is None:
        return {"status": "Missing"}
    return {"status": "Healthy"} if obj.get("kind") in HEALTH_KINDS else None


# ---------------------------------------------------------------------------- the mixin
class ResourcesMixin:
    """Needs self.repos, self.lock and rec.live (dict rkey -> object) on every Rec."""

    def target_objects(self, spec, shas):
        """{rkey: object} rendered at the given commit per source (files of the app path; chart sources: none)."""
        out = {}
        ns = (spec.get("destination") or {}).get("namespace") or ""
        for s, sha in zip(sources_of(spec), shas):
            if s.get("chart") or not sha or (s.get("ref") and not s.get("path")):
                continue
            repo = self.repos.local(s.get("repoURL"))
            path = (s.get("path") or "").strip("/")
            rc, names = self.repos.git(repo, "ls-tree", "-r", "--name-only", sha, "--", path or ".")
            if rc != 0:
                raise GitError("%s: app path does not exist" % path)
            recurse = (s.get("directory") or {}).get("recurse")
            for f in sorted(n for n in names.split("\n") if n):
                rel = f[len(path) + 1:] if path else f
                base = rel.rsplit("/", 1)[-1]
                if ("/" in rel and not recurse) or not re.search(r"\.(ya?ml|json)$", base) or \
                        base in ("kustomization.yaml", "kustomization.yml", "Chart.yaml", "values.yaml"):
                    continue
                rc, text = self.repos.git(repo, "show", "%s:%s" % (sha, f))
                try:
                    docs = load_yaml_docs(text + "\n")
                except Exception as e:  # noqa: BLE001 - a manifest Argo CD could not parse
                    raise GitError("Failed to unmarshal %q: %s" % (rel, e))
                for d in docs:  # a CRD of scope Cluster: its kind is cluster-scoped, as discovery says
                    sp = d.get("spec") if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition" else None
                    if isinstance(sp, dict) and sp.get("scope") == "Cluster" and isinstance(sp.get("names"), dict):
                        CLUSTER_SCOPED.add(sp["names"].get("kind"))
                for d in docs:
                    if not isinstance(d, dict) or not d.get("kind") or is_hook(d):
                        continue  # hooks: run by a sync (not modelled), never part of the comparison
                    d = copy.deepcopy(d)
                    m = d.setdefault("metadata", {})
                    if d["kind"] in CLUSTER_SCOPED:
                        m.pop("namespace", None)
                    elif not m.get("namespace") and ns:
                        m["namespace"] = ns
                    out[rkey(d)] = d
        return out

    def apply_live(self, rec, target, prune):
        """A sync: every target object applied, surplus objects pruned or kept.  Returns syncResult.resources."""
        app = rec.obj["metadata"]["name"]
        res = []
        for k, t in sorted(target.items()):
            old = rec.live.get(k)
            applied = normalize_secret(copy.deepcopy(t))
            set_tracking(applied, app, self.tracking_method, "%s:%s/%s:%s/%s" % (app, k[0], k[1], k[2], k[3]))
            # kubectl apply: the fields last-applied holds and the target dropped go, the others only live stay
            obj = merged(without_removed(last_applied(old), applied, old), applied) if old else copy.deepcopy(applied)
            m = obj["metadata"]
            m.setdefault("annotations", {})[LAST_APPLIED] = json.dumps(applied, separators=(",", ":")) + "\n"
            if old is not None:
                om = old["metadata"]
                m.update(uid=om["uid"], creationTimestamp=om["creationTimestamp"])
            else:
                m.update(uid=str(uuid.uuid4()), creationTimestamp=ts())
            self.rv += 1
            m["resourceVersion"] = str(self.rv)
            verb = "created" if old is None else ("unchanged" if in_sync(rec.obj["spec"], t, old, self.tracking_method) else "configured")
            rec.live[k] = obj
            res.append(self.res_entry(t, "Synced", "%s/%s %s" % (t["kind"].lower(), k[3], verb)))
        for k in sorted(set(rec.live) - set(target)):
            obj = rec.live[k]
            if prune:
                del rec.live[k]
                res.append(self.res_entry(obj, "Pruned", "pruned"))
            else:
                res.append(self.res_entry(obj, "PruneSkipped", "ignored (requires pruning)"))
        return res

    @staticmethod
    def res_entry(obj, status, message):
        g, k, ns, n = rkey(obj)
        e = {"group": g, "version": gv(obj)[1], "kind": k, "namespace": ns, "name": n, "status": status,
             "message": message, "hookPhase": "Running", "syncPhase": "Sync"}
        return {a: b for a, b in e.items() if b != "" or a in ("group", "namespace")}

    def compare_resources(self, rec, target):
        """status.resources and whether they are all in sync."""
        spec, out, ok = rec.obj["spec"], [], True
        for k in sorted(set(target) | set(rec.live)):
            t, lv = target.get(k), rec.live.get(k)
            obj = t or lv
            e = {"group": k[0], "version": gv(obj)[1], "kind": k[1], "namespace": k[2], "name": k[3]}
            e = {a: b for a, b in e.items() if b}
            if t is None:
                e.update(status="OutOfSync", requiresPruning=True)
            else:
                e["status"] = "Synced" if in_sync(spec, t, lv, self.tracking_method) else "OutOfSync"
            h = (getattr(rec, "live_health", {}).get(k) if lv is not None else None) or health_of(lv)
            if h:
                e["health"] = h
            ok = ok and e["status"] == "Synced"
            out.append(e)
        return out, ok

    # -- handlers
    def h_managed_resources(self, c):
        rec = self.lookup(c.params["applicationName"], c.q("appNamespace"), c.q("project"))
        spec = rec.obj["spec"]
        target = rec.target if rec.target is not None else {}
        items = []
        for k in sorted(set(target) | set(rec.live)):
            if any(c.q(f) and c.q(f) != v for f, v in zip(("group", "kind", "namespace", "name"), k)):
                continue
            t, lv = target.get(k), rec.live.get(k)
            nlv = normalized(spec, lv)
            t2, lv2 = hide_secret_data(t, lv)
            _, nlv2 = hide_secret_data(t, nlv)
            item = {"group": k[0], "kind": k[1], "namespace": k[2], "name": k[3],
                    "targetState": json.dumps(t2, separators=(",", ":")),
                    "liveState": json.dumps(lv2, separators=(",", ":")),
                    "normalizedLiveState": json.dumps(nlv2, separators=(",", ":")),
                    "predictedLiveState": json.dumps(t2 if t2 is not None else None, separators=(",", ":")),
                    "modified": not in_sync(spec, t, lv, self.tracking_method)}
            if lv is not None:
                item["resourceVersion"] = lv["metadata"].get("resourceVersion", "")
            items.append({a: b for a, b in item.items() if b not in ("", False)})
        return {"items": items} if items else {}

    def h_resource_tree(self, c):
        rec = self.lookup(c.params["applicationName"], c.q("appNamespace"), c.q("project"))
        if self.live_clusters and self.live_app(rec):
            return self.live_tree(rec)     # live.py: the cluster's objects and their owner-ref children
        if not rec.live:
            for cond in rec.obj["status"].get("conditions", []):
                if cond["type"] in ("ComparisonError", "InvalidSpecError"):
                    raise ApiError(2, cond["message"])
        nodes = []
        for k, obj in sorted(rec.live.items()):
            m = obj["metadata"]
            n = {"group": k[0], "version": gv(obj)[1], "kind": k[1], "namespace": k[2], "name": k[3], "uid": m["uid"],
                 "resourceVersion": m.get("resourceVersion"), "createdAt": m.get("creationTimestamp")}
            n = {a: b for a, b in n.items() if b}
            h = getattr(rec, "live_health", {}).get(k) or health_of(obj)
            if h:
                n["health"] = h
            nodes.append(n)
            if k[1] == "Deployment" and k[0] == "apps":
                rs = {"group": "apps", "version": "v1", "kind": "ReplicaSet", "namespace": k[2],
                      "name": k[3] + "-" + m["uid"][:10].replace("-", ""), "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, m["uid"])),
                      "parentRefs": [{"group": "apps", "kind": "Deployment", "namespace": k[2], "name": k[3], "uid": m["uid"]}],
                      "health": {"status": "Healthy"}, "createdAt": m.get("creationTimestamp")}
                nodes.append(rs)
        return {"nodes": nodes} if nodes else {}

    # -- control: live drift
    def inject_live(self, f):
        """{"app", "kind", "name", ["namespace"], ["group"], one of "set": {"a.b": v}, "labels": {k: v},
        "delete": true, "create": OBJECT, "health": {"status": S, "message": M} (the object's health as Argo CD's
        health checks would read it, in the resource tree: a Degraded Deployment, say)}"""
        recs = [r for (ns, n), r in self.apps.items() if n == f.get("app") and ns == (f.get("appNamespace") or ns)]
        if not recs:
            raise LookupError("no application %r" % f.get("app"))
        rec = recs[0]
        if "create" in f:
            obj = copy.deepcopy(f["create"])
            obj.setdefault("metadata", {}).update(uid=str(uuid.uuid4()), creationTimestamp=ts())
            rec.live[rkey(obj)] = obj
        else:
            ks = [k for k in rec.live if k[1] == f.get("kind") and k[3] == f.get("name") and
                  ("namespace" not in f or k[2] == f["namespace"]) and ("group" not in f or k[0] == f["group"])]
            if not ks:
                raise LookupError("no live %s %r in application %r" % (f.get("kind"), f.get("name"), f.get("app")))
            obj = rec.live[ks[0]]
            if f.get("delete"):
                del rec.live[ks[0]]
            for path, v in (f.get("set") or {}).items():
                cur, parts = obj, path.split(".")
                for p in parts[:-1]:
                    cur = cur.setdefault(p, {})
                cur[parts[-1]] = v
            if f.get("labels"):
                obj["metadata"].setdefault("labels", {}).update(f["labels"])
            if isinstance(f.get("health"), dict) and f["health"].get("status"):
                rec.__dict__.setdefault("live_health", {})[ks[0]] = dict(f["health"])
            if not any(k in f for k in ("delete", "set", "labels", "health")):
                raise ValueError("live drift needs one of set, labels, delete, create, health")
        self.reconcile(rec)
        return {"ok": True}
