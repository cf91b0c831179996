/* targets.c - what a run acts on, checked and said before it acts (targets.h) */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argo/argocd.h"
#include "base/buf.h"
#include "base/secret.h"
#include "run/ctx.h"
#include "distro/context.h"
#include "distro/repourl.h"
#include "argo/kubectl.h"
#include "distro/create.h"
#include "distro/capi.h"
#include "run/targets.h"
#include "base/url.h"
#include "base/util.h"

int targets_check(struct ctx *c)
{
	const struct context *x = context_active();
	const char *env = getenv("ARGOCD_SERVER"), *opt = argocd_opts_server(), *over = opt ? opt : env && *env ? env : NULL;
	const char *why;
	int acts = c->command && (!strcmp(c->command, "up") || !strcmp(c->command, "plan"));

	if (acts && (why = repo_url_state_repo(c->d))) {
		fprintf(stderr, "%s\n", why);	/* Argo CD cannot read the state's own repository (repourl.h) */
		return 2;
	}
	/* the distro (or a context) names a server, the environment another: which one is meant? (argoserver.c) */
	if (acts && !(x && context_chosen() && x->argocd_server) && (why = argocd_server_conflict(c->d))) {
		fprintf(stderr, "idpmake: %s\n", why);
		return 2;
	}
	/* a context gave the server, and Argo CD would read the distro's repository on this machine (a context
	 * that gives the remote too pairs them itself) */
	if (acts && context_gave_server() && !context_gave_remote() && !c->d->argocd.repo_url &&
	    remote_is_local(c->d->git.remote)) {
		fprintf(stderr, "idpmake: the context '%s' (%s) makes the run sync through the Argo CD %s from the "
			"GitOps repository %s, which is on this machine: no Argo CD can read it; give the distro a "
			"git.remote Argo CD reaches (or argocd.repo-url), or leave out %s\n", x->name, context_from(),
			term_safe(url_masked(argocd_server(c->d), "***")),
			c->d->git.remote ? term_safe(url_masked(c->d->git.remote, "***")) : "(the state's own)",
			context_from());
		return 2;
	}
	if (!x)
		return 0;
	/* a context chosen for the run names its server: another one from the environment is a contradiction */
	if (context_chosen() && x->argocd_server && over && !same_server(over, x->argocd_server)) {
		fprintf(stderr,
			"idpmake: %s names the Argo CD server %s, and the context '%s' (%s) names %s: refusing to "
			"guess which one, or to send the context's token to another server; unset %s, or leave out "
			"%s\n",
			opt ? "ARGOCD_OPTS --server" : "ARGOCD_SERVER", url_masked(over, "***"), x->name, context_from(),
			url_masked(x->argocd_server, "***"), opt ? "--server in ARGOCD_OPTS" : "ARGOCD_SERVER",
			context_from());
		return 2;
	}
	/* the GitOps remote the context supplied takes its token from the context, never from elsewhere */
	if (context_gave_remote()) {
		const char *tok = getenv("IDPMAKE_GIT_TOKEN");
		if (x->git_token_env) {
			const char *v = getenv(x->git_token_env);
			if (v && *v) {
				secret_setenv("IDPMAKE_GIT_TOKEN", v);	/* never passed to a child (exec.c); zeroed at exit */
				url_git_token_from(aprintf("$%s (context %s)", x->git_token_env, x->name));
			}
			else
				unsetenv("IDPMAKE_GIT_TOKEN");
		} else if (tok && *tok) {
			fprintf(stderr,
				"idpmake: the GitOps remote %s comes from the context '%s' (%s), which names no "
				"git-token-env, and IDPMAKE_GIT_TOKEN is set: it is not sent to a remote it was not "
				"given with; say which variable holds that remote's token (idpmake context set %s "
				"--git-token-env VAR), or unset IDPMAKE_GIT_TOKEN\n",
				url_masked(x->git_remote, "***"), x->name, context_from(), x->name);
			return 2;
		}
	}
	(void)c;
	return 0;
}

/* cluster cl's create step selected */
static int create_selected(const struct ctx *c, const struct cluster *cl)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && s->kind == STEP_CREATE && s->cluster == cl)
			return 1;
	}
	return 0;
}

/* the kubectl syncs selected */
static int kubectl_selected(const struct ctx *c, const struct cluster *cl)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && s->kind == STEP_SYNC && s->pkg->deploy_kubectl && (!cl || s->cluster == cl))
			return 1;
	}
	return 0;
}

/* the hook steps selected on cluster cl */
static int hooks_selected(const struct ctx *c, const struct cluster *cl)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && (s->kind == STEP_PRE || s->kind == STEP_POST) && s->cluster == cl)
			return 1;
	}
	return 0;
}

/*
 * Where the kubectl of cl's hooks goes when the distro names no context for
 * it (hookkube.h: none of create.kind, kube-context, register.context,
 * --kube-context): the current context it would get, said before anything
 * runs (issue 33 #2), or NULL when one is named.  A cluster Cluster API
 * made has its own, written from its kubeconfig Secret: said too, as a
 * credential idpmake hands to its hooks.
 */
static const char *hooks_unnamed(const struct cluster *cl)
{
	const struct kube_target *t;
	const char *err = NULL;

	if (cl->create.capi)
		return aprintf("hooks %s: context %s from Secret %s/%s-kubeconfig on %s (create.management)", cl->name,
			       cl->name, cl->create.capi->namespace, cl->name, cl->create.capi->management);
	if (cl->create.kind || cl->kube_context || cl->reg.context || kubectl_context_flag())
		return NULL;	/* named: its packages' context, which the hooks get too */
	if (!(t = kubectl_target(cl, &err)))
		return aprintf("hooks %s: kubectl's current context, which cannot be used (%s)", cl->name,
			       err ? text_last_line(err) : "?");
	if (!t->context)
		return aprintf("hooks %s: kubectl's in-cluster configuration (no kubeconfig; no kube-context named)",
			       cl->name);
	return aprintf("hooks %s: current-context %s in %s (no kube-context named)", cl->name, t->context,
		       t->kubeconfig ? t->kubeconfig : "?");
}

/* the created clusters (create.management) whose registration, selected, reads a Secret of management cluster m */
static const char *managed_by(const struct ctx *c, const struct cluster *m)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && s->kind == STEP_REGISTER && s->cluster && s->cluster->create.capi &&
		    s->cluster->create.capi->mgmt == m)
			buf_addf(&b, "%s%s", b.len ? ", " : "", s->cluster->name);
	}
	r = b.len ? astrdup(b.s) : NULL;
	buf_release(&b);
	return r;
}

int targets_print(struct ctx *c, FILE *f)
{
	const struct distro *d = c->d;
	const struct context *x = context_active();
	const char *server = argocd_server(d), *from = argocd_server_from(d);
	struct buf b = BUF_INIT, why = BUF_INIT;
	int bad = 0;

	if (d->git.remote)
		buf_addf(&b, "gitops %s branch %s (%s)", url_masked(d->git.remote, "***"),
			 d->git.branch ? d->git.branch : "main",
			 context_gave_remote() ? aprintf("context '%s'", x->name) : "distro");
	else
		buf_addf(&b, "gitops %s/gitops.git branch %s (the state's own)", c->statedir,
			 d->git.branch ? d->git.branch : "main");
	if (server)
		/* any user info as *** (a user name there may be a token: it is refused later, argoapi.c) */
		buf_addf(&b, ", argocd %s (%s)", url_userinfo(server) ? url_userinfo(server) : server, from);
	else if ((argocd_env_ignored(d) && argocd_env_server(&from)) || (context_ignored_server() && x &&
		 (from = aprintf("the context '%s''s argocd-server", x->name))))
		buf_addf(&b, ", argocd none (%s ignored: the distro names no argocd.server, and Argo CD cannot "
			 "read a repository on this machine)", from);
	else
		buf_adds(&b, ", argocd none");
	if (x)
		buf_addf(&b, ", context %s (%s%s)", x->name, context_from(),
			 context_gave_server() || context_gave_remote() ? "" : ", fills in nothing here");
	else
		buf_adds(&b, ", context none");
	for (size_t i = 0; i < d->nclusters; i++) {
		const struct cluster *cl = &d->clusters[i];
		const struct kube_target *t;
		const char *err, *made = c->pl.argocd_server ? managed_by(c, cl) : NULL;
		if (made && (t = kubectl_target(cl, &err)))
			/* Cluster API's kubeconfig Secrets are read there (argocapireg.c) */
			buf_addf(&b, ", cluster-api %s: context %s (%s)%s%s, for %s", cl->name,
				 t->context ? t->context : "in-cluster", t->from, t->kubeconfig ? " in " : "",
				 t->kubeconfig ? t->kubeconfig : "", made);
		const char *h = hooks_selected(c, cl) && (cl->create.capi || !kubectl_selected(c, cl)) ? hooks_unnamed(cl) :
				NULL;
		if (h)
			buf_addf(&b, ", %s", h);
		if (!kubectl_selected(c, cl) && !(cl->create.kind && create_selected(c, cl)))
			continue;
		if (cl->create.kind && !(err = kubectl_created_conflict(cl))) {
			/* its context may not be there yet: CLUSTER:kind makes it (kindcluster.c) */
			buf_addf(&b, ", kubectl %s: kind cluster %s, context %s (create.kind; made when absent)",
				 cl->name, cl->create.kind, create_context(cl));
			continue;
		}
		if (cl->create.kind || !(t = kubectl_target(cl, &err))) {
			/* said after the line: what it would act on comes first, refusal or not */
			buf_addf(&why, "idpmake: %s: %s\n", cl->name, err);
			bad++;
			buf_addf(&b, ", kubectl %s: refused (below)", cl->name);
			continue;
		}
		if (t->context)
			buf_addf(&b, ", kubectl %s: context %s (%s) in %s", cl->name, t->context, t->from, t->kubeconfig);
		else
			buf_addf(&b, ", kubectl %s: %s", cl->name, t->from);
	}
	fflush(stdout);	/* what came before it stays before it */
	fprintf(f, "acting on %s\n", term_safe(b.s));	/* a server or remote from the distro or the environment */
	if (bad)
		fputs(why.s, stderr);
	fflush(f);
	buf_release(&b);
	buf_release(&why);
	return bad ? -1 : 0;
}

const char *targets_skipped_note(const struct ctx *c)
{
	size_t n = 0;

	if (c->pl.argocd_server)
		return "";
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && step_talks_to_argocd(s))
			n++;
	}
	return n ? aprintf(" (no argocd configured: %zu Argo CD step%s skipped)", n, n == 1 ? " is" : "s are") : "";
}
