#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A hostile `git:` source: trees named `..` (nested so that the chain lands in
# the scratch folder, never above it), a tree named `.git`, and symlinks that
# point out of the source.  `plan` and `up` refuse each with a clear error
# and write nothing outside the source's cache folder.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src"
# blob TEXT REPO, tree REPO <mktree-lines, commit_main REPO TREE
blob() { printf '%s' "$1" | git -C "$T/src/$2.git" hash-object -w --stdin; }
tree() { git -C "$T/src/$1.git" mktree; }
commit_main() {
	local c
	c=$(git -C "$T/src/$1.git" commit-tree -m hostile "$2") || return 1
	git -C "$T/src/$1.git" update-ref refs/heads/main "$c"
}
cmtext() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n' "$1"; }

# The source is extracted to d/.idpmake/cache/git/src/ID: six `..` from there
# is $T.  Each level of the `..` chain holds idpmake-escaped.yaml, so every
# depth from the cache's parent up to $T is tried, and none above $T.
git init -q --bare "$T/src/dots.git"
cm=$(blob "$(cmtext escaped)" dots)
level=$(printf '100644 blob %s\tidpmake-escaped.yaml\n' "$cm" | tree dots)
for _ in 2 3 4 5 6; do
	level=$(printf '100644 blob %s\tidpmake-escaped.yaml\n040000 tree %s\t..\n' "$cm" "$level" | tree dots)
done
root=$(printf '100644 blob %s\tcm.yaml\n040000 tree %s\t..\n' "$cm" "$level" | tree dots)
commit_main dots "$root" || t_bail "cannot build the hostile repository"

# a tree named .git holding a config
git init -q --bare "$T/src/dotgit.git"
cfg=$(blob "$(printf '[core]\n\thooksPath = /tmp\n')" dotgit)
cmg=$(blob "$(cmtext ok)" dotgit)
gt=$(printf '100644 blob %s\tconfig\n' "$cfg" | tree dotgit)
commit_main dotgit "$(printf '100644 blob %s\tcm.yaml\n040000 tree %s\t.git\n' "$cmg" "$gt" | tree dotgit)" ||
	t_bail "cannot build the .git repository"

# symlinks out of the source: straight to a file in $T, and through a link to "."
cmtext outside-secret >"$T/outside.yaml"
git init -q --bare "$T/src/link.git"
cml=$(blob "$(cmtext ok)" link)
lnk=$(blob ../../../../../../outside.yaml link)
dot=$(blob . link)
sneaky=$(blob here/../../../../../../../outside.yaml link)
commit_main link "$(printf '100644 blob %s\tcm.yaml\n120000 blob %s\tsecret.yaml\n120000 blob %s\there\n' "$cml" "$lnk" "$dot" | tree link)" ||
	t_bail "cannot build the symlink repository"
git init -q --bare "$T/src/link2.git"
cml=$(blob "$(cmtext ok)" link2)
dot=$(blob . link2)
sneaky=$(blob here/here/here/here/here/here/../../../../../../outside.yaml link2)
commit_main link2 "$(printf '100644 blob %s\tcm.yaml\n120000 blob %s\there\n120000 blob %s\tsneaky.yaml\n' "$cml" "$dot" "$sneaky" | tree link2)" ||
	t_bail "cannot build the second symlink repository"

# a dangling symlink that would leave the source through a link to "."
git init -q --bare "$T/src/link3.git"
cml=$(blob "$(cmtext ok)" link3)
dot=$(blob . link3)
dangle=$(blob here/../not-yet.yaml link3)
commit_main link3 "$(printf '100644 blob %s\tcm.yaml\n120000 blob %s\there\n120000 blob %s\tdangle.yaml\n' "$cml" "$dot" "$dangle" | tree link3)" ||
	t_bail "cannot build the third symlink repository"

# a symlink inside the source is fine
git init -q --bare "$T/src/inside.git"
cmi=$(blob "$(cmtext inside)" inside)
inl=$(blob cm.txt inside)
commit_main inside "$(printf '100644 blob %s\tcm.txt\n120000 blob %s\tcm.yaml\n' "$cmi" "$inl" | tree inside)" ||
	t_bail "cannot build the inside-symlink repository"

# submodules (a gitlink at the root and one in a subfolder): not fetched, left out
git init -q --bare "$T/src/submod.git"
cms=$(blob "$(cmtext with-submodule)" submod)
vend=$(printf '160000 commit %s\tlib\n100644 blob %s\tkeep.txt\n' 1111111111111111111111111111111111111111 "$cms" | tree submod)
commit_main submod "$(printf '100644 blob %s\tcm.yaml\n160000 commit %s\tsub\n040000 tree %s\tvendor\n' "$cms" \
	2222222222222222222222222222222222222222 "$vend" | tree submod)" || t_bail "cannot build the submodule repository"

# distro REPO [SUBPATH]: d/distro.yaml with one package whose source is REPO
distro() {
	rm -rf "$T/d"
	mkdistro d <<EOF
idpmake: 1
name: hostile
packages:
  evil:
    type: manifests
    git: {url: file://$T/src/$1.git, ref: main${2:+, path: $2}}
    namespace: apps
EOF
}

escaped() { find "$T" -name 'idpmake-escaped.yaml' -not -path "$T/src/*" | head -5; }

# ---- trees named `..` -------------------------------------------------------------
distro dots
t_exit 1 "plan of a source with trees named '..' fails (exit 1)" timeout 60 "$IDPMAKE" -C d plan
t_eq "plan wrote nothing outside the source's cache" "" "$(escaped)"
t_grep "the error names the step and the bad path" "evil.*\.\." "$STDERR"
t_exit 1 "up fails too" timeout 60 "$IDPMAKE" -C d up
t_eq "up wrote nothing outside the source's cache" "" "$(escaped)"
t_ok "nothing was pushed" sh -c "! git -C d/.idpmake/gitops.git rev-parse -q --verify main:in-cluster/evil"

# ---- a tree named .git -------------------------------------------------------------
distro dotgit
t_exit 1 "plan of a source with a tree named .git fails (exit 1)" timeout 60 "$IDPMAKE" -C d plan
t_grep "naming .git" 'evil.*\.git' "$STDERR"
t_eq "no .git folder was written in the cache" "" "$(find "$T/d/.idpmake/cache/git/src" -name .git 2>/dev/null)"

# ---- symlinks out of the source ------------------------------------------------------
distro link
t_exit 1 "plan of a source with a symlink out of it fails (exit 1)" timeout 60 "$IDPMAKE" -C d plan
t_grep "naming the symlink, saying it points outside" "secret\.yaml.*outside" "$STDERR"
t_exit 1 "up fails too" timeout 60 "$IDPMAKE" -C d up
t_nogrep "the outside file was not rendered" "outside-secret" "$OUTPUT"
t_ok "nor pushed" sh -c "! git -C d/.idpmake/gitops.git grep -q outside-secret main -- 2>/dev/null"
distro link2
t_exit 1 "a symlink out of the source through a link to '.' fails too" timeout 60 "$IDPMAKE" -C d up
t_grep "naming it" "sneaky\.yaml.*outside" "$STDERR"
t_ok "and is not pushed" sh -c "! git -C d/.idpmake/gitops.git grep -q outside-secret main -- 2>/dev/null"
distro link3
t_exit 1 "a dangling symlink with '..' in it fails" timeout 60 "$IDPMAKE" -C d plan
t_grep "naming it" "dangle\.yaml.*outside" "$STDERR"

# ---- a symlink inside the source is fine ------------------------------------------------------
distro inside
t_ok "up of a source with a symlink inside it" timeout 60 "$IDPMAKE" -C d up
t_ok "renders its ConfigMap" git -C d/.idpmake/gitops.git cat-file -e main:in-cluster/evil/configmap.inside.yaml

# ---- submodules: left out, the rest checked out ------------------------------------------------
distro submod
t_ok "up of a source with submodules" timeout 60 "$IDPMAKE" -C d up
t_ok "renders its ConfigMap" git -C d/.idpmake/gitops.git cat-file -e main:in-cluster/evil/configmap.with-submodule.yaml
src=$(find "$T/d/.idpmake/cache/git/src" -mindepth 1 -maxdepth 1 -type d | head -1)
t_ok "the subfolder beside a submodule is checked out" test -f "$src/vendor/keep.txt"
t_ok "the submodules are not" sh -c "! test -e '$src/sub' && ! test -e '$src/vendor/lib'"

t_done
