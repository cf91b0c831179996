/*
 * register.c - when the register steps run.
 *
 *   CLUSTER:register     a cluster with `register:`: upserted through
 *                        /api/v1/clusters, its labels set with PUT
 *                        updatedFields (argocd.c does the requests); every
 *                        sync to that cluster comes after it.
 *   repository:register  the GitOps repository with its credentials
 *                        (IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN), unless
 *                        argocd.repository says Argo CD already has it;
 *                        every sync comes after it.
 *
 * A key covers whether a credential is given and whom it is for (the
 * variable's name, the user name).  Without IDPMAKE_GIT_TOKEN,
 * repository:register has nothing to do and records nothing, so the next
 * run with the token registers the repository.  `--refresh` asks Argo CD (one
 * list of clusters, one of repositories) whether it still has what the
 * state says was registered, and registers again what it lost.
 *
 * Invariant: no credential, and no hash of one, reaches a key.  A rotated
 * token therefore does not re-register by itself; `idpmake forget
 * CLUSTER:register` does (idpmake(1)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "argo/argocd.h"
#include "argo/kubectl.h"
#include "distro/capi.h"
#include "run/provision.h"
#include "run/register.h"
#include "graph/state.h"
#include "graph/status.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "base/util.h"
#include "argo/argolist.h"

static int given(const char *var)
{
	const char *v = var ? getenv(var) : NULL;
	return v && *v;
}

static struct hash cluster_key(const struct planner *pl, const struct cluster *c)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "cluster");
	hasher_adds(h, pl->argocd_server);
	hasher_adds(h, c->server);
	hasher_adds(h, c->name);
	for (size_t i = 0; i < c->labels.n; i++) {
		hasher_adds(h, c->labels.v[i].key);
		hasher_adds(h, c->labels.v[i].value);
	}
	hasher_adds(h, "");
	/* where the credential comes from, never what it is */
	hasher_adds(h, c->reg.token_env);	/* never recorded done without it: the name is enough */
	hasher_adds(h, c->reg.kubeconfig);
	hasher_adds(h, c->reg.context);
	hasher_adds(h, c->reg.ca_file);
	hasher_add(h, &c->reg.insecure, sizeof(c->reg.insecure));
	return hasher_end(h);
}

static struct hash repo_key(const struct planner *pl)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "repository");
	hasher_adds(h, pl->argocd_server);
	hasher_adds(h, pl->rc.remote_url);
	/* that a credential is given (the step runs only then) and for whom: never the credential */
	hasher_adds(h, "IDPMAKE_GIT_TOKEN for");
	if (gitcred_has_source())	/* git.credentials: the Secret it is read from, so that no plan reads it */
		hasher_adds(h, url_git_token_name());
	else
		hasher_adds(h, given("IDPMAKE_GIT_USERNAME") ? getenv("IDPMAKE_GIT_USERNAME") : "git");
	return hasher_end(h);
}

/*
 * credential: kubeconfig: the register row's record is "RESOURCEVERSION
 * notafter=UNIX" (argocapireg.c), the Secret it read and when the client
 * certificate it registered expires
 */
#define RENEW_DAYS 30

static const char *rec_rv(const char *commit)
{
	return commit ? astrndup(commit, strcspn(commit, " ")) : NULL;
}

static long long rec_not_after(const char *commit)
{
	const char *p = commit ? strstr(commit, " notafter=") : NULL;
	return p ? strtoll(p + 10, NULL, 10) : -1;
}

/*
 * credential: kubeconfig, up to date: from 30 days before the notAfter of
 * the certificate it registered (by the local clock), it reads the
 * Secret's resourceVersion (kubectl, no request to Argo CD) and registers
 * again once Cluster API has rotated it; until then it says so.  A record
 * from before notAfter was recorded registers once, to record it.
 */
static void renew(struct step *s, const struct record *rec)
{
	const struct capi *k = s->cluster->create.capi;
	long long na = rec_not_after(rec->commit), now = (long long)time(NULL);
	const char *rv, *err = NULL;
	time_t t = (time_t)na;
	char day[32];
	struct tm tm;

	if (!rec->commit || !strstr(rec->commit, " notafter=")) {
		s->dirty = 1;
		s->reason = R_FORCED;
		s->why = "the notAfter of the client certificate registered is not recorded (an earlier idpmake "
			 "registered it): registering it again";
		return;
	}
	if (na <= 0 || now < na - RENEW_DAYS * 86400LL)
		return;
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
	if (!(rv = kubectl_secret_rv(k->mgmt, k->namespace, aprintf("%s-kubeconfig", s->cluster->name), &err))) {
		warn("%s: the client certificate registered %s on %s, and the kubeconfig Secret cannot be read: %s",
		     s->id, now >= na ? "expired" : "expires", day, err);
		return;
	}
	if (!strcmp(rv, rec_rv(rec->commit))) {
		warn("%s: the client certificate registered %s on %s, and Cluster API has not rotated the kubeconfig "
		     "Secret yet", s->id, now >= na ? "expired" : "expires", day);
		return;
	}
	s->dirty = 1;
	s->reason = R_FORCED;
	s->why = aprintf("the client certificate registered for '%s' %s on %s (%d days or less) and the kubeconfig "
			 "Secret was rotated: registering its new certificate", s->cluster->name,
			 now >= na ? "expired" : "expires", day, RENEW_DAYS);
}

void register_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	if (!pl->argocd_server) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "skipped: no argocd configured";
		return;
	}
	if (!s->cluster && !gitcred_given()) {
		/* nothing to register, and nothing recorded: a later run with the token registers */
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "no IDPMAKE_GIT_TOKEN: the repository is left to Argo CD's own settings";
		return;
	}
	s->key = s->cluster ? cluster_key(pl, s->cluster) : repo_key(pl);
	if (s->cluster && s->cluster->create.capi) {
		/* made through Cluster API: its incarnation (the provision's output) joins the key */
		struct hasher *h = hasher_new();
		const struct capi *k = s->cluster->create.capi;
		hasher_addh(h, s->key);
		hasher_adds(h, k->management);
		hasher_adds(h, k->namespace);
		hasher_add(h, &k->credential, sizeof(k->credential));
		for (size_t i = 0; i < s->nin; i++)
			if (s->in[i]->kind == STEP_PROVISION) {
				if (provision_makes(s->in[i])) {
					s->dirty = 1;
					s->reason = R_UPSTREAM;
					s->why = aprintf("once %s has made the cluster", s->in[i]->id);
					(void)hasher_end(h);	/* freed */
					return;
				}
				hasher_addh(h, s->in[i]->output);
			}
		s->key = hasher_end(h);
		if (k->credential == CRED_EXTERNAL && rec->have && rec->commit &&	/* a failed run's too */
		    !strncmp(rec->commit, "labels ", 7))
			s->recorded = rec->commit;	/* the labels it set last time: argocapireg.c drops those gone */
	}
	if (s->drift) {
		/* --refresh: Argo CD lost it (register_refresh) */
		s->dirty = 1;
		s->reason = R_FORCED;
		s->why = s->drift;
		return;
	}
	plan_compare(s, rec, s->cluster ? "the cluster's server, name, labels or credential source changed"
				       : "the repository, the Argo CD server or the credential given changed");
	if (!s->dirty && s->cluster && s->cluster->create.capi && s->cluster->create.capi->credential == CRED_KUBECONFIG)
		renew(s, rec);
}

/* a server or repository URL as Argo CD compares them: no trailing '/' (nor ".git" for a repository) */
static const char *norm(const char *u, int repo)
{
	size_t n = strlen(u);

	while (n && u[n - 1] == '/')
		n--;
	if (repo && n > 4 && !strncasecmp(u + n - 4, ".git", 4))
		n -= 4;
	return astrndup(u, n);
}

static int listed(const char *const *v, int n, const char *u, int repo)
{
	const char *want = norm(u, repo);

	for (int i = 0; i < n; i++)
		if (!strcasecmp(norm(v[i], repo), want))
			return 1;
	return 0;
}

/* is `name` one of v[n] (Argo CD's cluster names, as it compares them: exactly)? */
static int named(const char *const *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

void register_refresh(struct planner *pl, struct argocd *a)
{
	const char **clusters = NULL, **repos = NULL, **names = NULL;
	int nclusters = -2, nrepos = -2, nnames = -2;

	for (size_t i = 0; i < pl->g->nsteps; i++) {
		struct step *s = pl->g->steps[i];
		struct record rec;
		const char *err = NULL;
		if (s->kind != STEP_REGISTER || !s->selected || !pl->argocd_server)
			continue;
		rec = state_step(pl->st, s->id);
		if (!rec.have || !rec.ok || hash_zero(rec.key) ||
		    (!(s->cluster && s->cluster->create.capi) &&	/* its key has its incarnation: decided later */
		     !hash_eq(rec.key, s->cluster ? cluster_key(pl, s->cluster) : repo_key(pl))))
			continue;	/* it runs anyway */
		if (s->cluster && s->cluster->create.capi) {
			/* made through Cluster API: does Argo CD still have it (by name: its server is the Secret's)? */
			const struct capi *k = s->cluster->create.capi;
			const char *rv;
			if (k->credential != CRED_EXTERNAL) {
				if (nnames == -2 && (nnames = argocd_list_field(a, "clusters", "name", &names, &err)) < 0)
					warn("--refresh: cannot list Argo CD's clusters: %s", err);
				if (nnames >= 0 && !named(names, nnames, s->cluster->name)) {
					s->drift = aprintf("drift: Argo CD no longer has cluster '%s' (made through Cluster API "
							   "on '%s'): registering it again", s->cluster->name, k->management);
					goto said;
				}
			}
			/* has its kubeconfig Secret been rotated since (a new resourceVersion)? */
			if (k->credential != CRED_KUBECONFIG && k->credential != CRED_SERVICE_ACCOUNT)
				continue;
			if (!(rv = kubectl_secret_rv(k->mgmt, k->namespace, aprintf("%s-kubeconfig", s->cluster->name), &err)))
				warn("--refresh: %s: cannot read the kubeconfig Secret: %s", s->id, err);
			else if (rec.commit && strcmp(rec_rv(rec.commit), "-") && strcmp(rec_rv(rec.commit), rv) &&
				 k->credential == CRED_KUBECONFIG)
				s->drift = aprintf("drift: the kubeconfig Secret of '%s' was rotated (resourceVersion %s, now %s): "
						   "registering its new certificate", s->cluster->name, rec_rv(rec.commit), rv);
			else if (rec.commit && strcmp(rec_rv(rec.commit), rv) && status_verbose())
				fprintf(stderr, "idpmake: %s: the kubeconfig Secret was rotated; the service account's "
					"token registered does not change\n", s->id);
		} else if (s->cluster) {
			if (!s->cluster->server)
				continue;
			if (nclusters == -2 && (nclusters = argo_listed(a, 0, &clusters, &err)) < 0)
				warn("--refresh: cannot list Argo CD's clusters: %s", err);
			if (nclusters >= 0 && !listed(clusters, nclusters, s->cluster->server, 0))
				s->drift = aprintf("drift: Argo CD no longer has cluster '%s' (%s)", s->cluster->name,
						   s->cluster->server);
		} else {
			if (!gitcred_given())
				continue;	/* nothing registered: Argo CD's own settings */
			if (nrepos == -2 && (nrepos = argo_listed(a, 1, &repos, &err)) < 0)
				warn("--refresh: cannot list Argo CD's repositories: %s", err);
			if (nrepos >= 0 && !listed(repos, nrepos, argocd_repo_url(pl->g->d, pl->statedir), 1))
				s->drift = aprintf("drift: Argo CD no longer has the repository %s",
						   argocd_repo_url(pl->g->d, pl->statedir));
		}
	said:
		if (s->drift && status_verbose())
			fprintf(stderr, "idpmake: %s: %s\n", s->id, s->drift);
	}
}
