"""The protobuf bodies kubectl sends (Python 3 standard library only).

kubectl's typed clients (kubectl create secret, create configmap, create namespace without --dry-run)
send built-in objects as application/vnd.kubernetes.protobuf: the magic bytes "k8s\\0", then a
runtime.Unknown message (k8s.io/apimachinery/pkg/runtime/generated.proto) whose raw field holds the
object's own message (k8s.io/api/core/v1/generated.proto).  They take a JSON answer, so only requests
are decoded here, and only the kinds kubectl creates that way and the emulator's tests need:

    decode(body) -> dict     the object as its JSON form (bytes fields base64, as the JSON API has
                             them); raises ProtoError for anything else, which the server answers with
                             415 UnsupportedMediaType

ObjectMeta is decoded as far as a create carries it: name, generateName, namespace, labels,
annotations, finalizers (resourceVersion, uid and the like are the server's to set).
"""
import base64

MAGIC = b"k8s\x00"


class ProtoError(Exception):
    pass


def _varint(buf, i):
    shift = out = 0
    while True:
        if i >= len(buf):
            raise ProtoError("truncated varint")
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, i
        shift += 7
        if shift > 63:
            raise ProtoError("varint too long")


def fields(buf):
    """[(field number, wire type, value)]: value an int (varint, fixed) or bytes (length-delimited)"""
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ProtoError("truncated field %d" % num)
            v, i = bytes(buf[i:i + n]), i + n
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ProtoError("unsupported wire type %d" % wt)
        if i > len(buf):
            raise ProtoError("truncated field %d" % num)
        out.append((num, wt, v))
    return out


def _str(v):
    try:
        return v.decode("utf-8")
    except (AttributeError, UnicodeDecodeError):
        raise ProtoError("a string field is not UTF-8")


def _map_entry(v, value_bytes=False):
    key, val = "", b""
    for num, _, x in fields(v):
        if num == 1:
            key = _str(x)
        elif num == 2:
            val = x
    return key, (base64.b64encode(val).decode() if value_bytes else _str(val))


def _object_meta(buf):
    md = {}
    names = {1: "name", 2: "generateName", 3: "namespace"}
    for num, wt, v in fields(buf):
        if num in names and wt == 2:
            md[names[num]] = _str(v)
        elif num in (11, 12) and wt == 2:
            k, val = _map_entry(v)
            md.setdefault("labels" if num == 11 else "annotations", {})[k] = val
        elif num == 14 and wt == 2:
            md.setdefault("finalizers", []).append(_str(v))
    return md


def _secret(buf):
    obj = {}
    for num, wt, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num == 2:
            k, val = _map_entry(v, value_bytes=True)
            obj.setdefault("data", {})[k] = val
        elif num == 3:
            obj["type"] = _str(v)
        elif num == 4:
            k, val = _map_entry(v)
            obj.setdefault("stringData", {})[k] = val
        elif num == 5 and wt == 0:
            obj["immutable"] = bool(v)
    return obj


def _config_map(buf):
    obj = {}
    for num, wt, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num == 2:
            k, val = _map_entry(v)
            obj.setdefault("data", {})[k] = val
        elif num == 3:
            k, val = _map_entry(v, value_bytes=True)
            obj.setdefault("binaryData", {})[k] = val
        elif num == 4 and wt == 0:
            obj["immutable"] = bool(v)
    return obj


def _namespace(buf):
    obj = {}
    for num, _, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num == 2:
            fin = [_str(x) for n, _, x in fields(v) if n == 1]
            obj["spec"] = {"finalizers": fin} if fin else {}
    return obj


def _service_account(buf):
    obj = {}
    for num, wt, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num in (2, 3):    # secrets (ObjectReference: name is 3), imagePullSecrets (LocalObjectReference: 1)
            ref = {"name": _str(x) for n, _, x in fields(v) if n == (3 if num == 2 else 1)}
            obj.setdefault("secrets" if num == 2 else "imagePullSecrets", []).append(ref)
        elif num == 4 and wt == 0:
            obj["automountServiceAccountToken"] = bool(v)
    return obj


def _strs(buf, names):
    out = {}
    for n, _, x in fields(buf):
        if n in names:
            out.setdefault(names[n], []).append(_str(x))
    return out


def _cluster_role(buf):
    obj = {}
    for num, _, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num == 2:    # PolicyRule
            obj.setdefault("rules", []).append(_strs(v, {1: "verbs", 2: "apiGroups", 3: "resources",
                                                         4: "resourceNames", 5: "nonResourceURLs"}))
    obj.setdefault("rules", [])
    return obj


def _binding(buf):
    obj = {}
    for num, _, v in fields(buf):
        if num == 1:
            obj["metadata"] = _object_meta(v)
        elif num == 2:    # Subject
            obj.setdefault("subjects", []).append({k: l[0] for k, l in _strs(v, {1: "kind", 2: "apiGroup", 3: "name",
                                                                               4: "namespace"}).items() if l[0]})
        elif num == 3:    # RoleRef
            obj["roleRef"] = {k: l[0] for k, l in _strs(v, {1: "apiGroup", 2: "kind", 3: "name"}).items()}
    return obj


KINDS = {("v1", "Secret"): _secret, ("v1", "ConfigMap"): _config_map, ("v1", "Namespace"): _namespace,
         ("v1", "ServiceAccount"): _service_account,
         ("rbac.authorization.k8s.io/v1", "ClusterRole"): _cluster_role,
         ("rbac.authorization.k8s.io/v1", "Role"): _cluster_role,
         ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): _binding,
         ("rbac.authorization.k8s.io/v1", "RoleBinding"): _binding}


def decode(body):
    if not body.startswith(MAGIC):
        raise ProtoError("no protobuf envelope (k8s\\0)")
    api_version = kind = ""
    raw = b""
    for num, _, v in fields(body[len(MAGIC):]):
        if num == 1:
            for n, _, x in fields(v):
                if n == 1:
                    api_version = _str(x)
                elif n == 2:
                    kind = _str(x)
        elif num == 2:
            raw = v
        elif num == 3 and v:
            raise ProtoError("content encoding %r is not supported" % _str(v))
    dec = KINDS.get((api_version, kind))
    if dec is None:
        raise ProtoError("the emulator decodes no protobuf %s %s (only %s)" % (
            api_version, kind, ", ".join(k for _, k in sorted(KINDS))))
    obj = dec(raw)
    obj["apiVersion"], obj["kind"] = api_version, kind
    obj.setdefault("metadata", {})
    return obj
