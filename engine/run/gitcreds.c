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

const char *gitcreds_load(const struct ctx *c)
{
	static const char *const talks[] = { "up", "promote", "plan", "diff" };
	const struct secretref *r = &c->d->git.credentials.ref;
	const struct cluster *cl;
	const char *tok = getenv("IDPMAKE_GIT_TOKEN"), *err = NULL;
	const char *keys[3] = { NULL, NULL, NULL };
	char *user = NULL, *pw = NULL, *v[2];
	size_t i;
	const char *ret = NULL;

	if (!r->name || (tok && *tok) || !c->command)
		return NULL;	/* none, or the user's IDPMAKE_GIT_TOKEN wins, as ARGOCD_AUTH_TOKEN over argocd.login */
	for (i = 0; i < sizeof(talks) / sizeof(*talks) && strcmp(c->command, talks[i]); i++)
		;
	if (i == sizeof(talks) / sizeof(*talks) || !(cl = find_cluster(c->d, r->cluster)))
		return NULL;
	if (!c->d->git.remote || (strncmp(c->d->git.remote, "https://", 8) && strncmp(c->d->git.remote, "http://", 7)))
		return NULL;	/* a local or ssh remote takes no user and password */
	keys[0] = c->d->git.credentials.user_key;
	keys[1] = c->d->git.credentials.password_key;
	if (kubectl_secret_values(cl, r->ns, r->name, keys, v, &err) == 0) {	/* one read: no rotation between them */
		user = v[0], pw = v[1];
		setenv("IDPMAKE_GIT_USERNAME", user, 1);	/* never passed to a child (exec.c) */
		setenv("IDPMAKE_GIT_TOKEN", pw, 1);
		url_git_token_from(aprintf("the password in Secret %s/%s (git.credentials)", r->ns, r->name));
	} else {
		ret = aprintf("git.credentials: %s: the GitOps remote gets no credentials from it", err);
	}
	if (user) {
		memwipe(user, strlen(user));
		free(user);
	}
	if (pw) {
		memwipe(pw, strlen(pw));
		free(pw);
	}
	return ret;
}
