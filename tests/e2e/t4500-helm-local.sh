#!/bin/bash
# `render: local` helm packages rendered by a real `helm template`: a chart
# from a chart repository that lighttpd serves over HTTP (index.yaml and the
# .tgz files made by `helm package` and `helm repo index`), and a chart
# folder inside the distro.  Values files, `set` and ${vars} all apply; the
# chart version is part of the render's key (a new version re-renders, and
# explain names it); a version that does not exist fails the render with a
# message naming the chart and the version.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

command -v helm >/dev/null 2>&1 || t_skip_rest "helm is not installed (./configure --install-deps installs it)"

# ---- a chart, packaged at two versions into a chart repository ----------
mkchart() { # DIR NAME VERSION
	mkdir -p "$1/templates"
	cat >"$1/Chart.yaml" <<EOF2
apiVersion: v2
name: $2
version: $3
EOF2
	cat >"$1/values.yaml" <<'EOF2'
greeting: hello
db: {host: localhost, port: 5432}
EOF2
	cat >"$1/templates/configmap.yaml" <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  namespace: {{ .Release.Namespace }}
data:
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}
  greeting: {{ .Values.greeting | quote }}
  dbHost: {{ .Values.db.host | quote }}
  dbPort: {{ .Values.db.port | quote }}
EOF2
}
mkdir -p repo
mkchart src/webapp webapp 1.0.0
t_ok "helm package webapp 1.0.0" helm package src/webapp -d repo
sed -i 's/^version: .*/version: 1.1.0/' src/webapp/Chart.yaml
sed -i 's/^greeting: .*/greeting: hello-from-1.1.0/' src/webapp/values.yaml
t_ok "helm package webapp 1.1.0" helm package src/webapp -d repo

# ---- lighttpd serving the repository as static files ---------------------
start_chart_repo "$T/repo"

# ---- the distro ---------------------------------------------------------
mkdistro d <<EOF2
idpmake: 1
name: helmlocal
vars: {domain: idp.test, port: "6543"}
packages:
  web:
    type: helm
    render: local
    chart: {repo: "$REPO", name: webapp, version: 1.0.0}
    values: [values/web.yaml]
    set: {db.port: "\${port}"}
    namespace: web
  inhouse:
    type: helm
    render: local
    path: charts/inhouse
    set: {greeting: "hi from \${domain}"}
EOF2
mkdir -p d/values d/charts
printf 'db:\n  host: db.${domain}\n' >d/values/web.yaml
mkchart d/charts/inhouse inhouse 0.3.0

show() { git -C d/.idpmake/gitops.git show "main:in-cluster/$1"; }

t_ok "up renders both charts with helm template" idpmake -C d up
show web/configmap.web-config.yaml >web.yaml 2>&1
t_grep "the repository chart at the pinned version" 'chart: webapp-1.0.0' web.yaml
t_grep "the chart's own default value" 'greeting: "?hello"?$' web.yaml
t_grep "the values file applied, its \${domain} expanded" 'dbHost: "?db.idp.test' web.yaml
t_grep "set applied, its \${port} expanded" "dbPort: [\"']?6543" web.yaml
t_grep "the namespace reached helm" 'namespace: web' web.yaml
show inhouse/configmap.inhouse-config.yaml >inhouse.yaml 2>&1
t_grep "the chart folder inside the distro" 'chart: inhouse-0.3.0' inhouse.yaml
t_grep "set with a \${var} in the chart folder's render" 'greeting: "?hi from idp.test' inhouse.yaml

t_ok "plan after up" idpmake -C d plan
t_nogrep "nothing to render again" ':render' "$OUTPUT"

# explain names the chart version as a key input
t_ok "explain -v web's render" idpmake -C d -v explain in-cluster/web:render
t_grep "the pinned chart version is a key input" 'chart webapp version 1\.0\.0' "$OUTPUT"

# a new pinned version re-renders
sed -i 's/version: 1.0.0/version: 1.1.0/' d/distro.yaml
t_ok "plan after the version change" idpmake -C d plan
t_grep "web's render is dirty" 'in-cluster/web:render' "$OUTPUT"
t_ok "explain web's render after the version change" idpmake -C d explain in-cluster/web:render
t_grep "explain: the new version was added" 'added +chart webapp version 1\.1\.0' "$OUTPUT"
t_grep "explain: the old version was removed" 'removed +chart webapp version 1\.0\.0' "$OUTPUT"
t_ok "up with 1.1.0" idpmake -C d up
show web/configmap.web-config.yaml >web.yaml 2>&1
t_grep "the new version was rendered" 'chart: webapp-1.1.0' web.yaml
t_grep "with the new version's default" 'greeting: "?hello-from-1.1.0' web.yaml
t_grep "the values still apply" 'dbHost: "?db.idp.test' web.yaml

# the chart folder's version (Chart.yaml) is a key input too
sed -i 's/^version: .*/version: 0.4.0/' d/charts/inhouse/Chart.yaml
t_ok "explain inhouse's render after its Chart.yaml changed" idpmake -C d explain in-cluster/inhouse:render
t_grep "explain names the chart folder's new version" 'added +chart inhouse version 0\.4\.0' "$OUTPUT"
t_ok "up with inhouse 0.4.0" idpmake -C d up
show inhouse/configmap.inhouse-config.yaml >inhouse.yaml 2>&1
t_grep "the chart folder's new version was rendered" 'chart: inhouse-0.4.0' inhouse.yaml

# a version that does not exist
sed -i 's/version: 1.1.0/version: 9.9.9/' d/distro.yaml
t_exit 1 "up with a chart version that does not exist fails" idpmake -C d up
t_grep "the failure of web's render names the chart and the version" \
	"^FAILED: in-cluster/web:render: helm template of chart 'webapp' version '9\\.9\\.9' from $REPO: 'helm' exited with status 1" "$OUTPUT"
t_grep "helm's own message is shown" 'chart "webapp" version "9\.9\.9" not found' "$OUTPUT"
t_ok "status after the failure" idpmake -C d status
t_grep "status records the failure naming chart and version" "webapp' version '9\\.9\\.9'" "$OUTPUT"
show web/configmap.web-config.yaml >web.yaml 2>&1
t_grep "the last good render stays pushed" 'chart: webapp-1.1.0' web.yaml
t_done
