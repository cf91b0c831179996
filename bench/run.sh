#!/usr/bin/env bash
# bench/run.sh [DIR]
#
# idpmake against ninja (and ninja + git) on a generated distro; see bench/README.md.
# DIR defaults to a fresh temporary folder under /tmp, removed at the end (KEEP=1
# keeps it). A DIR without distro.yaml is generated with bench/gen.sh first.
#
# Environment: IDPMAKE (default: the binary at the repository top), NINJA (ninja),
# PACKAGES (2000) and FILES (100) for generation, RUNS (5) for the medians,
# KEEP=1, STRICT=1 (exit 1 when a target is missed or idpmake failed). The part
# scripts it runs after its table (graph, emptystate, fleet, capi) take their own
# size knobs from the environment (CLUSTERS, BIG, N, ...); one that exits non-zero
# makes run.sh exit 1, STRICT or not.
set -u
export LC_ALL=C NO_COLOR=1

here=$(cd "$(dirname "$0")" && pwd)
IDPMAKE=${IDPMAKE:-$(dirname "$0")/../idpmake}
case $IDPMAKE in
    /*) ;;
    */*) ;;
    *) IDPMAKE=$(command -v "$IDPMAKE" || echo "$IDPMAKE") ;;
esac
case $IDPMAKE in   # absolute and normalised: the runs happen in DIR
    */*) if d=$(cd "$(dirname "$IDPMAKE")" 2>/dev/null && pwd -P); then IDPMAKE=$d/$(basename "$IDPMAKE"); fi ;;
esac
NINJA=${NINJA:-ninja}
PACKAGES=${PACKAGES:-2000}
FILES=${FILES:-100}
RUNS=${RUNS:-5}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

die() { echo "run.sh: $*" >&2; exit 2; }
command -v "$NINJA" >/dev/null || die "ninja not found"
command -v git >/dev/null || die "git not found"
GNU_TIME=
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
    GNU_TIME=/usr/bin/time
fi

# ---------------------------------------------------------------- the distro
CREATED=
if [ $# -ge 1 ]; then
    DIR=$1
else
    DIR=$(mktemp -d /tmp/idpmake-bench.XXXXXX) || die "mktemp failed"
    CREATED=$DIR
fi
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    if [ -n "$CREATED" ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$CREATED"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -f "$DIR/distro.yaml" ]; then
    t0=$EPOCHREALTIME
    "$here/gen.sh" "$DIR" "$PACKAGES" "$FILES" >/dev/null || die "gen.sh failed"
    t1=$EPOCHREALTIME
    GEN_NOTE=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "generated in %.1f s", b-a}')
else
    GEN_NOTE="existing"
fi
DIR=$(cd "$DIR" && pwd -P)
cd "$DIR" || die "cannot cd to $DIR"
[ -f build.ninja ] || die "$DIR has distro.yaml but no build.ninja (generate with bench/gen.sh)"
npk=$(find pkgs -mindepth 1 -maxdepth 1 -type d | wc -l)
nfiles=$(find pkgs -type f | wc -l)
B=$DIR/.bench                      # logs, the ninja side's remote, the strace output
rm -rf "$B"; mkdir -p "$B/logs"

# ---------------------------------------------------------------- measuring
# timed LOG CMD...: runs CMD in DIR, output to LOG; sets T (seconds), RSS (KiB), RC.
timed() {
    local log=$1 t0 t1; shift
    rm -f "$B/rss"
    t0=$EPOCHREALTIME
    if [ -n "$GNU_TIME" ]; then
        "$GNU_TIME" -f %M -o "$B/rss" "$@" >"$log" 2>&1 </dev/null; RC=$?
    else
        "$@" >"$log" 2>&1 </dev/null; RC=$?
    fi
    t1=$EPOCHREALTIME
    T=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f", b-a}')
    RSS=$(tail -n 1 "$B/rss" 2>/dev/null | grep -E '^[0-9]+$' || echo "")
}
median() { # "n1 n2 ..."
    tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END{if(NR==0)exit; if(NR%2)print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

FAILED_LOGS=()
# Per case: lists of times and RSS, and the first failing exit status.
declare -A VALS RSSV FAIL
record() { # CASE SIDE LOG   (after timed)
    local k="$1.$2"
    if [ "$RC" -ne 0 ]; then
        if [ -z "${FAIL[$k]:-}" ]; then FAIL[$k]=$RC; FAILED_LOGS+=("$1 ($2): $3"); fi
    else
        VALS[$k]="${VALS[$k]:-} $T"
        RSSV[$k]="${RSSV[$k]:-} ${RSS:-}"
    fi
}

ninja_git_setup() { # a git repository in out/, pushing to a local bare repository
    rm -rf out .ninja_log .ninja_deps "$B/ninja-remote.git"
    git init -q --bare -b main "$B/ninja-remote.git"
    mkdir out
    git -C out init -q -b main
    git -C out remote add origin "$B/ninja-remote.git"
    git -C out config user.name bench
    git -C out config user.email bench@localhost
    git -C out config commit.gpgsign false
    git -C out config gc.auto 0          # no auto-gc in the middle of a timing
}

IDP_VERSION=$("$IDPMAKE" version 2>/dev/null | head -n 1)
[ -n "$IDP_VERSION" ] || IDP_VERSION="(no version: $IDPMAKE absent or failing)"
echo "idpmake benchmark"
echo "  dir       $DIR ($GEN_NOTE)"
echo "  distro    $npk packages, $nfiles files"
echo "  idpmake   $IDPMAKE $IDP_VERSION"
echo "  ninja     $("$NINJA" --version), $(git --version), $(nproc) cpus, runs $RUNS"
[ -n "$GNU_TIME" ] || echo "  note      GNU time (/usr/bin/time) not found: no peak RSS figures"
echo

# cold: first runs, no state
echo "cold runs..." >&2
rm -rf .idpmake
timed "$B/logs/cold-idpmake.log" "$IDPMAKE" up;  record cold idpmake "$B/logs/cold-idpmake.log"
rm -rf out .ninja_log .ninja_deps
timed "$B/logs/cold-ninja.log" "$NINJA";          record cold ninja "$B/logs/cold-ninja.log"
ninja_git_setup
timed "$B/logs/cold-ninjagit.log" sh -c "$NINJA && cd out && git add -A && git commit -qm x && git push -q origin main"
record cold ninjagit "$B/logs/cold-ninjagit.log"

# no-op: one untimed warm-up each, then RUNS interleaved
echo "no-op runs..." >&2
"$IDPMAKE" up >"$B/logs/warmup-idpmake.log" 2>&1 </dev/null
"$NINJA" >"$B/logs/warmup-ninja.log" 2>&1 </dev/null
for i in $(seq 1 "$RUNS"); do
    timed "$B/logs/noop-idpmake-$i.log" "$IDPMAKE" up; record noop idpmake "$B/logs/noop-idpmake-$i.log"
    timed "$B/logs/noop-ninja-$i.log" "$NINJA";        record noop ninja "$B/logs/noop-ninja-$i.log"
done

# no-op under strace: which files did it open?
HAVE_STRACE=0; src=0
if command -v strace >/dev/null; then
    HAVE_STRACE=1
    echo "no-op run under strace..." >&2
    strace -f -y -e trace=openat -o "$B/strace.txt" "$IDPMAKE" up >"$B/logs/strace-idpmake.log" 2>&1 </dev/null
    src=$?
    STRACE_NOTE=$("$PYTHON" - "$B/strace.txt" "$DIR" <<'PY'
import os, re, sys
trace, top = sys.argv[1], os.path.realpath(sys.argv[2])
pkgs, gitops = os.path.join(top, "pkgs"), os.path.join(top, ".idpmake", "gitops.git")
# 123  openat(AT_FDCWD</cwd>, "path", FLAGS...   or   openat(5</dir>, "name", ...
pat = re.compile(r'openat2?\((AT_FDCWD|-?\d+)(?:<([^>]*)>)?, "((?:[^"\\]|\\.)*)"(.*)')
files = dirs = git = 0
example = {}
try:
    lines = open(trace, errors="replace").read().splitlines()
except OSError:
    lines = []
for line in lines:
    m = pat.search(line)
    if not m:
        continue                      # "<... openat resumed>" halves carry no path
    base, path, rest = m.group(2) or top, m.group(3), m.group(4)
    full = os.path.normpath(path if path.startswith("/") else os.path.join(base, path))
    def under(d):
        return full == d or full.startswith(d + "/")
    if under(pkgs):
        if "O_DIRECTORY" in rest:
            dirs += 1
        else:
            files += 1
            example.setdefault("pkgs", full)
    if under(gitops):
        git += 1
        example.setdefault("git", full)
print("%d %d %d %s %s" % (files, dirs, git, example.get("pkgs", "-"), example.get("git", "-")))
PY
)
    read -r S_FILES S_DIRS S_GIT S_EXF S_EXG <<<"$STRACE_NOTE"
fi

# one changed file: a new data key in a different file each time
echo "one-change runs..." >&2
runid=$(date +%s)
pdirs=(pkgs/*/)
for i in $(seq 1 "$RUNS"); do
    pdir=${pdirs[$(( (i * 7919) % ${#pdirs[@]} ))]}
    pfiles=("$pdir"*)
    f=${pfiles[$(( (i * 13) % ${#pfiles[@]} ))]}
    printf '  BENCH_%s_%s: "changed by bench/run.sh"\n' "$runid" "$i" >>"$f"
    timed "$B/logs/change-idpmake-$i.log" "$IDPMAKE" up; record change idpmake "$B/logs/change-idpmake-$i.log"
    timed "$B/logs/change-ninjagit-$i.log" sh -c "$NINJA && cd out && git add -A && git commit -qm x"
    record change ninjagit "$B/logs/change-ninjagit-$i.log"
done

# ---------------------------------------------------------------- the table
MISSED=0
line() { printf '%-28s %-9s %-13s %-7s %-8s %s\n' "$@"; }
line case idpmake "ninja(+git)" ratio target result
# row LABEL CASE IDPSIDE OTHERSIDE TARGET(max ratio or -) [rss]
row() {
    local label=$1 a="$2.$3" b="$2.$4" target=$5 kind=${6:-time} va vb r res
    if [ -n "${FAIL[$a]:-}" ]; then
        local side=$4; [ "$side" = ninjagit ] && side=ninja+git
        if [ -n "${FAIL[$b]:-}" ]; then vb="$side failed: ${FAIL[$b]}"
        elif [ "$kind" = rss ]; then
            vb=$(median "${RSSV[$b]:-}")
            if [ -n "$vb" ]; then vb=$(awk -v x="$vb" 'BEGIN{printf "%.1f MiB", x/1024}'); else vb=n/a; fi
            vb="$side $vb"
        else vb=$(median "${VALS[$b]:-}"); vb=$(awk -v x="$vb" 'BEGIN{printf "%.3f s", x}'); vb="$side $vb"; fi
        printf '%-28s idpmake failed: %-4s (%s)\n' "$label" "${FAIL[$a]}" "$vb"; MISSED=1; return
    fi
    if [ -n "${FAIL[$b]:-}" ]; then
        printf '%-28s %s failed: %s\n' "$label" "$4" "${FAIL[$b]}"; return
    fi
    if [ "$kind" = rss ]; then
        va=$(median "${RSSV[$a]:-}"); vb=$(median "${RSSV[$b]:-}")
        if [ -z "$va" ] || [ -z "$vb" ]; then printf '%-28s n/a (no GNU time)\n' "$label"; return; fi
        va=$(awk -v x="$va" 'BEGIN{printf "%.1f", x/1024}'); vb=$(awk -v x="$vb" 'BEGIN{printf "%.1f", x/1024}')
    else
        va=$(median "${VALS[$a]:-}"); vb=$(median "${VALS[$b]:-}")
        va=$(awk -v x="$va" 'BEGIN{printf "%.3f", x}'); vb=$(awk -v x="$vb" 'BEGIN{printf "%.3f", x}')
    fi
    r=$(awk -v x="$va" -v y="$vb" 'BEGIN{if (y > 0) printf "%.2f", x/y; else print "inf"}')
    if [ "$target" = - ]; then
        res=-; target=-
    elif awk -v r="$r" -v t="$target" 'BEGIN{exit !(r != "inf" && r+0 <= t+0)}'; then
        res=ok; target="<= $target"
    else
        res=MISSED; MISSED=1; target="<= $target"
    fi
    line "$label" "$va" "$vb" "$r" "$target" "$res"
}
row "cold: up vs ninja"            cold idpmake ninja    -
row "cold: up vs ninja+git+push"   cold idpmake ninjagit 1.0
row "no-op (s, median of $RUNS)"   noop idpmake ninja    1.0
row "no-op peak RSS (MiB)"         noop idpmake ninja    2.0 rss
row "one change vs ninja+commit"   change idpmake ninjagit 0.5
# graph building against packages x clusters: its own distros (bench/graph.sh)
# part NAME: the exit status of the part script just run (through tee); one that
# failed (an idpmake run it measures failed) is listed at the end and run.sh exits 1
PARTS_FAILED=()
part() { [ "$2" = 0 ] || PARTS_FAILED+=("$1 exited $2 (its output above; logs: $B/logs/$1.log)"); }
IDPMAKE=$IDPMAKE RUNS=$RUNS "$here/graph.sh" | tee "$B/logs/graph.log"
part graph "${PIPESTATUS[0]}"
grep -q MISSED "$B/logs/graph.log" && MISSED=1
# an empty state folder against an up-to-date remote (bench/emptystate.sh)
IDPMAKE=$IDPMAKE PACKAGES=$PACKAGES FILES=$FILES RUNS=$((RUNS < 3 ? RUNS : 3)) "$here/emptystate.sh" | tee "$B/logs/emptystate.log"
part emptystate "${PIPESTATUS[0]}"

# the fleet case (bench/fleet.sh): 100 clusters x 50 packages against the Argo CD emulator
echo
IDPMAKE=$IDPMAKE "$here/fleet.sh" | tee "$B/logs/fleet.log"
part fleet "${PIPESTATUS[0]}"
grep -q MISSED "$B/logs/fleet.log" && MISSED=1

# clusters created through Cluster API (bench/capi.sh): 20 created against 20 existing, figures only
echo
IDPMAKE=$IDPMAKE "$here/capi.sh" | tee "$B/logs/capi.log"
part capi "${PIPESTATUS[0]}"

echo
if [ "$HAVE_STRACE" = 0 ]; then
    echo "open check: strace is not installed (apt-get install strace); not checked"
else
    ok=ok; { [ "$S_FILES" -eq 0 ] && [ "$S_GIT" -eq 0 ]; } || { ok=MISSED; MISSED=1; }
    if [ "$src" -ne 0 ]; then
        echo "open check: idpmake failed: $src (under strace; the counts below are of that failed run)"
        ok="not valid"; MISSED=1
    fi
    echo "open check ($ok): no-op up opened $S_FILES files under pkgs/ (expected 0)," \
         "$S_GIT paths under .idpmake/gitops.git (expected 0); $S_DIRS directory opens under pkgs/"
    [ "$S_EXF" = - ] || echo "  e.g. $S_EXF"
    [ "$S_EXG" = - ] || echo "  e.g. $S_EXG"
fi

if [ ${#FAILED_LOGS[@]} -gt 0 ]; then
    echo
    for l in "${FAILED_LOGS[@]}"; do
        echo "failed: $l"
        tail -n 5 "${l##*: }" | sed 's/^/    /'
    done
fi
if [ ${#PARTS_FAILED[@]} -gt 0 ]; then
    echo
    for l in "${PARTS_FAILED[@]}"; do echo "failed: $l"; done
fi
[ -n "$CREATED" ] && [ "${KEEP:-0}" != 1 ] && echo && echo "(removing $DIR; KEEP=1 keeps it)"
[ ${#PARTS_FAILED[@]} -eq 0 ] || exit 1
if [ "${STRICT:-0}" = 1 ] && [ "$MISSED" -ne 0 ]; then exit 1; fi
exit 0
