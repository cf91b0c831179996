/* cmd-misc.c - `validate` (--live: apicheck.c), `init` and `version` */
#include <dirent.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <archive.h>
#include <jansson.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <yaml.h>

#include "review/apicheck.h"
#include "render/bundle.h"
#include "cmd/cmd.h"
#include "distro/context.h"
#include "base/diag.h"
#include "base/exec.h"
#include "render/render.h"
#include "review/rendered.h"
#include "run/provision.h"
#include "render/unexpanded.h"
#include "base/util.h"

#ifndef IDPMAKE_VERSION
#define IDPMAKE_VERSION "0.1.0"
#endif

/* a package whose folder holds nothing renders nothing: a warning at its path (issue 37 item 5) */
static void empty_folders_warn(const struct ctx *c)
{
	for (size_t i = 0; i < c->d->npackages; i++) {
		const struct package *p = &c->d->packages[i];
		const struct dirent *e;
		int any = 0;
		DIR *dir;
		if (p->src != SRC_PATH || !p->path || !(dir = opendir(p->path)))
			continue;
		while (!any && (e = readdir(dir)))
			any = e->d_name[0] != '.';
		closedir(dir);
		if (!any && p->path_loc.line)
			loc_warn(p->path_loc, "package '%s': its folder %s is empty, so it renders nothing", p->name,
				 term_safe(p->path));
	}
}

static int validate(struct ctx *c, int *nsteps)
{
	int r, bad = 0, steps = 0;

	if ((r = ctx_load(c, 1)))
		return r;
	empty_folders_warn(c);
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		const struct rule *ru;
		if (!s->selected)
			continue;
		steps++;
		if (s->kind != STEP_RENDER)
			continue;
		ru = s->pkg->rule;
		if (ru->builtin == RENDER_MANIFESTS || ru->builtin == RENDER_ARGOCD_APP || ru->builtin == RENDER_CAPI ||
		    (ru->builtin == RENDER_HELM && !s->pkg->render_local)) {
			/* in-process renderers: render in memory, which checks every object */
			struct bundle b;
			const char *err = NULL;
			if (s->pkg->src == SRC_PATH && ru->builtin == RENDER_MANIFESTS) {
				s->tree = xcalloc(1, sizeof(*s->tree));
				if (scan_tree(s->pkg->path, &ru->inputs, s->tree) < 0) {
					bad++;
					continue;
				}
			}
			s->log = NULL;
			unexpanded_warn(s, c->d);
			if (s->pkg->capi_of) {
				/* a created cluster's Cluster: against its class's render, as up renders it (rendered.c) */
				if (render_one(c, s, &b) < 0)
					bad++;
			} else if (render_to_bundle(&c->pl.rc, s, &b, &err) < 0) {
				error("%s: %s", s->id, err);
				bad++;
			}
			free(b.v);
		} else {
			const char *tool = ru->builtin == RENDER_HELM ? "helm" : ru->command.n ? ru->command.v[0] : NULL;
			if (tool && !which(tool)) {
				error("%s: '%s' (the %s renderer) is not installed", s->id, tool, ru->name);
				bad++;
			}
		}
	}
	if (bad)
		return 1;
	/* a created cluster's version against the one its state synced: one minor at a time (preflight.c) */
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		const char *err;
		if (s->selected && s->kind == STEP_PROVISION &&
		    ((err = provision_skew(&c->pl, s)) || (err = provision_moved(&c->pl, s)))) {
			error("%s", err);
			bad++;
		}
	}
	/* --live: every rendered kind against what its cluster serves (apicheck.c); after a skew too, so
	 * that what the cluster says is said with it */
	if (c->live && (r = apicheck_live(c)))
		return r;
	*nsteps = steps;
	return bad ? 1 : 0;
}

/*
 * validate --json: one document on stdout, the diagnostics as data (diag.h)
 * {"version":1, "valid":B, "error_count":N, "warning_count":N,
 *  "diagnostics":[{"severity":"error|warning", "message":..., "file":..., "line":N, "column":N}]}
 * (file, line and column only when known), and one summary line on stderr.
 */
static int validate_json(struct ctx *c)
{
	int steps = 0, ret, errors = 0, warnings = 0;
	size_t n;
	const struct diag *d;
	json_t *doc, *list = json_array();

	diag_capture(1);
	if (!c->bundle && access(c->file, F_OK) < 0 && errno == ENOENT) {
		diag_add("error", c->file, 0, 0, "no such file ('idpmake init' writes a new distro; -C DIR runs in the "
				"folder of one; -f FILE names its manifest)");
		ret = 2;
	} else {
		ret = validate(c, &steps);
	}
	diag_capture(0);
	d = diag_list(&n);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s}", "severity", d[i].severity, "message", d[i].message);
		if (d[i].file)
			json_object_set_new(o, "file", json_string(d[i].file));
		if (d[i].line) {
			json_object_set_new(o, "line", json_integer(d[i].line));
			json_object_set_new(o, "column", json_integer(d[i].col));
		}
		json_array_append_new(list, o);
		*(strcmp(d[i].severity, "error") ? &warnings : &errors) += 1;
	}
	if (ret && !errors) {	/* said on stderr by a path that does not use diag.h: still an error */
		json_array_append_new(list, json_pack("{s:s, s:s}", "severity", "error", "message", "not valid (see stderr)"));
		errors++;
	}
	doc = json_pack("{s:i, s:b, s:i, s:i, s:o}", "version", 1, "valid", !ret, "error_count", errors, "warning_count",
			warnings, "diagnostics", list);
	if (!ret)
		json_object_set_new(doc, "distro", json_pack("{s:s, s:s, s:I, s:I, s:i}", "file", c->file, "name", c->d->name,
							  "packages", (json_int_t)c->d->npackages, "clusters",
							  (json_int_t)c->d->nclusters, "steps", steps));
	json_print(doc, 1);
	fprintf(stderr, "idpmake: validate: %s: %d error%s, %d warning%s\n", ret ? "not valid" : "valid", errors,
		errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
	return ret;
}

int cmd_validate(struct ctx *c)
{
	int steps = 0, r;

	if (c->json)
		return validate_json(c);
	if ((r = validate(c, &steps)))
		return r;
	printf("%s: distro '%s' is valid: %zu package%s, %zu cluster%s, %d step%s\n", c->file, c->d->name,
	       c->d->npackages, c->d->npackages == 1 ? "" : "s", c->d->nclusters, c->d->nclusters == 1 ? "" : "s",
	       steps, steps == 1 ? "" : "s");
	return 0;
}

static const char init_distro[] =
	"# A distro: the packages of a platform, how they depend on each other, and\n"
	"# where they go.  See idpmake-distro(5).\n"
	"idpmake: 1\n"
	"name: %s\n"
	"description: a new platform\n"
	"\n"
	"vars:\n"
	"  greeting: hello\n"
	"\n"
	"packages:\n"
	"  namespaces:\n"
	"    type: manifests\n"
	"    path: packages/namespaces\n"
	"\n"
	"  hello:\n"
	"    type: manifests\n"
	"    path: packages/hello\n"
	"    namespace: hello\n"
	"    needs: [namespaces]\n"
	"    labels: {tier: apps}\n";

static const char init_ns[] =
	"apiVersion: v1\n"
	"kind: Namespace\n"
	"metadata:\n"
	"  name: hello\n";

static const char init_cm[] =
	"apiVersion: v1\n"
	"kind: ConfigMap\n"
	"metadata:\n"
	"  name: hello\n"
	"  namespace: hello\n"
	"data:\n"
	"  message: hello from idpmake\n";

/*
 * The state folder (.idpmake/: the state, logs and cached renders, Secrets
 * among them) is never a distro's source: init puts it in the folder's
 * .gitignore, written or appended to in place (a line of its own, once;
 * the file's mode, its other bytes, NULs among them, and its line ends
 * kept).  Anything but a regular file there (a symlink, a folder, a FIFO)
 * is left alone, and so is one that cannot be written: a warning, not a
 * failure, since the distro is written by then.  1: .idpmake/ is in it.
 */
static int is_state_line(const char *l, size_t n)
{
	while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	if (n && *l == '/')
		l++, n--;
	if (n && l[n - 1] == '/')
		n--;
	return n == 8 && !memcmp(l, ".idpmake", 8);
}

static int ignore_state(const char *dir)
{
	const char *path = path_join(dir, ".gitignore"), *eol = "\n";
	static const char fresh[] = "# idpmake's state, logs and cached renders (Secrets among them)\n.idpmake/\n";
	struct stat st;
	size_t len = 0;
	char *text;
	int fd, ok;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT && write_file_user(path, fresh, strlen(fresh)) == 0)
			return 1;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		warn("%s is not a regular file (%s): left as it is; have git ignore .idpmake/ yourself", term_safe(path),
		     S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a folder" : "a FIFO, socket or device");
		return 0;
	}
	if ((fd = open_regular(path)) < 0 || !(text = read_fd(fd, &len)))
		goto fail;
	for (const char *l = text, *e; l < text + len; l = e + 1) {
		e = memchr(l, '\n', (size_t)(text + len - l));
		if (!e)
			e = text + len;
		if (e > l && e[-1] == '\r' && l == text)
			eol = "\r\n";	/* the file's line ends, from its first line */
		if (is_state_line(l, (size_t)(e - l))) {
			free(text);
			return 1;
		}
	}
	{
		const char *more = aprintf("%s.idpmake/%s", len && text[len - 1] != '\n' ? eol : "", eol);
		free(text);
		if ((fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)) < 0)
			goto fail;
		ok = write_all(fd, more, strlen(more)) == 0;
		if (close(fd) < 0 || !ok)
			goto fail;
	}
	return 1;
fail:
	warn("cannot add .idpmake/ to %s: %s; have git ignore it yourself", term_safe(path), strerror(errno));
	return 0;
}

int cmd_init(struct ctx *c)
{
	const char *dir = c->ntargets ? c->targets[0] : ".";
	const char *file = path_join(dir, "distro.yaml");
	char real[4096];
	const char *name;
	char *n;

	if (!access(file, F_OK)) {
		fprintf(stderr, "idpmake: %s exists already; init writes a new distro only\n", file);
		return 2;
	}
	if (mkdirs_user(path_join(dir, "packages/namespaces")) < 0 || mkdirs_user(path_join(dir, "packages/hello")) < 0)
		return error("cannot create %s:", dir), 1;
	name = realpath(dir, real) ? path_base(real) : "platform";
	n = astrdup(name);
	for (char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			*p = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : '-';
	while (*n == '-')
		n++;
	if (!*n || strlen(n) > 63)
		n = "platform";
	{
		char *text = aprintf(init_distro, n);
		if (write_file_user(file, text, strlen(text)) < 0 ||
		    write_file_user(path_join(dir, "packages/namespaces/namespace.yaml"), init_ns, strlen(init_ns)) < 0 ||
		    write_file_user(path_join(dir, "packages/hello/configmap.yaml"), init_cm, strlen(init_cm)) < 0)
			return error("cannot write the new distro in %s:", dir), 1;
	}
	printf("idpmake: wrote %s with 2 packages%s; try 'idpmake -C %s plan', then 'idpmake -C %s up'\n", file,
	       ignore_state(dir) ? " (and .idpmake/ in .gitignore)" : "", dir, dir);
	return 0;
}

/*
 * version --json: {"version":"0.1.0", "libraries":{"libgit2":"1.7.2", ...}, "context":{"name":...,
 * "from":..., "file":...} (name null: none; "error" when the contexts file cannot be read)}
 */
int cmd_version(struct ctx *c)
{
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	int maj, min, rev;
	char pcre[64];
	const char *from, *err;
	const struct context *x = context_select(c->context, &from, &err);
	/* as the program links them: each library's own answer at run time */
	const char *libs[][2] = {
		{ "libyaml", yaml_get_version_string() },
		{ "SQLite", sqlite3_libversion() },
		{ "xxHash", aprintf("%u.%u.%u", XXH_versionNumber() / 10000, XXH_versionNumber() / 100 % 100,
				    XXH_versionNumber() % 100) },
		{ "libgit2", (git_libgit2_version(&maj, &min, &rev), aprintf("%d.%d.%d", maj, min, rev)) },
		{ "libcurl", cv->version },
		{ "PCRE2", (pcre2_config(PCRE2_CONFIG_VERSION, pcre), pcre) },
		{ "jansson", jansson_version_str() },
		{ "libarchive", archive_version_string() + strlen("libarchive ") },
	};
	size_t nlibs = sizeof(libs) / sizeof(libs[0]);

	if (c->json) {
		json_t *l = json_object(), *cx = json_object();
		for (size_t i = 0; i < nlibs; i++) {
			char key[32];
			size_t k;
			for (k = 0; libs[i][0][k] && k < sizeof(key) - 1; k++)	/* lower case: "sqlite", "pcre2" */
				key[k] = (char)(libs[i][0][k] >= 'A' && libs[i][0][k] <= 'Z' ? libs[i][0][k] + 32 : libs[i][0][k]);
			key[k] = 0;
			json_object_set_new(l, key, json_string(libs[i][1]));
		}
		json_object_set_new(cx, "file", json_string(context_file()));
		if (err)
			json_object_set_new(cx, "error", json_string(err));
		json_object_set_new(cx, "name", x && !err ? json_string(x->name) : json_null());
		if (x && !err)
			json_object_set_new(cx, "from", json_string(from));
		json_print(json_pack("{s:s, s:o, s:o}", "version", IDPMAKE_VERSION, "libraries", l, "context", cx), 1);
		return 0;
	}
	printf("idpmake %s\n", IDPMAKE_VERSION);
	for (size_t i = 0; i < nlibs; i++)
		printf("  %-8s %s\n", libs[i][0], libs[i][1]);
	if (err)
		printf("context: %s\n", err);
	else if (x)
		printf("context: %s (from %s, %s)\n", x->name, from, context_file());
	else
		printf("context: none (%s)\n", context_file());
	return 0;
}
