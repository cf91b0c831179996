#!/bin/bash
# Renders once, stored once (fleet.md): a package that goes to several
# clusters with the same inputs is rendered once a run (counted with a
# kubectl wrapper that logs its calls) and, on linked clusters, written once
# to _shared/PACKAGE; `plan` says "render PKG (for N clusters)", and a package
# that uses a per-cluster variable renders once per distinct value, in one
# folder per group of clusters with that value (_shared/PACKAGE-XXXXXXXX);
# changing one cluster's value re-renders only that cluster and moves it, and
# a folder no cluster uses any more is removed. With Argo CD (the emulator),
# the Applications of a group's clusters point at their group's folder, and a
# change of the package's files is one render per group and one commit; an
# ApplicationSet's elements name the group's folder. A group folder's name is
# the hash of the values (pinned); one that another package's _shared/NAME
# takes leaves the group per-cluster folders; git.path as written still lets
# clusters that render alike share its folder.
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v kubectl >/dev/null || t_bail "kubectl missing: run ./configure --install-deps"

# a kubectl that logs each call, then runs the real one
real=$(command -v kubectl)
mkdir -p bin
cat >bin/kubectl <<EOF
#!/bin/sh
echo "\$*" >>"$T/kubectl.calls"
exec "$real" "\$@"
EOF
chmod +x bin/kubectl
export PATH=$T/bin:$PATH
calls() { if [ -f "$T/kubectl.calls" ]; then grep -c '^kustomize' "$T/kubectl.calls"; else echo 0; fi; }

mkdir -p d/packages/web d/packages/regional
cd d || exit 1
cat >distro.yaml <<'EOF'
idpmake: 1
name: once
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
  us-2: {server: "https://us-2.example:6443", vars: {region: us}}
packages:
  web:
    type: kustomize
    path: packages/web
  regional:
    type: manifests
    path: packages/regional
    rewrite: [{match: REGION, replace: "${region}"}]
EOF
cat >packages/web/kustomization.yaml <<'EOF'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [cm.yaml]
EOF
mkmanifest packages/web/cm.yaml ConfigMap web
cat >packages/regional/cm.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: regional}
data:
  region: REGION
EOF

t_ok "plan" idpmake plan
t_grep "plan: one line for web on 4 clusters" '^render +web \(for 4 clusters\): never rendered' "$OUTPUT"
t_grep "plan: one line per distinct value of the variable" '^render +regional \(for 2 clusters\)' "$OUTPUT"
t_eq "plan: two groups for regional (eu, us)" 2 "$(grep -c 'regional (for 2 clusters)' "$OUTPUT")"
t_nogrep "plan: no per-cluster render lines left" '^render +[a-z0-9-]+/' "$OUTPUT"

t_ok "cold up" idpmake up
t_eq "kubectl kustomize ran once for 4 clusters" 1 "$(calls)"
t_grep "summary counts 3 distinct renders" 'idpmake: 3 rendered' "$OUTPUT"
t_eq "three steps took another's render" 5 "$(grep -c 'the same render as' "$OUTPUT")"

git clone -q .idpmake/gitops.git "$T/co" || t_bail "clone of the GitOps repository failed"
# linked clusters (the default) share one folder for web, which renders alike on all
[ -f "$T/co/_shared/web/configmap.web.yaml" ]
t_report $? "web is one folder, _shared/web"
for c in eu-1 eu-2 us-1 us-2; do
	[ ! -e "$T/co/$c/web" ]
	t_report $? "no copy of web under $c/"
done
t_eq "the push changed 5 folders, web once" 1 "$(git -C "$T/co" show --stat --format= HEAD | grep -c '_shared/web/')"
# regional: one folder per group of clusters with the same region
folders() { git -C "$T/co" ls-files | sed -n 's|^\([^/]*/regional[^/]*\)/.*|\1|p' | sort -u | tr '\n' ' '; }
t_eq "regional: two group folders, none per cluster" 2 "$(folders | wc -w)"
folders | tr ' ' '\n' >"$T/folders"
t_nogrep "regional: no per-cluster folder" '^[a-z]' "$T/folders"
eu=$(cd "$T/co" && grep -l 'region: eu' _shared/regional-*/configmap.regional.yaml | sed 's|/configmap.regional.yaml||')
us=$(cd "$T/co" && grep -l 'region: us' _shared/regional-*/configmap.regional.yaml | sed 's|/configmap.regional.yaml||')
t_ok "one eu folder and one us folder" test -n "$eu" -a -n "$us" -a "$eu" != "$us"
# the name is the hash of the values the package uses (namespace, region=eu): pinned, so it is
# the same on every run and machine and no release renames the folders of a repository
t_eq "the eu group's folder name is the same as ever" _shared/regional-6a755fbb "$eu"

t_ok "no-op" idpmake up
t_eq "no-op: kubectl not run again" 1 "$(calls)"
t_grep "no-op: nothing rendered" 'idpmake: 0 rendered' "$OUTPUT"

# one cluster's variable changes: only that cluster's regional renders
sed -i 's/us-2: {server: "https:\/\/us-2.example:6443", vars: {region: us}}/us-2: {server: "https:\/\/us-2.example:6443", vars: {region: ap}}/' distro.yaml
t_ok "plan after us-2's region changed" idpmake plan
t_grep "plan: us-2/regional re-renders" '^render +us-2/regional:render' "$OUTPUT"
t_nogrep "plan: web does not re-render" 'web' "$OUTPUT"
t_nogrep "plan: other clusters' regional do not re-render" '(eu-1|eu-2|us-1)/regional:render' "$OUTPUT"
t_grep "plan: the us group's folder, used by no cluster now, is removed" "^remove $us/ " "$OUTPUT"
t_ok "up after the change" idpmake up
t_grep "one render" 'idpmake: 1 rendered' "$OUTPUT"
t_eq "kubectl still ran once in all" 1 "$(calls)"
git -C "$T/co" pull -q || t_bail "pull failed"
# us-1 and us-2 no longer render alike: each has its own folder; the us group's folder is gone
t_eq "regional: the eu group folder and two own folders" "$eu us-1/regional us-2/regional " "$(folders)"
t_grep "us-2 has its new value" 'region: ap' "$T/co/us-2/regional/configmap.regional.yaml"
t_grep "us-1 keeps its value" 'region: us' "$T/co/us-1/regional/configmap.regional.yaml"
t_ok "the us group's folder is removed" test ! -e "$T/co/$us"
t_ok "no-op after the move" idpmake up
t_grep "no-op after the move: nothing rendered" 'idpmake: 0 rendered' "$OUTPUT"

# a shared render that fails fails every cluster that takes it, once
echo 'resources: [missing.yaml]' >>packages/web/kustomization.yaml
t_exit 1 "a broken shared render fails the run" idpmake -k 0 up
t_eq "the broken render ran kubectl once more" 2 "$(calls)"
t_eq "every cluster's web render is reported failed" 4 "$(grep -c '^FAILED: [a-z0-9-]*/web:render' "$OUTPUT")"
t_eq "three of them name the render they took" 3 "$(grep -c 'the same render on [a-z0-9-]*/web:render failed' "$OUTPUT")"

# ---- a group folder's name another package already has: that group keeps per-cluster folders ----
cd "$T" || exit 1
mkdistro h <<'EOF'
idpmake: 1
name: clash
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
packages:
  regional:
    type: manifests
    path: packages/regional
    rewrite: [{match: REGION, replace: "${region}"}]
  regional-6a755fbb:
    type: manifests
    path: packages/other
EOF
mkdir -p h/packages/regional
cp d/packages/regional/cm.yaml h/packages/regional/cm.yaml
mkmanifest h/packages/other/cm.yaml ConfigMap other
t_ok "up with a package named like a group folder" idpmake -C h up
hfolders=$(git --git-dir=h/.idpmake/gitops.git ls-tree -r --name-only HEAD | grep -v '^\.' | sed 's|/[^/]*$||' | sort -u | tr '\n' ' ')
t_eq "clash: the package has _shared/NAME, the eu group per-cluster folders" \
	"_shared/regional-6a755fbb eu-1/regional eu-2/regional us-1/regional " "$hfolders"
t_ok "clash: _shared/regional-6a755fbb holds the package of that name" \
	sh -c "git --git-dir=h/.idpmake/gitops.git show HEAD:_shared/regional-6a755fbb/configmap.other.yaml | grep -q 'name: other'"

# ---- git.path as written: clusters that render alike may share its folder ----
mkdistro p <<'EOF'
idpmake: 1
name: bypath
git: {path: "${region}/${package}"}
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
packages:
  regional:
    type: manifests
    path: packages/regional
    rewrite: [{match: REGION, replace: "${region}"}]
EOF
mkdir -p p/packages/regional
cp d/packages/regional/cm.yaml p/packages/regional/cm.yaml
t_ok "up with git.path \${region}/\${package}" idpmake -C p up
t_grep "git.path: 2 renders" 'idpmake: 2 rendered' "$OUTPUT"
pfolders=$(git --git-dir=p/.idpmake/gitops.git ls-tree -r --name-only HEAD | grep -v '^\.' | sed 's|/[^/]*$||' | sort -u | tr '\n' ' ')
t_eq "git.path: the user's folders, no _shared" "eu/regional us/regional " "$pfolders"

cd "$T" || exit 1

# ---- with Argo CD: 3 clusters, two alike -> 2 folders, 2 renders ----------
start_gitops_argocd --cluster eu-1=https://eu-1.example:6443 --cluster eu-2=https://eu-2.example:6443 \
	--cluster us-1=https://us-1.example:6443
mkdistro f <<EOF
idpmake: 1
name: groups
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
packages:
  regional:
    type: manifests
    path: packages/regional
    rewrite: [{match: REGION, replace: "\${region}"}]
EOF
mkdir -p f/packages/regional
cat >f/packages/regional/cm.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: regional}
data:
  region: REGION
EOF
cd f || exit 1
# CLUSTER: the source path of the cluster's regional Application in Argo CD
app_path() {
	curl -sS -f "$emu/apps" | python3 -c 'import json, sys
for a in json.load(sys.stdin):
    if a["spec"]["destination"].get("server") == "https://%s.example:6443" % sys.argv[1]:
        print(a["spec"]["source"]["path"])' "$1"
}
rfolders() { git -C "$T/co2" ls-files | grep -v '^\.' | sed 's|/[^/]*$||' | sort -u | tr '\n' ' '; }
commits() { git -C "$bare" rev-list --count main; }
t_ok "up (argocd)" idpmake up
t_grep "argocd: 2 renders for 3 clusters" 'idpmake: 2 rendered' "$OUTPUT"
git clone -q "$bare" "$T/co2" || t_bail "clone failed"
t_eq "argocd: 2 folders" 2 "$(rfolders | wc -w)"
rfolders | tr ' ' '\n' >"$T/rfolders"
t_grep "argocd: us-1 alone keeps its own folder" '^us-1/regional$' "$T/rfolders"
p1=$(app_path eu-1) p2=$(app_path eu-2)
t_ok "argocd: eu-1's Application points at a _shared group folder" test "${p1#_shared/regional-}" != "$p1"
t_eq "argocd: eu-2's Application points at the same folder" "$p1" "$p2"
t_ok "argocd: that folder holds the eu render" grep -q 'region: eu' "$T/co2/$p1/configmap.regional.yaml"
t_eq "argocd: us-1's Application points at its own folder" us-1/regional "$(app_path us-1)"
# an empty state folder: the keys index gives back both groups' renders
before=$(commits)
rm -rf .idpmake
t_ok "up with an empty state folder" idpmake up -v
t_grep "empty state: nothing rendered, nothing pushed" 'idpmake: 0 rendered, nothing pushed' "$OUTPUT"
t_grep "empty state: the 3 renders reconstructed" '3 renders reconstructed from .idpmake/keys' "$OUTPUT"
t_eq "empty state: no new commit" "$before" "$(commits)"

# a change of the package's files: one render per group, one commit, same folders
before=$(commits)
echo '  extra: "1"' >>packages/regional/cm.yaml
t_ok "up after a file change" idpmake up
t_grep "file change: one render per group" 'idpmake: 2 rendered' "$OUTPUT"
t_eq "file change: one commit" $((before + 1)) "$(commits)"
git -C "$T/co2" pull -q || t_bail "pull failed"
t_eq "file change: the folders stay" "$p1 us-1/regional " "$(rfolders)"
t_eq "file change: eu-2 still points at the group folder" "$p1" "$(app_path eu-2)"

# us-1 takes region eu: all three alike, one folder, its own folder goes
sed -i 's/region: us}/region: eu}/' distro.yaml
t_ok "up after us-1 joined eu" idpmake up
git -C "$T/co2" pull -q || t_bail "pull failed"
t_eq "all three alike: one folder, _shared/regional" "_shared/regional " "$(rfolders)"
t_eq "us-1's Application moved to it" _shared/regional "$(app_path us-1)"
t_eq "eu-1's Application moved to it" _shared/regional "$(app_path eu-1)"
# eu-2 takes region ap: eu-1 and us-1 form the eu group again, at its first name
sed -i 's|eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}|eu-2: {server: "https://eu-2.example:6443", vars: {region: ap}}|' distro.yaml
t_ok "up after eu-2 left" idpmake up
git -C "$T/co2" pull -q || t_bail "pull failed"
t_eq "the eu group is back in its folder, eu-2 in its own" "$p1 eu-2/regional " "$(rfolders)"
t_eq "eu-1 points at it" "$p1" "$(app_path eu-1)"
t_eq "us-1 points at it" "$p1" "$(app_path us-1)"
t_eq "eu-2 points at its own folder" eu-2/regional "$(app_path eu-2)"

# ---- fleet: applicationset: the elements of a group name its folder ----------
cd "$T" || exit 1
mkdistro g <<EOF
idpmake: 1
name: sets
git: {remote: "$bare", branch: sets}
argocd: {repo-url: "file://$bare", fleet: applicationset}
clusters:
  eu-1: {server: "https://eu-1.example:6443", vars: {region: eu}}
  eu-2: {server: "https://eu-2.example:6443", vars: {region: eu}}
  us-1: {server: "https://us-1.example:6443", vars: {region: us}}
packages:
  zone:
    type: manifests
    path: packages/zone
    rewrite: [{match: REGION, replace: "\${region}"}]
EOF
mkdir -p g/packages/zone
cp f/packages/regional/cm.yaml g/packages/zone/cm.yaml
cd g || exit 1
t_ok "up through an ApplicationSet" idpmake up
t_grep "applicationset: 2 renders for 3 clusters" 'idpmake: 2 rendered' "$OUTPUT"
# "cluster=folder ..." of the ApplicationSet's elements
elements=$(curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applicationsets/zone" |
	python3 -c 'import json, sys
s = json.load(sys.stdin)
print(" ".join(sorted("%s=%s" % (e["cluster"], e["path"]) for e in s["spec"]["generators"][0]["list"]["elements"])))')
zf=$(git -C "$bare" ls-tree --name-only sets:_shared | grep '^zone-')
t_ok "applicationset: one group folder on the branch" test -n "$zf"
t_eq "applicationset: eu-1 and eu-2 name the group folder, us-1 its own" \
	"eu-1=_shared/$zf eu-2=_shared/$zf us-1=us-1/zone" "$elements"
t_done
