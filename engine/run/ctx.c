/* ctx.c - load what a command needs: the distro, its graph, the state */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "run/ctx.h"
#include "run/gitcreds.h"
#include "run/tlscert.h"
#include "distro/context.h"
#include "argo/kubectl.h"
#include "argo/capiowner.h"
#include "distro/capi.h"
#include "distro/manifest.h"
#include "pack/pack.h"
#include "run/targets.h"
#include "base/util.h"

int ctx_load(struct ctx *c, int readonly)
{
	int r;

	if (!c->bundle && pack_is_archive(c->file))
		c->bundle = c->file;	/* -f names an archive `idpmake pack` wrote, not a distro.yaml */
	if (c->bundle) {
		/* the state beside the archive; the distro, its sources and charts from its unpacked copy */
		if (!c->statedir)
			c->statedir = path_join(path_dir(c->bundle), ".idpmake");
		/*
		 * Unpacking replaces STATE/bundle/: only under the run lock, held
		 * until the run ends (read-only commands too), so that a second run
		 * on this state folder waits or refuses, never changes this run's tree.
		 */
		if (mkdirs(c->statedir) < 0) {
			error("cannot create the state folder %s:", c->statedir);
			return 1;
		}
		if (!c->st && !(c->st = state_open(c->statedir, readonly)))
			return 2;
		if (state_lock(c->st, c->wait) < 0)
			return 1;
		if (pack_open(c->bundle, c->statedir, &c->file) < 0)
			return 2;
	}
	if (!c->statedir)
		c->statedir = path_join(path_dir(c->file), ".idpmake");
	if (!(c->d = manifest_load(c->file, c->statedir)))
		return 2;
	{
		/* the context fills in what the distro leaves out, or replaces it when chosen for the run (context.h) */
		const char *from, *err;
		const struct context *x = context_select(c->context, &from, &err);
		if (err) {
			fprintf(stderr, "idpmake: %s\n", err);
			return 2;
		}
		context_apply(c->d);
		if (x && c->verbose)
			fprintf(stderr, "idpmake: context '%s' (from %s, %s)\n", x->name, from, context_file());
		if ((r = targets_check(c)))
			return r;
	}
	capi_rehome(c->d);	/* a created cluster's home is where it pushes, a context's remote included */
	kubectl_set_context(c->kube_context);	/* before any kubectl: the Secrets are read through it too */
	tlscert_trust(c->d, c->statedir);	/* the distro's CA, once made (up makes it: tlscert.h) */
	/* after the context, which may drop them: read when a fetch or a push first needs them (gitcred.h) */
	gitcreds_source(c);
	kubectl_set_owner(c->d->name, c->adopt);
	capiowner_set_adopt(c->adopt);
	if (!(c->g = graph_build(c->d)))
		return 2;
	if (graph_select(c->g, c->targets, c->ntargets, &c->labels) < 0)
		return 2;
	/* a usage error before the state is opened: exit 2 leaves no state behind */
	if (c->delete_clusters && !c->prune) {
		fprintf(stderr, "idpmake: --delete-clusters goes with --prune (up --prune --delete-clusters)\n");
		return 2;
	}
	if (c->prune && !c->delete_clusters && c->command && !strcmp(c->command, "up") && !argocd_server(c->d)) {
		fprintf(stderr, "idpmake: --prune deletes Argo CD Applications, and no argocd is configured\n");
		return 2;
	}
	if (!c->st && !(c->st = state_open(c->statedir, readonly)))
		return 2;
	memset(&c->pl, 0, sizeof(c->pl));
	c->pl.g = c->g;
	c->pl.st = c->st;
	c->pl.statedir = c->statedir;
	c->pl.run_start = wall_ns();
	c->pl.dry_run = readonly;
	c->pl.refresh = c->refresh;
	c->pl.promote = c->promote;
	c->pl.jobs = c->jobs;
	c->pl.argocd_server = argocd_server(c->d);
	c->pl.prune_first = c->prune && orphan_apps_apply(c);
	c->pl.rc.d = c->d;
	c->pl.rc.statedir = c->statedir;
	c->pl.rc.verbose = c->verbose;
	c->pl.rc.readonly = readonly;
	/* the GitOps repository as Argo CD sees it, in Applications and cnoe:// rewrites alike */
	c->pl.rc.remote_url = argocd_repo_url(c->d, c->statedir);
	return 0;
}

struct gitops_opts ctx_gitops(const struct ctx *c)
{
	const struct distro *d = c->d;

	return (struct gitops_opts){ c->statedir, d->git.remote ? d->git.remote : aprintf("%s/gitops.git", c->statedir),
				     !d->git.remote, d->git.branch, d->git.author_name, d->git.author_email,
				     d->git.ca_file, c->verbose, d->git.pin_cert };
}

/*
 * Does the selection talk to Argo CD?  Not when it is only deploy: kubectl
 * packages (kubectl.c), which bootstrap Argo CD itself: no token is needed yet.
 */
int ctx_needs_argocd(const struct ctx *c)
{
	if (c->prune || c->refresh)
		return 1;
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && step_talks_to_argocd(s))
			return 1;
	}
	return 0;
}

/* does up handle the Applications of packages gone from the distro (prune_apps)? */
int orphan_apps_apply(const struct ctx *c)
{
	return c->pl.argocd_server && ctx_needs_argocd(c) && !c->ntargets && !c->labels.n;
}
