#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Offline distros (issue 9 #9): `idpmake pack -o b.tar` writes one archive
# with the distro, the distro it extends, its git: source at the resolved
# commit and its Helm charts at their pinned versions (helm pull from a
# chart repository lighttpd serves), each with its digest.  Then every
# remote is made unreachable (the source repository moved away, lighttpd
# stopped) and `idpmake -f b.tar up` runs from the archive alone against a
# local bare GitOps remote and the Argo CD emulator: the `render: local`
# chart is rendered from the bundled .tgz, the Argo CD-rendered chart is
# mirrored into the GitOps repository and its Application is a path source
# there.  Hostile archives (a member ../x or /tmp/x, a symlink, a digest
# mismatch, a member missing from the archive) are refused, naming the
# member, exit 2, and nothing lands outside the bundle folder.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"
export IDPMAKE_ARGOCD_POLL_MS=50 IDPMAKE_ARGOCD_BACKOFF_MS=10

# ---- a chart repository served by lighttpd -------------------------------
mkdir -p repo src/webapp/templates
printf 'apiVersion: v2\nname: webapp\nversion: 1.0.0\n' >src/webapp/Chart.yaml
printf 'greeting: hello\n' >src/webapp/values.yaml
cat >src/webapp/templates/configmap.yaml <<'CHART'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
  greeting: {{ .Values.greeting | quote }}
CHART
t_ok "helm package webapp 1.0.0" helm package src/webapp -d repo
start_chart_repo "$T/repo"

# ---- a git source over file:// -------------------------------------------
git init -q -b main work
mkmanifest work/pkg/cm.yaml ConfigMap from-git apps
git init -q --bare -b main "$T/src.git" || t_bail "git init failed"
{ git -C work add -A && git -C work commit -q -m one && git -C work push -q "$T/src.git" main; } ||
	t_bail "cannot push the source"
commit=$(git -C work rev-parse HEAD)

# ---- the GitOps remote and Argo CD ---------------------------------------
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 50 --health-ms 50 --reconcile-ms 20
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN

# ---- the distro, extending a base ----------------------------------------
mkdistro base <<DISTRO
idpmake: 1
name: base
packages:
  basens:
    type: manifests
    path: manifests
DISTRO
mkmanifest base/manifests/ns.yaml Namespace from-base
mkdistro d <<DISTRO
idpmake: 1
name: offline
extends: ../base
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  ext:
    type: manifests
    git: {url: "file://$T/src.git", ref: main, path: pkg}
  web:
    type: helm
    render: local
    chart: {repo: "$REPO", name: webapp, version: 1.0.0}
    set: {greeting: rendered-here}
  mirror:
    type: helm
    chart: {repo: "$REPO", name: webapp, version: 1.0.0}
    set: {greeting: rendered-by-argo}
    sync: {wait: synced}
DISTRO

t_ok "pack -o b.tar" idpmake -C d pack -o "$T/b.tar"
t_grep "pack says what it wrote" 'packed [0-9]+ files into .*b\.tar' "$STDOUT"
tar -tf b.tar >members.txt 2>&1
t_eq "the index is the first member" idpmake-pack.txt "$(head -1 members.txt)"
t_grep "the distro is in it" '^distro/0/distro\.yaml$' members.txt
t_grep "the distro it extends is in it, with its files" '^distro/1/manifests/ns\.yaml$' members.txt
t_grep "the git source's files are in it" '^git/0/cm\.yaml$' members.txt
t_grep "the chart's .tgz is in it" '^charts/0/webapp-1\.0\.0\.tgz$' members.txt
tar -xOf b.tar idpmake-pack.txt >index.txt
t_grep "the git source at its resolved commit" "^git $commit git/0 file://$T/src.git main pkg\$" index.txt
t_grep "the chart at its pinned version" "^chart charts/0/webapp-1\\.0\\.0\\.tgz $REPO webapp 1\\.0\\.0\$" index.txt
t_grep "each file with its digest" '^file [0-9a-f]{32} [0-9]+ charts/0/webapp-1\.0\.0\.tgz$' index.txt
t_eq "the chart is the .tgz helm pulled" "$(sha256sum <repo/webapp-1.0.0.tgz)" "$(tar -xOf b.tar charts/0/webapp-1.0.0.tgz | sha256sum)"
t_ok "pack into the distro's folder (the default name)" idpmake -C d pack
t_ok "pack there again" idpmake -C d pack
tar -tf d/idpmake-pack.tar >again.txt 2>&1
t_grep "the archive has the distro" '^distro/0/distro\.yaml$' again.txt
t_nogrep "and not the archive of the first pack" 'idpmake-pack\.tar' again.txt
rm -f d/idpmake-pack.tar

# ---- every remote unreachable --------------------------------------------
kill "$CHART_REPO_PID" 2>/dev/null; wait "$CHART_REPO_PID" 2>/dev/null
t_eq "the chart repository is down" 000 "$(http_code "$REPO/index.yaml")"
mv "$T/src.git" "$T/src.gone"
mv d d.gone && mv base base.gone && mkdir off && mv b.tar off/ || t_bail "cannot move the distro away"

t_ok "-f b.tar up runs from the archive alone" idpmake -C off -f b.tar up
t_grep "every package synced" '4 synced' "$STDOUT"
show() { git --git-dir="$bare" show "main:in-cluster/$1"; }
show ext/configmap.from-git.yaml >ext.yaml 2>&1
t_grep "the git source came from the bundle" 'name: from-git' ext.yaml
show basens/namespace.from-base.yaml >basens.yaml 2>&1
t_grep "the extended distro's package came from the bundle" 'name: from-base' basens.yaml
show web/configmap.web-config.yaml >web.yaml 2>&1
t_grep "render: local: helm template of the bundled chart" 'chart: webapp-1.0.0' web.yaml
t_grep "with the package's values" 'greeting: "?rendered-here' web.yaml
show mirror/chart/Chart.yaml >chart.yaml 2>&1
t_grep "the chart is mirrored into the GitOps repository" '^name: webapp' chart.yaml
show mirror/chart/templates/configmap.yaml >tmpl.yaml 2>&1
t_grep "with its templates" 'Release.Name' tmpl.yaml
show mirror/application.yaml >app.yaml 2>&1
t_grep "the Application is a path source in the GitOps repository" "repoURL: \"?file://$bare" app.yaml
t_grep "at the mirrored chart's folder" 'path: "?in-cluster/mirror/chart' app.yaml
t_nogrep "no chart repository in it" "$REPO" app.yaml
curl -s -f "$emu/requests" >requests.json || t_bail "cannot read the emulator's request log"
t_eq "Argo CD got the path source, with the values" "file://$bare in-cluster/mirror/chart rendered-by-argo" "$(python3 - <<'PY'
import json
log = json.load(open("requests.json"))
for e in log:
    if e["method"] == "POST" and e["path"] == "/api/v1/applications" and e["body"]["metadata"]["name"].endswith("mirror"):
        s = e["body"]["spec"]["source"]
        print(s["repoURL"], s.get("path"), "rendered-by-argo" if "rendered-by-argo" in s["helm"]["values"] else "?")
PY
)"
t_ok "the same bundle again with --bundle" idpmake -C off --bundle b.tar plan
t_nogrep "nothing to render again" ':render' "$OUTPUT"

# ---- hostile archives ------------------------------------------------------
# hostile KIND: the real archive with KIND done to it, as hostile/KIND.tar
mkdir -p hostile
hostile() {
	python3 - "$T/off/b.tar" "$T/hostile/$1.tar" "$1" <<'PY'
import io, sys, tarfile
src, dst, kind = sys.argv[1:]
with tarfile.open(src) as t:
    members = [(m, t.extractfile(m).read()) for m in t.getmembers()]
with tarfile.open(dst, "w", format=tarfile.PAX_FORMAT) as out:
    for i, (m, data) in enumerate(members):
        if kind == "digest" and m.name == "distro/0/distro.yaml":
            data = data.replace(b"offline", b"changed")
        if kind == "missing" and m.name == "git/0/cm.yaml":
            continue
        out.addfile(m, io.BytesIO(data))
        if i == 0 and kind in ("dotdot", "absolute", "symlink"):
            x = tarfile.TarInfo({"dotdot": "../x", "absolute": "/tmp/idpmake-t8350-x", "symlink": "distro/0/evil"}[kind])
            if kind == "symlink":
                x.type, x.linkname = tarfile.SYMTYPE, "/etc"
                out.addfile(x)
            else:
                x.size = 3
                out.addfile(x, io.BytesIO(b"hi\n"))
PY
}
for k in dotdot absolute symlink digest missing; do
	hostile $k || t_bail "cannot make the $k archive"
done
t_exit 2 "a member named ../x is refused" idpmake -C hostile -f dotdot.tar up
t_grep "naming the member" "member '\\.\\./x'" "$STDERR"
t_ok "nothing was written beside the bundle folder" test ! -e "$T/hostile/.idpmake/bundle/x" -a ! -e "$T/hostile/x"
t_exit 2 "a member named /tmp/... is refused" idpmake -C hostile -f absolute.tar up
t_grep "naming the member" "member '/tmp/idpmake-t8350-x'" "$STDERR"
t_ok "nothing was written there" test ! -e /tmp/idpmake-t8350-x
t_exit 2 "a symlink is refused" idpmake -C hostile --bundle symlink.tar up
t_grep "naming the member" "member 'distro/0/evil' is not a regular file" "$STDERR"
t_ok "no symlink was made" test ! -L "$T/hostile/.idpmake/bundle/unpacked/distro/0/evil"
t_exit 2 "a digest mismatch is refused" idpmake -C hostile -f digest.tar up
t_grep "naming the member" "member 'distro/0/distro\\.yaml' does not match its digest" "$STDERR"
t_exit 2 "a member missing from the archive is refused" idpmake -C hostile -f missing.tar up
t_grep "naming the member" "member 'git/0/cm\\.yaml' of the index is missing" "$STDERR"
t_ok "a refused bundle leaves no unpacked copy" test ! -e "$T/hostile/.idpmake/bundle/unpacked"

t_exit 2 "a bundle that is not there" idpmake -C off --bundle nope.tar plan
t_grep "names the file and the cause" "error: bundle nope\.tar: cannot read it: No such file or directory" "$STDERR"
t_exit 2 "pack from a bundle is refused" idpmake -C off -f b.tar pack
t_grep "naming the archive" "^idpmake: b\.tar is a bundle already" "$STDERR"

t_done
