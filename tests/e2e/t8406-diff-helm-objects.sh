#!/bin/bash
# diff, diff --rev (text, --json, the markdown PR comment) of a helm package
# that Argo CD renders: besides its application.yaml, the objects the chart
# renders, each side rendered here by the real `helm template` with the
# release name, namespace, values and version Argo CD would use, as
# PKG/helm-template/KIND.NAME.yaml: a values change, a new chart version
# (an object created), a Secret's values hidden.  Without helm, or for a
# chart field read back from the GitOps repository that helm would take as
# an option, the objects are not shown and a warning says why.  Every diff
# has one colour scheme (git diff's), plain diff too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"

# ---- a chart at two versions; 1.1.0 adds a Service ------------------------
# (the Secret's value is the chart's own default: it is in no Application)
mkdir -p src/webapp/templates repo
cat >src/webapp/templates/configmap.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Chart.Name }}-values
data:
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
  greeting: {{ .Values.greeting | quote }}
EOF
cat >src/webapp/templates/secret.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-db
stringData:
  password: {{ .Values.password | quote }}
EOF
printf 'apiVersion: v2\nname: webapp\nversion: 1.0.0\n' >src/webapp/Chart.yaml
echo 'password: chart-s3cr3t-1' >src/webapp/values.yaml
helm package src/webapp -d repo >/dev/null || t_bail "helm package 1.0.0"
sed -i 's/^version: .*/version: 1.1.0/' src/webapp/Chart.yaml
echo 'password: chart-s3cr3t-2' >src/webapp/values.yaml
cat >src/webapp/templates/service.yaml <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  ports: [{port: 80}]
EOF
mkdir -p src/webapp/crds
cat >src/webapp/crds/widgets.yaml <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
EOF
helm package src/webapp -d repo >/dev/null || t_bail "helm package 1.1.0"
start_chart_repo "$T/repo"

mkdistro d <<EOF
idpmake: 1
name: helmdiff
packages:
  web:
    type: helm
    chart: {repo: "$REPO", name: webapp, version: 1.0.0}
    values: [values/web.yaml]
    namespace: web
EOF
mkdir -p d/values
printf 'greeting: hello\n' >d/values/web.yaml
git -C d init -q && git -C d add -A && git -C d -c user.name=t -c user.email=t@t commit -qm one
t_ok "up pushes the Application" idpmake -C d up

# ---- a values change -------------------------------------------------------
printf 'greeting: hi\n' >d/values/web.yaml
t_ok "diff after a values change" idpmake -C d --color=never diff
t_grep "the Application's values change" '^\+ +greeting: hi' "$STDOUT"
t_grep "a header names the chart and helm template" '^# in-cluster/web/application.yaml: chart webapp 1\.0\.0, rendered here by helm template as Argo CD would: 1 object differs' "$STDOUT"
t_grep "the rendered ConfigMap's change is shown" '^\+\+\+ b/in-cluster/web/helm-template/configmap\.webapp-values\.yaml' "$STDOUT"
t_grep "with the value helm rendered from the new values" '^\+  greeting: "?hi' "$STDOUT"
t_nogrep "an object that renders the same is not shown" 'secret\.web-db' "$STDOUT"
t_nogrep "plain diff with --color=never has no escape" $'\033' "$STDOUT"
t_ok "diff --color=always" env -u NO_COLOR "$IDPMAKE" -C d --color=always diff
t_grep "added lines are green, as in diff --live and --rev" $'^\033\\[32m\\+' "$STDOUT"
t_grep "removed lines are red" $'^\033\\[31m-' "$STDOUT"
t_grep "hunk headers are cyan" $'^\033\\[36m@@' "$STDOUT"

# ---- diff --rev of a new chart version ----------------------------------------
git -C d -c user.name=t -c user.email=t@t commit -qam two
sed -i 's/version: 1.0.0/version: 1.1.0/' d/distro.yaml
t_ok "diff --rev HEAD~1 (values) and the work tree's version" idpmake -C d --color=never diff --rev HEAD~1
t_grep "--rev: the Service the new version adds is created" '^created in-cluster/web/helm-template/service\.web\.yaml' "$STDOUT"
t_grep "--rev: the chart's CRD is rendered, as Argo CD passes --include-crds" '^created in-cluster/web/helm-template/customresourcedefinition\.widgets\.example\.com\.yaml' "$STDOUT"
t_grep "--rev: the destination namespace reached helm" '^\+  namespace: web$' "$STDOUT"
t_grep "--rev: the ConfigMap changes" '^changed in-cluster/web/helm-template/configmap\.webapp-values\.yaml' "$STDOUT"
t_grep "--rev: the version reached helm" '^\+.*chart: webapp-1\.1\.0' "$STDOUT"
t_grep "--rev: the summary counts the rendered objects" '2 objects created, 3 changed' "$STDERR"
t_grep "the release name Argo CD would use reached helm" '^changed in-cluster/web/helm-template/secret\.web-db\.yaml' "$STDOUT"
t_grep "the Secret's value is hidden and said to differ" '^\+.*password: .hidden, differs' "$STDOUT"
t_nostring "--rev: no Secret value is printed" s3cr3t "$STDOUT" "$STDERR"
t_ok "diff --rev --format markdown" idpmake -C d diff --rev HEAD~1 --format markdown
t_grep "the PR comment holds the rendered objects" 'created <code>in-cluster/web/helm-template/service\.web\.yaml</code>' "$STDOUT"
t_ok "diff --rev --json" idpmake -C d diff --rev HEAD~1 --json
cp "$STDOUT" rev.json
t_ok "--json: the rendered objects are listed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
paths = {o["path"]: o["status"] for o in d["objects"]}
assert paths.get("in-cluster/web/helm-template/service.web.yaml") == "created", paths
assert d["charts_not_shown"] == [], d["charts_not_shown"]' rev.json

# ---- without helm: said plainly ------------------------------------------------
mkdir -p bin
for tool in sh git; do ln -sf "$(command -v $tool)" "bin/$tool"; done
t_ok "diff without helm on PATH" env PATH="$T/bin" "$IDPMAKE" -C d diff
t_grep "the Application's diff is still shown" '^\+.*targetRevision.*1\.1\.0' "$STDOUT"
t_grep "a warning says the objects are not shown, and why" 'warning: in-cluster/web/application.yaml: the objects of chart webapp 1\.0\.0 -> webapp 1\.1\.0 are not shown: helm is not installed' "$STDERR"
t_ok "diff --rev --json without helm" env PATH="$T/bin" "$IDPMAKE" -C d diff --rev HEAD~1 --json
t_grep "--json names the chart not shown" '"charts_not_shown": \[$' "$STDOUT"

# ---- a hostile Application in the GitOps repository ------------------------------
# Each case edits the pushed application.yaml (the old side) and pushes it;
# the diff must refuse it, saying why, and never hand it to helm.  A chart
# folder named like the hostile chart sits in the distro's folder: helm,
# which looks for a chart name as a path first, must not find it.
git clone -q d/.idpmake/gitops.git g
orig=$(cat g/in-cluster/web/application.yaml)
mkdir -p d/localchart/templates
printf 'apiVersion: v2\nname: localchart\nversion: 0.0.1\n' >d/localchart/Chart.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-local-chart}\n' >d/localchart/templates/cm.yaml
hostile() {	# DESC EXPECTED-REASON PROGRAM: the old side rewritten by the python PROGRAM (text in t, out t)
	printf '%s\n' "$orig" >g/in-cluster/web/application.yaml
	python3 -c "import sys; t = open(sys.argv[1]).read(); $3; open(sys.argv[1], 'w').write(t)" \
		g/in-cluster/web/application.yaml || t_bail "cannot edit the Application"
	git -C g -c user.name=x -c user.email=x@x commit -qam "$1" && git -C g push -q -f origin HEAD:main ||
		t_bail "cannot push the hostile Application"
	t_ok "diff against an Application whose $1" env TMPDIR="$T/tmp" "$IDPMAKE" -C d diff
	t_grep "$1: refused, with the reason" "warning: in-cluster/web/application.yaml: the objects of the chart are not shown: $2" "$STDERR"
	t_nogrep "$1: nothing rendered" 'helm-template|from-local-chart' "$OUTPUT"
}
mkdir -p tmp
hostile "chart is an option" "its chart is not a plain chart name" 't = t.replace("chart: webapp", "chart: \"--post-renderer=touch\"")'
hostile "chart is the parent folder" "its chart is not a plain chart name" 't = t.replace("chart: webapp", "chart: \"..\"")'
hostile "release is an option" "its release name is not a DNS name" 't = t.replace("releaseName: web", "releaseName: \"-x\"")'
hostile "version is an option" "its chart version is not a version" 't = t.replace("targetRevision: 1.0.0", "targetRevision: \"--x\"")'
hostile "namespace is a path" "its namespace is not a DNS label" 't = t.replace("namespace: web", "namespace: \"../x\"")'
hostile "repository is a file" "its chart repository is not an http\\(s\\) URL" 't = t.replace("repoURL: http", "repoURL: file:///etc/x")'
hostile "repository is another host" "its chart repository changed, and the old side.s is not fetched" 't = t.replace("repoURL: http://127.0.0.1", "repoURL: http://127.0.0.2")'
hostile "Helm source takes value files" "its Helm source sets .valueFiles." 't = t.replace("releaseName: web", "releaseName: web\n      valueFiles: [/etc/passwd]")'
hostile "file holds a second document" "the old side is not one Application with a Helm chart" 't = t + "---\nkind: ConfigMap\n"'
hostile "values are a map" "its Helm values are not text" 'import re; t = re.sub(r"values: \|\n(        .*\n)+", "values: {greeting: x}\n", t)'
t_eq "no temporary file is left under TMPDIR" "" "$(ls -A tmp)"

# a chart named like the distro's local folder is looked up in the repository, not found there
hostile_chart=$(printf '%s\n' "$orig" | sed 's/chart: webapp/chart: localchart/')
printf '%s\n' "$hostile_chart" >g/in-cluster/web/application.yaml
git -C g -c user.name=x -c user.email=x@x commit -qam local && git -C g push -q -f origin HEAD:main
t_ok "diff against an Application naming a local folder's chart" env TMPDIR="$T/tmp" "$IDPMAKE" -C d diff
t_grep "helm looked in the repository, and says what it found, not its last hint" \
	'not shown: helm template failed \(.*\): Error: .*localchart.*not found' "$STDERR"
t_nogrep "the local folder's chart was not rendered" 'from-local-chart' "$OUTPUT"
t_eq "still no temporary file left under TMPDIR" "" "$(ls -A tmp)"
t_done
