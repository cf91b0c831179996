#!/bin/bash
# The keys index (.idpmake/keys) publishes every render key in the GitOps
# repository; a key hashes the package's spec, which held a git: source's
# URL with its password (or a token as its user): a fast hash of a secret,
# on every clone.  Two runs whose distros differ only in that password must
# publish the same key.  Run offline from archives (pack.h) whose git:
# source is the same commit under the two URLs.
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

commit=0123456789abcdef0123456789abcdef01234567
for run in one two; do
	pw="pw-$run-$(random_string)"
	echo "$pw" >"$T/pw-$run"
	url="https://carol:$pw@git.example.com/org/src.git"
	git init -q --bare -b main "$T/$run.git" || t_bail "git init failed"
	mkdir -p "$run/tree/distro/0" "$run/tree/git/0"
	cat >"$run/tree/distro/0/distro.yaml" <<EOF
idpmake: 1
name: creds
git: {remote: "$T/$run.git"}
packages:
  web: {type: manifests, git: {url: "$url", ref: main}, namespace: apps}
EOF
	mkmanifest "$run/tree/git/0/cm.yaml" ConfigMap web
	python3 "$T/mkpack.py" "$run/tree" "$run/b.tar" "git $commit git/0 $url main ." || t_bail "cannot write the archive"
	t_ok "up from the $run archive" idpmake -C "$run" -f b.tar up
	git --git-dir="$T/$run.git" show main:.idpmake/keys >"$T/keys-$run" || t_bail "no keys index"
	t_nogrep "the $run index holds no password" "$pw" "$T/keys-$run"
done
t_grep "the index names the folder" '^in-cluster/web [0-9a-f]{32} ' "$T/keys-one"
t_eq "the two runs publish the same render key (the password is no input)" \
	"$(awk '$1 == "in-cluster/web" {print $2}' "$T/keys-one")" "$(awk '$1 == "in-cluster/web" {print $2}' "$T/keys-two")"
t_nostring "no password under the first state folder" "$(cat "$T/pw-one")" one/.idpmake/state.db

t_done
