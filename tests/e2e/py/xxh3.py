"""XXH3-128 of bytes as idpmake prints it (hash.h: 32 hex digits, high half
first), through libxxhash with ctypes: for tests that write what idpmake
checks (archive digests, keys index output hashes).  `available()` says
whether the library is there."""
import ctypes
import ctypes.util

_lib = None


def available():
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("xxhash")
        try:
            lib = ctypes.CDLL(name) if name else None
            lib.XXH3_128bits  # pylint: disable=pointless-statement
        except (OSError, AttributeError):
            return False

        class H(ctypes.Structure):
            _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]
        lib.XXH3_128bits.restype = H
        lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        _lib = lib
    return True


def xxh(b):
    if not available():
        raise RuntimeError("no libxxhash")
    r = _lib.XXH3_128bits(b, len(b))
    return "%016x%016x" % (r.high64, r.low64)
