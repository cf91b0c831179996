/*
 * gitcreds.c - git.credentials (idpmake-distro(5)): the GitOps remote's
 * user and password read from a Secret of a cluster of the distro (Gitea's
 * gitea/gitea-credential, as the cnoe distro makes it), so that no token is
 * exported.  They go where IDPMAKE_GIT_USERNAME and IDPMAKE_GIT_TOKEN go:
 * this process's environment, which no child gets (exec.c's allowlist);
 * the distro's own remote only (a context that gives the remote drops
 * them: context.c); and Argo CD's repository:register, as a token would.
 */
#include <stdlib.h>
#include <string.h>

#include "argo/kubectl.h"
#include "base/url.h"
#include "base/util.h"
#include "distro/model.h"
#include "run/ctx.h"
#include "run/gitcreds.h"

void gitcreds_load(const struct ctx *c)
{
	static const char *const talks[] = { "up", "promote", "plan", "diff" };
	const struct secretref *r = &c->d->git.credentials.ref;
	const struct cluster *cl;
	const char *tok = getenv("IDPMAKE_GIT_TOKEN"), *err = NULL;
	char *user = NULL, *pw = NULL;
	size_t i;

	if (!r->name || (tok && *tok) || !c->command)
		return;	/* none, or the user's IDPMAKE_GIT_TOKEN wins, as ARGOCD_AUTH_TOKEN over argocd.login */
	for (i = 0; i < sizeof(talks) / sizeof(*talks) && strcmp(c->command, talks[i]); i++)
		;
	if (i == sizeof(talks) / sizeof(*talks) || !(cl = find_cluster(c->d, r->cluster)))
		return;
	if ((pw = kubectl_secret_value(cl, r->ns, r->name, c->d->git.credentials.password_key, &err)) &&
	    (user = kubectl_secret_value(cl, r->ns, r->name, c->d->git.credentials.user_key, &err))) {
		setenv("IDPMAKE_GIT_USERNAME", user, 1);	/* never passed to a child (exec.c) */
		setenv("IDPMAKE_GIT_TOKEN", pw, 1);
		url_git_token_from(aprintf("the password in Secret %s/%s (git.credentials)", r->ns, r->name));
	} else {
		warn("git.credentials: %s: the GitOps remote gets no credentials from it", err);
	}
	if (user) {
		memset(user, 0, strlen(user));
		free(user);
	}
	if (pw) {
		memset(pw, 0, strlen(pw));
		free(pw);
	}
}
