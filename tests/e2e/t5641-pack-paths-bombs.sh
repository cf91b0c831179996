#!/bin/bash
# Running from an archive (unpack.c): the archive named by an absolute path
# or one with '..' (or such a --state) unpacks (libarchive's own checks
# refused the bundle folder's path, not the members); a bundled chart is
# hostile input read into memory, so a gzip bomb of empty files or of one
# huge file is refused, naming the bound, not read.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

python3 -c 'import ctypes, ctypes.util; ctypes.CDLL(ctypes.util.find_library("xxhash")).XXH3_128bits' 2>/dev/null ||
	t_skip_rest "no libxxhash for python3 ctypes (the test writes archives with their digests)"

# mkpack.py DIR OUT [INDEX-LINE...]: an archive as `idpmake pack` writes it, of DIR's files
cat >"$T/mkpack.py" <<'EOF'
import ctypes, ctypes.util, io, os, sys, tarfile
lib = ctypes.CDLL(ctypes.util.find_library("xxhash"))
class H(ctypes.Structure):
    _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]
lib.XXH3_128bits.restype = H
lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
def xxh(b):
    r = lib.XXH3_128bits(b, len(b))
    return "%016x%016x" % (r.high64, r.low64)
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
EOF
# mkchart.py OUT KIND: webapp-1.0.0.tgz holding Chart.yaml and 'many' empty files or one 'huge' file
cat >"$T/mkchart.py" <<'EOF'
import io, sys, tarfile
out, kind = sys.argv[1], sys.argv[2]
class Zeros(io.RawIOBase):
    def __init__(self, n): self.left = n
    def readable(self): return True
    def readinto(self, b):
        k = min(len(b), self.left); b[:k] = bytes(k); self.left -= k; return k
with tarfile.open(out, "w:gz", format=tarfile.USTAR_FORMAT, compresslevel=9) as t:
    c = b"apiVersion: v2\nname: webapp\nversion: 1.0.0\n"
    ti = tarfile.TarInfo("webapp/Chart.yaml"); ti.size = len(c); t.addfile(ti, io.BytesIO(c))
    if kind == "many":
        for i in range(30000):
            t.addfile(tarfile.TarInfo("webapp/t/%05d" % i), io.BytesIO(b""))
    else:
        ti = tarfile.TarInfo("webapp/templates/huge.yaml"); ti.size = 120 << 20
        t.addfile(ti, io.BufferedReader(Zeros(ti.size)))
EOF

# ---- paths: absolute, and with '..' ------------------------------------------
mkdir -p plain/distro/0/packages/web
cat >plain/distro/0/distro.yaml <<'EOF'
idpmake: 1
name: packed
packages:
  web: {type: manifests, path: packages/web, namespace: apps}
EOF
mkmanifest plain/distro/0/packages/web/cm.yaml ConfigMap web
mkdir -p abs/sub
python3 "$T/mkpack.py" plain abs/b.tar || t_bail "cannot write the archive"
t_ok "an archive named by an absolute path unpacks" idpmake -f "$T/abs/b.tar" validate
t_grep "and validates" "distro 'packed' is valid" "$OUTPUT"
t_ok "an archive named with '..' unpacks" idpmake -C abs/sub -f ../b.tar render web
t_grep "and renders" '^kind: ConfigMap' "$STDOUT"
t_ok "an absolute --state" idpmake -C abs --state "$T/abs/st" --bundle b.tar validate
t_ok "the bundle is under that --state" test -f "$T/abs/st/bundle/unpacked/distro/0/distro.yaml"

# ---- gzip bombs in a bundled chart -------------------------------------------
for kind in many huge; do
	mkdir -p "$kind/distro/0" "$kind/charts/0"
	cat >"$kind/distro/0/distro.yaml" <<'EOF'
idpmake: 1
name: bomb
packages:
  web: {type: helm, chart: {repo: "https://charts.example", name: webapp, version: 1.0.0}, namespace: apps}
EOF
	python3 "$T/mkchart.py" "$kind/charts/0/webapp-1.0.0.tgz" $kind || t_bail "cannot write the $kind chart"
	python3 "$T/mkpack.py" $kind $kind.tar "chart charts/0/webapp-1.0.0.tgz https://charts.example webapp 1.0.0" ||
		t_bail "cannot write the $kind archive"
done
t_ok "the bomb archives are small" test "$(stat -c %s many.tar)" -lt 2000000 -a "$(stat -c %s huge.tar)" -lt 1000000
t_exit 1 "a chart of 30000 empty files is refused" idpmake -f many.tar render web
t_grep "naming the bound" 'chart .*webapp-1.0.0.tgz: more than 20000 members' "$STDERR"
t_exit 1 "a chart of one 120 MiB file is refused" idpmake -f huge.tar render web
t_grep "naming the bound" "chart .*webapp-1.0.0.tgz: member 'webapp/templates/huge.yaml' is too large \(a chart holds at most 100 MiB\)" "$STDERR"

t_done
