/*
 * conv.c - located conversions of YAML nodes (yaml.h) to typed fields, for
 * the distro and rule files: each prints a file:line:col error and returns
 * a default, so that one run reports every error.  Unknown keys get "did
 * you mean".
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "distro/conv.h"
#include "base/re.h"
#include "base/util.h"

/* unknown keys are errors, with a suggestion */
void check_keys(const struct ynode *map, const char *const *allowed, size_t n, const char *what)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->k[i]->s, *sug;
		size_t j;
		for (j = 0; j < n; j++)
			if (!strcmp(k, allowed[j]))
				break;
		if (j < n)
			continue;
		sug = closest(k, allowed, n);
		if (sug)
			loc_error(map->k[i]->loc, "unknown key '%s' in %s; did you mean '%s'?", k, what, sug);
		else
			loc_error(map->k[i]->loc, "unknown key '%s' in %s", k, what);
	}
}


/* ---- typed accessors: each prints a located error and returns a default ---- */

int want(const struct ynode *n, enum ytype t, const char *what)
{
	static const char *names[] = { "a string", "a list", "a map" };
	if (n->type == t)
		return 1;
	loc_error(n->loc, "%s must be %s", what, names[t]);
	return 0;
}

const char *str(const struct ynode *n, const char *what)
{
	if (!n || yisnull(n))
		return NULL;
	if (!want(n, Y_SCALAR, what))
		return NULL;
	return n->s;
}

int boolean(const struct ynode *n, const char *what, int def)
{
	if (!n || yisnull(n))
		return def;
	if (n->type == Y_SCALAR && n->style == YS_PLAIN) {
		if (!strcmp(n->s, "true") || !strcmp(n->s, "True") || !strcmp(n->s, "yes"))
			return 1;
		if (!strcmp(n->s, "false") || !strcmp(n->s, "False") || !strcmp(n->s, "no"))
			return 0;
	}
	loc_error(n->loc, "%s must be true or false", what);
	return def;
}

int integer(const struct ynode *n, const char *what, int def)
{
	char *end;
	long v;

	if (!n || yisnull(n))
		return def;
	if (n->type == Y_SCALAR) {
		errno = 0;
		v = strtol(n->s, &end, 10);
		if (!errno && *n->s && !*end && v >= 0 && v <= INT_MAX)
			return (int)v;
	}
	loc_error(n->loc, "%s must be a non-negative integer", what);
	return def;
}

struct strlist strs(const struct ynode *n, const char *what)
{
	struct strlist l = { 0 };

	if (!n || yisnull(n))
		return l;
	if (!want(n, Y_SEQ, what))
		return l;
	l.v = amalloc(n->n * sizeof(*l.v) + 1);
	l.loc = amalloc(n->n * sizeof(*l.loc) + 1);
	for (size_t i = 0; i < n->n; i++) {
		const char *s = str(n->v[i], what);
		if (s) {
			l.loc[l.n] = n->v[i]->loc;
			l.v[l.n++] = astrdup(s);
		}
	}
	return l;
}

struct at {
	const char *s;
	size_t i;
};

static int atcmp(const void *a, const void *b)
{
	const struct at *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

void strs_uniq(struct strlist *l)
{
	struct at *v;
	unsigned char *dup;
	size_t k = 0;

	if (l->n < 2)
		return;
	v = xmalloc(l->n * sizeof(*v));
	dup = xcalloc(l->n, 1);
	for (size_t i = 0; i < l->n; i++)
		v[i] = (struct at){ l->v[i], i };
	qsort(v, l->n, sizeof(*v), atcmp);
	for (size_t i = 1; i < l->n; i++)
		if (!strcmp(v[i - 1].s, v[i].s))
			dup[v[i].i] = 1;
	for (size_t i = 0; i < l->n; i++)
		if (!dup[i]) {
			l->v[k] = l->v[i];
			l->loc[k++] = l->loc[i];
		}
	l->n = k;
	free(v);
	free(dup);
}

struct kvlist kvs(const struct ynode *n, const char *what)
{
	struct kvlist l = { 0 };

	if (!n || yisnull(n))
		return l;
	if (!want(n, Y_MAP, what))
		return l;
	l.v = amalloc(n->n * sizeof(*l.v) + 1);
	for (size_t i = 0; i < n->n; i++) {
		if (yisnull(n->v[i]))
			continue;	/* removed by a child distro */
		if (n->v[i]->type != Y_SCALAR) {
			loc_error(n->v[i]->loc, "%s '%s' must be a string", what, n->k[i]->s);
			continue;
		}
		l.v[l.n].key = astrdup(n->k[i]->s);
		l.v[l.n].value = astrdup(n->v[i]->s);
		l.v[l.n++].loc = n->v[i]->loc;
	}
	return l;
}

const char *label(const struct ynode *n, const char *what)
{
	if (!is_dns_label(n->s))
		loc_error(n->loc, "%s '%s' is not a DNS-1123 label (lower-case letters, digits and '-', "
			  "starting and ending with a letter or digit, at most 63 characters)", what, n->s);
	return n->s;
}

/* ---- paths ---- */
