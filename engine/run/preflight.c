/*
 * preflight.c - before anything is pushed, synced or registered
 * (preflight.h; idpmake(1) "PRE-FLIGHT").
 *
 * Which steps will run is plan's prediction: plan_decide in dry-run over
 * the selected steps in the graph's order (a step after a render or a step
 * that runs may run), the steps left as they were afterwards (build_run
 * decides them again, on real outputs); only as many as the checks need,
 * so that a no-op costs little (predict).  For those steps only:
 *
 *   Argo CD              a sync (not deploy: kubectl), a register step or a
 *                        wave gate runs, or --refresh, or --prune has
 *                        something to delete: argocd_open's error (no token,
 *                        a bad ARGOCD_OPTS...), else GET /api/version, which
 *                        must answer 200 and as to a logged-in caller (Argo
 *                        CD's version service tells an anonymous caller its
 *                        Version alone: the token was not accepted).
 *   CLUSTER:register     its credential as the step reads it
 *                        (argocd_register_check): no request.
 *   repository:register  may IDPMAKE_GIT_TOKEN go to Argo CD (plain http);
 *                        without the token it asks Argo CD nothing.
 *   CLUSTER's kube       a deploy: kubectl sync runs: `kubectl --context C get
 *   context              --raw /api` (kubectl_check) must answer, with the
 *                        credential kubectl applies with: once per cluster,
 *                        through exec.c (no shell), kubectl's message kept.
 *   the push             to an http(s) remote without a credential (no
 *                        IDPMAKE_GIT_TOKEN, no password in the URL): GET
 *                        info/refs?service=git-receive-pack, as git push
 *                        starts; a 401 says the remote wants one.
 *   the push, plain     to an http:// remote with a credential (a token, or
 *   http                 a password in the URL) and IDPMAKE_GIT_ALLOW_HTTP
 *                        not 1: the push would refuse to send it; no request.
 *
 * Invariants: every problem is found before any is printed, and none stops
 * the others being looked for; a run with nothing to do makes no request;
 * no credential is sent anywhere it was not already going (the git check
 * sends none).
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/kubectl.h"
#include "run/bootstrap.h"
#include "run/ctx.h"
#include "run/orphans.h"
#include "run/plan.h"
#include "run/preflight.h"
#include "run/owner.h"
#include "run/provision.h"
#include "base/gitcred.h"
#include "run/samerender.h"
#include "base/url.h"
#include "base/util.h"

#define PREFLIGHT_TIMEOUT 60	/* seconds for each check's request, retries included */

struct problems {
	const char **v;
	size_t n;
};

/* is IDPMAKE_GIT_TOKEN given, or git.credentials to read it from?  Without it repository:register asks
 * Argo CD nothing; nothing is read here (gitcred.h) */
static int git_token(void)
{
	return gitcred_given();
}

static void add(struct problems *p, const char *what)
{
	p->v = agrow(p->v, p->n, sizeof(*p->v));
	p->v[p->n++] = what;
}

int preflight_argocd(struct preflight *pf, struct argocd *a)
{
	struct call c;
	struct resp r = { .code = -1 };
	const char *err = NULL;

	if (pf->asked || !a)
		return pf->argocd_err ? -1 : 0;
	pf->asked = 1;
	/* argocd.login: now that a request is to be made, not before (argocd_login_now) */
	if (argocd_login_now(a, &err) < 0) {
		pf->argocd_err = aprintf("argocd: %s", err);
		return -1;
	}
	if (call_open(&c, a, "version", NULL, PREFLIGHT_TIMEOUT) < 0) {
		pf->argocd_err = "cannot start a libcurl handle";
		return -1;
	}
	if (request(&c, "GET", "/api/version", NULL, &r, &err) < 0 && (pf->down = 1))
		pf->argocd_err = aprintf("Argo CD at %s does not answer (GET /api/version): %s: check ARGOCD_SERVER "
					 "(or argocd.server) and that Argo CD runs", a->base, err);
	else if (r.status != 200 || !json_is_object(r.json) || !json_is_string(json_object_get(r.json, "Version")))
		pf->argocd_err = aprintf("%s: is %s Argo CD's API server? (check ARGOCD_SERVER or argocd.server)",
					 r.status != 200 ? api_error(&c, "asking Argo CD its version", &r)
							 : "GET /api/version answered no Argo CD version", a->base);
	else if (json_object_size(r.json) < 2)
		/* its version service answers an anonymous caller with Version alone */
		pf->argocd_err = aprintf("Argo CD at %s does not accept the token (it answers as to an anonymous "
					 "caller): set ARGOCD_AUTH_TOKEN (or argocd.token-file) to a valid token%s", a->base,
					 a->token_jwt ? "" : "; the token is not JWT-shaped (three parts separated by '.')");
	resp_reset(&r);
	call_close(&c);
	return pf->argocd_err ? -1 : 0;
}

/* a step that talks to Argo CD (build.c's ARGO_STEP) */
static int argo_step(const struct step *s)
{
	return (s->kind == STEP_SYNC && !s->pkg->deploy_kubectl) || s->kind == STEP_WAVE || s->kind == STEP_REGISTER ||
	       s->kind == STEP_PROVISION || s->kind == STEP_READY;
}

/* does a deploy: kubectl sync of step i's cluster before it run (predict's runs)? */
static int kube_ran(const struct graph *g, const char *runs, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (runs[k] && g->steps[k]->kind == STEP_SYNC && g->steps[k]->pkg->deploy_kubectl &&
		    g->steps[k]->cluster == g->steps[i]->cluster)
			return 1;
	return 0;
}

/*
 * Which selected steps will run (runs[i] for g->steps[i]), as plan predicts,
 * as far as the checks need to know: the push (when the git check applies),
 * the register steps, and the first deploy: kubectl sync of each cluster
 * that runs; the other
 * syncs and wave gates only until one that talks to Argo CD runs (then
 * Argo CD is checked whatever the rest do), and not without Argo CD; hooks
 * need nothing.  The steps are left as found.
 */
static char *predict(struct ctx *c, int push, const char *mask, int want)
{
	struct graph *g = c->g;
	char *runs = amalloc(g->nsteps + 1);
	struct step *saved = xcalloc(g->nsteps + 1, sizeof(*saved));
	int dry = c->pl.dry_run, argo = 0;

	c->pl.dry_run = 1;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		saved[i] = *s;
		if (!s->selected || (mask && mask[i] != want))
			continue;
		if (s->kind == STEP_PRE || s->kind == STEP_POST)
			continue;
		if (s->kind == STEP_SYNC && s->pkg->deploy_kubectl && kube_ran(g, runs, i))
			continue;	/* its cluster is checked already */
		if (((s->kind == STEP_SYNC && !s->pkg->deploy_kubectl) || s->kind == STEP_WAVE) &&
		    (argo || !c->pl.argocd_server))
			continue;
		if (s->kind == STEP_PUSH && !push)
			continue;	/* only the git check needs to know (plan_push_changes reads the state) */
		if (s->kind != STEP_RENDER)
			plan_decide(&c->pl, s);
		runs[i] = (char)s->dirty;
		argo |= s->dirty && argo_step(s);
	}
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind != STEP_RENDER)
			*g->steps[i] = saved[i];
	c->pl.dry_run = dry;
	free(saved);
	return runs;
}

/* does --prune have an Application or a cluster to delete (prune_apps, prune_clusters)? */
static int prune_work(struct ctx *c)
{
	struct orphan_app *apps;
	struct orphan_cluster *cl;
	size_t n;

	if (!c->prune || c->ntargets || c->labels.n)
		return 0;
	if (orphan_apps(c->d, c->g, c->st, &apps))
		return 1;
	n = orphan_clusters(c->d, c->g, c->st, &cl);
	for (size_t i = 0; i < n; i++)
		if (!cl[i].still_named)
			return 1;
	return 0;
}

static size_t discard(void *p, size_t size, size_t n, void *u)
{
	(void)p;
	(void)u;
	return size * n;
}

/*
 * The push to an http(s) remote that has no credential: does the remote ask
 * for one?  NULL, or the problem.  Only a 401 is one: anything else is the
 * push's to find out (and retry).
 */
static int git_check_applies(const struct ctx *c)
{
	struct gitops_opts go = ctx_gitops(c);
	struct url u;

	return !go.create_remote && go.remote && url_parse(go.remote, &u) == 0 &&
	       (!strcmp(u.scheme, "https") || !strcmp(u.scheme, "http")) && !git_token() && !u.password;
}

static const char *git_wants_credential(const struct ctx *c)
{
	struct gitops_opts go = ctx_gitops(c);
	const char *shown;
	CURL *curl;
	long status = 0;

	if (!git_check_applies(c) || !(curl = curl_easy_init()))
		return NULL;
	shown = url_strip(go.remote, 0);
	curl_easy_setopt(curl, CURLOPT_URL, aprintf("%s/info/refs?service=git-receive-pack", shown));
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "git/2 (idpmake " IDPMAKE_VERSION " pre-flight)");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)PREFLIGHT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	if (c->d->git.ca_file) {
		curl_easy_setopt(curl, CURLOPT_CAINFO, c->d->git.ca_file);
		curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);	/* git.ca-file alone, as libgit2 takes it */
	}
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	if (status != 401)
		return NULL;
	return aprintf("push: the GitOps remote %s asks for credentials (HTTP 401), and none are given: set "
		       "IDPMAKE_GIT_TOKEN to a token with write access (and IDPMAKE_GIT_USERNAME if the server "
		       "wants a user name other than 'git')", shown);
}

/*
 * The push to a plain http remote with a credential (IDPMAKE_GIT_TOKEN,
 * git.credentials or a password in the URL) and IDPMAKE_GIT_ALLOW_HTTP not 1:
 * the push would refuse to send it (url_may_send_credentials), after the
 * renders; said here instead (issue 37 item 5).  NULL, or the problem.
 */
static int git_http_applies(const struct ctx *c)
{
	struct gitops_opts go = ctx_gitops(c);
	struct url u;

	return !go.create_remote && go.remote && url_parse(go.remote, &u) == 0 && url_http_refused(&u) &&
	       (git_token() || u.password);
}

static const char *git_http_refused(const struct ctx *c)
{
	struct gitops_opts go = ctx_gitops(c);
	struct url u;

	if (!git_http_applies(c) || url_parse(go.remote, &u) < 0)
		return NULL;
	return aprintf("push: refusing to send %s to %s over plain http (the GitOps remote %s); use https, or set "
		       "IDPMAKE_GIT_ALLOW_HTTP=1 to send them readable on the way",
		       u.password ? "the password in the remote's URL" : url_git_token_name(), u.host ? u.host : "?",
		       url_strip(go.remote, 0));
}

/* does step i's cluster get made (CLUSTER:kind) before it, this run?  Its context is not there yet */
static int made_before(const struct graph *g, const char *runs, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (runs[k] && g->steps[k]->kind == STEP_CREATE && g->steps[k]->cluster == g->steps[i]->cluster)
			return 1;
	return 0;
}

/* does a step that talks to Argo CD run even if no render changes its output (samerender.h)? */
static int argo_anyway(struct ctx *c, const char *mask, int want)
{
	struct samerender sr;
	struct graph *g = c->g;
	char *runs;
	int any = 0;

	samerender_begin(&c->pl, &sr);
	runs = predict(c, 0, mask, want);
	for (size_t i = 0; i < g->nsteps && !any; i++)
		any = runs[i] && g->steps[i]->selected && argo_step(g->steps[i]) && (!mask || mask[i] == want) &&
		      (g->steps[i]->kind != STEP_REGISTER || g->steps[i]->cluster || git_token());
	samerender_end(&c->pl, &sr);
	return any;
}

/* a created cluster's version: one minor at a time (Cluster API's webhook refuses more); its move */
static void skew_problems(struct ctx *c, struct problems *p)
{
	const struct graph *g = c->g;
	const char *err;

	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected && g->steps[i]->kind == STEP_PROVISION &&
		    ((err = provision_skew(&c->pl, g->steps[i])) || (err = provision_moved(&c->pl, g->steps[i]))))
			add(p, err);
}

/* each cluster whose deploy: kubectl syncs run: does its kube context answer? */
static void kube_problems(struct ctx *c, const char *runs, const char *mask, int want, struct problems *p)
{
	const struct graph *g = c->g;
	const char *err;

	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (s->selected && runs[i] && (!mask || mask[i] == want) && s->kind == STEP_SYNC &&
		    s->pkg->deploy_kubectl && !kube_ran(g, runs, i) && !made_before(g, runs, i) &&
		    (err = kubectl_check(s->cluster, PREFLIGHT_TIMEOUT)))
			add(p, aprintf("%s (needed by %s)", err, s->id));
	}
}

int preflight_late(struct preflight *pf, struct ctx *c, struct argocd *a)
{
	const char *first = pf->late;

	pf->late = NULL;
	if (first && preflight_argocd(pf, a) < 0) {
		error("%s (needed by %s)", pf->argocd_err, first);
		error("pre-flight, once the renders ran: 1 problem; nothing was pushed, synced or registered");
		return 1;
	}
	return owner_check_late(c, a);
}

int preflight_run(struct preflight *pf, struct ctx *c, struct argocd *a, const char *mask, int want)
{
	struct graph *g = c->g;
	struct problems p = { NULL, 0 };
	const char *first = NULL, *err;
	size_t nargo = 0;
	int push = 0, any = 0;
	char *runs;

	if (!(runs = predict(c, git_check_applies(c) || git_http_applies(c), mask, want)))
		return 0;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected || !runs[i] || (mask && mask[i] != want))
			continue;
		any = 1;
		if (c->pl.argocd_server && argo_step(s) && (s->kind != STEP_REGISTER || s->cluster || git_token())) {
			if (!nargo++)
				first = s->id;
		}
		if (s->kind == STEP_REGISTER && c->pl.argocd_server && argocd_register_check(a, s, &err) < 0)
			add(&p, aprintf("%s: %s", s->id, err));
		push |= s->kind == STEP_PUSH;
	}
	if (c->pl.argocd_server && nargo && !((!mask || !want) && (c->refresh || prune_work(c))) &&
	    !argo_anyway(c, mask, want)) {
		/* only a render's new output would talk to Argo CD: asked once the renders ran (preflight_late) */
		pf->late = first;
		nargo = 0;
	}
	if (c->pl.argocd_server && (nargo || ((!mask || !want) && (c->refresh || prune_work(c)))) &&
	    preflight_argocd(pf, a) < 0) {
		if (nargo)
			add(&p, aprintf("%s (needed by %s%s)", pf->argocd_err, first, nargo > 1 ? " and other steps" : ""));
		else
			add(&p, aprintf("%s (needed by %s)", pf->argocd_err, c->refresh ? "--refresh" : "--prune"));
	}
	if (any && push && ((err = git_http_refused(c)) || (err = git_wants_credential(c))))
		add(&p, err);
	skew_problems(c, &p);
	kube_problems(c, runs, mask, want, &p);
	if (!p.n)
		return 0;
	for (size_t i = 0; i < p.n; i++)
		error("%s", p.v[i]);
	if (mask && !want)
		error("pre-flight: %zu problem%s; the bootstrap's steps ran; nothing was pushed, synced through Argo CD or registered",
		      p.n, p.n == 1 ? "" : "s");
	else
		error("pre-flight: %zu problem%s; nothing was rendered, pushed, synced or registered", p.n,
		      p.n == 1 ? "" : "s");
	return 1;
}

/* plan: would a step that talks to Argo CD run (as preflight_run counts them)? */
static int plan_argo(const struct ctx *c, const char *runs)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (runs[i] && argo_step(s) && (s->kind != STEP_REGISTER || s->cluster || git_token()))
			return 1;
	}
	return 0;
}

int preflight_plan(struct ctx *c, const char ***unchecked, size_t *nunchecked, size_t *nrefused)
{
	const struct graph *g = c->g;
	struct problems p = { NULL, 0 }, u = { NULL, 0 };
	struct preflight pf = { NULL, 0, NULL, 0 };
	struct argocd *a = NULL;
	const char *err = NULL, *why;
	char *runs = amalloc(g->nsteps + 1), *boot = NULL;
	int push = 0, owners = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		runs[i] = (char)(g->steps[i]->selected && g->steps[i]->dirty);
		push |= runs[i] && g->steps[i]->kind == STEP_PUSH;
	}
	/* --refresh asks Argo CD whatever runs, as up --refresh does */
	if (c->pl.argocd_server && (plan_argo(c, runs) || c->refresh || (c->prune && prune_work(c))) &&
	    (boot = bootstrap_local(c)) && bootstrap_pending(c, boot)) {
		/* up makes the cluster (or certificate) first, then asks Argo CD (bootstrap.h) */
		add(&u, "what Argo CD holds: up asks it once the bootstrap's steps ran");
	} else if (c->pl.argocd_server && plan_argo(c, runs) && !(c->prune && prune_work(c)) && !c->refresh &&
		   !argo_anyway(c, NULL, 0)) {
		/* only a render's new output would talk to Argo CD: up asks it then, and so no sooner (preflight_late) */
		add(&u, "what Argo CD holds: up asks it only if a render's output changes, once the renders ran");
	} else if (c->pl.argocd_server && (plan_argo(c, runs) || c->refresh || (c->prune && prune_work(c)))) {
		struct gitops_opts go = ctx_gitops(c);
		if ((a = argocd_connect(c->d, c->statedir, c->verbose, &err)))
			argocd_set_git(a, &go);
		if (!a && err == argocd_no_token)	/* a plan job without up's credentials: said, not refused */
			add(&u, "what Argo CD holds: no Argo CD token here (ARGOCD_AUTH_TOKEN or argocd.token-file); up needs one");
		else if (!a)
			add(&p, aprintf("argocd: %s", err ? err : "cannot use Argo CD"));
		else if (preflight_argocd(&pf, a) < 0)
			add(pf.down ? &u : &p, pf.down ? aprintf("what Argo CD holds: %s", pf.argocd_err) : pf.argocd_err);
		else {
			for (size_t i = 0; i < g->nsteps; i++)
				if (runs[i] && g->steps[i]->kind == STEP_REGISTER && argocd_register_check(a, g->steps[i], &err) < 0)
					add(&p, aprintf("%s: %s", g->steps[i]->id, err));
			owners = owner_predict(c, a, &why);
			if (owners < 0)
				add(&u, why);
		}
	}
	if (push && (err = git_http_refused(c)))	/* a credential here that up would not send either */
		add(&p, err);
	else if (push && git_wants_credential(c))	/* no git token here: up needs one, a plan job may have none */
		add(&u, "the push: the GitOps remote asks for credentials (HTTP 401) and none are given here "
			"(IDPMAKE_GIT_TOKEN); up needs them");
	skew_problems(c, &p);
	kube_problems(c, runs, NULL, 0, &u);	/* a context that does not answer now: not checked */
	for (size_t i = 0; i < p.n; i++)
		error("%s", p.v[i]);
	*nrefused = p.n + (size_t)(owners > 0 ? owners : 0);
	if (*nrefused && p.n)
		fprintf(stderr, "idpmake: plan: up would refuse before the push: %zu problem%s\n", p.n, p.n == 1 ? "" : "s");
	for (size_t i = 0; i < u.n; i++)
		fprintf(stderr, "idpmake: plan: not checked: %s\n", u.v[i]);
	*unchecked = u.v;
	*nunchecked = u.n;
	if (a)
		argocd_close(a);
	return *nrefused ? PLAN_REFUSED : 0;
}
