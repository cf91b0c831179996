/*
 * adopt.c - what up --adopt took over, by kind (adopt.h).
 *
 * A list in the arena under one lock: the owner checks note from the main
 * thread, a deploy: kubectl step from its worker.  Printed once, by the
 * main thread (status.c's rule: output only from there).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/util.h"
#include "graph/adopt.h"
#include "graph/status.h"

#define NAMED 5		/* names shown per kind; the rest are counted */

struct adoption {
	const char *kind, *name, *from, *step;
	int rank;		/* the kind's place in the summary */
};

static struct adoption *v;
static size_t n;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const order[] = {
	"Application", "ApplicationSet", "cluster registration", "repository registration", "Cluster API Cluster",
	"kind cluster", "kubectl object",
};

static int rank_of(const char *kind)
{
	for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++)
		if (!strcmp(order[i], kind))
			return (int)i;
	return (int)(sizeof(order) / sizeof(*order));
}

void adopt_note(const char *kind, const char *name, const char *from, const char *step)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].kind, kind) && !strcmp(v[i].name, name)) {
			pthread_mutex_unlock(&lock);
			return;
		}
	v = agrow(v, n, sizeof(*v));
	v[n++] = (struct adoption){ astrdup(kind), astrdup(name), from ? astrdup(from) : NULL,
				    step ? astrdup(step) : NULL, rank_of(kind) };
	pthread_mutex_unlock(&lock);
}

size_t adopt_count(void)
{
	size_t k;

	pthread_mutex_lock(&lock);
	k = n;
	pthread_mutex_unlock(&lock);
	return k;
}

static int cmp(const void *a, const void *b)
{
	const struct adoption *x = a, *y = b;
	int c;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if ((c = strcmp(x->kind, y->kind)))
		return c;
	return strcmp(x->name, y->name);
}

/* "kind cluster" -> "kind clusters", "repository registration" -> "...s", "repository" -> "repositories" */
static const char *plural(const char *word)
{
	size_t len = strlen(word);

	if (len > 1 && word[len - 1] == 'y' && !strchr("aeiou", word[len - 2]))
		return aprintf("%.*sies", (int)(len - 1), word);
	return aprintf("%ss", word);
}

void adopt_summary(int json)
{
	struct buf line = BUF_INIT;

	pthread_mutex_lock(&lock);
	if (n)
		qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n && json; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s}", "event", "adopted", "kind", v[i].kind, "name", v[i].name);
		if (v[i].from)
			json_object_set_new(o, "from", json_string(v[i].from));
		if (v[i].step)
			json_object_set_new(o, "step", json_string(v[i].step));
		json_print(o, 0);
	}
	for (size_t i = 0, j; i < n && !json; i = j) {
		for (j = i; j < n && !strcmp(v[j].kind, v[i].kind); j++)
			;
		buf_addf(&line, "%s%zu %s (", i ? ", " : "", j - i, j - i == 1 ? v[i].kind : plural(v[i].kind));
		for (size_t k = i; k < j && k < i + NAMED; k++)
			buf_addf(&line, "%s%s", k > i ? ", " : "", term_safe(v[k].name));
		if (j - i > NAMED)
			buf_addf(&line, ", and %zu more", j - i - NAMED);
		buf_addf(&line, ")");
	}
	pthread_mutex_unlock(&lock);
	if (line.len)
		status_info("idpmake: adopted (--adopt): %s", line.s);
	buf_release(&line);
}
