/*
 * gitcreds.c - git.credentials (idpmake-distro(5)): the GitOps remote's
 * user and password read from a Secret of a cluster of the distro (Gitea's
 * gitea/gitea-credential, as the cnoe distro makes it), so that no token is
 * exported.  This file is the source base/gitcred.c reads when a fetch, a
 * push or repository:register first needs them, after the steps that make
 * the Secret (a bootstrap's, or an interrupted one's, hooks); a run that
 * needs neither reads nothing.  They are kept in memory only, never in the
 * environment; the distro's own remote only (a context that gives the
 * remote drops them: context.c).
 */
#include <stdlib.h>
#include <string.h>

#include "argo/kubectl.h"
#include "base/gitcred.h"
#include "base/util.h"
#include "distro/model.h"
#include "run/ctx.h"
#include "run/gitcreds.h"

static const struct distro *src;

static int read_secret(char **user, char **pw, const char **err)
{
	const struct secretref *r = &src->git.credentials.ref;
	const struct cluster *cl = find_cluster(src, r->cluster);
	const char *keys[3] = { src->git.credentials.user_key, src->git.credentials.password_key, NULL };
	const char *why = NULL;
	char *v[2] = { NULL, NULL };

	if (!cl)
		return *err = aprintf("git.credentials: no cluster '%s'", r->cluster), -1;
	if (kubectl_secret_values(cl, r->ns, r->name, keys, v, &why) < 0)	/* one read: no rotation between them */
		return *err = aprintf("git.credentials: %s", why), -1;
	*user = v[0], *pw = v[1];
	return 0;
}

void gitcreds_source(const struct ctx *c)
{
	static const char *const talks[] = { "up", "promote", "plan", "diff" };
	const struct secretref *r = &c->d->git.credentials.ref;
	const char *tok = getenv("IDPMAKE_GIT_TOKEN");
	size_t i;

	if (!r->name || (tok && *tok) || !c->command)
		return;	/* none, or the user's IDPMAKE_GIT_TOKEN wins, as ARGOCD_AUTH_TOKEN over argocd.login */
	for (i = 0; i < sizeof(talks) / sizeof(*talks) && strcmp(c->command, talks[i]); i++)
		;
	if (i == sizeof(talks) / sizeof(*talks) || !find_cluster(c->d, r->cluster))
		return;
	if (!c->d->git.remote || (strncmp(c->d->git.remote, "https://", 8) && strncmp(c->d->git.remote, "http://", 7)))
		return;	/* a local or ssh remote takes no user and password */
	src = c->d;
	gitcred_source(read_secret, aprintf("the password in Secret %s/%s (git.credentials)", r->ns, r->name));
}
