/*
 * select.c - which steps a run takes: the targets and -l labels of the
 * command line (cli.md "Targets", fleet.md "Waves").
 *
 * A target (PKG, CLUSTER/PKG, CLUSTER/, globs) or -l KEY[=VALUE] selects
 * the last steps of the packages it names; what they need comes with them
 * (select_from).  Anything that matches nothing is a usage error (exit 2)
 * naming it, with "did you mean" over the known clusters, packages and
 * labels (keys and KEY=VALUE).
 *
 * Under rollout.waves, a selection moves only the clusters it selects: the
 * walk to what a step needs does not go through a wave's gate (which would
 * pull in every cluster of the earlier waves).  The gates of the waves from
 * the first to the last that the selection touches are selected, so the
 * selected clusters still go wave by wave, each wave's gate judging its
 * selected syncs and running its check; a gate whose wave has no selected
 * cluster only keeps the order (rollout.c: nothing to judge, no check).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "distro/conv.h"
#include "distro/fleet.h"
#include "graph/graph.h"
#include "base/util.h"

/*
 * Select s and what it needs.  The push depends on every render, but a
 * target needs only its own packages' renders: the walk stops at the push
 * and takes each package's render from the package's steps instead.  It
 * stops at a wave's gate too: a cluster of a later wave does not need the
 * clusters of the earlier ones, only their order (graph_select).
 */
static void select_from(struct step *s)
{
	if (s->selected)
		return;
	s->selected = 1;
	if (s->render)
		select_from(s->render);
	if (s->kind == STEP_PUSH)
		return;
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i]->kind != STEP_WAVE)
			select_from(s->in[i]);
}

/* a target's package part: a name, a group, or a glob over names */
static int package_match(const struct package *p, const char *pattern)
{
	if (!strpbrk(pattern, "*?["))
		return package_is(p, pattern);
	return !fnmatch(pattern, p->name, 0) || (p->group && !fnmatch(pattern, p->group, 0));
}

static int any_cluster(const struct distro *d, const char *pattern)
{
	for (size_t i = 0; i < d->nclusters; i++)
		if (cluster_name_match(pattern, d->clusters[i].name))
			return 1;
	return 0;
}

/* a list of words for closest() */
struct words {
	const char **v;
	size_t n;
};

static void word(struct words *w, const char *s)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->v[i], s))
			return;
	w->v = agrow(w->v, w->n, sizeof(*w->v));
	w->v[w->n++] = s;
}

/* "; did you mean 'X'?" (arena), or "" */
static const char *mean(const char *s, const struct words *w)
{
	const char *sug = w->n ? closest(s, w->v, w->n) : NULL;

	return sug ? aprintf("; did you mean '%s'?", sug) : "";
}

/* the known labels, keys and KEY=VALUE, of the clusters and packages */
static void known_labels(const struct distro *d, struct words *w)
{
	const struct kvlist *l;

	for (size_t i = 0; i < d->nclusters + d->npackages; i++) {
		l = i < d->nclusters ? &d->clusters[i].labels : &d->packages[i - d->nclusters].labels;
		for (size_t k = 0; k < l->n; k++) {
			word(w, l->v[k].key);
			word(w, aprintf("%s=%s", l->v[k].key, l->v[k].value));
		}
	}
}

/* "; known labels: a=b, c=d" (at most 8), or "" */
static const char *known(const struct words *w)
{
	struct buf b = BUF_INIT;
	const char *r;
	size_t shown = 0;

	for (size_t i = 0; i < w->n; i++) {
		if (!strchr(w->v[i], '='))
			continue;
		if (shown++ == 8) {
			buf_adds(&b, ", ...");
			break;
		}
		buf_addf(&b, "%s%s", b.len ? ", " : "; known labels: ", w->v[i]);
	}
	r = astrdup(b.len ? b.s : "; no cluster or package has labels");
	buf_release(&b);
	return r;
}

/* the values the known labels w give key (length kl): "eu, us" (arena), or NULL */
static const char *values(const struct words *w, const char *key, size_t kl)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < w->n; i++)
		if (!strncmp(w->v[i], key, kl) && w->v[i][kl] == '=')
			buf_addf(&b, "%s%s", b.len ? ", " : "", w->v[i] + kl + 1);
	r = b.len ? astrdup(b.s) : NULL;
	buf_release(&b);
	return r;
}

/* what to say about a label KEY=VALUE (or KEY) that none has: the closest known one, its key's values, or the known ones */
static const char *hint(const char *label, const struct words *w)
{
	const char *eq = strchr(label, '='), *sug = mean(label, w), *vals, *key;
	struct words keys = { 0 };

	if (*sug)
		return sug;
	key = eq ? astrndup(label, (size_t)(eq - label)) : label;
	if ((vals = values(w, key, strlen(key))))
		return aprintf("; '%s' has the values %s", key, vals);
	for (size_t i = 0; i < w->n; i++)
		if (!strchr(w->v[i], '='))
			word(&keys, w->v[i]);
	if (keys.n && (sug = closest(key, keys.v, keys.n)))
		return aprintf("; did you mean '%s' (with the values %s)?", sug, values(w, sug, strlen(sug)));
	return known(w);
}

/* each -l on its own: does any cluster or package have it?  -1 after naming one that none has */
static int labels_known(const struct distro *d, const struct strlist *labels)
{
	struct words w = { 0 };
	int ret = 0;

	for (size_t i = 0; labels && i < labels->n; i++) {
		struct strlist one = { &labels->v[i], NULL, 1 };
		int found = 0;
		for (size_t k = 0; k < d->nclusters && !found; k++)
			found = unit_labels_match(&d->clusters[k], NULL, &one);
		for (size_t k = 0; k < d->npackages && !found; k++)
			found = unit_labels_match(NULL, &d->packages[k], &one);
		if (found)
			continue;
		if (!w.n)
			known_labels(d, &w);
		ret = error("-l %s: no cluster or package has this label%s", labels->v[i], hint(labels->v[i], &w));
	}
	return ret;
}

/* why target t matches nothing, with a suggestion (-1) */
static int unknown_target(const struct graph *g, const char *t, const char *cl, const char *pk,
			  const struct strlist *labels)
{
	const struct distro *d = g->d;
	struct words w = { 0 };

	if (cl && !any_cluster(d, cl)) {
		for (size_t i = 0; i < d->nclusters; i++)
			word(&w, d->clusters[i].name);
		return error("unknown target '%s': no cluster %s '%s'%s", t, strpbrk(cl, "*?[") ? "matches" : "named", cl,
			     strpbrk(cl, "*?[") ? "" : mean(cl, &w));
	}
	if (!*pk || strpbrk(pk, "*?["))
		return error("unknown target '%s': no such package%s", t, labels && labels->n ? " with those labels" : "");
	/* the packages that go to the target's clusters */
	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		if (s->pkg && s->kind == STEP_RENDER && (!cl || cluster_name_match(cl, s->cluster->name))) {
			word(&w, s->pkg->name);
			if (s->pkg->group)
				word(&w, s->pkg->group);
		}
	}
	for (size_t i = 0; i < w.n; i++)
		if (!strcmp(w.v[i], pk))	/* it is there: the labels left it out */
			return error("unknown target '%s': no such package with those labels", t);
	if (!cl)
		for (size_t i = 0; i < d->nclusters; i++)
			if (!strcmp(d->clusters[i].name, pk))
				return error("unknown target '%s': no such package; did you mean '%s/' (the cluster)?", t, pk);
	return error("unknown target '%s': no such package%s%s", t, cl ? aprintf(" on cluster '%s'", cl) : "", mean(pk, &w));
}

/*
 * Under rollout.waves: select the gates of the waves from the first to the
 * last with a selected step of one of their clusters (the order between the
 * selected clusters).
 */
static void select_waves(struct graph *g)
{
	const struct distro *d = g->d;
	size_t lo = d->nwaves, hi = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		size_t w;
		if (!s->selected || !s->cluster || s->kind == STEP_RENDER || !step_cluster(s)->wave)
			continue;
		w = (size_t)(step_cluster(s)->wave - d->waves);
		lo = w < lo ? w : lo;
		hi = w > hi ? w : hi;
	}
	if (lo == d->nwaves)
		return;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		size_t w;
		if (s->kind != STEP_WAVE)
			continue;
		w = (size_t)(s->wave - d->waves);
		if (w >= lo && w <= hi)
			s->selected = 1;
	}
}

int graph_select(struct graph *g, char **targets, size_t ntargets, struct strlist *labels)
{
	int any = 0;

	if (!ntargets && (!labels || !labels->n)) {
		for (size_t i = 0; i < g->nsteps; i++)
			g->steps[i]->selected = g->steps[i]->targeted = 1;
		return 0;
	}
	if (labels_known(g->d, labels) < 0)
		return -1;
	for (size_t t = 0; t < ntargets; t++) {
		const char *slash = strchr(targets[t], '/');
		char *cl = slash ? astrndup(targets[t], (size_t)(slash - targets[t])) : NULL;
		const char *pk = slash ? slash + 1 : targets[t];
		int found = 0;
		for (size_t i = 0; i < g->nsteps; i++) {
			struct step *s = g->steps[i];
			if (!s->pkg || (cl && !cluster_name_match(cl, s->cluster->name)) || (*pk && !package_match(s->pkg, pk)))
				continue;
			if (labels && !unit_labels_match(s->cluster, s->pkg, labels))
				continue;
			found = 1;
			s->targeted = 1;
			/* select the package's last steps; select_from pulls in the rest */
			if (s->nout == 0 || s->kind == STEP_SYNC || s->kind == STEP_POST)
				select_from(s);
		}
		if (!found)
			return unknown_target(g, targets[t], cl, pk, labels);
		any = 1;
	}
	if (!ntargets) {
		for (size_t i = 0; i < g->nsteps; i++) {
			struct step *s = g->steps[i];
			if (s->pkg && unit_labels_match(s->cluster, s->pkg, labels))
				s->targeted = 1;
			if (s->pkg && unit_labels_match(s->cluster, s->pkg, labels) && (s->kind == STEP_SYNC || s->kind == STEP_POST)) {
				select_from(s);
				any = 1;
			}
		}
		if (!any) {
			struct buf b = BUF_INIT;
			for (size_t i = 0; i < labels->n; i++)
				buf_addf(&b, " -l %s", labels->v[i]);
			error("%s: no package on a cluster has all of these labels (each -l must hold on the package or "
			      "its cluster)", b.s + 1);
			buf_release(&b);
			return -1;
		}
	}
	if (g->d->rollout)
		select_waves(g);
	/* deploy: kubectl packages push after they are applied: their folders are pushed too */
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected && g->steps[i]->kind == STEP_RENDER && g->steps[i]->pkg->deploy_kubectl)
			g->push->selected = 1;
	return 0;
}
