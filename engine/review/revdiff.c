/*
 * revdiff.c - `diff --rev A..B` (and `--rev A`: A against the work tree).
 *
 * For a pull request: what the change does to every cluster's rendered
 * output, without touching the work tree or the state's record of what is
 * deployed.
 *
 *   1. The git repository that holds the distro is opened from the
 *      distro's folder (git_repository_open_ext); A..B, A...B (from the
 *      merge base) and A are parsed by git_revparse.
 *   2. Each revision's distro folder is checked out into
 *      STATE/cache/rev/COMMIT (git_checkout_tree with a target_directory;
 *      the index and the work tree are not written), then loaded,
 *      selected and planned like the work tree, in dry run against the
 *      same state: its stat cache and bundle cache are used, nothing is
 *      recorded as done.  A revision without the distro file is empty.
 *   3. Every selected render gets its output (render_output): the state's,
 *      when the step is up to date; the one a render of the same key left
 *      in STATE/cache/keys/KEY; or a render into the cache.  So the side
 *      whose keys are known costs nothing.  The checkout folder is named
 *      after the commit, so a revision's keys (which name its values
 *      files' paths) are the same every time.
 *   4. The two sides are compared per cluster and package (CLUSTER/PKG),
 *      then per object file: created, changed or deleted, with a unified
 *      diff (libgit2's patch from buffers).  Text (git diff's colours),
 *      --json, or --format markdown: a pull-request comment capped at
 *      MD_CAP characters.
 *
 * The checkouts are removed when the command ends.
 */
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argo/argocd.h"
#include "base/buf.h"
#include "render/bundle.h"
#include "run/ctx.h"
#include "run/plan.h"
#include "distro/manifest.h"
#include "review/diffout.h"
#include "review/helmdiff.h"
#include "review/objdiff.h"
#include "review/revdiff.h"
#include "render/share.h"
#include "base/util.h"

#define MD_CAP 60000		/* a pull-request comment's characters (GitHub allows 65,536) */
#define MD_NOTE 2000		/* kept for the note that says what was cut */

/* ---- render outputs ---- */

int render_output(struct planner *pl, struct step *s, struct hash *out)
{
	const char *err = NULL, *tmp = getenv("TMPDIR"), *memo;
	char hex[33], *text, *tmpl;
	size_t len;
	int fd, r;

	if (!s->dirty && !hash_zero(s->output)) {
		*out = s->output;
		return 0;
	}
	hash_hex(s->key, hex);
	/* a class package's output holds what its folder held (capiclass.c), which its key does not: no memo */
	memo = s->capi_class ? NULL : aprintf("%s/cache/keys/%s", pl->statedir, hex);
	if (memo && (text = read_file(memo, &len))) {
		struct hash h;
		int ok = len >= 32 && (text[32] = 0, hash_parse(text, &h) == 0) && bundle_check(pl->statedir, h) == 0;
		free(text);
		if (ok) {
			*out = h;
			return 0;
		}
	}
	/* the renderer's log is a temporary file: nothing of this render goes to the state's logs */
	tmpl = aprintf("%s/idpmake-render-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(tmpl)) >= 0)
		close(fd);
	s->log = fd >= 0 ? tmpl : NULL;
	if ((r = render_step(&pl->rc, s, out, &err)) < 0) {
		error("%s: %s", s->id, err ? err : "render failed");
		if (s->log && (text = read_file(s->log, &len))) {
			if (len)
				fprintf(stderr, "%s", text);
			free(text);
		}
	} else if (memo) {
		hash_hex(*out, hex);
		if (mkdirs(path_dir(memo)) < 0 || write_file_atomic(memo, hex, 32) < 0)
			warn("cannot write %s:", memo);
	}
	if (s->log)
		unlink(s->log);
	s->log = NULL;
	return r;
}

/* ---- the two sides ---- */

struct side {
	const char *label;		/* the revision as given, or "the work tree" */
	char oid[GIT_OID_HEXSZ + 1];	/* its commit; "" for the work tree */
	const char *checkout;		/* where it was checked out, or NULL */
	struct distro *d;		/* NULL: no distro in that revision */
	struct graph *g;
	struct planner pl;
};

/* one package on one cluster, rendered */
struct pkgout {
	const char *id;			/* CLUSTER/PKG: what the sides are matched by */
	const char *cluster, *pkg, *gitpath;
	struct hash output;
};

enum { OBJ_CREATED, OBJ_CHANGED, OBJ_DELETED };
static const char *const obj_word[] = { "created", "changed", "deleted" };

struct objdiff {
	const char *cluster, *pkg;	/* the first cluster whose render changes it */
	const char **clusters;		/* every cluster it is for: a _shared folder serves many */
	size_t ncl;
	const char *path;		/* FOLDER/FILE in the GitOps repository */
	int status;
	const char *patch;		/* unified diff, from its --- line (arena) */
	const char *head;		/* the diff --git lines before it */
};

struct rdiff {
	struct side a, b;
	struct objdiff *v;
	size_t n;
	int count[3];
	size_t npkgs, nclusters;	/* package names and clusters where something differs */
	const char **notshown;		/* "PATH: why" of a chart whose objects are not shown */
	size_t nnotshown;
};

static const char *libgit2_error(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown error";
}

/* does a target of the command line name render step s?  (marks it used) */
static int targeted(const struct ctx *c, const struct step *s, char *used)
{
	int hit = !c->ntargets;

	for (size_t t = 0; t < c->ntargets; t++) {
		const char *tg = c->targets[t], *slash = strchr(tg, '/');
		const char *pk = slash ? slash + 1 : tg;
		if (slash && (strncmp(s->cluster->name, tg, (size_t)(slash - tg)) || s->cluster->name[slash - tg]))
			continue;
		if (!*pk || package_is(s->pkg, pk) || (!slash && !strcmp(s->cluster->name, tg)))
			hit = used[t] = 1;
	}
	return hit;
}

/*
 * Check out the distro folder `rel` (relative to the repository's top;
 * "" for all of it) of commit `id` into `dir`, a folder under the state's
 * cache.  The repository's index and work tree are not touched.
 */
static int checkout(git_repository *repo, const git_oid *id, const char *rel, const char *dir)
{
	git_checkout_options o;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_index *empty = NULL;
	char *paths[1] = { (char *)rel }, abs[PATH_MAX];
	int r = -1;

	rmtree(dir);
	/* libgit2 makes a relative target's folders relative to the work tree: give it an absolute one */
	if (mkdirs(dir) < 0 || !realpath(dir, abs))
		return error("cannot create %s:", dir);
	git_checkout_options_init(&o, GIT_CHECKOUT_OPTIONS_VERSION);
	/* against an empty baseline every file of the tree is new: all are written */
	o.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_RECREATE_MISSING | GIT_CHECKOUT_DONT_UPDATE_INDEX |
			      GIT_CHECKOUT_DONT_WRITE_INDEX;
	o.target_directory = abs;
	if (*rel) {
		o.paths.strings = paths;
		o.paths.count = 1;
	}
	if (git_commit_lookup(&commit, repo, id) < 0 || git_commit_tree(&tree, commit) < 0 ||
	    git_index_new(&empty) < 0) {
		error("--rev: cannot read commit %s: %s", git_oid_tostr_s(id), libgit2_error());
		goto out;
	}
	o.baseline_index = empty;
	if (git_checkout_tree(repo, (git_object *)tree, &o) < 0) {
		error("--rev: cannot check out %.12s into %s: %s", git_oid_tostr_s(id), dir, libgit2_error());
		goto out;
	}
	r = 0;
out:
	git_index_free(empty);
	git_tree_free(tree);
	git_commit_free(commit);
	return r;
}

/* load, select, plan and render one side; 0, or the exit code; norules: CLUSTER/PKG -> rule left out */
static int load_side(struct ctx *c, struct side *sd, const char *file, char *used, json_t *norules)
{
	int failed = 0;

	if (sd->checkout && access(file, F_OK) < 0)
		return 0;	/* no distro in this revision: everything of the other side is new (or gone) */
	if (!(sd->d = manifest_load(file, c->statedir)))
		return error("--rev: the distro of %s does not load (see above)", sd->label), 2;
	if (sd->checkout && sd->d->git.remote) {
		/* a remote given as a path relative to the distro: the work tree's, not the checkout's */
		const char *dir = path_dir(file);
		size_t len = strlen(dir);
		if (!strncmp(sd->d->git.remote, dir, len) && sd->d->git.remote[len] == '/')
			sd->d->git.remote = path_join(path_dir(c->file), sd->d->git.remote + len + 1);
	}
	if (!(sd->g = graph_build(sd->d)) || graph_select(sd->g, NULL, 0, &c->labels) < 0)
		return 2;
	for (size_t i = 0; i < sd->g->nsteps; i++) {
		struct step *s = sd->g->steps[i];
		if (s->kind == STEP_RENDER && s->selected && !targeted(c, s, used))
			s->selected = 0;
		/*
		 * --no-rules: a rule the revision defines is a command a pull request may have
		 * written (and its version command runs for the key): neither runs
		 */
		if (c->no_rules && s->kind == STEP_RENDER && s->selected && s->pkg->rule && !s->pkg->rule->builtin) {
			s->selected = 0;
			json_object_set_new(norules, aprintf("%s/%s", s->cluster->name, s->pkg->name),
					    json_string(s->pkg->rule->name));
		}
	}
	sd->pl = (struct planner){ .g = sd->g, .st = c->st, .statedir = c->statedir, .run_start = wall_ns(),
				   .dry_run = 1, .jobs = c->jobs, .argocd_server = argocd_server(sd->d) };
	sd->pl.rc = (struct render_ctx){ sd->d, c->statedir, argocd_repo_url(sd->d, c->statedir), c->verbose, 1 };
	if (plan_renders(&sd->pl) < 0)
		return 1;
	for (size_t i = 0; i < sd->g->nsteps; i++) {
		struct step *s = sd->g->steps[i];
		if (s->kind == STEP_RENDER && s->selected && render_output(&sd->pl, s, &s->output) < 0)
			failed = 1;
	}
	return failed;
}

static int pkgcmp(const void *x, const void *y)
{
	return strcmp(((const struct pkgout *)x)->id, ((const struct pkgout *)y)->id);
}

static struct pkgout *outputs(const struct side *sd, size_t *n)
{
	struct pkgout *v = NULL;

	*n = 0;
	for (size_t i = 0; sd->g && i < sd->g->nsteps; i++) {
		struct step *s = sd->g->steps[i];
		if (s->kind != STEP_RENDER || !s->selected)
			continue;
		v = agrow(v, *n, sizeof(*v));
		v[(*n)++] = (struct pkgout){ aprintf("%s/%s", s->cluster->name, s->pkg->name), s->cluster->name,
					     s->pkg->name, s->gitpath, s->output };
	}
	if (*n)
		qsort(v, *n, sizeof(*v), pkgcmp);
	return v;
}

static void add_obj(struct rdiff *rd, const struct pkgout *p, const char *name, int status,
		    const char *old, size_t oldlen, const char *new, size_t newlen)
{
	const char *path = aprintf("%s/%s", p->gitpath, name);
	struct objdiff *o;

	rd->v = agrow(rd->v, rd->n, sizeof(*rd->v));
	o = &rd->v[rd->n++];
	/* the other revision's renders are a pull request's: shown with control characters escaped */
	*o = (struct objdiff){ p->cluster, p->pkg, agrow(NULL, 0, sizeof(*o->clusters)), 1, term_safe(path), status, "", "" };
	o->clusters[0] = p->cluster;
	rd->count[status]++;
	/* a Secret's values never printed: "(hidden)", "(hidden, differs)" on the new side */
	diff_patch(path, old, oldlen, new, newlen, &o->head, &o->patch);
}

/* the Application of a chart Argo CD renders: the objects the chart renders differently (helmdiff.h) */
static void add_chart_objs(struct rdiff *rd, const struct pkgout *p, const char *name, const char *old,
			   size_t oldlen, const char *new, size_t newlen)
{
	struct helmdiff hd;

	if (strcmp(name, "application.yaml") || !helmdiff(old, oldlen, new, newlen, &hd))
		return;
	if (hd.why) {
		rd->notshown = agrow(rd->notshown, rd->nnotshown, sizeof(*rd->notshown));
		rd->notshown[rd->nnotshown++] = aprintf("%s/%s: the objects of %s are not shown: %s",
							term_safe(p->gitpath), name, hd.what, hd.why);
		return;
	}
	for (size_t i = 0; i < hd.n; i++)
		add_obj(rd, p, aprintf("helm-template/%s", hd.v[i].name),
			!hd.v[i].old ? OBJ_CREATED : !hd.v[i].new ? OBJ_DELETED : OBJ_CHANGED, hd.v[i].old,
			hd.v[i].oldlen, hd.v[i].new, hd.v[i].newlen);
}

/* read a side's bundle (an empty one for a missing side); -1 printed */
static int open_bundle(const char *statedir, const struct pkgout *p, struct bundle *b)
{
	memset(b, 0, sizeof(*b));
	return p ? bundle_read(bundle_path(statedir, p->output), b) : 0;
}

/* how many different strings v holds (sorts it) */
static size_t distinct(const char **v, size_t n)
{
	size_t d = 0;

	if (n)
		qsort(v, n, sizeof(*v), strptrcmp);
	for (size_t i = 0; i < n; i++)
		d += !i || strcmp(v[i - 1], v[i]);
	return d;
}

/*
 * One pair of renders compared: a linked fleet's clusters that share a
 * folder (_shared/PACKAGE) have the same pair, whose files change once,
 * not once per cluster.
 */
struct pairdone {
	const struct pkgout *pa, *pb;
	size_t first, end;		/* its objects in rd->v */
};

static int same_out(const struct pkgout *x, const struct pkgout *y)
{
	if (!x || !y)
		return x == y;
	return !strcmp(x->gitpath, y->gitpath) && hash_eq(x->output, y->output);
}

/*
 * A pair of _shared folders compared before (same folders, same renders):
 * add the cluster to its objects and return how many there are; -1 when
 * the pair is new.
 */
static long done_before(struct rdiff *rd, const struct pairdone *v, size_t n, const struct pkgout *pa,
			const struct pkgout *pb)
{
	const char *cluster = (pa ? pa : pb)->cluster;

	if ((pa && strncmp(pa->gitpath, "_shared/", 8)) || (pb && strncmp(pb->gitpath, "_shared/", 8)))
		return -1;	/* a cluster's own folder: compared for it alone */
	for (size_t j = 0; j < n; j++) {
		if (!same_out(v[j].pa, pa) || !same_out(v[j].pb, pb))
			continue;
		for (size_t o = v[j].first; o < v[j].end; o++) {
			rd->v[o].clusters = agrow(rd->v[o].clusters, rd->v[o].ncl, sizeof(*rd->v[o].clusters));
			rd->v[o].clusters[rd->v[o].ncl++] = cluster;
		}
		return (long)(v[j].end - v[j].first);
	}
	return -1;
}

static int compare(struct ctx *c, struct rdiff *rd)
{
	size_t na, nb, i = 0, k = 0;
	struct pkgout *a = outputs(&rd->a, &na), *b = outputs(&rd->b, &nb);
	const char **pkgs = NULL, **clusters = NULL;
	struct pairdone *done = NULL;
	size_t ngroups = 0, ndone = 0;

	while (i < na || k < nb) {
		int cmp = i >= na ? 1 : k >= nb ? -1 : strcmp(a[i].id, b[k].id);
		const struct pkgout *pa = cmp <= 0 ? &a[i] : NULL, *pb = cmp >= 0 ? &b[k] : NULL;
		struct bundle ba, bb;
		size_t x = 0, y = 0, before = rd->n;
		long prev;
		i += cmp <= 0;
		k += cmp >= 0;
		if (pa && pb && hash_eq(pa->output, pb->output))
			continue;
		if ((prev = done_before(rd, done, ndone, pa, pb)) >= 0)
			goto count;
		if (open_bundle(c->statedir, pa, &ba) < 0 || open_bundle(c->statedir, pb, &bb) < 0)
			return -1;
		while (x < ba.n || y < bb.n) {
			int o = x >= ba.n ? 1 : y >= bb.n ? -1 : strcmp(ba.v[x].name, bb.v[y].name);
			const struct bundle_entry *ea = o <= 0 ? &ba.v[x++] : NULL, *eb = o >= 0 ? &bb.v[y++] : NULL;
			if (ea && eb && ea->len == eb->len && !memcmp(ea->data, eb->data, ea->len))
				continue;
			add_obj(rd, eb ? pb : pa, (eb ? eb : ea)->name, !ea ? OBJ_CREATED : !eb ? OBJ_DELETED : OBJ_CHANGED,
				ea ? ea->data : NULL, ea ? ea->len : 0, eb ? eb->data : NULL, eb ? eb->len : 0);
			add_chart_objs(rd, eb ? pb : pa, (eb ? eb : ea)->name, ea ? ea->data : NULL, ea ? ea->len : 0,
				       eb ? eb->data : NULL, eb ? eb->len : 0);
		}
		bundle_free(&ba);
		bundle_free(&bb);
		done = agrow(done, ndone, sizeof(*done));
		done[ndone++] = (struct pairdone){ pa, pb, before, rd->n };
count:
		if (rd->n > before || prev > 0) {
			pkgs = agrow(pkgs, ngroups, sizeof(*pkgs));
			clusters = agrow(clusters, ngroups, sizeof(*clusters));
			pkgs[ngroups] = (pa ? pa : pb)->pkg;
			clusters[ngroups++] = (pa ? pa : pb)->cluster;
		}
	}
	rd->npkgs = distinct(pkgs, ngroups);
	rd->nclusters = distinct(clusters, ngroups);
	return 0;
}

/* ---- output ---- */

static const char *range_text(const struct rdiff *rd)
{
	return aprintf("%s..%s", rd->a.label, rd->b.oid[0] ? rd->b.label : "the work tree");
}

static void print_text(const struct ctx *c, const struct rdiff *rd)
{
	int color = diff_color(c);

	for (size_t i = 0; i < rd->n; i++) {
		const struct objdiff *o = &rd->v[i];
		printf("%s%s %s%s%s\n", color ? "\033[1m" : "", obj_word[o->status], o->path,
		       share_clusters_text(o->clusters, o->ncl), color ? "\033[m" : "");
		diff_print(o->head, color);
		diff_print(o->patch, color);
	}
}

/* the packages --no-rules left out, as "CLUSTER/PKG (rule NAME)" items */
static void norules_list(struct buf *b, json_t *norules, const char *sep, const char *open, const char *close)
{
	const char *id;
	json_t *v;
	size_t i = 0;

	json_object_foreach(norules, id, v) {
		buf_addf(b, "%s%s%s%s (rule %s%s%s)", i++ ? sep : "", open, term_safe(id), close, open,
			 term_safe(json_string_value(v)), close);
	}
}

static void print_json(const struct rdiff *rd, json_t *norules)
{
	json_t *doc = json_object(), *objs = json_array(), *nr = json_array(), *v;
	const char *id;

	json_object_set_new(doc, "from", json_pack("{s:s, s:s}", "rev", rd->a.label, "commit", rd->a.oid));
	json_object_set_new(doc, "to", rd->b.oid[0] ? json_pack("{s:s, s:s}", "rev", rd->b.label, "commit", rd->b.oid)
						    : json_pack("{s:s}", "rev", "work tree"));
	for (size_t i = 0; i < rd->n; i++) {
		const struct objdiff *o = &rd->v[i];
		json_t *cl = json_array();
		for (size_t k = 0; k < o->ncl; k++)
			json_array_append_new(cl, json_string(o->clusters[k]));
		/* once per file: "clusters" names every cluster a _shared folder's file is for */
		json_array_append_new(objs, json_pack("{s:s, s:o, s:s, s:s, s:s, s:s}", "cluster", o->cluster, "clusters", cl,
						      "package", o->pkg, "path", o->path, "status", obj_word[o->status],
						      "diff", o->patch));
	}
	json_object_set_new(doc, "objects", objs);
	json_object_set_new(doc, "created", json_integer(rd->count[OBJ_CREATED]));
	json_object_set_new(doc, "changed", json_integer(rd->count[OBJ_CHANGED]));
	json_object_set_new(doc, "deleted", json_integer(rd->count[OBJ_DELETED]));
	json_object_foreach(norules, id, v)
		json_array_append_new(nr, json_pack("{s:s, s:O}", "package", id, "rule", v));
	json_object_set_new(doc, "not_rendered", nr);
	nr = json_array();
	for (size_t i = 0; i < rd->nnotshown; i++) {
		json_t *why = json_string(rd->notshown[i]);	/* NULL: not UTF-8 (helm's words may not be) */
		json_array_append_new(nr, why ? why : json_string("(a chart's objects are not shown: see the warning)"));
	}
	json_object_set_new(doc, "charts_not_shown", nr);
	json_print(doc, 1);
}

/* text for HTML and a markdown table cell */
static void md_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '|': buf_adds(b, "&#124;"); break;
		case '`': buf_adds(b, "&#96;"); break;
		default: buf_addc(b, *s);
		}
	}
}

/* is word one of the ", "-separated items of list? */
static int strstr_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; p && *p;) {
		const char *e = strstr(p, ", ");
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == len && !strncmp(p, word, len))
			return 1;
		p = e ? e + 2 : NULL;
	}
	return 0;
}

/* per package: the clusters where it differs, its counts, and whether it came or went */
struct pkgsum {
	const char *pkg;
	struct buf clusters;
	const char *last_cluster;
	int count[3];
	int added, removed;
};

static int in_side(const struct side *sd, const char *cluster, const char *pkg)
{
	for (size_t i = 0; sd->g && i < sd->g->nsteps; i++) {
		const struct step *s = sd->g->steps[i];
		if (s->kind == STEP_RENDER && s->selected && !strcmp(s->cluster->name, cluster) && !strcmp(s->pkg->name, pkg))
			return 1;
	}
	return 0;
}

static int sumcmp(const void *x, const void *y)
{
	return strcmp(((const struct pkgsum *)x)->pkg, ((const struct pkgsum *)y)->pkg);
}

static struct pkgsum *summarise(const struct rdiff *rd, size_t *n)
{
	struct pkgsum *v = NULL;

	*n = 0;
	for (size_t i = 0; i < rd->n; i++) {
		const struct objdiff *o = &rd->v[i];
		struct pkgsum *p = NULL;
		for (size_t k = 0; k < *n && !p; k++)
			if (!strcmp(v[k].pkg, o->pkg))
				p = &v[k];
		if (!p) {
			v = agrow(v, *n, sizeof(*v));
			p = &v[(*n)++];
			*p = (struct pkgsum){ .pkg = o->pkg, .clusters = BUF_INIT };
		}
		p->count[o->status]++;
		for (size_t k = 0; k < o->ncl; k++) {
			if (p->last_cluster && !strcmp(p->last_cluster, o->clusters[k]))
				continue;
			if (o->ncl > 1 && strstr_word(p->clusters.s, o->clusters[k]))
				continue;	/* a _shared folder's clusters, listed with its first file */
			buf_addf(&p->clusters, "%s%s", p->clusters.len ? ", " : "", o->clusters[k]);
			p->last_cluster = o->clusters[k];
			p->added |= !in_side(&rd->a, o->clusters[k], o->pkg);
			p->removed |= !in_side(&rd->b, o->clusters[k], o->pkg);
		}
	}
	if (*n)
		qsort(v, *n, sizeof(*v), sumcmp);
	return v;
}

static void print_markdown(const struct rdiff *rd, json_t *norules)
{
	struct buf out = BUF_INIT, block = BUF_INIT, note = BUF_INIT;
	const char *range = range_text(rd);
	size_t npk, shown = 0, cut_chars = 0, rows = 0;
	struct pkgsum *pk = summarise(rd, &npk);

	buf_adds(&out, "### idpmake diff <code>");
	md_escape(&out, range);
	buf_adds(&out, "</code>\n\n");
	if (json_object_size(norules)) {
		struct buf l = BUF_INIT;
		norules_list(&l, norules, ", ", "<code>", "</code>");
		buf_adds(&out, "> **Not rendered** (`--no-rules`: a rule the distro defines runs a command): ");
		if (l.len > MD_CAP / 4)
			buf_addf(&out, "%zu packages", json_object_size(norules));
		else
			buf_add(&out, l.s, l.len);
		buf_adds(&out, "\n\n");
		buf_release(&l);
	}
	for (size_t i = 0; i < rd->nnotshown && out.len < MD_CAP / 4; i++) {
		buf_adds(&out, "> **Not shown:** ");
		md_escape(&out, rd->notshown[i]);
		buf_adds(&out, "\n\n");
	}
	if (!rd->n) {
		buf_adds(&out, "No rendered object differs.\n");
		fwrite(out.s, 1, out.len, stdout);
		buf_release(&out);
		return;
	}
	buf_addf(&out, "%d object%s created, %d changed, %d deleted in %zu package%s.\n\n",
		 rd->count[OBJ_CREATED], rd->count[OBJ_CREATED] == 1 ? "" : "s", rd->count[OBJ_CHANGED],
		 rd->count[OBJ_DELETED], npk, npk == 1 ? "" : "s");
	buf_adds(&out, "| package | clusters | created | changed | deleted |\n|---|---|--:|--:|--:|\n");
	for (; rows < npk && out.len < MD_CAP / 2; rows++) {
		buf_adds(&out, "| ");
		md_escape(&out, pk[rows].pkg);
		buf_adds(&out, pk[rows].added && !pk[rows].removed ? " (added)" : pk[rows].removed && !pk[rows].added ? " (removed)" : "");
		buf_adds(&out, " | ");
		md_escape(&out, pk[rows].clusters.s);
		buf_addf(&out, " | %d | %d | %d |\n", pk[rows].count[OBJ_CREATED], pk[rows].count[OBJ_CHANGED],
			 pk[rows].count[OBJ_DELETED]);
	}
	if (rows < npk)
		buf_addf(&out, "| and %zu more packages | | | | |\n", npk - rows);
	buf_adds(&out, "\n");
	for (size_t i = 0; i < npk; i++)
		buf_release(&pk[i].clusters);
	for (; shown < rd->n; shown++) {
		const struct objdiff *o = &rd->v[shown];
		int fence = 3, run = 0;
		for (const char *p = o->patch; *p; p++) {
			run = *p == '`' ? run + 1 : 0;
			if (run >= fence)
				fence = run + 1;
		}
		buf_reset(&block);
		buf_addf(&block, "<details><summary>%s <code>", obj_word[o->status]);
		md_escape(&block, o->path);
		buf_adds(&block, "</code>");
		if (o->ncl > 1)
			buf_addf(&block, " (for %zu clusters)", o->ncl);
		buf_addf(&block, "</summary>\n\n%.*sdiff\n%s%s%.*s\n\n</details>\n\n", fence,
			 "``````````````````````````````````````````````````", o->patch,
			 *o->patch && o->patch[strlen(o->patch) - 1] != '\n' ? "\n" : "", fence,
			 "``````````````````````````````````````````````````");
		if (out.len + block.len + MD_NOTE > MD_CAP)
			break;
		buf_add(&out, block.s, block.len);
	}
	if (shown < rd->n) {
		size_t listed = shown;
		for (size_t i = shown; i < rd->n; i++)
			cut_chars += strlen(rd->v[i].patch);
		buf_addf(&note, "> **Cut:** this comment is capped at 60,000 characters: the diffs of %zu of the %zu objects"
				" (%zu characters) are not shown:",
			 rd->n - shown, rd->n, cut_chars);
		for (; listed < rd->n && note.len < MD_NOTE - 400; listed++) {
			buf_addf(&note, "%s %s <code>", listed > shown ? "," : "", obj_word[rd->v[listed].status]);
			md_escape(&note, rd->v[listed].path);
			buf_adds(&note, "</code>");
		}
		if (listed < rd->n)
			buf_addf(&note, " and %zu more", rd->n - listed);
		buf_adds(&note, ". Run <code>idpmake diff --rev ");
		md_escape(&note, rd->b.oid[0] ? range : rd->a.label);
		buf_adds(&note, "</code> to see them all.\n");
		buf_add(&out, note.s, note.len);
	}
	fwrite(out.s, 1, out.len, stdout);
	buf_release(&out);
	buf_release(&block);
	buf_release(&note);
}

/* ---- the command ---- */

/* the repository, the revisions and the distro's folder in it; 0, or the exit code */
static int open_revs(struct ctx *c, git_repository **repo, struct rdiff *rd, const char **rel)
{
	char dir[PATH_MAX], top[PATH_MAX];
	const char *wd;
	git_revspec spec;
	git_object *from = NULL, *to = NULL;
	git_oid base;
	size_t len;
	const char *dots;

	if (!realpath(path_dir(c->file), dir))
		return error("cannot find the distro's folder %s:", path_dir(c->file)), 2;
	if (git_repository_open_ext(repo, dir, 0, NULL) < 0)
		return error("--rev: the distro's folder %s is not in a git repository: %s", dir, libgit2_error()), 2;
	if (!(wd = git_repository_workdir(*repo)) || !realpath(wd, top))
		return error("--rev: the repository of %s has no work tree", dir), 2;
	len = strlen(top);
	if (strncmp(dir, top, len) || (dir[len] && dir[len] != '/'))
		return error("--rev: %s is not inside the repository's work tree %s", dir, top), 2;
	*rel = astrdup(dir[len] ? dir + len + 1 : "");
	if (git_revparse(&spec, *repo, c->rev) < 0)
		return error("--rev: '%s' names no revision: %s", c->rev, libgit2_error()), 2;
	if (git_object_peel(&from, spec.from, GIT_OBJECT_COMMIT) < 0 ||
	    (spec.to && git_object_peel(&to, spec.to, GIT_OBJECT_COMMIT) < 0)) {
		error("--rev: '%s' does not name commits: %s", c->rev, libgit2_error());
		git_object_free(spec.from);
		git_object_free(spec.to);
		return 2;
	}
	git_object_free(spec.from);
	git_object_free(spec.to);
	dots = strstr(c->rev, "..");
	rd->a.label = dots ? astrndup(c->rev, (size_t)(dots - c->rev)) : c->rev;
	if (!*rd->a.label)
		rd->a.label = "HEAD";
	git_oid_tostr(rd->a.oid, sizeof(rd->a.oid), git_object_id(from));
	if (to) {
		rd->b.label = dots[2] == '.' ? dots + 3 : dots + 2;
		if (!*rd->b.label)
			rd->b.label = "HEAD";
		git_oid_tostr(rd->b.oid, sizeof(rd->b.oid), git_object_id(to));
		if (spec.flags & GIT_REVSPEC_MERGE_BASE) {
			/* A...B: what B changed since it left A */
			if (git_merge_base(&base, *repo, git_object_id(from), git_object_id(to)) < 0) {
				error("--rev: '%s': no merge base: %s", c->rev, libgit2_error());
				git_object_free(from);
				git_object_free(to);
				return 2;
			}
			git_oid_tostr(rd->a.oid, sizeof(rd->a.oid), &base);
			rd->a.label = aprintf("merge-base(%s)", c->rev);
		}
	} else {
		rd->b.label = "the work tree";
	}
	git_object_free(from);
	git_object_free(to);
	return 0;
}

int cmd_diff_rev(struct ctx *c)
{
	git_repository *repo = NULL;
	struct rdiff rd = { 0 };
	const char *rel, *base = path_base(c->file);
	char *used = amalloc(c->ntargets + 1);
	json_t *norules = json_object();
	int r;

	if (c->format && strcmp(c->format, "markdown") && strcmp(c->format, "text")) {
		fprintf(stderr, "idpmake: diff --format takes text or markdown, not '%s'\n", c->format);
		return 2;
	}
	if (!c->statedir)
		c->statedir = path_join(path_dir(c->file), ".idpmake");
	git_libgit2_init();
	if ((r = open_revs(c, &repo, &rd, &rel)))
		goto out;
	if (mkdirs(c->statedir) < 0) {
		error("cannot create the state folder %s:", c->statedir);
		r = 1;
		goto out;
	}
	if (!(c->st = state_open(c->statedir, 1))) {
		r = 2;
		goto out;
	}
	/* the checkouts and renders write the state's cache: under the state lock, as diff */
	if (state_lock(c->st, c->wait) < 0) {
		r = 1;
		goto out;
	}
	for (int side = 0; side < 2; side++) {
		struct side *sd = side ? &rd.b : &rd.a;
		const char *file = c->file;
		if (sd->oid[0]) {
			git_oid id;
			sd->checkout = aprintf("%s/cache/rev/%s", c->statedir, sd->oid);
			git_oid_fromstr(&id, sd->oid);
			if ((!side || strcmp(rd.a.oid, rd.b.oid)) && checkout(repo, &id, rel, sd->checkout) < 0) {
				r = 1;
				goto out;
			}
			file = *rel ? aprintf("%s/%s/%s", sd->checkout, rel, base) : aprintf("%s/%s", sd->checkout, base);
		}
		if ((r = load_side(c, sd, file, used, norules)))
			goto out;
	}
	for (size_t t = 0; t < c->ntargets; t++)
		if (!used[t]) {
			fprintf(stderr, "idpmake: no package or cluster '%s' in %s or %s\n", c->targets[t], rd.a.label,
				rd.b.label);
			r = 2;
			goto out;
		}
	if (compare(c, &rd) < 0) {
		r = 1;
		goto out;
	}
	if (c->json)
		print_json(&rd, norules);
	else if (c->format && !strcmp(c->format, "markdown"))
		print_markdown(&rd, norules);
	else
		print_text(c, &rd);
	for (size_t i = 0; i < rd.nnotshown; i++)
		warn("%s", rd.notshown[i]);
	if (json_object_size(norules)) {
		struct buf l = BUF_INIT;
		norules_list(&l, norules, ", ", "", "");
		fprintf(stderr, "idpmake: --no-rules: not rendered, their rules are the distro's own commands: %s\n", l.s);
		buf_release(&l);
	}
	fprintf(stderr, "idpmake: %s (%.7s..%.*s): %d object%s created, %d changed, %d deleted in %zu package%s on %zu cluster%s\n",
		range_text(&rd), rd.a.oid, rd.b.oid[0] ? 7 : 9, rd.b.oid[0] ? rd.b.oid : "work tree", rd.count[OBJ_CREATED],
		rd.count[OBJ_CREATED] == 1 ? "" : "s", rd.count[OBJ_CHANGED], rd.count[OBJ_DELETED], rd.npkgs,
		rd.npkgs == 1 ? "" : "s", rd.nclusters, rd.nclusters == 1 ? "" : "s");
	r = c->exit_code && rd.n ? 1 : 0;
out:
	for (int side = 0; side < 2; side++) {
		struct side *sd = side ? &rd.b : &rd.a;
		for (size_t i = 0; sd->g && i < sd->g->nsteps; i++)
			if (sd->g->steps[i]->tree) {
				tree_free(sd->g->steps[i]->tree);
				free(sd->g->steps[i]->tree);
				sd->g->steps[i]->tree = NULL;
			}
		if (sd->checkout)
			rmtree(sd->checkout);
	}
	git_repository_free(repo);
	json_decref(norules);
	return r;
}
