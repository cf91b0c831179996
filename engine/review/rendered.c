/*
 * rendered.c - a package rendered now, beside what the GitOps repository
 * holds (rendered.h): what `render`, `diff`, `diff --live` and
 * `validate --live` compare.
 */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git/lazycache.h"
#include "render/bundle.h"
#include "render/capicheck.h"
#include "run/classplan.h"
#include "run/ctx.h"
#include "git/gitops.h"
#include "render/render.h"
#include "review/rendered.h"
#include "render/scan.h"
#include "git/source.h"
#include "graph/state.h"
#include "base/util.h"

/*
 * What up's plan gives a render that reads another's (plan.c, classplan.c),
 * for a command that renders without running the plan, so that it renders
 * what up pushes:
 *   - a class package's render (capiclass.c): the revisions its synced
 *     Clusters name (s->class_keep), from its last output (s->class_from),
 *     as plan_renders decides them; nothing when plan_renders did;
 *   - a Cluster render (capicheck.c): its class package's output, which
 *     names the revision its classRef takes: the plan's, else that render
 *     rendered now (in memory, once a run: s->rendered).
 * 0, or -1 after printing why.
 */
static int render_inputs(struct ctx *c, struct step *s)
{
	struct step *cls;

	if (!s->class_keep) {
		struct inputs in = { 0 };
		classplan_inputs(&c->pl, s, &in);
		if (s->capi_class) {
			struct record rec = state_step(c->st, s->id);
			if (rec.have && !hash_zero(rec.output) && access(bundle_path(c->statedir, rec.output), R_OK) < 0)
				(void)lazycache_held(&c->pl, s, rec.output);	/* not in the cache: from its folder */
			classplan_from(&c->pl, s, &rec);
		}
	}
	cls = (struct step *)capi_class_render(s);
	if (cls && !cls->rendered && hash_zero(cls->output)) {
		struct bundle cb;
		if (render_one(c, cls, &cb) < 0)
			return -1;
		free(cb.v);	/* render_one kept a copy in cls->rendered */
	}
	return 0;
}

/* render one step into b; prints the failure */
int render_one(struct ctx *c, struct step *s, struct bundle *b)
{
	const char *err = NULL, *tmp = getenv("TMPDIR");
	char *tmpl;
	int fd, r;

	if (render_inputs(c, s) < 0)
		return -1;
	tmpl = aprintf("%s/idpmake-render-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(tmpl);
	/* render changes no state: the renderer's log is a temporary file */
	if (fd >= 0)
		close(fd);
	s->log = fd >= 0 ? tmpl : NULL;
	if (s->pkg->src == SRC_GIT && !s->pkg->path) {
		/* a git source is checked out by plan's keys, which render does not compute */
		char commit[41];
		const char *dir, *gerr;
		if (source_git(c->st, c->statedir, s->pkg, c->refresh, 0, commit, &dir, &gerr) < 0) {
			error("%s: %s", s->id, gerr);
			return -1;
		}
		s->pkg->path = dir;
	}
	if (s->pkg->src != SRC_CHART && s->pkg->path && s->pkg->rule->builtin == RENDER_MANIFESTS && !s->tree) {
		s->tree = xcalloc(1, sizeof(*s->tree));
		if (scan_tree(s->pkg->path, &s->pkg->rule->inputs, s->tree) < 0)
			return -1;
	}
	r = render_to_bundle(&c->pl.rc, s, b, &err);
	if (r < 0) {
		error("%s: %s", s->id, err ? err : "render failed");
		if (s->log) {
			size_t len;
			char *text = read_file(s->log, &len);
			if (text && len)
				fprintf(stderr, "%s", text);
			free(text);
		}
	}
	if (s->log)
		unlink(s->log);
	if (!r && s->capi_class && !s->rendered) {
		/* the Cluster renders read it (render_inputs): a copy of the list in the arena, as its entries */
		struct bundle *cb = amalloc(sizeof(*cb));
		*cb = (struct bundle){ .v = amalloc((b->n + 1) * sizeof(*cb->v)), .n = b->n };
		memcpy(cb->v, b->v, b->n * sizeof(*cb->v));
		s->rendered = cb;
	}
	return r;
}

int remote_files_collect(void *ctx, const char *name, const char *data, size_t len)
{
	struct remote_files *rf = ctx;
	rf->name = xrealloc(rf->name, (rf->n + 1) * sizeof(*rf->name));
	rf->data = xrealloc(rf->data, (rf->n + 1) * sizeof(*rf->data));
	rf->len = xrealloc(rf->len, (rf->n + 1) * sizeof(*rf->len));
	rf->name[rf->n] = astrdup(name);
	rf->data[rf->n] = NULL;
	if (data) {
		rf->data[rf->n] = xmalloc(len + 1);
		memcpy(rf->data[rf->n], data, len);
		rf->data[rf->n][len] = 0;
	} else {
		warn("%s/%s in the GitOps repository is %.1f MiB, over the cap of %llu MiB on a file (%llu MiB on a "
		     "folder) read from it: not read, and taken as differing from the render",
		     rf->folder, term_safe(name), (double)len / (1 << 20), GITOPS_READ_FILE_CAP >> 20, GITOPS_READ_FOLDER_CAP >> 20);
	}
	rf->len[rf->n++] = len;
	return 0;
}

void remote_files_free(struct remote_files *rf)
{
	for (size_t i = 0; i < rf->n; i++)
		free(rf->data[i]);
	free(rf->name), free(rf->data), free(rf->len);
}

/* does the remote's file a differ from the render's data? (one not read does) */
int remote_file_differs(const struct remote_files *rf, size_t a, const char *data, size_t len)
{
	return !rf->data[a] || rf->len[a] != len || memcmp(rf->data[a], data, len);
}

/*
 * Does s's render differ from its folder in the GitOps repository (fetched
 * once a run, under the state's lock, as diff does)?  1 yes, 0 no, -1 when
 * the repository could not be read (a message printed).
 */
int render_differs_from_gitops(struct ctx *c, struct step *s)
{
	static int fetched, locked;
	struct gitops_opts go = ctx_gitops(c);
	struct remote_files rf = { .folder = s->gitpath };
	struct bundle b;
	char tip[41];
	int differs = 0;

	if (!locked) {
		if (mkdirs(c->statedir) < 0 || state_lock(c->st, c->wait) < 0)
			return -1;
		locked = 1;
		git_libgit2_init();
	}
	if (render_one(c, s, &b) < 0)
		return -1;
	if (gitops_read(&go, !fetched, s->gitpath, remote_files_collect, &rf, tip) < 0) {
		remote_files_free(&rf);
		free(b.v);
		return -1;
	}
	fetched = 1;
	differs = rf.n != b.n;
	for (size_t i = 0; !differs && i < b.n; i++)
		differs = strcmp(rf.name[i], b.v[i].name) || remote_file_differs(&rf, i, b.v[i].data, b.v[i].len);
	remote_files_free(&rf);
	free(b.v);
	return differs;
}
