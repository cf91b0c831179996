/*
 * argowatch.c - the run's Applications through one watch stream (issue 26):
 * waiting for a sync asks Argo CD nothing per Application; one stream tells
 * every waiter when its Application changes.
 *
 *     GET /api/v1/stream/applications?selector=idpmake.io/distro%3DNAME&appNamespace=NS
 *     Accept: text/event-stream
 *
 * What Argo CD sends (server/application/application.go Watch; the HTTP
 * side is argoproj/pkg grpc/http NewStreamForwarder): first every
 * Application the selector matches, as ADDED, then each change, one event
 * each, `data: {"result": {"type": T, "application": APP}} ` and a blank
 * line; a line ":" every 15 s keeps it alive.  An error ends it with
 * `{"error": {...}}`.  Argo CD does not replay from a resourceVersion (it
 * only leaves out older ones and the first list), so a dropped stream is
 * opened again without one: the list comes again, and each waiter takes
 * only a resourceVersion above the one it has.
 *
 *     NONE --first watch_wait--> OPEN --bytes--> LIVE --drop--> OPEN (again)
 *                                  |                              |
 *                                  +-- refused (404, 501, 403), nothing in FIRST_MS
 *                                  |   (a proxy that buffers), REOPENS drops in a row
 *                                  v
 *                                 GONE: warned once; the waiters poll (argocd.c)
 *
 * Invariants:
 *   1. One reader thread per run; the waiters share `mu`, and sleep on `cv`
 *      in slices of at most max_ms, so an interrupt or a deadline is seen.
 *   2. An event line is at most BODY_CAP bytes, and at most MAX_APPS
 *      Applications are kept: more gives the stream up (memory is bounded).
 *   3. The token goes only in the Authorization header (argocd_curl_setup);
 *      nothing of an event is printed.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/intr.h"
#include "base/url.h"
#include "base/util.h"

#define FIRST_MS 15000L	/* Argo CD sends the first list at once, and ":" every 15 s: nothing by then is a proxy that buffers */
#define IDLE_MS 45000L		/* a live stream says ":" every 15 s: nothing for this long is a dead one */
#define REOPENS 3		/* drops in a row with no event between them before it is given up */
#define REOPEN_MAX 30		/* opens in one run before it is given up (a proxy that cuts it short) */
#define REOPEN_MS 100L		/* at least this long between two opens */
#define MAX_APPS 100000		/* Applications kept (invariant 2) */

enum { W_OPEN, W_LIVE, W_GONE };

struct seen {
	char *name;
	json_t *app;
	long long rv;
};

struct watch {
	struct argocd *a;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state, stop;
	struct seen *v;
	size_t n, cap;
	struct buf line;		/* the event being read */
	int events;			/* events in this connection */
	double opened, last_byte;	/* now_s() of the connection and of its last byte */
	int bytes;			/* any byte in this connection */
	const char *why;		/* why it was given up (arena) */
	unsigned long opens;
};

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

long long app_rv(json_t *app)
{
	const char *s = jstr(app, "metadata.resourceVersion");
	return *s ? strtoll(s, NULL, 10) : 0;
}

/* keep the newest Application of its name; -1 past MAX_APPS.  Under w->mu. */
static int keep(struct watch *w, json_t *app)
{
	const char *name = jstr(app, "metadata.name");
	long long rv = app_rv(app);
	size_t i = 0;

	if (!*name)
		return 0;
	while (i < w->n && strcmp(w->v[i].name, name))
		i++;
	if (i == w->n) {
		if (w->n == MAX_APPS)
			return -1;
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 64;
			w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
		}
		w->v[w->n++] = (struct seen){ xstrdup(name), NULL, -1 };
	}
	if (rv < w->v[i].rv)
		return 0;	/* an older state (the list again after a reopen) */
	json_decref(w->v[i].app);
	w->v[i].app = json_incref(app);
	w->v[i].rv = rv;
	return 0;
}

/* one event line ("data: JSON", or JSON alone); -1 gives the stream up.  Under w->mu. */
static int event(struct watch *w, const char *s, size_t n)
{
	json_t *doc, *res, *app;
	int r = 0;

	if (n >= 5 && !strncmp(s, "data:", 5))
		s += 5, n -= 5;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (!n || *s == ':')
		return 0;	/* a blank line ends an event; ":" is the keep-alive */
	if (!(doc = json_loadb(s, n, 0, NULL)))
		return 0;	/* not JSON: not an event */
	if (json_object_get(doc, "error")) {
		w->why = aprintf("Argo CD ended the watch stream: %s",
				 clean(w->a, jstr(doc, "error.message"), strlen(jstr(doc, "error.message"))));
		r = -1;
	} else if ((res = json_object_get(doc, "result")) && (app = json_object_get(res, "application")) &&
		   json_is_object(app) && strcmp(jstr(res, "type"), "DELETED")) {
		if ((r = keep(w, app)) < 0)
			w->why = aprintf("the watch stream names more than %d Applications", MAX_APPS);
		w->events++;
		pthread_cond_broadcast(&w->cv);
	}
	json_decref(doc);
	return r;
}

static size_t on_bytes(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct watch *w = ctx;
	size_t len = size * nmemb;
	int bad = 0;

	pthread_mutex_lock(&w->mu);
	w->bytes = 1;
	w->last_byte = now_s();
	w->state = W_LIVE;
	for (size_t i = 0; i < len && !bad; i++) {
		if (p[i] != '\n') {
			if (w->line.len >= BODY_CAP) {
				w->why = aprintf("a watch event is longer than %u bytes", BODY_CAP);
				bad = 1;
				break;
			}
			buf_addc(&w->line, p[i]);
			continue;
		}
		bad = event(w, w->line.s, w->line.len) < 0;
		buf_reset(&w->line);
	}
	pthread_mutex_unlock(&w->mu);
	return bad ? 0 : len;
}

/* libcurl's progress callback (about once a second, and with data): nonzero ends the transfer */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct watch *w = ctx;
	double now = now_s();
	int end;

	(void)dt, (void)dn, (void)ut, (void)un;
	pthread_mutex_lock(&w->mu);
	if (!w->bytes && (now - w->opened) * 1000 > FIRST_MS)
		w->why = aprintf("the watch stream sent nothing in %ld s (a proxy that buffers it?)", FIRST_MS / 1000);
	end = w->stop || interrupted() || (!w->bytes && w->why) || (w->bytes && (now - w->last_byte) * 1000 > IDLE_MS);
	pthread_mutex_unlock(&w->mu);
	return end;
}

static void give_up(struct watch *w, const char *why)
{
	pthread_mutex_lock(&w->mu);
	if (w->state != W_GONE && !w->stop)
		warn("argocd: %s; waiting by polling each Application instead", w->why ? w->why : why);
	w->state = W_GONE;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void *reader(void *ctx)
{
	struct watch *w = ctx;
	struct argocd *a = w->a;
	const char *url = aprintf("%s/api/v1/stream/applications?selector=%s&appNamespace=%s", a->base,
				  url_escape(aprintf("idpmake.io/distro=%s", a->d->name ? a->d->name : "")),
				  url_escape(a->d->argocd.namespace));
	CURL *k = curl_easy_init();
	int drops = 0;

	for (;;) {
		char ebuf[CURL_ERROR_SIZE];
		struct curl_slist *h;
		long status = 0;
		CURLcode rc;
		if (!k) {
			give_up(w, "cannot start a libcurl handle for the watch stream");
			break;
		}
		h = argocd_curl_setup(a, k, url, "Accept: text/event-stream", ebuf, NULL);
		curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_bytes);
		curl_easy_setopt(k, CURLOPT_WRITEDATA, w);
		curl_easy_setopt(k, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(k, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(k, CURLOPT_XFERINFODATA, w);
		pthread_mutex_lock(&w->mu);
		w->opened = now_s();
		w->bytes = w->events = 0;
		w->opens++;
		buf_reset(&w->line);
		pthread_mutex_unlock(&w->mu);
		rc = curl_easy_perform(k);
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
		curl_slist_free_all(h);
		pthread_mutex_lock(&w->mu);
		if (w->stop || interrupted()) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		drops = w->events ? 0 : drops + 1;
		pthread_mutex_unlock(&w->mu);
		if (status && status != 200) {
			give_up(w, aprintf("Argo CD answered the watch stream with HTTP %ld", status));
			break;
		}
		if (w->why || drops >= REOPENS || w->opens >= REOPEN_MAX) {
			give_up(w, aprintf("the watch stream dropped %s (%s)",
					   drops >= REOPENS ? aprintf("%d times in a row", drops)
							    : aprintf("%lu times in this run", w->opens),
					   rc == CURLE_OK ? "ended" : *ebuf ? ebuf : curl_easy_strerror(rc)));
			break;
		}
		if (a->verbose)
			fprintf(stderr, "idpmake: argocd: the watch stream ended (%s); opening it again\n",
				rc == CURLE_OK ? "by the server" : *ebuf ? ebuf : curl_easy_strerror(rc));
		nap(REOPEN_MS + (drops ? a->backoff_ms << (drops - 1) : 0));
	}
	if (k)
		curl_easy_cleanup(k);
	return NULL;
}

/* the run's watch, started at the first wait; NULL when it is off or gone */
static struct watch *watch_of(struct argocd *a)
{
	struct watch *w;
	const char *env = getenv("IDPMAKE_ARGOCD_WATCH");

	pthread_mutex_lock(&start_lock);
	if (!a->watch && !a->watch_off && env && !strcmp(env, "0"))
		a->watch_off = 1;
	if (!a->watch && !a->watch_off) {
		w = xcalloc(1, sizeof(*w));
		w->a = a;
		w->line = (struct buf)BUF_INIT;
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		if (pthread_create(&w->thread, NULL, reader, w)) {
			a->watch_off = 1;
			free(w);
		} else {
			a->watch = w;
			a->watch_end = watch_stop;
		}
	}
	w = a->watch_off ? NULL : a->watch;
	pthread_mutex_unlock(&start_lock);
	return w;
}

int watch_wait(struct argocd *a, const char *name, long long *rv, long max_ms, json_t **app)
{
	struct watch *w = watch_of(a);
	struct timespec until;
	int r = 0;

	*app = NULL;
	if (!w)
		return -1;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += (max_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		size_t i = 0;
		if (w->state == W_GONE) {
			r = -1;
			break;
		}
		while (i < w->n && strcmp(w->v[i].name, name))
			i++;
		if (i < w->n && w->v[i].rv > *rv) {
			*app = json_incref(w->v[i].app);
			*rv = w->v[i].rv;
			r = 1;
			break;
		}
		if (interrupted())
			break;
		/* slices of 200 ms at most: an interrupt sets a flag, it signals no one */
		{
			struct timespec now, slice;
			clock_gettime(CLOCK_REALTIME, &now);
			if (now.tv_sec > until.tv_sec || (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
				break;
			slice = now;
			slice.tv_nsec += 200000000L;
			if (slice.tv_nsec >= 1000000000L)
				slice.tv_sec++, slice.tv_nsec -= 1000000000L;
			if (slice.tv_sec > until.tv_sec || (slice.tv_sec == until.tv_sec && slice.tv_nsec > until.tv_nsec))
				slice = until;
			pthread_cond_timedwait(&w->cv, &w->mu, &slice);
		}
	}
	pthread_mutex_unlock(&w->mu);
	if (r < 0) {
		pthread_mutex_lock(&start_lock);
		a->watch_off = 1;
		pthread_mutex_unlock(&start_lock);
	}
	return r;
}

/*
 * A wave's bake on the stream (argocd_bake_watch, build.h's sync_ops
 * .watch): what it keeps per step between calls.  A step's Application
 * that the stream does not carry (its labels are not idpmake's: an
 * argocd-app package) is handed back every poll_ms, to be looked at as
 * when polling.
 */
struct bake {
	size_t n;
	struct bake_app {
		char *name;		/* NULL: no name (verify says why) */
		size_t slot;		/* its index in the watch's v, or (size_t)-1 */
		long long rv;		/* judged up to this resourceVersion */
		char *rev, *spec;	/* what it was when last judged: revision(s) and spec */
		int healthy;		/* the package waits for Healthy */
		double next_poll;	/* not on the stream: when to hand it back */
	} *v;
};

static void bake_free(struct bake *b)
{
	for (size_t i = 0; b && i < b->n; i++) {
		free(b->v[i].name);
		free(b->v[i].rev);
		free(b->v[i].spec);
	}
	if (b)
		free(b->v);
	free(b);
}

/*
 * Is this state of the Application one to look at (verify)?  The first one
 * is (verify compares it with what idpmake sent), and then one that is no
 * longer Synced (and Healthy) or whose revision or spec moved.  It becomes
 * the one judged.  Under w->mu.
 */
static int off(struct bake_app *e, json_t *app)
{
	char *revs = json_dumps(jget(app, "status.sync.revisions"), JSON_COMPACT | JSON_ENCODE_ANY);
	char *spec = json_dumps(json_object_get(app, "spec"), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	const char *rev = aprintf("%s %s", jstr(app, "status.sync.revision"), revs ? revs : "");
	int r = !e->rev ||	/* the first look: its spec and revision against what idpmake sent */
		strcmp(jstr(app, "status.sync.status"), "Synced") ||
		(e->healthy && strcmp(jstr(app, "status.health.status"), "Healthy")) ||
		(e->rev && strcmp(e->rev, rev)) || (e->spec && strcmp(e->spec, spec ? spec : ""));

	free(revs);
	free(e->rev);
	free(e->spec);
	e->rev = xstrdup(rev);
	e->spec = spec ? spec : xstrdup("");
	return r;
}

int argocd_bake_watch(void *ctx, struct step *const *steps, size_t n, void **state, long max_ms, size_t *which)
{
	struct argocd *a = ctx;
	struct bake *b = *state;
	struct watch *w;
	double until = now_s() + max_ms / 1000.0;
	int r = 0;

	if (!n) {
		bake_free(b);
		*state = NULL;
		return 0;
	}
	if (!(w = watch_of(a)))
		return -1;
	if (!b) {
		*state = b = xcalloc(1, sizeof(*b));
		b->n = n;
		b->v = xcalloc(n, sizeof(*b->v));
		for (size_t i = 0; i < n; i++) {
			const char *name = argocd_app_name(a->d, steps[i]);
			b->v[i] = (struct bake_app){ name ? xstrdup(name) : NULL, (size_t)-1, -1, NULL, NULL,
						     steps[i]->pkg->sync.wait_healthy, now_s() + a->poll_ms / 1000.0 };
		}
	}
	pthread_mutex_lock(&w->mu);
	for (;;) {
		double now = now_s(), wake = until;
		if (w->state == W_GONE) {
			r = -1;
			break;
		}
		for (size_t i = 0; i < n && !r; i++) {
			struct bake_app *e = &b->v[i];
			if (e->slot == (size_t)-1 && e->name)
				for (size_t k = 0; k < w->n && e->slot == (size_t)-1; k++)
					if (!strcmp(w->v[k].name, e->name))
						e->slot = k;
			if (e->slot == (size_t)-1) {
				/* not on the stream: polled */
				if (now >= e->next_poll) {
					e->next_poll = now + a->poll_ms / 1000.0;
					*which = i, r = 1;
				} else if (e->next_poll < wake) {
					wake = e->next_poll;
				}
				continue;
			}
			if (w->v[e->slot].rv <= e->rv)
				continue;
			e->rv = w->v[e->slot].rv;
			if (off(e, w->v[e->slot].app))
				*which = i, r = 1;
		}
		if (r || interrupted() || now >= until)
			break;
		if (wake > now + 0.2)
			wake = now + 0.2;	/* an interrupt signals no one */
		{
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			wake -= now;
			ts.tv_sec += (time_t)wake;
			ts.tv_nsec += (long)((wake - (double)(time_t)wake) * 1e9);
			if (ts.tv_nsec >= 1000000000L)
				ts.tv_sec++, ts.tv_nsec -= 1000000000L;
			pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		}
	}
	pthread_mutex_unlock(&w->mu);
	if (r < 0) {
		pthread_mutex_lock(&start_lock);
		a->watch_off = 1;
		pthread_mutex_unlock(&start_lock);
	}
	return r;
}

void watch_stop(struct argocd *a)
{
	struct watch *w = a->watch;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	if (a->verbose)
		fprintf(stderr, "idpmake: argocd: the watch stream was opened %lu time%s\n", w->opens,
			w->opens == 1 ? "" : "s");
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		json_decref(w->v[i].app);
	}
	free(w->v);
	buf_release(&w->line);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	a->watch = NULL;
}
