/*
 * lsremote.c - a revision of another repository, resolved as Argo CD's
 * repo-server resolves it (lsremote.h).
 *
 * Argo CD takes a 40-hex revision as it is; otherwise it lists the remote's
 * refs and takes the one named by the revision, "refs/heads/REV" or
 * "refs/tags/REV" (HEAD when empty).  A revision that is a version range
 * (Argo CD picks the highest tag matching it) is not resolved here: a newer
 * tag may match it now.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "lsremote.h"
#include "status.h"
#include "url.h"
#include "util.h"

struct ref {
	const char *name;	/* arena */
	char id[41];
};

/* a remote listed this run: its refs, or none when it could not be listed */
struct listed {
	const char *url;
	struct ref *v;
	size_t n;
	int ok;
	struct listed *next;
};

static struct listed *seen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libgit2(void)
{
	git_libgit2_init();
}

static int allowed_scheme(const char *url)
{
	static const char *const ok[] = { "https://", "http://", "ssh://", "git://", "file://" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		if (!strncmp(url, ok[i], strlen(ok[i])))
			return 1;
	return 0;
}

/* git ls-remote url, without credentials */
static void list(struct listed *l)
{
	git_remote *r = NULL;
	git_remote_callbacks cb;
	git_proxy_options proxy;
	const git_remote_head **heads;
	size_t n;

	pthread_once(&init_once, init_libgit2);
	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);	/* no credentials callback: none is sent */
	git_proxy_options_init(&proxy, GIT_PROXY_OPTIONS_VERSION);
	proxy.type = GIT_PROXY_AUTO;
	if (status_verbose())
		fprintf(stderr, "idpmake: git ls-remote %s\n", url_masked(l->url, "***"));
	if (git_remote_create_detached(&r, l->url) == 0 &&
	    git_remote_connect(r, GIT_DIRECTION_FETCH, &cb, &proxy, NULL) == 0 && git_remote_ls(&heads, &n, r) == 0) {
		l->v = xcalloc(n + 1, sizeof(*l->v));
		for (size_t i = 0; i < n; i++) {
			l->v[i].name = astrdup(heads[i]->name);
			git_oid_tostr(l->v[i].id, sizeof(l->v[i].id), &heads[i]->oid);
		}
		l->n = n;
		l->ok = 1;
	} else if (status_verbose()) {
		const git_error *e = git_error_last();
		fprintf(stderr, "idpmake: cannot list %s: %s\n", url_masked(l->url, "***"),
			e && e->message ? e->message : "unknown error");
	}
	git_error_clear();
	if (r) {
		git_remote_disconnect(r);
		git_remote_free(r);
	}
}

static struct listed *listed(const char *url)
{
	struct listed *l;

	for (l = seen; l; l = l->next)
		if (!strcmp(l->url, url))
			return l;
	l = xcalloc(1, sizeof(*l));
	l->url = astrdup(url);
	list(l);
	l->next = seen;
	seen = l;
	return l;
}

/* does ref `name` (or its peeled "^{}" line) hold commit? */
static int ref_names(const struct listed *l, const char *name, const char *commit)
{
	const char *peeled = aprintf("%s^{}", name);
	int found = 0;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name) || !strcmp(l->v[i].name, peeled)) {
			found = 1;
			if (!strcmp(l->v[i].id, commit))
				return 1;
		}
	return found ? 0 : -1;
}

static int is_hex40(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

int lsremote_names(const char *url, const char *rev, const char *commit)
{
	const struct listed *l;
	int r = -1;

	if (!url || !rev || !commit || !is_hex40(commit))
		return 0;
	if (is_hex40(rev))
		return !strcmp(rev, commit);
	/* a version range, or anything a ref name cannot be */
	if (rev[strcspn(rev, "*^~<>=|, :?[\\")] || !allowed_scheme(url))
		return 0;
	pthread_mutex_lock(&lock);
	l = listed(url);
	if (l->ok) {
		if (!*rev || !strcmp(rev, "HEAD"))
			r = ref_names(l, "HEAD", commit);
		else if (!strncmp(rev, "refs/", 5))
			r = ref_names(l, rev, commit);
		else if ((r = ref_names(l, aprintf("refs/heads/%s", rev), commit)) < 0)
			r = ref_names(l, aprintf("refs/tags/%s", rev), commit);
	}
	pthread_mutex_unlock(&lock);
	return r == 1;
}
