/*
 * argocd.c - the Argo CD client: create or update a package's Application,
 * sync it to the pushed commit, wait until it is done (argocd.h; the API is
 * ../shared/argocd/API.md, referred to as "API.md 5.8" and so on).
 *
 * One sync step:
 *
 *     POST /api/v1/applications?upsert=true          the Application (API.md 5.3)
 *        |
 *        v
 *     POST .../NAME/sync  --400 code 9 "another operation is already in progress"--+
 *        |      ^                                                                  |
 *        |      +------------- GET .../NAME until `operation` is gone <------------+
 *        v
 *     GET .../NAME every IDPMAKE_ARGOCD_POLL_MS until
 *        done:   `operation` absent, operationState.phase Succeeded, Failed or
 *                Error, reconciledAt >= finishedAt (API.md 5.8);
 *                Failed/Error --> fail with operationState.message;
 *                Succeeded with prune off, resources left that need pruning,
 *                OutOfSync --> fail naming them (needs_pruning), not wait
 *        synced: sync.status Synced at the pushed commit (when it is Synced at
 *                another revision, or not Synced, one GET ?refresh=normal:
 *                API.md 8.7; a revision that still differs after it is
 *                someone else's newer push, and accepted)
 *        healthy (wait: healthy): Healthy; Degraded --> fail with its message
 *     all before the package's sync.timeout, else fail naming the state seen.
 *
 * Invariants:
 *   1. Every request that is not a GET carries exactly one Content-Type,
 *      `application/json` (API.md 1: anything else is a 415), body or not.
 *   2. A connection error, a timeout, a 5xx (but 501) or a 429 is retried, at most
 *      RETRIES times, after IDPMAKE_ARGOCD_BACKOFF_MS, doubling; never past
 *      the step's deadline.  Any other status is an answer.
 *   3. The token appears only in the Authorization header: not in URLs, logs,
 *      -v output or messages; server text is masked before it is shown.
 *   4. A response body is read up to BODY_CAP bytes; more is an error.
 *   5. Each step has its own curl handle: steps run on worker threads, and
 *      share only the read-only struct argocd.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/buf.h"
#include "base/gitcred.h"
#include "base/intr.h"
#include "graph/status.h"
#include "render/bundle.h"
#include "git/gitops.h"
#include "distro/manifest.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

/* API.md 5.8: the operation finished and the controller compared after it */
static int op_done(json_t *app)
{
	json_t *op = jget(app, "status.operationState");
	const char *phase = jstr(op, "phase");

	if (json_object_get(app, "operation") || !op)
		return 0;
	if (strcmp(phase, "Succeeded") && strcmp(phase, "Failed") && strcmp(phase, "Error"))
		return 0;
	if (json_is_true(jget(op, "operation.sync.dryRun")))
		return 1;
	return rfc3339(jstr(app, "status.reconciledAt")) >= rfc3339(jstr(op, "finishedAt")) &&
	       rfc3339(jstr(op, "finishedAt"));
}

/*
 * The sync this run started (argocd_sync_step): the operation state the
 * Application had before the POST .../sync that Argo CD took (`prev`, NULL
 * when it had none), and the revision of the operation that POST set
 * (`rev`, "" when Argo CD did not say).  A finished operation is this run's
 * only when its state is not `prev` and, when both are known, its sync
 * revision is `rev`: an operation that finished before (the POST's
 * operation dropped, or never started) or one someone else started at
 * another revision must not count as this run's sync finishing.
 */
struct mine {
	json_t *prev;
	const char *rev;
};

static int op_mine(json_t *app, const struct mine *m)
{
	json_t *op = jget(app, "status.operationState");
	const char *rev = jstr(op, "operation.sync.revision");

	if (!m)
		return 1;
	if (m->prev && json_equal(op, m->prev))
		return 0;
	return !*m->rev || !*rev || !strcmp(rev, m->rev);
}

/* up to 5 "KIND/NAME: message" of the array at `path` whose `field` (or `field2`) is one of `bad` */
static void add_items(struct buf *b, json_t *app, const char *path, const char *field, const char *field2,
		      const char *const *bad)
{
	json_t *v = jget(app, path), *it;
	size_t i, shown = 0;

	json_array_foreach(v, i, it) {
		const char *st = jstr(it, field), *st2 = field2 ? jstr(it, field2) : "", *m = jstr(it, "message");
		int match = 0;
		for (const char *const *p = bad; *p; p++) {
			if (!strcmp(st2, *p))
				st = st2;
			match |= !strcmp(st, *p);
		}
		if (!match)
			continue;
		if (!*m)
			m = jstr(it, "health.message");
		if (shown++ == 5) {
			buf_adds(b, "; ...");
			break;
		}
		buf_addf(b, "; %s/%s: %s", jstr(it, "kind"), jstr(it, "name"), *m ? m : st);
	}
}

static void add_conditions(struct buf *b, json_t *app)
{
	json_t *v = jget(app, "status.conditions"), *it;
	size_t i;

	json_array_foreach(v, i, it) {
		const char *t = jstr(it, "type");
		if (strstr(t, "Error"))
			buf_addf(b, "; %s: %s", t, jstr(it, "message"));
	}
}

/*
 * gitops-engine's dry run fails an object whose namespace the cluster
 * lacks: 'namespaces "X" not found'.  Argo CD creates the destination
 * namespace only with the sync option CreateNamespace=true.
 */
static void add_namespace_hint(struct buf *b, json_t *app)
{
	json_t *v = jget(app, "status.operationState.syncResult.resources"), *it;
	size_t i;

	json_array_foreach(v, i, it) {
		const char *m = jstr(it, "message"), *end;
		if (strncmp(m, "namespaces \"", 12) || !(end = strchr(m + 12, '"')) || strcmp(end, "\" not found"))
			continue;
		buf_addf(b, "; namespace '%.*s' does not exist on the cluster: Argo CD creates the destination namespace "
			 "only with sync: {options: [CreateNamespace=true]}; or render a Namespace object",
			 (int)(end - m - 12), m + 12);
		return;
	}
}

/*
 * Argo CD 3 keeps the resources' health in the resource tree only
 * (status.resourceHealthSource "appTree"; controller/state.go): status.resources
 * carries none, so a Degraded Application's resources are named from GET
 * .../resource-tree.  Nothing is added when it cannot be read.
 */
static void add_tree_items(struct call *c, struct buf *b, const char *const *bad)
{
	struct resp r = { .code = -1 };
	const char *err;

	if (!c->curl)
		return;	/* argocd_answer's reading of one answer (the fuzz target): no connection */
	if (request(c, "GET", app_path(c, "/resource-tree", NULL), NULL, &r, &err) == 0 && r.status == 200 &&
	    json_is_object(r.json))
		add_items(b, r.json, "nodes", "health.status", NULL, bad);
	resp_reset(&r);
}

static const char *failure(struct call *c, json_t *app, const char *what)
{
	static const char *const failed[] = { "SyncFailed", "Failed", "Error", NULL };
	static const char *const degraded[] = { "Degraded", NULL };
	struct buf b = BUF_INIT;
	const char *r;

	if (!strcmp(what, "sync")) {
		const char *m = jstr(app, "status.operationState.message");
		buf_addf(&b, "sync of application '%s' %s: %s", c->app,
			 !strcmp(jstr(app, "status.operationState.phase"), "Error") ? "ended in an error" : "failed",
			 *m ? m : "(no message)");
		add_items(&b, app, "status.operationState.syncResult.resources", "status", "hookPhase", failed);
		add_namespace_hint(&b, app);
	} else {
		const char *m = jstr(app, "status.health.message");
		buf_addf(&b, "application '%s' is Degraded%s%s", c->app, *m ? ": " : "", m);
		add_items(&b, app, "status.resources", "health.status", NULL, degraded);
		if (!strcmp(jstr(app, "status.resourceHealthSource"), "appTree"))
			add_tree_items(c, &b, degraded);
	}
	add_conditions(&b, app);
	r = clean(c->a, b.s, b.len);
	buf_release(&b);
	return r;
}

static const char *timed_out(struct call *c, json_t *app, int timeout, const char *waiting)
{
	struct buf b = BUF_INIT;
	json_t *res = jget(app, "status.resources"), *it;
	size_t i, prune = 0;
	const char *r, *hm = jstr(app, "status.health.message");

	buf_addf(&b, "timed out after %d s waiting for application '%s' to be %s (sync %s, health %s%s%s", timeout,
		 c->app, waiting, *jstr(app, "status.sync.status") ? jstr(app, "status.sync.status") : "unknown",
		 *jstr(app, "status.health.status") ? jstr(app, "status.health.status") : "unknown", *hm ? ": " : "", hm);
	if (json_object_get(app, "operation"))
		buf_addf(&b, ", operation %s", *jstr(app, "status.operationState.phase") ? jstr(app, "status.operationState.phase") : "pending");
	else if (*jstr(app, "status.operationState.phase"))
		buf_addf(&b, ", last operation %s", jstr(app, "status.operationState.phase"));
	buf_adds(&b, ")");
	json_array_foreach(res, i, it)
		prune += json_is_true(json_object_get(it, "requiresPruning"));
	if (prune)
		buf_addf(&b, "; %zu resource%s need%s pruning: set sync.prune: true", prune, prune == 1 ? "" : "s",
			 prune == 1 ? "s" : "");
	add_conditions(&b, app);
	buf_addf(&b, "; raise sync.timeout to wait longer");
	r = clean(c->a, b.s, b.len);
	buf_release(&b);
	return r;
}

/*
 * A sync with prune off after which resources the render no longer has are
 * left: gitops-engine marks each "PruneSkipped", "ignored (requires
 * pruning)" in the operation's syncResult, and the comparison after it
 * lists them in status.resources with requiresPruning, OutOfSync.  The
 * application stays OutOfSync until they go, so this is said at once: the
 * message, or NULL.
 */
static const char *needs_pruning(struct call *c, const struct step *s, json_t *app)
{
	json_t *it;
	size_t i, skipped = 0, n = 0;
	struct buf b = BUF_INIT;
	const char *r;

	json_array_foreach(jget(app, "status.operationState.syncResult.resources"), i, it)
		skipped += !strcmp(jstr(it, "status"), "PruneSkipped") && strstr(jstr(it, "message"), "requires pruning");
	if (!skipped)
		return NULL;
	json_array_foreach(jget(app, "status.resources"), i, it) {
		if (!json_is_true(json_object_get(it, "requiresPruning")) || strcmp(jstr(it, "status"), "OutOfSync"))
			continue;
		if (n++ == 5) {
			buf_adds(&b, ", ...");
			continue;
		}
		if (n <= 5)
			buf_addf(&b, "%s%s/%s%s%s", n > 1 ? ", " : "", jstr(it, "kind"), jstr(it, "namespace"),
				 *jstr(it, "namespace") ? "/" : "", jstr(it, "name"));
	}
	if (!n) {
		buf_release(&b);
		return NULL;
	}
	r = aprintf("application '%s' needs pruning: %zu resource%s the render no longer has %s still live (%s), "
		    "and package %s syncs with prune off, so it stays OutOfSync: set sync: {prune: true} on package %s "
		    "to let Argo CD delete %s, or delete %s yourself", c->app, n, n == 1 ? "" : "s", n == 1 ? "is" : "are",
		    b.s, s->pkg->name, s->pkg->name, n == 1 ? "it" : "them", n == 1 ? "it" : "them");
	buf_release(&b);
	return clean(c->a, r, strlen(r));
}

/* GET the application: 0 with *app, or -1 with *err */
int app_get(struct call *c, int refresh, json_t **app, const char **err)
{
	struct resp r = { .code = -1 };

	*app = NULL;
	if (request(c, "GET", app_path(c, "", refresh ? "refresh=normal" : NULL), NULL, &r, err) < 0) {
		resp_reset(&r);
		return -1;
	}
	if (r.status != 200 || !json_is_object(r.json)) {
		*err = r.status == 200 ? aprintf("reading application '%s': Argo CD's answer is not a JSON object", c->app)
				       : api_error(c, aprintf("reading application '%s'", c->app), &r);
		resp_reset(&r);
		return -1;
	}
	*app = json_incref(r.json);
	resp_reset(&r);
	return 0;
}

int call_past(struct call *c)
{
	return c->deadline && (c->out_of_time || now_s() >= c->deadline);
}

/*
 * Argo CD's auto-sync (controller autoSync) runs an operation with a retry
 * strategy (syncPolicy.retry, else limit 5) and a backoff; a failed attempt
 * leaves it Running with retryCount and "... Retrying attempt #N at ...".
 * When it gives up, Argo CD does not sync that revision and source again on
 * its own ("already attempted"): waiting longer gains nothing.
 */
static const char *cleaned(struct call *c, const char *s)
{
	return clean(c->a, s, strlen(s));
}

int app_automated(json_t *st)
{
	return json_is_true(jget(st, "operation.initiatedBy.automated"));
}

/* "failed after 5 retries: MSG" of Argo CD's given-up automated sync at `want` (NULL: any), else NULL */
static const char *auto_gave_up(struct call *c, json_t *st, const char *want)
{
	const char *phase = jstr(st, "phase"), *rev = jstr(st, "syncResult.revision");
	json_int_t n = json_integer_value(jget(st, "retryCount"));

	if (!app_automated(st) || (strcmp(phase, "Failed") && strcmp(phase, "Error")))
		return NULL;
	if (!*rev)
		rev = jstr(st, "operation.sync.revision");
	if (want && *want && *rev && strcmp(rev, want))
		return NULL;	/* an older revision's: this run's sync is still to come */
	return cleaned(c, aprintf("Argo CD's automated sync of application '%s'%s%.12s failed%s%s%s: %s; Argo CD does not "
				    "retry that revision on its own: fix the cause (see the message), then run again",
				    c->app, *rev ? " to " : "", rev, n ? " after " : "", n ? aprintf("%lld", (long long)n) : "",
				    n ? (n == 1 ? " retry" : " retries") : "",
				    *jstr(st, "message") ? jstr(st, "message") : "(no message)"));
}

/* wait until no operation runs (code 9 refusals); -1 with *err */
static int wait_idle(struct call *c, int timeout, struct mine *m, const char *want, const char **err)
{
	const char *last = NULL;
	json_int_t retries = 0;

	for (;;) {
		json_t *app, *st;
		const char *phase, *gave_up;
		if (nap(c->a->poll_ms) < 0)
			return *err = "interrupted", -1;
		if (app_get(c, 0, &app, err) < 0)
			return -1;
		st = jget(app, "status.operationState");
		if (!json_object_get(app, "operation")) {
			if ((gave_up = auto_gave_up(c, st, want))) {
				*err = gave_up;
				json_decref(app);
				return -1;
			}
			/* the operation state before the next POST .../sync */
			json_decref(m->prev);
			m->prev = json_incref(st);
			json_decref(app);
			return 0;
		}
		phase = astrdup(jstr(st, "phase"));
		if (!last || strcmp(last, phase))
			note(c, 0, "application '%s': waiting for the running operation (%s) to finish", c->app,
			     *phase ? phase : "not started");
		last = phase;
		if (app_automated(st) && json_integer_value(jget(st, "retryCount")) > retries) {
			retries = json_integer_value(jget(st, "retryCount"));
			note(c, 0, "application '%s': Argo CD's automated sync failed and retries (retry %lld, limit %lld): %s",
			     c->app, (long long)retries, (long long)json_integer_value(jget(st, "operation.retry.limit")),
			     cleaned(c, jstr(st, "message")));
		}
		if (call_past(c)) {
			*err = aprintf("timed out after %d s waiting for another operation on application '%s' to finish "
				       "(Argo CD refused the sync: another operation is already in progress)%s%s", timeout, c->app,
				       retries ? "; it is Argo CD's automated sync, failing: " : "",
				       retries ? cleaned(c, jstr(st, "message")) : "");
			json_decref(app);
			return -1;
		}
		json_decref(app);
	}
}

/*
 * The application's next state: from the run's watch stream (argowatch.c),
 * one with a resourceVersion above *rv; else, and for a refresh, and when
 * the stream said nothing for NEWS_MS or the deadline came, a GET after a
 * poll interval.  0 with *app, or -1 with *err.
 */
#define NEWS_MS 10000L
static int next_app(struct call *c, int refresh, long long *rv, json_t **app, const char **err)
{
	long waited = 0;

	while (!refresh && *rv >= 0 && waited < NEWS_MS && !call_past(c)) {	/* rv < 0: no state known yet, GET one */
		int r = watch_wait(c->a, c->app, rv, 1000, app);
		if (r == 1)
			return 0;
		if (r < 0)
			break;	/* no stream: poll */
		if (interrupted())
			return *err = "interrupted", -1;
		waited += 1000;
	}
	if (nap(c->a->poll_ms) < 0)
		return *err = "interrupted", -1;
	if (app_get(c, refresh, app, err) < 0)
		return -1;
	if (app_rv(*app) > *rv)
		*rv = app_rv(*app);
	return 0;
}

/* wait after the sync was accepted (rv: the resourceVersion it answered with); -1 with *err */
static int wait_done(struct call *c, struct step *s, const char *want_rev, long long rv, int timeout,
		     const struct mine *m,
		     const char **err)
{
	int refreshed = 0, refresh = 0, polls = 0, wait_healthy = s->pkg->sync.wait_healthy, other = 0;
	const char *last = NULL, *seen = NULL;

	rv--;	/* the state the sync answered with is one to look at */
	for (;; polls++) {
		json_t *app;
		const char *sync, *health, *phase, *rev, *state;
		int synced, at_rev;
		if (next_app(c, refresh, &rv, &app, err) < 0)
			return -1;
		refreshed |= refresh;
		refresh = 0;
		sync = jstr(app, "status.sync.status");
		health = jstr(app, "status.health.status");
		phase = jstr(app, "status.operationState.phase");
		rev = jstr(app, "status.sync.revision");
		state = aprintf("operation %s, sync %s, health %s",
				json_object_get(app, "operation") ? (*phase ? phase : "pending") : (*phase ? phase : "none"),
				*sync ? sync : "-", *health ? health : "-");
		if (!last || strcmp(last, state))
			note(c, 0, "application '%s': %s", c->app, state);
		last = state;
		if (op_done(app) && !op_mine(app, m)) {
			/* a finished operation, but not the sync this run started: wait for that one */
			if (!other++)
				note(c, 0, "application '%s': its last operation (%s, started %s, revision %.12s) is not the "
				     "sync idpmake started; waiting for that one", c->app, phase,
				     *jstr(app, "status.operationState.startedAt") ? jstr(app, "status.operationState.startedAt") : "?",
				     *jstr(app, "status.operationState.operation.sync.revision")
					     ? jstr(app, "status.operationState.operation.sync.revision") : "?");
			status_progress(s, "waiting for its sync to start");
			if (call_past(c)) {
				*err = aprintf("timed out after %d s waiting for the sync idpmake started on application '%s': "
					       "Argo CD shows no operation of it (the last one, %s, is an earlier one or "
					       "someone else's); see `argocd app get %s`", timeout, c->app, phase, c->app);
				json_decref(app);
				return -1;
			}
			json_decref(app);
			continue;
		}
		/* what it waits for, for the status line (status.h; the main thread prints it) */
		if (!op_done(app))
			status_progress(s, "sync %s", *phase ? phase : "pending");
		else if (strcmp(sync, "Synced") || (want_rev && strcmp(rev, want_rev)))
			status_progress(s, "%s", *sync ? sync : "OutOfSync");
		else
			status_progress(s, "%s", *health ? health : "health unknown");
		if (op_done(app)) {
			if (strcmp(phase, "Succeeded")) {
				*err = failure(c, app, "sync");
				json_decref(app);
				return -1;
			}
			synced = !strcmp(sync, "Synced");
			at_rev = !want_rev || !strcmp(rev, want_rev);
			if (!synced && !step_prunes(s) && (*err = needs_pruning(c, s, app))) {
				json_decref(app);
				return -1;
			}
			if (synced && !at_rev) {
				/* done at a commit after ours (the folder is the same there); an
				 * older or unknown revision is a stale answer: refresh and wait on */
				int newer = c->a->have_git && *rev ? gitops_descends(&c->a->git, rev, want_rev, s->gitpath) : -1;
				if (newer == 1) {
					note(c, 0, "application '%s' is Synced at %s, which comes after %s", c->app, rev, want_rev);
					want_rev = NULL;
					at_rev = 1;
				} else if (refreshed && (!seen || strcmp(seen, rev))) {
					if (newer)
						note(c, 0, "application '%s' is Synced at %s, a commit not known here to come "
						     "after %s; waiting", c->app, rev, want_rev);
					else
						note(c, 0, "application '%s' is Synced at %s, which is not %s or a later commit "
						     "with the same %s/; waiting", c->app, rev, want_rev, s->gitpath);
					seen = astrdup(rev);
				}
			}
			if (!synced || !at_rev) {
				/* API.md 8.7: ask for a fresh comparison; again now and then, as one can be dropped */
				if (!refreshed || polls % 10 == 0)
					refresh = 1;
			} else if (!wait_healthy || !strcmp(health, "Healthy")) {
				json_decref(app);
				return 0;
			} else if (!strcmp(health, "Degraded")) {
				*err = failure(c, app, "health");
				json_decref(app);
				return -1;
			}
		}
		if (call_past(c)) {
			*err = timed_out(c, app, timeout, wait_healthy ? "Synced and Healthy" : "Synced");
			json_decref(app);
			return -1;
		}
		json_decref(app);
	}
}

/*
 * What the client makes of one answer to a GET of application `app`, as
 * get_app, wait_done, argocd_verify_step and argocd_app_status read it: the
 * error for a refusal, else the state line, whether the operation is done,
 * and the sync, health and timeout messages (arena).  The body goes through
 * the same decoding as a real answer.  For tests/fuzz/fuzz-argocd.c.
 */
const char *argocd_answer(struct argocd *a, const char *app, long status, const char *body, size_t len)
{
	struct call c = { .a = a, .app = app };
	struct resp r = { .code = -1 };
	struct buf b = BUF_INIT;
	const char *out;

	resp_reset(&r);
	if (len)
		buf_add(&r.body, body, len);
	r.status = status;
	/* an HTML error page when the body says so, as a proxy sends it */
	resp_decode(a, &r, len && body[0] == '<' ? "text/html" : "application/json");
	if (r.status != 200 || !json_is_object(r.json)) {
		buf_adds(&b, api_error(&c, aprintf("reading application '%s'", app), &r));
		if (r.status == 400 && r.code == 9 && strstr(r.message, "another operation is already in progress"))
			buf_adds(&b, " (waited out)");
	} else {
		json_t *j = r.json;
		const char *sync = jstr(j, "status.sync.status"), *health = jstr(j, "status.health.status");
		const char *phase = jstr(j, "status.operationState.phase");
		buf_addf(&b, "operation %s, sync %s, health %s, revision %s, done %d",
			 json_object_get(j, "operation") ? (*phase ? phase : "pending") : (*phase ? phase : "none"),
			 *sync ? sync : "-", *health ? health : "-", jstr(j, "status.sync.revision"), op_done(j));
		buf_addf(&b, "\n%s\n%s\n%s", failure(&c, j, "sync"), failure(&c, j, "health"),
			 timed_out(&c, j, 300, "Synced and Healthy"));
	}
	out = clean(a, b.s, b.len);
	buf_release(&b);
	resp_reset(&r);
	return out;
}

/*
 * The revision a sync must reach: the commit that last changed the package's
 * folder (the state's record, set by build.c), else the run's commit; or one
 * that comes after it on the branch, where the folder is the same
 * (rev_reached).  Never "whatever Argo CD reports".
 */
const char *pushed_commit(const struct step *s, const char *commit)
{
	if (s->folder_commit && *s->folder_commit)
		return s->folder_commit;
	return commit && *commit ? commit : NULL;
}

/* Synced at `rev`: the wanted commit, or one that descends from it (read from the GitOps clone) */
int rev_reached(const struct argocd *a, const struct step *s, const char *rev, const char *want)
{
	if (!want || !strcmp(rev, want))
		return 1;
	return a->have_git && *rev && gitops_descends(&a->git, rev, want, s->gitpath) == 1;
}

/*
 * The revision to ask a sync for: the commit this run pushed.  When this run
 * pushed nothing (a retry of a failed sync), NULL: Argo CD syncs the branch
 * head, which holds the folder as last pushed (and comes after it).
 */
static const char *sync_revision(const struct step *s, const char *commit)
{
	const struct step *p = s;

	if (!commit || !*commit)
		return NULL;
	/* back through the package's pre hooks to the push */
	while (p && p->kind != STEP_PUSH) {
		const struct step *up = NULL;
		for (size_t i = 0; i < p->nin; i++)
			if (p->in[i]->kind == STEP_PUSH || (p->in[i]->kind == STEP_PRE && p->in[i]->pkg == s->pkg &&
							    p->in[i]->cluster == s->cluster))
				up = p->in[i];
		p = up;
	}
	return !p || p->dirty ? commit : NULL;
}

/*
 * Argo CD's answer to an Application whose destination server it does not
 * know (400, "application destination spec for APP is invalid: " and, since
 * v3.0, "error getting cluster by server ...", before it "unable to find
 * destination server: there are no clusters with this URL: ..."): said as
 * is, then which cluster of the distro that is and what to do.
 */
static const char *unknown_server(const struct cluster *cl, const struct resp *r, const char *err)
{
	const char *m = r->message ? r->message : "";

	if (r->status != 400 || !cl || !strstr(m, "application destination spec for") ||
	    !(strstr(m, "error getting cluster by server") || strstr(m, "there are no clusters with this URL")))
		return err;
	if (cl->reg.set)
		/* its register step recorded it as done: Argo CD lost it since */
		return aprintf("%s; Argo CD no longer has cluster '%s' (%s), which idpmake registered: idpmake up --refresh "
			       "registers it again (or idpmake forget %s:register, then idpmake up)", err, cl->name,
			       cl->server ? cl->server : "?", cl->name);
	return aprintf("%s; cluster '%s' (%s) is not registered in Argo CD: give it `register` in the distro,"
		       " or register it yourself (argocd cluster add)", err, cl->name, cl->server ? cl->server : "?");
}

/*
 * Argo CD's answer when it cannot read the GitOps repository ("repository
 * not accessible", "authentication required"): said as is, then the way out
 * that fits how the repository gets its credentials.
 */
static const char *repo_denied(const struct argocd *a, const struct resp *r, const char *err)
{
	const char *m = r->message ? r->message : "";

	if (!strstr(m, "authentication required") && !strstr(m, "repository not accessible"))
		return err;
	if (a->d->argocd.repo_registered)
		return aprintf("%s; argocd.repository: registered says Argo CD has credentials for %s: add them "
			       "(argocd repo add), or drop that setting and set IDPMAKE_GIT_TOKEN so that "
			       "idpmake registers the repository with them", err, a->repo_url);
	if (!gitcred_given())
		return aprintf("%s; Argo CD has no credentials for %s: set IDPMAKE_GIT_TOKEN (and IDPMAKE_GIT_USERNAME) "
			       "and run up again, so that repository:register gives them, or add them to Argo CD "
			       "yourself (argocd repo add)", err, a->repo_url);
	return aprintf("%s; Argo CD's credentials for %s do not work: if Argo CD lost the repository, idpmake up "
		       "--refresh registers it again; if IDPMAKE_GIT_TOKEN changed since repository:register ran, "
		       "idpmake forget repository:register, then idpmake up", err, a->repo_url);
}

int argocd_sync_step(void *ctx, struct step *s, const char *commit, const char **err)
{
	struct argocd *a = ctx;
	const struct distro *d = a->d;
	int timeout = s->pkg->sync.timeout > 0 ? s->pkg->sync.timeout : DEFAULT_TIMEOUT, helm = argocd_helm_app(s), ret = -1;
	int cnoe = s->pkg->app_file != NULL, appset = 0, generated = 0;
	long long sync_rv = 0;
	/* Applications whose sources idpmake does not own whole sync at their own revisions */
	const char *name = argocd_app_name(d, s), *want_rev = helm || cnoe ? NULL : pushed_commit(s, commit);
	const char *pin = NULL;	/* an automated Application's targetRevision */
	struct resp r = { .code = -1 };
	struct call c;
	struct mine m = { NULL, "" };
	json_t *app, *body;

	if (!name)
		return *err = "argocd.app-name has an undefined variable (see above)", -1;
	if (call_open(&c, a, name, s->log, timeout) < 0)
		return *err = "cannot start a libcurl handle", -1;
	app = argocd_app_spec(d, s, a->repo_url);
	/* a cluster named only by name: does Argo CD know it? (asked once per run, argoreg.c) */
	if (s->cluster->argo_name && !s->cluster->server && argocd_cluster_known(&c, s->cluster, err) < 0)
		goto out;
	if (s->pkg->sync.automated && !helm && !cnoe && (s->folder_commit || (commit && *commit))) {
		/*
		 * Pinned (fleet.md "Waves"): an automated Application follows the
		 * commit it is synced to, not the branch, so a push never moves it
		 * before its wave starts; this sync moves the pin, to the commit
		 * that holds its folder as rendered (not the run's newest commit
		 * seen, which may predate it: a run that pushed nothing).
		 */
		pin = s->folder_commit ? s->folder_commit : commit;
		json_object_set_new(json_object_get(json_object_get(app, "spec"), "source"), "targetRevision",
				    json_string(pin));
	}
	if (helm && argocd_helm_source(a, s, app, err) < 0)
		goto out;
	if (cnoe && argocd_cnoe_app(a, s, app, &appset, err) < 0)
		goto out;
	if (appset) {
		/* Argo CD's ApplicationSet controller makes its Applications: create it, no sync */
		if (request(&c, "POST", "/api/v1/applicationsets?upsert=true", app, &r, err) < 0)
			goto out;
		if (r.status != 200) {
			*err = api_error(&c, aprintf("creating or updating ApplicationSet '%s'", name), &r);
			goto out;
		}
		note(&c, 0, "ApplicationSet '%s' created or updated; its Applications are Argo CD's", name);
		ret = 0;
		goto out;
	}
	if ((d->argocd.fleet_appset || s->pkg->sync.appset) && !helm && !cnoe && !s->cluster->argo_name) {
		/*
		 * The package's ApplicationSet generates the Application
		 * (argoappset.c): its element moves it; then it is synced to that
		 * revision like any other (a sync that failed before is retried).
		 */
		if (!(want_rev = pushed_commit(s, commit)) ||
		    argocd_appset_element(&c, s, name, app, want_rev, err) < 0)
			goto out;
		generated = 1;
	}
	note(&c, 0, "application '%s' in namespace '%s' (project '%s'), %s %s", name, d->argocd.namespace,
	     d->argocd.project, helm ? "chart" : "commit", helm ? jstr(app, "spec.source.chart") : commit ? commit : d->git.branch);

	/* create or update (API.md 5.3), unless an ApplicationSet made it */
	if (!generated && request(&c, "POST", "/api/v1/applications?upsert=true", app, &r, err) < 0)
		goto out;
	if (!generated && r.status != 200) {
		*err = repo_denied(a, &r, unknown_server(s->cluster, &r, api_error(&c, aprintf("creating or updating "
											       "application '%s'", name), &r)));
		goto out;
	}
	if (!generated)
		m.prev = json_incref(jget(r.json, "status.operationState"));	/* before this run's sync */

	/* sync (API.md 5.7); a running operation is waited out */
	body = json_object();
	json_object_set_new(body, "name", json_string(name));
	json_object_set_new(body, "appNamespace", json_string(d->argocd.namespace));
	json_object_set_new(body, "project", json_string(d->argocd.project));
	{
		/*
		 * a generated Application to its element's revision; a pinned one to
		 * its pin (Argo CD refuses any other: "auto-sync currently set to");
		 * else the run's push, or the branch head
		 */
		const char *sync_rev = generated ? want_rev : pin ? pin : sync_revision(s, commit);
		if (sync_rev && want_rev)
			json_object_set_new(body, "revision", json_string(sync_rev));
	}
	json_object_set_new(body, "prune", json_boolean(step_prunes(s)));
	if (s->pkg->sync.options.n) {
		json_t *items = json_array();
		for (size_t i = 0; i < s->pkg->sync.options.n; i++)
			json_array_append_new(items, json_string(s->pkg->sync.options.v[i]));
		json_object_set_new(body, "syncOptions", json_pack("{s:o}", "items", items));
	}
	for (;;) {
		if (request(&c, "POST", app_path(&c, "/sync", NULL), body, &r, err) < 0)
			break;
		if (r.status == 200) {
			sync_rv = app_rv(r.json);	/* the Application with its operation: wait from there */
			/* the answer holds the operation this POST set: this run's sync (op_mine) */
			m.rev = astrdup(jstr(r.json, "operation.sync.revision"));
			if (jget(r.json, "status.operationState")) {
				json_decref(m.prev);
				m.prev = json_incref(jget(r.json, "status.operationState"));
			}
			ret = 0;
			break;
		}
		if (r.status == 400 && r.code == 9 && strstr(r.message, "another operation is already in progress")) {
			if (wait_idle(&c, timeout, &m, pin ? pin : want_rev, err) < 0)
				break;
			continue;
		}
		*err = repo_denied(a, &r, api_error(&c, aprintf("syncing application '%s'", name), &r));
		break;
	}
	json_decref(body);
	if (ret == 0)
		ret = wait_done(&c, s, want_rev, sync_rv, timeout, &m, err);
	if (ret == 0)
		note(&c, 0, "application '%s' is Synced%s", name, s->pkg->sync.wait_healthy ? " and Healthy" : "");
out:
	if (ret < 0)
		note(&c, 0, "error: %s", *err);
	resp_reset(&r);
	json_decref(m.prev);
	json_decref(app);
	call_close(&c);
	return ret;
}

long argocd_poll_ms(const struct argocd *a)
{
	return a->poll_ms;
}
