#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# explain names the cause (issue 32 item 7): a changed variable by name with
# its old and new value, one that looks secret masked as *** (and never in
# the state); a changed file by its path; a changed distro field by its path.
# A hook is keyed on the variables it reads (IDPMAKE_VAR_NAME in its run, its
# scripts and inputs, or its vars: list), not on every variable: a variable
# only package a uses does not rerun package b's hook, and explain says why a
# hook reruns.  A hook that reads variables by a name idpmake cannot see keeps
# them all.  A state recorded before values were is explained as before; a
# hook recorded with the key of before (every variable) does not run again.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: causes
vars:
  region: eu-west-1
  replicas: "2"
  api_token: hunter2-original
  tier: gold
packages:
  a:
    type: manifests
    path: packages/a
    namespace: apps-${region}
    hooks:
      post:
        - name: tell
          run: 'echo "$IDPMAKE_VAR_REGION" >>out/a.txt'
  b:
    type: manifests
    path: packages/b
    namespace: data
    hooks:
      post:
        - name: count
          run: ./hooks/count.sh
        - name: all
          run: 'env | grep "^IDPMAKE_" >/dev/null; echo all >>out/all.txt'
EOF
mkdir -p d/out d/hooks
cat >d/hooks/count.sh <<'EOF'
#!/bin/sh
echo "$IDPMAKE_VAR_REPLICAS ${#IDPMAKE_VAR_API_TOKEN}" >>out/b.txt
EOF
cat >d/hooks/listed.sh <<'EOF'
#!/bin/sh
exec ./hooks/helper
EOF
printf '#!/bin/sh\necho listed >>out/listed.txt\n' >d/hooks/helper
chmod +x d/hooks/count.sh d/hooks/listed.sh d/hooks/helper
mkmanifest d/packages/a/cm.yaml ConfigMap a
mkmanifest d/packages/b/cm.yaml ConfigMap b

im() { idpmake -C "$T/d" "$@"; }
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

t_ok "first up" im up
t_eq "b's count hook ran" 1 "$(lines d/out/b.txt)"

# ---- a variable only package a uses --------------------------------------------------
sed -i 's/region: eu-west-1/region: us-east-1/' d/distro.yaml
t_ok "plan after changing region" im plan
cp "$STDOUT" "$T/plan1.txt"
t_grep "a's render runs, for the variable by name" 'in-cluster/a:render: var region changed' "$T/plan1.txt"
t_nogrep "b's count hook does not run: it reads no region" 'in-cluster/b:post:count' "$T/plan1.txt"
t_grep "b's hook that reads every IDPMAKE_ variable does, and says why" 'in-cluster/b:post:all: var region changed' "$T/plan1.txt"
t_ok "explain a" im explain a
cp "$STDOUT" "$T/explain1.txt"
t_grep "names the variable" 'changed  var region' "$T/explain1.txt"
t_grep "with its old and new value" "'eu-west-1' -> 'us-east-1'" "$T/explain1.txt"
t_nogrep "not the aggregate of the variables" 'changed  vars$' "$T/explain1.txt"
t_ok "up" im up
t_eq "b's count hook did not run again" 1 "$(lines d/out/b.txt)"
t_eq "a hook that reads every IDPMAKE_ variable ran again" 2 "$(lines d/out/all.txt)"
t_eq "a's hook ran again" 2 "$(lines d/out/a.txt)"

# ---- a variable b's script reads -----------------------------------------------------------
sed -i 's/replicas: "2"/replicas: "3"/' d/distro.yaml
t_ok "explain b's count hook" im explain in-cluster/b:post:count
cp "$STDOUT" "$T/explain2.txt"
t_grep "it would run, for the variable its script reads" 'in-cluster/b:post:count: would run: var replicas changed' "$T/explain2.txt"
t_grep "with its old and new value" "'2' -> '3'" "$T/explain2.txt"
t_ok "up" im up
t_eq "b's count hook ran" 2 "$(lines d/out/b.txt)"

# ---- a secret-looking variable ---------------------------------------------------------------
sed -i 's/api_token: hunter2-original/api_token: hunter2-rotated/' d/distro.yaml
t_ok "explain after changing api_token" im explain in-cluster/b:post:count
cp "$STDOUT" "$T/explain3.txt"
t_grep "names the variable" 'would run: var api_token changed' "$T/explain3.txt"
t_grep "its values masked" '\*\*\* -> \*\*\*' "$T/explain3.txt"
t_nogrep "no old value in clear" 'hunter2-original' "$T/explain3.txt"
t_nogrep "no new value in clear" 'hunter2-rotated' "$T/explain3.txt"
t_ok "up" im up
t_eq "the state holds neither value" 0 "$(cat d/.idpmake/state.db* | grep -a -c hunter2)"

# ---- a file: the hook's script, a package's file -----------------------------------------------
echo '# edited' >>d/hooks/count.sh
t_ok "explain after editing the script" im explain in-cluster/b:post:count
t_grep "names the script by its path" 'changed  script \./hooks/count\.sh' "$STDOUT"
echo '# edited' >>d/packages/b/cm.yaml
t_ok "explain b's render after editing a file" im explain b
t_grep "names the file by its path" 'changed  packages/b/cm\.yaml' "$STDOUT"
t_ok "up" im up

# ---- a distro field ---------------------------------------------------------------------------
sed -i 's/namespace: data/namespace: data2/' d/distro.yaml
t_ok "plan after changing b's namespace" im plan
t_grep "the reason names the field's path" 'in-cluster/b:render: distro packages\.b\.namespace changed' "$STDOUT"
t_ok "explain b" im explain b
t_grep "explain names the field's path" 'changed  distro packages\.b\.namespace' "$STDOUT"
t_grep "with its old and new value" "'data' -> 'data2'" "$STDOUT"

# ---- a state recorded before values were: explained as before ------------------------------
# the hook's inputs gone (a row written before hooks recorded them), the render's
# without its variables and fields (hash.c encoding: u16 length, name, 16 bytes)
t_ok "up" im up
python3 - "$T/d/.idpmake/state.db" <<'EOF'
import sqlite3, struct, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE step SET inputs = NULL WHERE id = 'in-cluster/b:post:count'")
blob = c.execute("SELECT inputs FROM step WHERE id = 'in-cluster/a:render'").fetchone()[0]
out, i = b"", 0
while i < len(blob):
    n = struct.unpack(">H", blob[i:i + 2])[0]
    name, h = blob[i + 2:i + 2 + n], blob[i + 2 + n:i + 18 + n]
    i += 18 + n
    if not name.startswith((b"var ", b"distro ")):
        out += struct.pack(">H", len(name)) + name + h
c.execute("UPDATE step SET inputs = ? WHERE id = 'in-cluster/a:render'", (out,))
c.commit()
EOF
sed -i 's/replicas: "3"/replicas: "5"/; s/region: us-east-1/region: us-west-2/' d/distro.yaml
t_ok "explain b's count hook, recorded without its inputs" im explain in-cluster/b:post:count
t_grep "the reason of before" 'in-cluster/b:post:count: would run: hook or package changed' "$STDOUT"
t_nogrep "no input named" 'var replicas' "$STDOUT"
t_ok "explain a's render, recorded without variables" im explain a
t_grep "the aggregate's hashes, as before" 'changed  vars' "$STDOUT"
t_nogrep "no variable named" 'var region|distro ' "$STDOUT"
t_ok "up" im up
t_ok "explain after it: the variable named again" im explain in-cluster/b:post:count
sed -i 's/replicas: "5"/replicas: "3"/' d/distro.yaml
t_ok "explain after the next change" im explain in-cluster/b:post:count
t_grep "names the variable" "'5' -> '3'" "$STDOUT"

# ---- a hook recorded with the key of before: every variable in it ------------------------
# The state's cache of what a script names, made to say "a name idpmake cannot
# see", keys the hook on every variable: the key an idpmake before this one
# recorded.  With the cache gone, its key holds the variables it reads; the
# recorded one is still the key of before, unchanged: up to date, no rerun.
mkdistro u <<'EOF'
idpmake: 1
name: upgrade
vars:
  size: small
  other: x
packages:
  u:
    type: manifests
    path: packages/u
    hooks:
      post:
        - name: once
          run: ./once.sh
          when: once
EOF
cat >u/once.sh <<'EOF'
#!/bin/sh
echo "$IDPMAKE_VAR_SIZE ${IDPMAKE_VAR_EXTRA:-none}" >>out.txt
EOF
chmod +x u/once.sh
mkmanifest u/packages/u/cm.yaml ConfigMap u
um() { idpmake -C "$T/u" "$@"; }
sqlu() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$T/u/.idpmake/state.db" "$1"; }
t_ok "up" um up
t_eq "the once hook ran" 1 "$(lines u/out.txt)"
sqlu "UPDATE tool SET version = '. *' WHERE path LIKE 'hookvars:%once.sh'"
t_ok "up, the hook keyed on every variable" um up
t_eq "it ran with the new key" 2 "$(lines u/out.txt)"
sqlu "DELETE FROM tool WHERE path LIKE 'hookvars:%once.sh'"
t_ok "plan, keyed on what it reads, the state holding the key of before" um plan
t_nogrep "the once hook is up to date" 'u:post:once' "$STDOUT"
t_ok "up" um up
t_eq "it did not run" 2 "$(lines u/out.txt)"
sed -i 's/other: x/other: y/' u/distro.yaml
t_ok "up after changing a variable it does not read" um up
t_eq "it did not run" 2 "$(lines u/out.txt)"
sed -i 's/size: small/size: large/' u/distro.yaml
t_ok "explain after changing the variable it reads" um explain in-cluster/u:post:once
t_grep "it would run, for that variable" "would run: var size changed" "$STDOUT"
t_grep "old and new value" "'small' -> 'large'" "$STDOUT"
t_ok "up" um up
sed -i 's/^  other: y$/  other: y\n  extra: "1"/' u/distro.yaml
t_ok "explain after defining a variable it reads, undefined until now" um explain in-cluster/u:post:once
t_grep "it would run, for that variable" "would run: var extra added" "$STDOUT"

# ---- a hook's vars: list --------------------------------------------------------------------
# listed.sh runs a program idpmake does not read: vars: names what it reads
cat >>d/distro.yaml <<'EOF'
        - name: listed
          run: ./hooks/listed.sh
          vars: [tier]
EOF
t_ok "up with a hook with a vars: list" im up
t_eq "b's listed hook ran" 1 "$(lines d/out/listed.txt)"
sed -i 's/replicas: "3"/replicas: "4"/' d/distro.yaml
t_ok "explain b's listed hook after changing replicas" im explain in-cluster/b:post:listed
t_grep "it is up to date: replicas is not in its vars: list" 'in-cluster/b:post:listed: up to date' "$STDOUT"
sed -i 's/tier: gold/tier: silver/' d/distro.yaml
t_ok "explain b's listed hook after changing tier" im explain in-cluster/b:post:listed
t_grep "it would run, for the variable vars: names" "would run: var tier changed" "$STDOUT"
t_grep "old and new value" "'gold' -> 'silver'" "$STDOUT"
t_ok "up" im up
t_eq "b's listed hook ran" 2 "$(lines d/out/listed.txt)"

# a script with a NUL byte (a binary, or text a C string scan stops at): every variable, as before
printf '#!/bin/sh\n# \000\necho "$IDPMAKE_VAR_ZONE" >>out/nul.txt\n' >d/hooks/nul
chmod +x d/hooks/nul
cat >>d/distro.yaml <<'EOF'
        - name: nul
          run: ./hooks/nul
EOF
sed -i 's/^  tier: silver$/  tier: silver\n  zone: z1/' d/distro.yaml
t_ok "up with a hook whose script holds a NUL byte" im up
t_eq "it ran" 1 "$(lines d/out/nul.txt)"
sed -i 's/^  zone: z1$/  zone: z2/' d/distro.yaml
t_ok "explain it after changing the variable it reads past the NUL" im explain in-cluster/b:post:nul
t_grep "it would run: its key holds every variable" "would run: var zone changed" "$STDOUT"
t_ok "up" im up
t_eq "it ran again" 2 "$(lines d/out/nul.txt)"

sed -i 's/vars: \[tier\]/vars: [tier, "no good"]/' d/distro.yaml
t_exit 2 "a vars: entry that is not a variable name is refused" im plan
t_grep "at its file:line:col" 'distro\.yaml:[0-9]*:[0-9]*: error: hook vars .no good. is not a variable name' "$OUTPUT"

t_done
