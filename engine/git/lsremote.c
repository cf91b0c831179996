/*
 * lsremote.c - a revision of another repository, resolved as Argo CD's
 * repo-server resolves it (lsremote.h).
 *
 * Argo CD takes a 40-hex revision as it is; otherwise it lists the remote's
 * refs and takes the first, in the server's order, whose name or short name
 * is the revision (HEAD when empty): "feature/x" is refs/feature/x before
 * refs/heads/feature/x.  A revision that is a version range (Argo CD picks
 * the highest tag matching it, "1.x" included) is not resolved here: a newer
 * tag may match it now.  Nor is a truncated commit, which Argo CD takes as
 * it is when no ref has its name.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>

#include "base/intr.h"
#include "git/lsremote.h"
#include "graph/status.h"
#include "base/url.h"
#include "base/util.h"

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
	git_remote_connect_options o;
	const git_remote_head **heads;
	size_t n;

	git_remote_connect_options_init(&o, GIT_REMOTE_CONNECT_OPTIONS_VERSION);	/* no credentials callback: none is sent */
	o.proxy_opts.type = GIT_PROXY_AUTO;
	o.follow_redirects = GIT_REMOTE_REDIRECT_NONE;	/* as Argo CD's client: a redirect is not listed */
	if (git_remote_create_detached(&r, j->url) == 0 && git_remote_connect_ext(r, GIT_DIRECTION_FETCH, &o) == 0 &&
	    git_remote_ls(&heads, &n, r) == 0) {
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

/* go-git's ReferenceName.Short(), which Argo CD compares a revision with */
static const char *short_name(const char *name)
{
	static const char *const prefix[] = { "refs/heads/", "refs/tags/", "refs/remotes/", "refs/" };

	for (size_t i = 0; i < sizeof(prefix) / sizeof(*prefix); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return name + strlen(prefix[i]);
	return name;
}

/*
 * Argo CD's pick (util/git/client.go lsRemote): the first ref, in the
 * server's order, whose name or short name is rev; does it, or the commit
 * its tag peels to, hold commit?  1, 0, or -1 when no ref is rev.
 */
static int ref_names(const struct listed *l, const char *rev, const char *commit)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *name = l->v[i].name;
		size_t len = strlen(name);
		if (len > 3 && !strcmp(name + len - 3, "^{}"))
			continue;	/* a peeled line: go-git's short name keeps the "^{}" */
		if (strcmp(name, rev) && strcmp(short_name(name), rev))
			continue;
		if (!strcmp(l->v[i].id, commit))
			return 1;
		for (size_t j = 0; j < l->n; j++)
			if (!strncmp(l->v[j].name, name, len) && !strcmp(l->v[j].name + len, "^{}"))
				return !strcmp(l->v[j].id, commit);
		return 0;
	}
	return -1;
}

static int is_hex40(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

/*
 * A semantic version range Argo CD resolves to its highest matching tag
 * (Masterminds' constraints): an operator, or a wildcard part, "1.x",
 * "v2.X.0", "x".  Taken widely: a revision taken for a range is not proven,
 * which costs a sync.
 */
static int version_range(const char *rev)
{
	const char *p = rev;
	size_t n;
	int wild = 0;

	if (rev[strcspn(rev, "*^~<>=|, !")])
		return 1;
	if (*p == 'v' || *p == 'V')
		p++;
	n = strcspn(p, "-+");	/* a pre-release or build suffix */
	if (!n || strspn(p, "0123456789xX.") < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		wild |= p[i] == 'x' || p[i] == 'X';
	return wild;
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
	if (version_range(rev) || rev[strcspn(rev, ":?[\\")] || !allowed_scheme(url))
		return 0;
	pthread_mutex_lock(&lock);
	l = listed(url);
	if (l->ok)
		r = ref_names(l, *rev ? rev : "HEAD", commit);
	pthread_mutex_unlock(&lock);
	return r == 1;
}
