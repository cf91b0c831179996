"""The patch types of the Kubernetes API (Python 3 standard library only).

    merge_patch(doc, patch)          application/merge-patch+json (RFC 7386)
    json_patch(doc, ops)             application/json-patch+json (RFC 6902); raises PatchError
    strategic_merge(doc, patch)      application/strategic-merge-patch+json, as far as kubectl's
                                     client-side apply uses it: lists of objects that all carry a merge
                                     key (MERGE_KEYS) are merged element by element, other lists are
                                     replaced; the directives $patch (delete/replace/merge),
                                     $setElementOrder/, $retainKeys and $deleteFromPrimitiveList/ are
                                     understood (the order directive is taken as a hint and dropped)
    server_side_apply(live, cfg, prev)
                                     application/apply-patch+yaml: the applied configuration merged into
                                     the live object, fields this manager applied before (prev) and no
                                     longer applies removed.  Ownership is per manager, not per field:
                                     conflicts between managers are not modelled (kubectl --force-conflicts
                                     makes them moot for idpmake).
"""
import copy

# the merge keys of the list fields the built-in kinds carry (k8s.io/api patchMergeKey tags)
MERGE_KEYS = ("name", "containerPort", "port", "mountPath", "devicePath", "ip", "type", "topologyKey")


class PatchError(Exception):
    pass


def merge_patch(doc, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts, create=False):
    cur = doc
    for p in parts:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError("doc is missing path: /%s" % "/".join(parts))
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise PatchError("doc is missing path: /%s" % "/".join(parts))
        else:
            raise PatchError("doc is missing path: /%s" % "/".join(parts))
    return cur


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            try:
                i = int(last)
            except ValueError:
                raise PatchError("invalid index %r" % last)
            if i < 0 or i > len(parent):
                raise PatchError("index %d out of range" % i)
            parent.insert(i, value)
    else:
        raise PatchError("doc is missing path: /%s" % "/".join(parts))
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    try:
        if isinstance(parent, dict):
            return parent.pop(last)
        if isinstance(parent, list):
            return parent.pop(int(last))
    except (KeyError, ValueError, IndexError):
        pass
    raise PatchError("doc is missing path: /%s" % "/".join(parts))


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise PatchError("a JSON patch is a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError("an operation needs op and path")
        kind, parts = op["op"], _pointer(op["path"])
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)
            if parts:
                _remove(doc, parts)
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise PatchError("testing value /%s failed" % "/".join(parts))
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            v = copy.deepcopy(_walk(doc, src))
            if kind == "move":
                _remove(doc, src)
            doc = _add(doc, parts, v)
        else:
            raise PatchError("unexpected kind of operation %r" % kind)
    return doc


def _merge_key(items):
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    for k in MERGE_KEYS:
        if all(k in x for x in items if x.get("$patch") != "delete" or k in x):
            return k
    return None


def _strategic_list(live, patch):
    key = _merge_key(patch)
    if key is None or not isinstance(live, list) or (live and _merge_key(live) != key):
        return [strategic_merge(None, x) if isinstance(x, dict) else x for x in patch
                if not (isinstance(x, dict) and x.get("$patch") == "delete")]
    out = copy.deepcopy(live)
    for p in patch:
        idx = next((i for i, x in enumerate(out) if x.get(key) == p.get(key)), None)
        if p.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
        elif p.get("$patch") == "replace":
            q = {k: v for k, v in p.items() if k != "$patch"}
            if idx is None:
                out.append(q)
            else:
                out[idx] = q
        elif idx is None:
            out.append(strategic_merge(None, p))
        else:
            out[idx] = strategic_merge(out[idx], p)
    return out


def strategic_merge(doc, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "delete":
        return None
    if patch.get("$patch") == "replace":
        return strategic_merge(None, {k: v for k, v in patch.items() if k != "$patch"})
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(out.get(field), list) and isinstance(v, list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list):
            out[k] = _strategic_list(out.get(k), v)
        elif isinstance(v, dict):
            merged = strategic_merge(out.get(k), v)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        else:
            out[k] = copy.deepcopy(v)
    if isinstance(retain, list):
        for k in list(out):
            if k not in retain and k not in patch:
                out.pop(k)
    return out


def _apply_merge(live, cfg, prev):
    """cfg merged into live; what prev had and cfg has not is removed from live."""
    if isinstance(cfg, dict):
        out = copy.deepcopy(live) if isinstance(live, dict) else {}
        prev = prev if isinstance(prev, dict) else {}
        for k in prev:
            if k not in cfg:
                out.pop(k, None)
        for k, v in cfg.items():
            out[k] = _apply_merge(out.get(k), v, prev.get(k))
        return out
    if isinstance(cfg, list) and isinstance(live, list):
        key = _merge_key(cfg)
        if key is not None and (not live or _merge_key(live) == key):
            prev_items = {x.get(key): x for x in prev} if isinstance(prev, list) and _merge_key(prev) == key else {}
            wanted = {x.get(key) for x in cfg}
            out = [copy.deepcopy(x) for x in live if x.get(key) in wanted or x.get(key) not in prev_items]
            for c in cfg:
                idx = next((i for i, x in enumerate(out) if x.get(key) == c.get(key)), None)
                if idx is None:
                    out.append(copy.deepcopy(c))
                else:
                    out[idx] = _apply_merge(out[idx], c, prev_items.get(c.get(key)))
            return out
    return copy.deepcopy(cfg)


def server_side_apply(live, cfg, prev):
    return _apply_merge(live or {}, cfg, prev or {})
