/*
 * share.c - a package that goes to many clusters renders once per distinct
 * key (fleet.md "Renders once, stored once").
 *
 * A render's key covers only what its output depends on (plan.c): the
 * variables the package really uses, not the cluster's name, so that a
 * package rendered from the same inputs on 100 clusters has one key.
 * plan_renders groups the dirty renders by key (share_group); the
 * scheduler still runs one render step per cluster, and render_once makes
 * all but one of a group wait for that one and take its output:
 *
 *     NONE --first to arrive--> RUNNING --render ok--> DONE   (others: its output)
 *                                      \--failed----> FAILED (others: its error)
 *
 * Whoever arrives first renders, so a waiter only ever waits for a render
 * that is running: no group can wait on a step the scheduler never started
 * (-k, an interrupt).  The bundle is stored once in the cache, by its hash.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "render/share.h"
#include "base/util.h"

enum { SH_NONE, SH_RUNNING, SH_DONE, SH_FAILED };

struct share {
	size_t count;			/* steps in the group */
	int state;			/* SH_* */
	const char *by;			/* id of the step that rendered */
	struct hash output;
	const char *err;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

struct keyed {
	struct hash key;
	struct step *s;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key.hi != y->key.hi)
		return x->key.hi < y->key.hi ? -1 : 1;
	if (x->key.lo != y->key.lo)
		return x->key.lo < y->key.lo ? -1 : 1;
	return (x->s->index > y->s->index) - (x->s->index < y->s->index);
}

void share_group(struct graph *g)
{
	struct keyed *v = xcalloc(g->nsteps + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		s->same = NULL;
		s->share = NULL;
		if (s->kind == STEP_RENDER && s->selected && s->dirty && !hash_zero(s->key))
			v[n++] = (struct keyed){ s->key, s };
	}
	qsort(v, n, sizeof(*v), keyed_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && hash_eq(v[j].key, v[i].key); j++)
			;
		if (j - i < 2)
			continue;
		v[i].s->share = amalloc(sizeof(*v[i].s->share));
		v[i].s->share->count = j - i;
		for (size_t k = i; k < j; k++)
			v[k].s->same = v[i].s;
	}
	free(v);
}

size_t share_count(const struct step *head)
{
	return head->share ? head->share->count : 1;
}

int render_once(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err)
{
	struct share *sh = s->same ? s->same->share : NULL;
	int rc2;

	s->shared_from = NULL;
	if (!sh)
		return render_step(rc, s, output, err);
	pthread_mutex_lock(&lock);
	while (sh->state == SH_RUNNING)
		pthread_cond_wait(&changed, &lock);
	if (sh->state != SH_NONE) {
		/* rendered (or failed) by another step of the group */
		*output = sh->output;
		*err = sh->err;
		s->shared_from = sh->by;
		rc2 = sh->state == SH_DONE ? 0 : -1;
		if (rc2 < 0)
			*err = aprintf("the same render on %s failed: %s", sh->by, sh->err ? sh->err : "failed");
		pthread_mutex_unlock(&lock);
		return rc2;
	}
	sh->state = SH_RUNNING;
	sh->by = s->id;
	pthread_mutex_unlock(&lock);

	rc2 = render_step(rc, s, output, err);

	pthread_mutex_lock(&lock);
	sh->output = *output;
	sh->err = rc2 < 0 ? *err : NULL;
	sh->state = rc2 < 0 ? SH_FAILED : SH_DONE;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	return rc2;
}

static int bypath_cmp(const void *a, const void *b)
{
	const struct step *x = *(struct step *const *)a, *y = *(struct step *const *)b;
	int r = strcmp(x->gitpath, y->gitpath);
	return r ? r : (x->index > y->index) - (x->index < y->index);
}

static int byfirst_cmp(const void *a, const void *b)
{
	const struct folder *x = a, *y = b;
	return (x->steps[0]->index > y->steps[0]->index) - (x->steps[0]->index < y->steps[0]->index);
}

size_t share_folders(const struct graph *g, struct folder **out)
{
	struct step **v = amalloc((g->nsteps + 1) * sizeof(*v));
	struct folder *f;
	size_t n = 0, nf = 0;

	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind == STEP_RENDER && g->steps[i]->selected && g->steps[i]->gitpath)
			v[n++] = g->steps[i];
	qsort(v, n, sizeof(*v), bypath_cmp);
	f = amalloc((n + 1) * sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		if (nf && !strcmp(f[nf - 1].gitpath, v[i]->gitpath)) {
			f[nf - 1].n++;
			continue;
		}
		f[nf++] = (struct folder){ v[i]->gitpath, v + i, 1 };
	}
	qsort(f, nf, sizeof(*f), byfirst_cmp);
	*out = f;
	return nf;
}

const char *share_clusters_text(const char *const *names, size_t n)
{
	enum { SHOWN = 3 };
	const char *s = "";

	if (n < 2)
		return "";
	for (size_t i = 0; i < n && i < SHOWN; i++)
		s = aprintf("%s%s%s", s, i ? ", " : "", names[i]);
	if (n > SHOWN)
		return aprintf(" (for %s and %zu more clusters)", s, n - SHOWN);
	return aprintf(" (for %s)", s);
}

const char *share_folder_clusters(const struct folder *f)
{
	const char **names = amalloc((f->n + 1) * sizeof(*names));

	for (size_t i = 0; i < f->n; i++)
		names[i] = f->steps[i]->cluster->name;
	return share_clusters_text(names, f->n);
}
