/*
 * argoserver.c - which Argo CD server a run talks to (issue 33 #1).
 *
 * One resolution, first that names one wins:
 *   1. the distro's argocd.server (or a context chosen for the run with
 *      --context or IDPMAKE_CONTEXT, which stands for it: context.h);
 *   2. the default context's argocd-server (`context use`), filling in;
 *   3. the environment, as the argocd CLI reads it: ARGOCD_OPTS --server,
 *      else ARGOCD_SERVER, filling in.
 * The environment never replaces a server 1 or 2 named: argocd CLI users
 * keep ARGOCD_SERVER exported, and a distro naming its Argo CD must not be
 * synced elsewhere (nor the environment's token sent to it).  When both
 * name one and they differ, argocd_server_conflict says so and the run is
 * refused (targets_check for up and plan, argocd_open for every client).
 * A distro naming neither argocd.server nor argocd.repo-url that pushes to
 * a repository on this machine ignores the environment: no Argo CD could
 * read what it pushes (repourl.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argo/argocd.h"
#include "distro/context.h"
#include "distro/repourl.h"
#include "base/url.h"
#include "base/util.h"

const char *argocd_env_server(const char **from)
{
	const char *opt = argocd_opts_server(), *env = getenv("ARGOCD_SERVER");

	if (from)
		*from = opt ? "ARGOCD_OPTS --server" : "ARGOCD_SERVER";
	return opt ? opt : env && *env ? env : NULL;
}

int argocd_env_ignored(const struct distro *d)
{
	return !d->argocd.named && !d->argocd.server && argocd_env_server(NULL) && remote_is_local(d->git.remote);
}

const char *argocd_server(const struct distro *d)
{
	if (d->argocd.server)
		return d->argocd.server;
	return argocd_env_ignored(d) ? NULL : argocd_env_server(NULL);
}

/* host[:port][/path] in lower case, without a scheme, a trailing '/' or https' default port */
static const char *server_key(const char *s)
{
	const char *p = strstr(s, "://");
	char *k;
	size_t n;
	int https = !p || !strncasecmp(s, "https://", 8);

	k = astrdup(p ? p + 3 : s);
	for (char *q = k; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	n = strlen(k);
	while (n && k[n - 1] == '/')
		k[--n] = 0;
	if (https && n > 4 && !strcmp(k + n - 4, ":443") && !strchr(k, '/'))
		k[n - 4] = 0;
	return k;
}

int same_server(const char *a, const char *b)
{
	return a && b && !strcmp(server_key(a), server_key(b));
}

const char *argocd_server_from(const struct distro *d)
{
	const char *from;

	if (d->argocd.server)
		return context_gave_server() ? aprintf("context '%s'", context_active()->name) : "distro";
	return argocd_server(d) && argocd_env_server(&from) ? from : NULL;
}

const char *argocd_server_conflict(const struct distro *d)
{
	const char *from, *env = argocd_env_server(&from), *how;

	if (!d->argocd.server || !env || same_server(env, d->argocd.server))
		return NULL;
	how = !strcmp(from, "ARGOCD_SERVER") ? "unset ARGOCD_SERVER" : "remove --server from ARGOCD_OPTS";
	if (context_gave_server())
		return aprintf("the context '%s' (%s) names the Argo CD server %s, and %s names %s: refusing to guess "
			       "which one, or to send a token to another server; %s to use the context's, or name the "
			       "server in the distro's argocd.server",
			       context_active()->name, context_from(), url_masked(d->argocd.server, "***"), from,
			       url_masked(env, "***"), how);
	return aprintf("the distro names the Argo CD server %s (argocd.server), and %s names %s: refusing to guess "
		       "which one, or to send a token to another server; %s to use the distro's, or remove "
		       "argocd.server from the distro to let %s choose",
		       url_masked(d->argocd.server, "***"), from, url_masked(env, "***"), how, from);
}
