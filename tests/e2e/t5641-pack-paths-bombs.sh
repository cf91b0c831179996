#!/bin/bash
# Running from an archive (unpack.c): the archive named by an absolute path
# or one with '..' (or such a --state) unpacks (libarchive's own checks
# refused the bundle folder's path, not the members); a bundled chart is
# hostile input read into memory, so a gzip bomb of empty files or of one
# huge file is refused, naming the bound, not read.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PYTHONPATH=$top/tests/e2e/py python3 -c 'import sys, xxh3; sys.exit(not xxh3.available())' ||
	t_skip_rest "no libxxhash for python3 ctypes (the test writes archives with their digests)"

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
python3 "$top/tests/e2e/py/mkpack.py" plain abs/b.tar || t_bail "cannot write the archive"
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
	python3 "$top/tests/e2e/py/mkpack.py" $kind $kind.tar "chart charts/0/webapp-1.0.0.tgz https://charts.example webapp 1.0.0" ||
		t_bail "cannot write the $kind archive"
done
t_ok "the bomb archives are small" test "$(stat -c %s many.tar)" -lt 2000000 -a "$(stat -c %s huge.tar)" -lt 1000000
t_exit 1 "a chart of 30000 empty files is refused" idpmake -f many.tar render web
t_grep "naming the bound" 'chart .*webapp-1.0.0.tgz: more than 20000 members' "$STDERR"
t_exit 1 "a chart of one 120 MiB file is refused" idpmake -f huge.tar render web
t_grep "naming the bound" "chart .*webapp-1.0.0.tgz: member 'webapp/templates/huge.yaml' is too large \(a chart holds at most 100 MiB\)" "$STDERR"

t_done
