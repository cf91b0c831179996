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
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>

#include "intr.h"
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

/*
 * One listing, on a thread of its own: libgit2 1.5 has no timeout, and a
 * server that accepts the connection and never answers would hold the run
 * forever.  The caller waits at most IDPMAKE_LSREMOTE_TIMEOUT_MS (30 s) and
 * then leaves the thread to finish on its own; whoever is last frees the job.
 * The thread allocates with malloc, not in the arena.
 */
struct job {
	char *url;
	char **names;
	char (*ids)[41];
	size_t n;
	int ok, done, refs;
	char err[256];
	pthread_mutex_t m;
	pthread_cond_t cv;
};

static void job_drop(struct job *j)
{
	int last;

	pthread_mutex_lock(&j->m);
	last = --j->refs == 0;
	pthread_mutex_unlock(&j->m);
	if (!last)
		return;
	for (size_t i = 0; i < j->n; i++)
		free(j->names[i]);
	free(j->names);
	free(j->ids);
	free(j->url);
	pthread_mutex_destroy(&j->m);
	pthread_cond_destroy(&j->cv);
	free(j);
}

/* git ls-remote url, without credentials */
static void *list_thread(void *arg)
{
	struct job *j = arg;
	git_remote *r = NULL;
	git_remote_callbacks cb;
	git_proxy_options proxy;
	const git_remote_head **heads;
	size_t n;

	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);	/* no credentials callback: none is sent */
	git_proxy_options_init(&proxy, GIT_PROXY_OPTIONS_VERSION);
	proxy.type = GIT_PROXY_AUTO;
	if (git_remote_create_detached(&r, j->url) == 0 &&
	    git_remote_connect(r, GIT_DIRECTION_FETCH, &cb, &proxy, NULL) == 0 && git_remote_ls(&heads, &n, r) == 0) {
		j->names = xcalloc(n + 1, sizeof(*j->names));
		j->ids = xcalloc(n + 1, sizeof(*j->ids));
		for (size_t i = 0; i < n; i++) {
			j->names[i] = xstrdup(heads[i]->name);
			git_oid_tostr(j->ids[i], sizeof(j->ids[i]), &heads[i]->oid);
		}
		j->n = n;
		j->ok = 1;
	} else {
		const git_error *e = git_error_last();
		snprintf(j->err, sizeof(j->err), "%s", e && e->message ? e->message : "unknown error");
	}
	git_error_clear();
	if (r) {
		git_remote_disconnect(r);
		git_remote_free(r);
	}
	pthread_mutex_lock(&j->m);
	j->done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->m);
	job_drop(j);
	return NULL;
}

static long timeout_ms(void)
{
	const char *v = getenv("IDPMAKE_LSREMOTE_TIMEOUT_MS");
	char *end;
	long n;

	if (!v || !*v || (n = strtol(v, &end, 10), *end) || n <= 0)
		return 30000;
	return n;
}

static void list(struct listed *l)
{
	struct job *j = xcalloc(1, sizeof(*j));
	pthread_attr_t attr;
	pthread_t th;
	long left = timeout_ms();
	const char *why = NULL;
	int done = 0;

	pthread_once(&init_once, init_libgit2);
	if (status_verbose())
		fprintf(stderr, "idpmake: git ls-remote %s\n", url_masked(l->url, "***"));
	j->url = xstrdup(l->url);
	j->refs = 2;
	pthread_mutex_init(&j->m, NULL);
	pthread_cond_init(&j->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, list_thread, j)) {
		j->refs = 1;
		why = "cannot start a thread";
	}
	pthread_attr_destroy(&attr);
	/* in slices: an interrupt ends the wait */
	pthread_mutex_lock(&j->m);
	while (!why && !j->done && left > 0 && !interrupted()) {
		struct timespec ts;
		long slice = left < 100 ? left : 100;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += slice * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&j->cv, &j->m, &ts) == ETIMEDOUT)
			left -= slice;
	}
	done = j->done;
	pthread_mutex_unlock(&j->m);
	if (!why && !done)
		why = interrupted() ? "interrupted" : "no answer in time";
	else if (!why && j->ok) {
		l->v = xcalloc(j->n + 1, sizeof(*l->v));
		for (size_t i = 0; i < j->n; i++) {
			l->v[i].name = astrdup(j->names[i]);
			memcpy(l->v[i].id, j->ids[i], sizeof(l->v[i].id));
		}
		l->n = j->n;
		l->ok = 1;
	} else if (!why)
		why = astrdup(j->err);
	if (why && status_verbose())
		fprintf(stderr, "idpmake: cannot list %s: %s\n", url_masked(l->url, "***"), why);
	job_drop(j);
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
