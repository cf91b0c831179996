/*
 * scan.c - the source folders of a plan's renders (scan.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "base/hash.h"
#include "render/scan.h"
#include "graph/state.h"
#include "base/util.h"

const char *tree_name(const struct package *p)
{
	struct buf b = BUF_INIT;
	const char *r;

	buf_addf(&b, "t:%s", p->path);
	for (size_t i = 0; i < p->rule->inputs.n; i++)
		buf_addf(&b, "\n%s", p->rule->inputs.v[i]);
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

/*
 * Scanning is most of a no-op run (a stat per input file), and it needs
 * no state: the source folders are scanned on -j threads first, then
 * compared with the stat cache in order.  A package's folder is scanned
 * once however many clusters render it (its tree's name, tree_name, is the
 * package's): the other clusters' renders take the known content hash.
 */
struct scan_job {
	struct step **v;
	size_t n, next;
	pthread_mutex_t lock;
	struct planner *pl;
};

static void *scan_worker(void *arg)
{
	struct scan_job *j = arg;

	for (;;) {
		struct step *s;
		pthread_mutex_lock(&j->lock);
		s = j->next < j->n ? j->v[j->next++] : NULL;
		pthread_mutex_unlock(&j->lock);
		if (!s)
			return NULL;
		s->tree = xcalloc(1, sizeof(*s->tree));
		if (scan_tree(s->pkg->path, &s->pkg->rule->inputs, s->tree) < 0) {
			tree_free(s->tree);
			free(s->tree);
			s->tree = NULL;	/* scanned again in order, which reports the error */
		} else {
			/*
			 * The stat cache, read only while the workers run: an
			 * unchanged tree keeps its content hash, and its file list
			 * goes now, so the next scan reuses the memory.
			 */
			struct hash fp, content;
			int racy;
			if (state_tree(j->pl->st, tree_name(s->pkg), &fp, &racy, &content) &&
			    hash_eq(fp, s->tree->fingerprint) && !racy) {
				s->tree->content = content;
				s->tree->known = 1;
				s->tree->dropped = 1;
				tree_free(s->tree);
			}
		}
	}
}

/* the first render step of each package, by the package's address */
struct first_scan {
	const struct package **k;
	struct step **v;
	size_t mask;
};

static struct step **first_slot(struct first_scan *f, const struct package *p)
{
	size_t i = ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull & f->mask;

	while (f->k[i] && f->k[i] != p)
		i = (i + 1) & f->mask;
	f->k[i] = p;
	return &f->v[i];
}

void scan_all(struct planner *pl)
{
	struct scan_job j = { NULL, 0, 0, PTHREAD_MUTEX_INITIALIZER, pl };
	struct first_scan f;
	struct step **later = NULL;
	size_t nlater = 0, cap = 16;
	pthread_t th[16];
	int n = pl->jobs > 16 ? 16 : pl->jobs;

	while (cap < 2 * pl->g->nsteps)
		cap *= 2;
	f.k = xcalloc(cap, sizeof(*f.k));
	f.v = xcalloc(cap, sizeof(*f.v));
	f.mask = cap - 1;
	for (size_t i = 0; i < pl->g->nsteps; i++) {
		struct step *s = pl->g->steps[i], **first;
		if (s->kind != STEP_RENDER || !s->selected || s->tree || s->pkg->src != SRC_PATH || !s->pkg->path)
			continue;
		if (*(first = first_slot(&f, s->pkg))) {
			later = agrow(later, nlater, sizeof(*later));
			later[nlater++] = s;
			continue;
		}
		*first = s;
		j.v = agrow(j.v, j.n, sizeof(*j.v));
		j.v[j.n++] = s;
	}
	if (n < 2 || j.n < 8) {
		scan_worker(&j);
	} else {
		for (int i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, scan_worker, &j))
				n = i;
		if (!n)
			scan_worker(&j);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	/*
	 * The other clusters' renders of a package whose tree the stat cache
	 * knows take its content hash; a changed tree is scanned again per
	 * render, in order, which reads the stat cache its first one updated.
	 */
	for (size_t i = 0; i < nlater; i++) {
		const struct step *first = *first_slot(&f, later[i]->pkg);
		if (first->tree && first->tree->dropped) {
			later[i]->tree = xcalloc(1, sizeof(*later[i]->tree));
			*later[i]->tree = *first->tree;
		}
	}
	free(f.k);
	free(f.v);
}

/*
 * Outputs whose bundle this run has seen in the cache: renders of equal
 * output (a package on many clusters) stat their bundle once.
 */
static int output_seen(struct seen_outputs *o, struct hash h, int add)
{
	size_t i = (size_t)(h.lo ^ h.hi) & o->mask;

	for (; !hash_zero(o->v[i]); i = (i + 1) & o->mask)
		if (hash_eq(o->v[i], h))
			return 1;
	if (add)
		o->v[i] = h;
	return 0;
}

int bundle_present(struct planner *pl, struct seen_outputs *o, struct hash h)
{
	struct stat st;

	if (!hash_zero(h) && output_seen(o, h, 0))
		return 1;
	if (stat(bundle_path(pl->statedir, h), &st) < 0)
		return 0;
	if (!hash_zero(h))
		output_seen(o, h, 1);
	return 1;
}

