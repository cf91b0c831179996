#!/bin/bash
# The README and the man page tell the truth (issue 25 "Docs", a doc-test as
# rustdoc's; t8345 does the examples' READMEs): every idpmake command of
# README.md's indented blocks and of the EXAMPLES of man/idpmake.1 (and of
# man/idpmake-distro.5, which has none: its EXAMPLE is a distro.yaml) runs
# as written, line by line, with the idpmake under test on PATH (and as
# ./idpmake at the top of a scratch copy of the tree); a line that fails
# fails the test, naming the document, the block and the line.  Lines that
# are output are not run.  The build's own commands are not run here, but
# listed below (BUILD_LINES), so a new kind of command cannot go unrun
# unnoticed.  The placeholders the docs use stand for servers this test
# starts, by the one table SUBST below (rustdoc's hidden setup lines); each
# block may have hidden setup lines of its own (SETUP), and nothing else is
# done to the commands.
# shellcheck disable=SC2016 # the tables' $VARs expand when the blocks run
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# ---- the servers the placeholders stand for ---------------------------------
start_git_server
gitops_url=$(new_remote gitops) || t_bail "new_remote failed"
# the man page's `up prod/` runs in a fixture distro ($T/fixture) whose
# GitOps remote is $bare and whose cluster prod the emulator has registered
start_gitops_argocd --repo-map "$gitops_url=$T/git-srv/repos/gitops.git" \
	--cluster prod=https://prod.example:6443
argocd_addr=$ARGOCD_SERVER
# a reader's shell names no server and no token: the docs' commands do
unset ARGOCD_SERVER ARGOCD_AUTH_TOKEN		# ARGOCD_OPTS=--plaintext stays: the emulator is http

# ---- the placeholders: PLACEHOLDER<TAB>WHAT IT BECOMES (expanded when run) ----
# Argo CD: the emulator (its address and token); the GitOps remote: a
# repository on the smart-HTTP git server; the variables --token-env and
# --git-token-env name hold the emulator's token and the git password (the
# git user name from IDPMAKE_GIT_USERNAME, as engine/distro/context.c reads
# it); $EDITOR FILE: bin/edit, which adds a harmless key to FILE.
SUBST=$(printf '%s\t%s\n' \
	'argocd.prod.example.com' '$DOC_ARGOCD_SERVER' \
	'argocd.example.com' '$DOC_ARGOCD_SERVER' \
	'ARGOCD_AUTH_TOKEN=...' 'ARGOCD_AUTH_TOKEN=$DOC_ARGOCD_TOKEN' \
	'https://git.example.com/platform/gitops.git' '$DOC_GITOPS_URL')
export DOC_ARGOCD_SERVER=$argocd_addr DOC_ARGOCD_TOKEN=$ARGOCD_TEST_TOKEN DOC_GITOPS_URL=$gitops_url
export PROD_ARGOCD_TOKEN=$ARGOCD_TEST_TOKEN PROD_GIT_TOKEN=$GIT_PASS IDPMAKE_GIT_USERNAME=$GIT_USER
export EDITOR=$T/bin/edit

# ---- hidden setup: DOC<TAB>ERE on the block's first command<TAB>shell lines ---
# Where each block runs ($scene: the top of a scratch copy of
# the tree, a git repository whose origin/main is the tree as copied).  The
# man page's EXAMPLES continue in examples/quickstart, where the first one
# goes; one that starts `cd examples/` starts at the top.  Review blocks
# (origin/main...HEAD) get a change committed on top of origin/main.  The
# man page's `up prod/` (labels tier=apps, cluster prod) runs in the fixture.
# README.md's sections are independent: each of its blocks runs in a fresh
# scene of its own (a context made by one would fill in the next one's
# Argo CD server, and `up` rightly refuses Applications another remote
# owns); its idpmake blocks run in examples/quickstart, which has no Helm
# chart and no git source, so `pack` needs no network.
# The first matching line wins.
SETUP=$(printf '%s\t%s\t%s\n' \
	'idpmake.1' '^cd examples/' 'cd "$scene"' \
	'idpmake.1' '^idpmake plan -o' 'cd "$scene/examples/quickstart" && $EDITOR packages/hello/configmap.yaml && git commit -qam "a change to review"' \
	'idpmake.1' '^export ARGOCD_SERVER=' 'cd "$T/fixture"' \
	'idpmake.1' '.' 'cd "$scene/examples/quickstart"' \
	'README.md' '^idpmake plan -o' 'cd "$scene/examples/quickstart" && $EDITOR packages/hello/configmap.yaml && git commit -qam "a change to review"' \
	'README.md' '^idpmake ' 'cd "$scene/examples/quickstart"' \
	'README.md' '.' 'cd "$scene"')

# ---- the build's own commands: run by CI itself (.ci/run) and other tests ----
# (ninja, ninja test: every test; ninja install, ninja deb: t8xxx packaging
# tests; t9000: the soak).  Any other command in README.md that is not an
# idpmake command fails the test until it is run or listed here.
BUILD_LINES='./configure --install-deps
ninja
ninja test
./configure [--prefix=DIR] [CC=...] [CFLAGS=...]
ninja test-fast
ninja test-fuzz
ninja bench
SOAK_SEED=0 tests/e2e/run.sh t9000
DESTDIR=/tmp/stage ninja install
ninja deb
sudo apt-get install ./idpmake_*.deb'

# lines that cannot run here: DOC<TAB>ERE<TAB>reason (skipped with the rest
# of their block, counted as skips).  None where ./configure --install-deps ran.
SKIPS=
command -v dot >/dev/null ||
	SKIPS+=$(printf '%s\t%s\t%s\n' 'idpmake.1' '\| dot ' 'graphviz (dot) is not on PATH: ./configure --install-deps')

# ---- the scenes --------------------------------------------------------------
mkdir -p bin
printf '#!/bin/sh\nexec "%s" "$@"\n' "$IDPMAKE" >bin/idpmake
# the editor: adds a key (a new one each time) to the end of the file
printf '#!/bin/sh\nprintf "  edited%%s: by-the-doc-test\\n" "$(wc -l <"$1" | tr -d " ")" >>"$1"\n' >bin/edit
chmod +x bin/idpmake bin/edit
export PATH=$T/bin:$PATH

# mkscene DIR: a copy of the examples (and ./idpmake) in a git repository
# with a bare origin, fetched, so that origin/main is the tree as copied
mkscene() {
	mkdir -p "$1" && cp -R "$top/examples" "$top/.gitignore" "$1/" &&
		rm -rf "$1"/examples/*/.idpmake "$1"/examples/*/out && cp bin/idpmake "$1/idpmake" &&
		git init -q --bare -b main "$1.origin.git" &&
		(cd "$1" && git init -q -b main && git add -A && git commit -qm "the tree" &&
			git remote add origin "$1.origin.git" && git push -q origin main && git fetch -q origin)
}

# the fixture of `idpmake -l tier=apps up prod/`: a package labelled
# tier=apps on cluster prod, and one that is not (core), through Argo CD
mkdistro fixture <<EOF
idpmake: 1
name: doc-fixture
git: {remote: "$bare"}
clusters:
  prod: {server: "https://prod.example:6443"}
packages:
  core: {type: manifests, path: packages/core, labels: {tier: core}}
  web: {type: manifests, path: packages/web, namespace: web, labels: {tier: apps}}
EOF
mkmanifest fixture/packages/core/cm.yaml ConfigMap core core
mkmanifest fixture/packages/web/cm.yaml ConfigMap web

# ---- the blocks --------------------------------------------------------------
# blocks DOC FILE OUTDIR: writes OUTDIR/N.sh (N = 1, 2...: the block's
# commands, each followed by its check), OUTDIR/count (command lines found)
# and OUTDIR/build (the lines not run, one a line)
blocks() {
	SUBST=$SUBST SETUP=$SETUP SKIPS=$SKIPS python3 - "$@" <<'EOF'
import os, re, shlex, sys
doc, path, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
text = open(path).read()
blocks = []  # each a list of (command, is_command)
if path.endswith(".md"):
    cur = []
    for l in text.split("\n") + ["(end)"]:
        if l.startswith("    "):
            cur.append(l[4:])
        elif cur and l.strip() == "":
            cur.append("")
        else:
            if cur:
                blocks.append(cur)
            cur = []
    cmds = []
    for b in blocks:
        joined, acc = [], ""
        for l in b:
            if acc:
                l = acc + " " + l.lstrip()
            if l.endswith("\\"):
                acc = l[:-1].rstrip()
                continue
            acc = ""
            if l.strip():
                joined.append(l)
        cmds.append(joined)
    blocks = cmds
else:
    # the EXAMPLES section: .EX ... .EE blocks, "$ " lines are commands
    m = re.search(r"^\.SH EXAMPLES?\n(.*?)(?=^\.SH|\Z)", text, re.M | re.S)
    blocks = []
    if m:
        for ex in re.findall(r"^\.EX\n(.*?)^\.EE", m.group(1), re.M | re.S):
            b = []
            for l in ex.split("\n"):
                if l.startswith("$ "):
                    l = l[2:]
                    for a, z in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\(ga", "`"),
                                 ("\\(ti", "~"), ("\\(ha", "^"), ("\\e", "\\"), ("\\&", ""), ("\\ ", " ")):
                        l = l.replace(a, z)
                    b.append(l)
            blocks.append(b)

def table(name, n):
    return [l.split("\t", n - 1) for l in os.environ[name].split("\n") if l]
subst = table("SUBST", 2)
setup = [(r, s) for d, r, s in table("SETUP", 3) if d == doc]
skips = [(r, s) for d, r, s in table("SKIPS", 3) if d == doc]

def idp(l):
    return l.startswith("idpmake ") or l.startswith("./idpmake ")

count, build, n = 0, [], 0
for b in blocks:
    run = []
    for l in b:
        if doc != "README.md":
            run.append(l)
            continue
        # README: idpmake commands run; a build line ahead of one (`A && B &&
        # ./idpmake ...`) is left to CI, and so is a build line of its own
        parts = re.split(r"\s+&&\s+", l)
        k = next((i for i, p in enumerate(parts) if idp(p)), None)
        if k is None:
            if not re.match(r"(\./configure|ninja|sudo)(\s|$)|[A-Z_]+=\S+\s+(ninja|tests/)", l):
                continue  # output (or a comment), not a command
            build += [re.sub(r"\s+#.*", "", p).strip() for p in parts]
            continue
        build += parts[:k]
        run.append(" && ".join(parts[k:]))
    if not run:
        continue
    n += 1
    count += len(run)
    first = run[0]
    hidden = next((s for r, s in setup if re.search(r, first)), "")
    sh = [hidden or ":",
          "[ $? = 0 ] || { echo %s >&2; exit 1; }" % shlex.quote("%s: block %d: its hidden setup failed: %s" % (doc, n, hidden))]
    for l in run:
        skip = next((s for r, s in skips if re.search(r, l)), None)
        if skip:
            sh.append("echo %s >&3; exit 0" % shlex.quote("%s: block %d: %s: %s" % (doc, n, l, skip)))
            break
        cmd = l
        for a, z in subst:
            cmd = cmd.replace(a, z)
        sh.append(cmd)
        msg = "%s: block %d: this line failed" % (doc, n)
        sh.append("st=$?; [ $st = 0 ] || { echo %s\" (exit $st): \"%s >&2; exit 1; }"
                  % (shlex.quote(msg), shlex.quote(l + ("" if cmd == l else "   [run as: " + cmd + "]"))))
    open(os.path.join(out, "%d.sh" % n), "w").write("\n".join(sh) + "\n")
open(os.path.join(out, "count"), "w").write("%d\n" % count)
open(os.path.join(out, "build"), "w").write("".join(b + "\n" for b in build))
EOF
}

# rundoc DOC FILE SCENE FLOOR: runs DOC's blocks in order in the scene
# SCENE (its contexts in SCENE.config), each block in a new scene SCENE-N when
# SCENE is "each"; at least FLOOR command lines must be found
rundoc() {
	local doc=$1 file=$2 out=$T/blocks-$1 b n=0 count scene=$3
	blocks "$doc" "$file" "$out" || t_bail "cannot read $file"
	count=$(cat "$out/count")
	[ "$count" -ge "$4" ]
	t_report $? "$doc: $count command lines found (at least $4)"
	for b in $(printf '%s\n' "$out"/*.sh | grep -v '\*' | sort -V); do
		n=$((n + 1))
		: >"$b.skip"
		[ "$3" = each ] && scene=$T/$doc-$n
		[ -d "$scene" ] || mkscene "$scene" || t_bail "cannot make the scene $scene"
		# (a function's prefix assignments reach the commands it runs)
		# shellcheck disable=SC2097,SC2098
		scene=$scene XDG_CONFIG_HOME=$scene.config t_ok "$doc: block $n runs as written ($(grep -c '^st=' "$b") command lines)" bash "$b" 3>"$b.skip"
		[ -s "$b.skip" ] && t_skip "$(cat "$b.skip")"
		if grep -q -e '--context prod up' "$b"; then
			# (once a run: the push's or repository:register's, whichever sends first)
			t_grep "$doc: block $n: a warning says credentials go over plain http" 'warning: sending .* over plain http' "$STDERR"
			t_nogrep "$doc: block $n: naming no variable the user never set (the context's is \$PROD_GIT_TOKEN)" \
				'IDPMAKE_GIT_TOKEN' "$STDERR"
		fi
	done
	while IFS= read -r b; do
		[ -n "$b" ] || continue
		printf '%s\n' "$BUILD_LINES" | grep -qxF -e "$b"
		t_report $? "$doc: '$b' is not run here: run by CI itself or other tests (BUILD_LINES)"
	done <"$out/build"
}

rundoc README.md "${DOC_README:-$top/README.md}" each 8
rundoc idpmake.1 "${DOC_MAN:-$top/man/idpmake.1}" "$T/man" 12
# man/idpmake-distro.5's EXAMPLE is a distro.yaml, no command: none to run
blocks idpmake-distro.5 "$top/man/idpmake-distro.5" "$T/blocks-distro5" || t_bail "cannot read idpmake-distro.5"
t_eq "man/idpmake-distro.5 has no command lines in its EXAMPLE (run them here when it does)" 0 "$(cat "$T/blocks-distro5/count")"

# the blocks did what they say
t_grep "README: --context prod pushed to the git server" "^POST /gitops.git/git-receive-pack\? $GIT_USER\$" "$T/git-srv/access.log"
t_ok "man: up prod/ synced the tier=apps package on prod" test -n "$(git --git-dir="$bare" ls-tree -r --name-only main -- prod/web)"
t_eq "man: and not the tier=core one" "" "$(git --git-dir="$bare" ls-tree -r --name-only main -- prod/core)"
command -v dot >/dev/null && t_ok "man: the graph was drawn" test -s "$T/man/examples/quickstart/graph.svg"
t_ok "man: the review comment was written" test -s "$T/man/examples/quickstart/comment.md"
t_done
