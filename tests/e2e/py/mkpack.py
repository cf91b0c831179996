"""mkpack.py DIR OUT [INDEX-LINE...]: an archive as `idpmake pack` writes it,
of DIR's files (each with its digest in idpmake-pack.txt), the extra index
lines appended: for tests that hand idpmake archives it did not write."""
import io
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxh3 import xxh  # noqa: E402

top, out, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
files = []
for d, _, fs in os.walk(top):
    for f in fs:
        p = os.path.join(d, f)
        files.append((os.path.relpath(p, top), open(p, "rb").read()))
files.sort()
idx = "idpmake-pack 1\n" + "".join("file %s %d %s\n" % (xxh(c), len(c), n) for n, c in files)
idx += "".join(l + "\n" for l in extra)
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    for n, c in [("idpmake-pack.txt", idx.encode())] + files:
        ti = tarfile.TarInfo(n)
        ti.size = len(c)
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(c))
