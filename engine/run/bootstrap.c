/*
 * bootstrap.c - up from nothing (bootstrap.h, issue 24): the cluster
 * idpmake makes and the deploy: kubectl packages first, then the rest.
 *
 * One graph, run in two passes when the first has work: a run that makes
 * the kind cluster, applies Argo CD and Gitea with kubectl and then pushes
 * to that Gitea and syncs through that Argo CD cannot log in to either,
 * read their Secrets or check them before they exist.  The first pass is
 * the local steps (no Argo CD, no GitOps remote); then cmd-up.c logs in,
 * reads git.credentials, runs the pre-flight for the rest and the second
 * pass.  Each step is still decided when its in-steps are done and
 * recorded as it finishes (build.c), so an interrupted bootstrap resumes
 * where it stopped.
 */
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "base/url.h"
#include "base/util.h"
#include "distro/manifest.h"
#include "distro/removal.h"
#include "run/bootstrap.h"
#include "run/ctx.h"
#include "run/plan.h"

static int kept;	/* pass 1's renders left selected for the push: pass 2 counts them up to date */

static int local_kind(const struct step *s)
{
	return s->kind == STEP_CREATE || s->kind == STEP_TLS || (s->pkg && s->pkg->deploy_kubectl);
}

char *bootstrap_local(const struct ctx *c)
{
	const struct graph *g = c->g;
	char *local = amalloc(g->nsteps + 1);
	int any = 0;

	/* g->steps is in topological order: a step's in-steps are decided before it */
	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		int ok = local_kind(s);
		for (size_t k = 0; ok && k < s->nin; k++)
			ok = local[s->in[k]->index];
		local[i] = (char)ok;
		any |= ok;
	}
	return any ? local : NULL;
}

/* is a step in `pend` CLUSTER:kind of cluster cl? */
static int made_now(const struct graph *g, const char *pend, const struct cluster *cl)
{
	for (size_t i = 0; cl && i < g->nsteps; i++)
		if (pend[i] && g->steps[i]->kind == STEP_CREATE && g->steps[i]->cluster == cl)
			return 1;
	return 0;
}

int bootstrap_pending(struct ctx *c, char *local)
{
	struct graph *g = c->g;
	struct step *saved;
	char *pend, *reach;
	int dry = c->pl.dry_run, pending = 0;

	if (!local)
		return 0;
	saved = xcalloc(g->nsteps + 1, sizeof(*saved));
	pend = amalloc(g->nsteps + 1);
	c->pl.dry_run = 1;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		saved[i] = *s;
		if (!s->selected || !local[i] || (s->kind != STEP_CREATE && s->kind != STEP_TLS))
			continue;
		plan_decide(&c->pl, s);
		pending |= pend[i] = (char)s->dirty;
	}
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind != STEP_RENDER)
			*g->steps[i] = saved[i];
	c->pl.dry_run = dry;
	free(saved);
	if (!pending)
		return 0;
	/*
	 * pass 1 is what needs the pending steps: they, the steps after them, and every
	 * step of a cluster being made, with the local steps before those; the other
	 * local steps wait for the whole pre-flight, as in a run with no bootstrap
	 */
	reach = amalloc(g->nsteps + 1);
	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		reach[i] = pend[i];
		for (size_t k = 0; k < s->nin && !reach[i]; k++)
			reach[i] = reach[s->in[k]->index];
		reach[i] = local[i] && (reach[i] || made_now(g, pend, s->cluster));
	}
	for (size_t i = g->nsteps; i-- > 0;)
		for (size_t k = 0; reach[i] && k < g->steps[i]->nin; k++)
			reach[g->steps[i]->in[k]->index] |= local[g->steps[i]->in[k]->index];
	memcpy(local, reach, g->nsteps);
	return 1;
}

int bootstrap_run(struct ctx *c, const struct build_opts *o, struct summary *sum, const char *local)
{
	struct graph *g = c->g;
	char *sel = amalloc(g->nsteps + 1);
	int r;

	for (size_t i = 0; i < g->nsteps; i++) {
		sel[i] = (char)g->steps[i]->selected;
		g->steps[i]->selected = sel[i] && local[i];
	}
	r = build_run(&c->pl, o, sum);
	/* the rest; the renders done stay selected, as done, for the push to take (plan_push_changes) */
	kept = 0;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		s->selected = sel[i] && (!local[i] || s->kind == STEP_RENDER);
		if (s->selected && local[i]) {
			s->dirty = 0;
			kept++;
		}
	}
	return r;
}

void bootstrap_summary(struct summary *a, const struct summary *b)
{
	a->up_to_date -= kept;	/* pass 1's renders, counted once, by pass 1 */
	kept = 0;
	a->rendered += b->rendered;
	{
		/* the names: the bootstrap's syncs came first */
		struct summary m = { 0 };
		for (int i = 0; i < b->synced; i++)
			summary_synced(&m, i < SUMMARY_NAMES ? b->names[i] : NULL);
		for (int i = 0; i < a->synced; i++)
			summary_synced(&m, i < SUMMARY_NAMES ? a->names[i] : NULL);
		memcpy(a->names, m.names, sizeof(a->names));
	}
	a->synced += b->synced;
	a->hooks += b->hooks;
	a->failed += b->failed;
	a->not_run += b->not_run;
	a->up_to_date += b->up_to_date;
	a->skipped += b->skipped;
	if (b->commit) {
		a->commit = b->commit;
		a->commits += b->commits;
	}
}

const char *platform_url(const struct distro *d, const char *name)
{
	struct vars v;

	if (removal_of(name))
		return NULL;	/* a URL named after a package this distro (a flavour) removed is not served */
	for (size_t i = 0; i < d->urls.n; i++)
		if (!strcmp(d->urls.v[i].key, name)) {
			vars_init(&v, d, NULL, NULL, NULL);
			return expand(d->urls.v[i].value, d->urls.v[i].loc, &v);
		}
	return NULL;
}

void bootstrap_said(const struct ctx *c, FILE *f)
{
	const struct distro *d = c->d;
	int made = 0;

	/* a first up: it made the cluster or the certificate */
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		made |= (s->kind == STEP_CREATE || s->kind == STEP_TLS) && s->dirty && s->state == S_DONE;
	}
	if (!made)
		return;
	if (d->urls.n) {
		fprintf(f, "the platform:\n");
		for (size_t i = 0; i < d->urls.n; i++) {
			const char *u = platform_url(d, d->urls.v[i].key);
			if (u || !removal_of(d->urls.v[i].key))
				fprintf(f, "  %-16s %s\n", d->urls.v[i].key, u ? term_safe(u) : "?");
		}
	} else {
		const char *server = argocd_server(d);
		fprintf(f, "the platform:\n");
		if (server)
			fprintf(f, "  %-16s %s%s%s\n", "argocd", strstr(server, "://") ? "" : "https://", term_safe(server),
				d->argocd.grpc_web_root_path ? d->argocd.grpc_web_root_path : "");
		if (d->git.remote)
			fprintf(f, "  %-16s %s\n", "gitops", url_masked(d->git.remote, "***"));
	}
	fprintf(f, "its users and passwords: idpmake secrets (read from the cluster when you ask)\n");
}
