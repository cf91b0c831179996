"""Helpers shared by the Argo CD emulator's modules (Python 3 standard library only)."""
import json
import time

CONTROL_NS = "argocd"
IN_CLUSTER = "https://kubernetes.default.svc"


class ApiError(Exception):
    """A gRPC status error as grpc-gateway renders it."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class GitError(Exception):
    pass


def ts(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def gojson(obj):
    """Serialise like Go's encoding/json (compact, HTML-escaped, UTF-8)."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(a, b)
    return s.encode("utf-8")


def ordered(d, keys):
    out = {k: d[k] for k in keys if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def prune(v, key=None):
    """Drop what Go's omitempty would drop after a decode/encode round trip (approximation)."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            x = prune(x, k)
            if x is None or (isinstance(x, str) and x == "") or (isinstance(x, list) and not x):
                continue
            if (x is False and k != "enabled") or (x == {} and k in ("labels", "annotations")):
                continue
            out[k] = x
        return out
    if isinstance(v, list):
        return [prune(x) for x in v]
    return v


def sources_of(spec):
    if spec.get("sources"):
        return spec["sources"]
    return [spec["source"]] if spec.get("source") else []


def norm_url(u):
    u = (u or "").strip().lower().rstrip("/")
    return u[:-4] if u.endswith(".git") else u
