/* repourl.c - argocd.repo-url and the remote Argo CD cannot read (repourl.h) */
#include <string.h>
#include <strings.h>

#include "distro/context.h"
#include "distro/conv.h"
#include "distro/repourl.h"
#include "base/url.h"
#include "base/util.h"

/*
 * A user name that looks like a token: a known token prefix, 32
 * characters or more, or 20 hex digits or more.  An https remote takes a
 * token as its user name (https://TOKEN@host/...); a user name it cannot
 * tell from one is refused like a password.
 */
static int looks_like_token(const char *user)
{
	static const char *const prefix[] = { "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-",
					      "glrt-", "glptt-", "gloas-", "ATBB", "ATCTT" };
	size_t n = strlen(user);

	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(user, prefix[i], strlen(prefix[i])))
			return 1;
	return n >= 32 || (n >= 20 && strspn(user, "0123456789abcdefABCDEF") == n);
}

int remote_has_password(const char *remote)
{
	struct url u;

	if (!remote)
		return 0;
	if (url_parse(remote, &u) == 0)
		return u.password != NULL ? 1 : u.user && looks_like_token(u.user) ? 2 : 0;
	/* not parseable but written as a URL with user info: url_masked cannot tell where a password ends */
	return url_has_scheme(remote) && strchr(remote, '@') && strchr(strstr(remote, "://") + 3, ':') &&
	       strchr(strstr(remote, "://") + 3, ':') < strrchr(remote, '@');
}

/* user@host:path or host:path, as git reads a remote with no scheme (a '/' before the ':' makes it a path) */
static int scp_like(const char *s)
{
	const char *colon = strchr(s, ':'), *slash = strchr(s, '/');

	return colon && colon != s && (!slash || slash > colon);
}

int remote_is_local(const char *remote)
{
	if (!remote)
		return 1;	/* STATE/gitops.git */
	if (!strncasecmp(remote, "file://", 7))
		return 1;
	return !url_has_scheme(remote) && !scp_like(remote);
}

void repo_url_conv(struct distro *d, const struct ynode *n)
{
	const char *s = str(n, "repo-url");

	if (!s)
		return;
	if ((!url_has_scheme(s) && !scp_like(s)) || term_safe(s) != s || strchr(s, ' ')) {	/* no controls, no space */
		loc_error(n->loc, "argocd.repo-url must be a URL Argo CD reads the GitOps repository from "
			  "(https://..., ssh://..., git@host:path, file:///path), not '%s'", term_safe(s));
		return;
	}
	/* a user name alone is how ssh reads one (ssh://git@host/path, git@host:path); a password never */
	if (url_userinfo(s) && (url_has_scheme(s) ? strncmp(s, "ssh://", 6) || remote_has_password(s)
					       : !!memchr(s, ':', strcspn(s, "@")))) {
		loc_error(n->loc, "argocd.repo-url must not hold a user name or password ('%s'): Argo CD has its "
			  "own credentials for the repository", url_userinfo(s));
		return;
	}
	d->argocd.repo_url = s;
}

void repo_url_check(const struct distro *d)
{
	if (!d->argocd.named || d->argocd.repo_url || !d->git.remote || !remote_is_local(d->git.remote))
		return;
	loc_error(d->git.remote_loc, "git.remote '%s' is a repository on this machine, which the Argo CD of argocd.server "
		  "cannot read: push to a git server Argo CD reaches, or say where Argo CD reads it with argocd.repo-url "
		  "(the argocd block is at line %d)", d->git.remote, d->argocd.loc.line);
}

const char *repo_url_state_repo(const struct distro *d)
{
	if (!d->argocd.named || d->argocd.repo_url || d->git.remote)
		return NULL;
	return aprintf("%s:%d:%d: error: the GitOps repository is the state's own .idpmake/gitops.git (no git.remote, "
		       "nor one from a context), which Argo CD cannot read: set git.remote to a git server Argo CD "
		       "reaches, or say where Argo CD reads it with argocd.repo-url",
		       d->argocd.loc.file, d->argocd.loc.line, d->argocd.loc.col);
}
