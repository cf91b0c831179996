#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Hostile YAML (issue 10 #2): an alias bomb ("billion laughs"), one made of
# few aliases of a long scalar (found by fuzz-distro), an alias that
# contains itself, documents nested 10,000 deep (sequences and maps), a 10 MB
# scalar and a duplicate key each end as an error at file:line:col within 5 s
# and 64 MiB of RSS, with nothing pushed: in distro.yaml (a manifest error,
# exit 2, nothing runs) and as a file of a manifests package (a failed render
# step, exit 1 as cli.md says for a failed step; the push does not run).
# The limits are yaml.c's, listed in idpmake-distro(5) DIAGNOSTICS.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || t_skip_rest "/usr/bin/time is not installed (Debian package: time)"

# The ASan build's shadow memory is not the program's: RSS is checked on the
# plain build only, and the ASan build gets more time.
secs=5 rss_kb=$((64 * 1024))
case $IDPMAKE in */asan/*) secs=30 rss_kb= ;; esac

# hostile NAME PREFIX: the hostile part, after PREFIX (YAML lines), on stdout
hostile() {
	python3 - "$1" "$2" <<'EOF'
import sys
name, prefix = sys.argv[1], sys.argv[2]
out = [prefix] if prefix else []
if name == "bomb":
    out.append("l0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]")
    for i in range(1, 10):
        out.append("l%d: &a%d [%s]" % (i, i, ", ".join(["*a%d" % (i - 1)] * 10)))
    out.append("bomb: *a9")
elif name == "bytebomb":
    # few nodes, but each alias copies a 40 kB scalar: 90,000 copies are 3.6 GB
    out.append("big: &x '%s'" % ("x" * 40000))
    out.append("b1: &b1 [%s]" % ", ".join(["*x"] * 10))
    for i in range(2, 6):
        out.append("b%d: &b%d [%s]" % (i, i, ", ".join(["*b%d" % (i - 1)] * 9)))
elif name == "selfalias":
    out.append("loop: &a [*a, *a]")
elif name == "deepseq":
    out.append("deep: " + "[" * 10000 + "]" * 10000)
elif name == "deepmap":
    out.append("deep: " + "{a: " * 10000 + "x" + "}" * 10000)
elif name == "bigscalar":
    out.append("big: " + "a" * (10 * 1024 * 1024))
elif name == "dupkey":
    out.append("twice: 1")
    out.append("twice: 2")
sys.stdout.write("\n".join(out) + "\n")
EOF
}

# bounded DESC WANT-EXIT CMD...: CMD exits WANT-EXIT within $secs s and $rss_kb KiB
bounded() {
	local desc=$1 want=$2 rss
	shift 2
	t_exit "$want" "$desc: exit $want" timeout "$secs" /usr/bin/time -f %M -o "$T/.rss" "$@"
	rss=$(tail -n 1 "$T/.rss")
	if [ -n "$rss_kb" ]; then
		[ -n "$rss" ] && [ "$rss" -le "$rss_kb" ]
		printf 'max RSS %s KiB, limit %s KiB\n' "$rss" "$rss_kb" >"$T/.why"
		t_report $? "$desc: RSS ${rss:-?} KiB within 64 MiB" "$T/.why"
	fi
}

# what each case says
declare -A msg=(
	[bomb]='YAML aliases expand to more than 100000 nodes'
	[bytebomb]='YAML aliases expand to more than 4194304 bytes of text beyond the document'"'"'s own'
	[selfalias]='YAML nested more than 200 levels deep \(or an alias that contains itself\)'
	[deepseq]='YAML nested more than 200 levels deep'
	[deepmap]='YAML nested more than 200 levels deep'
	[bigscalar]='YAML scalar of 10485760 bytes is larger than the limit of 4194304 bytes \(4 MiB\)'
	[dupkey]="duplicate key 'twice'"
)
cases="bomb bytebomb selfalias deepseq deepmap bigscalar dupkey"

git init -q --bare remote.git
pushed() { git -C "$T/remote.git" rev-parse -q --verify refs/heads/main >/dev/null; }

# ---- in distro.yaml: a manifest error, exit 2, nothing runs --------------------
for c in $cases; do
	mkdir -p "d-$c"
	hostile "$c" "idpmake: 1
name: hostile
git: {remote: $T/remote.git}
vars:" | sed '5,$s/^/  /' >"d-$c/distro.yaml"
	bounded "distro.yaml $c: up" 2 "$IDPMAKE" -C "d-$c" up
	t_grep "distro.yaml $c: the error at file:line:col" "^distro\.yaml:[0-9]+:[0-9]+: error: ${msg[$c]}" "$OUTPUT"
	t_nogrep "distro.yaml $c: nothing ran" '^\[[0-9]+/[0-9]+\]' "$OUTPUT"
	pushed
	t_eq "distro.yaml $c: nothing pushed" 1 "$?"
done

# ---- aliases that repeat 90 unknown needs on 1,000 packages: 90,000 errors ----
# (located at the anchor), each with a "did you mean" over 1,000 names; it
# took 16 s and 730 MB (a list of every package's name made for each error,
# a suggestion computed for each): within 5 s and 64 MiB like the others
mkdir -p d-needs
python3 - "$T/remote.git" >d-needs/distro.yaml <<'EOF'
import sys
names = ", ".join("zq%03dxx" % i for i in range(90))
print("idpmake: 1\nname: hostile\ngit: {remote: %s}\npackages:" % sys.argv[1])
print("  p0: {type: manifests, path: ., needs: &n [%s]}" % names)
for i in range(1, 1000):
    print("  p%d: {type: manifests, path: ., needs: *n}" % i)
EOF
bounded "distro.yaml needs: up" 2 "$IDPMAKE" -C d-needs up
t_grep "distro.yaml needs: the error at file:line:col" "^distro\.yaml:5:[0-9]+: error: package 'p0' needs 'zq000xx', which is not a package of this distro" "$OUTPUT"
t_grep "distro.yaml needs: the last package's too" "^distro\.yaml:5:[0-9]+: error: package 'p999' needs 'zq089xx'" "$OUTPUT"
pushed
t_eq "distro.yaml needs: nothing pushed" 1 "$?"

# ---- aliases that repeat profile names: 80 clusters list 1,000 profiles, each 1,000 packages ----
# whether a cluster has a package scanned every entry: 16 kB took minutes.
# Repeats mean nothing and are dropped when read.
mkdir -p d-prof
python3 - >d-prof/distro.yaml <<'EOF'
print("idpmake: 1\nname: hostile\nprofiles:")
print("  pr0: &pl [%s]" % ", ".join(["q0"] * 1000))
for i in range(1, 10):
    print("  pr%d: *pl" % i)
print("clusters:")
print("  c0: {server: 'https://c', profiles: &cp [%s]}" % ", ".join("pr%d" % (i % 10) for i in range(1000)))
for i in range(1, 80):
    print("  c%d: {server: 'https://c', profiles: *cp}" % i)
print("packages:\n  q0: {type: manifests, path: .}")
for i in range(100):
    print("  p%d: {type: manifests, path: .}" % i)
EOF
bounded "distro.yaml repeated profiles: graph" 0 "$IDPMAKE" -C d-prof graph
t_grep "distro.yaml repeated profiles: c79 has q0" '"c79/q0:render"' "$OUTPUT"
t_nogrep "distro.yaml repeated profiles: and not p0" '"c79/p0:render"' "$OUTPUT"

# ---- in a package: the render fails at file:line:col, nothing pushed -----------
mkdistro p <<EOF
idpmake: 1
name: hostile-package
git: {remote: $T/remote.git}
packages:
  app: {type: manifests, path: packages/app}
EOF
mkmanifest p/packages/app/good.yaml ConfigMap good
for c in $cases; do
	hostile "$c" "apiVersion: v1
kind: ConfigMap
metadata: {name: hostile}" >p/packages/app/hostile.yaml
	bounded "package $c: up" 1 "$IDPMAKE" -C p up
	t_grep "package $c: the error at file:line:col" "^packages/app/hostile\.yaml:[0-9]+:[0-9]+: error: ${msg[$c]}" "$OUTPUT"
	t_grep "package $c: the render step failed" '^FAILED: in-cluster/app:render: packages/app/hostile\.yaml' "$OUTPUT"
	t_grep "package $c: the push did not run" '^not run: push' "$OUTPUT"
	pushed
	t_eq "package $c: nothing pushed" 1 "$?"
	t_fail "package $c: render fails too" idpmake -C p render
	t_grep "package $c: render names the file:line:col" "^packages/app/hostile\.yaml:[0-9]+:[0-9]+: error: " "$OUTPUT"
done

# ---- and what is within the limits still works -----------------------------------
python3 - >p/packages/app/hostile.yaml <<'EOF'
print("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hostile}")
print("base: &b {a: 1, b: 2, c: 3}")
print("data:")
print("  nested: '%s'" % ("x" * (3 * 1024 * 1024)))
print("  deep: " + "[" * 150 + "]" * 150)
EOF
t_ok "a 3 MiB scalar, 150 levels and an alias are fine" idpmake -C p up
pushed
t_eq "and pushed" 0 "$?"

t_done
