#!/bin/bash
# The keys index (.idpmake/keys) publishes every render key in the GitOps
# repository; a key hashes the package's spec, which held a git: source's
# URL with its password (or a token as its user): a fast hash of a secret,
# on every clone.  Two runs whose distros differ only in that password must
# publish the same key.  Run offline from archives (pack.h) whose git:
# source is the same commit under the two URLs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PYTHONPATH=$top/tests/e2e/py python3 -c 'import sys, xxh3; sys.exit(not xxh3.available())' ||
	t_skip_rest "no libxxhash for python3 ctypes (the test writes archives with their digests)"


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
	python3 "$top/tests/e2e/py/mkpack.py" "$run/tree" "$run/b.tar" "git $commit git/0 $url main ." || t_bail "cannot write the archive"
	t_ok "up from the $run archive" idpmake -C "$run" -f b.tar up
	git --git-dir="$T/$run.git" show main:.idpmake/keys >"$T/keys-$run" || t_bail "no keys index"
	t_nogrep "the $run index holds no password" "$pw" "$T/keys-$run"
done
t_grep "the index names the folder" '^in-cluster/web [0-9a-f]{32} ' "$T/keys-one"
t_eq "the two runs publish the same render key (the password is no input)" \
	"$(awk '$1 == "in-cluster/web" {print $2}' "$T/keys-one")" "$(awk '$1 == "in-cluster/web" {print $2}' "$T/keys-two")"
t_nostring "no password under the first state folder" "$(cat "$T/pw-one")" one/.idpmake/state.db

t_done
