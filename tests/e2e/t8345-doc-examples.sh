#!/bin/bash
# The examples' READMEs tell the truth (issue 25 "Docs", a doc-test as
# rustdoc's): every command block of examples/*/README.md (lines indented
# four spaces, the first a `cd examples/...`) runs as written, line by line,
# from a scratch copy of the repository's examples, with the idpmake under
# test on PATH; a line that fails fails the block, naming the line.  A line
# marked "(internet)" cannot run here: it and the rest of its block are
# skipped, saying so.  Every example has a README.md with such a block.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p top bin
cp -R "$top/examples" top/ || t_bail "cannot copy the examples"
rm -rf top/examples/*/.idpmake top/examples/*/out
printf '#!/bin/sh\nexec "%s" "$@"\n' "$IDPMAKE" >bin/idpmake && chmod +x bin/idpmake
export PATH=$T/bin:$PATH

for ex in "$top"/examples/*/; do
	name=$(basename "$ex")
	readme=$ex/README.md
	t_ok "examples/$name has a README.md" test -f "$readme" || continue
	# the blocks: runs of lines indented four spaces, as python cuts them
	python3 - "$readme" "$T/blocks-$name" <<'EOF' || t_bail "cannot read $readme"
import os, sys
lines = open(sys.argv[1]).read().split("\n")
os.makedirs(sys.argv[2], exist_ok=True)
blocks, cur = [], []
for l in lines + [""]:
    if l.startswith("    "):
        cur.append(l[4:])
    elif cur and l.strip() == "":
        cur.append("")
    else:
        while cur and not cur[-1]:
            cur.pop()
        if cur and cur[0].startswith("cd examples/"):
            blocks.append(cur)
        cur = []
for i, b in enumerate(blocks):
    open(os.path.join(sys.argv[2], "%d" % i), "w").write("\n".join(b) + "\n")
EOF
	n=0
	for b in "$T/blocks-$name"/*; do
		[ -f "$b" ] || continue
		n=$((n + 1))
		{
			echo "cd '$T/top' || exit 1"
			while IFS= read -r line; do
				[ -n "$line" ] || continue
				case $line in
				*'(internet)'*)
					echo "echo 'skipped from here: $(printf '%s' "$line" | tr -d "'")' >&3; exit 0"
					break
					;;
				esac
				# the check on a line of its own: a `# comment` on the line
				# would swallow a `|| ...` after it
				# shellcheck disable=SC2016
				printf '%s\nst=$?; [ $st = 0 ] || { echo "this line failed (exit $st): %s" >&2; exit 1; }\n' \
					"$line" "$(printf '%s' "$line" | tr -d '"$`\\')"
			done <"$b"
		} >"$b.sh"
		t_ok "examples/$name/README.md: block $n runs as written" bash "$b.sh" 3>"$b.skip"
		if [ -s "$b.skip" ]; then
			t_skip "examples/$name/README.md: block $n: $(cat "$b.skip") (needs the internet)"
		fi
	done
	[ "$n" -gt 0 ]
	t_report $? "examples/$name/README.md has a block of commands to run"
done
t_done
