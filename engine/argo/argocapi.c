/*
 * argocapi.c - CLUSTER:provision, a cluster Cluster API makes (capi.h;
 * spec/capi.md "Steps"): its `Cluster`'s status read through Argo CD,
 *
 *   GET /api/v1/applications/MGMT-cluster-NAME/resource?namespace=NS&
 *       resourceName=NAME&version=API&group=cluster.x-k8s.io&kind=Cluster
 *
 * every poll interval, never Argo CD's health of it (notes/capi.md §2.1:
 * Progressing, Degraded or Healthy whatever the cluster does).  Both
 * status shapes are read (v1beta2: status.initialization and metav1
 * conditions; v1beta1: controlPlaneReady, conditions with a severity, and
 * the new ones under status.v1beta2).
 *
 *   a new cluster   passes once its control plane is initialized;
 *   a changed one   once it has converged: observedGeneration = generation,
 *                   TopologyReconciled True, the machines up to date, not
 *                   rolling out, the up-to-date replicas all desired;
 *   it fails        at create.timeout, at a condition of severity Error, or
 *                   when ReconcileFailed or ClusterClassNotReconciled lasts
 *                   60 s, naming the conditions that are not True.
 *
 * The answer is hostile input: read with jansson within BODY_CAP, every
 * field checked for its type; the Cluster's uid (its incarnation) must be
 * a short token of [-0-9a-zA-Z].
 */
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/buf.h"
#include "base/util.h"
#include "distro/capi.h"

#define RECONCILE_GRACE 60	/* seconds ReconcileFailed may last */

static const char *jstring(json_t *o, const char *path)
{
	json_t *v = jget(o, path);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static long long jint(json_t *o, const char *path, long long def)
{
	json_t *v = jget(o, path);
	return json_is_integer(v) ? json_integer_value(v) : def;
}

/* condition `type` in status.conditions or status.v1beta2.conditions: "True", "False", "Unknown" or NULL */
static json_t *condition(json_t *st, const char *type)
{
	static const char *const lists[] = { "conditions", "v1beta2.conditions", "deprecated.v1beta1.conditions" };

	for (size_t l = 0; l < 3; l++) {
		json_t *v = jget(st, lists[l]), *c;
		size_t i;
		if (!json_is_array(v))
			continue;
		json_array_foreach(v, i, c) {
			const char *t = jstring(c, "type");
			if (t && !strcmp(t, type))
				return c;
		}
	}
	return NULL;
}

static const char *cond_status(json_t *st, const char *type)
{
	json_t *c = condition(st, type);
	return c ? jstring(c, "status") : NULL;
}

static int is(const char *v, const char *want)
{
	return v && !strcmp(v, want);
}

static int uid_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

/* one line: the conditions that are not True, reason and message each (arena) */
static const char *not_true(json_t *st)
{
	static const char *const lists[] = { "conditions", "v1beta2.conditions" };
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t l = 0; l < 2; l++) {
		json_t *v = jget(st, lists[l]), *c;
		size_t i;
		if (!json_is_array(v))
			continue;
		json_array_foreach(v, i, c) {
			const char *t = jstring(c, "type"), *s = jstring(c, "status"), *why = jstring(c, "reason"),
				   *msg = jstring(c, "message");
			/* conditions whose True is the bad news */
			int neg = t && (!strcmp(t, "RollingOut") || !strcmp(t, "ScalingUp") || !strcmp(t, "ScalingDown") ||
					!strcmp(t, "Remediating") || !strcmp(t, "Deleting") || !strcmp(t, "Paused"));
			/* Deleting says what a deletion waits for, whichever its status */
			int said = t && !strcmp(t, "Deleting") && msg && *msg;
			if (!t || !s || (!said && (neg ? strcmp(s, "True") : !strcmp(s, "True"))) || b.len > 1024)
				continue;
			buf_addf(&b, "%s%.64s=%.8s", b.len ? "; " : "", t, s);
			if (why && *why)
				buf_addf(&b, " %.128s", why);
			if (msg && *msg)
				buf_addf(&b, ": %.256s", msg);
		}
		if (b.len)
			break;
	}
	r = clean(NULL, b.s ? b.s : "", b.len);
	buf_release(&b);
	return r;
}

int capi_status_parse(const char *text, size_t len, struct capi_status *out)
{
	json_error_t je;
	json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *st;
	const char *uid;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(m)) {
		json_decref(m);
		return -1;
	}
	uid = jstring(m, "metadata.uid");
	out->uid = uid_ok(uid) ? astrdup(uid) : NULL;
	out->deleting = jstring(m, "metadata.deletionTimestamp") != NULL;
	st = jget(m, "status");
	out->generation = jint(m, "metadata.generation", 0);
	out->observed = jint(st, "observedGeneration", -1);
	{
		const char *ph = jstring(st, "phase");
		out->phase = ph ? clean(NULL, ph, strnlen(ph, 32)) : "";
	}
	out->available = is(cond_status(st, "Available"), "True") ||
			 (!condition(st, "Available") && is(cond_status(st, "Ready"), "True"));
	out->initialized = json_is_true(jget(st, "initialization.controlPlaneInitialized")) ||
			   json_is_true(jget(st, "controlPlaneReady")) || is(cond_status(st, "ControlPlaneInitialized"), "True");
	{
		long long cpd = jint(st, "controlPlane.desiredReplicas", -1), cpu = jint(st, "controlPlane.upToDateReplicas", -1);
		long long wd = jint(st, "workers.desiredReplicas", -1), wu = jint(st, "workers.upToDateReplicas", -1);
		out->converged = out->generation > 0 && out->observed == out->generation &&
				 is(cond_status(st, "TopologyReconciled"), "True") &&
				 !is(cond_status(st, "ControlPlaneMachinesUpToDate"), "False") &&
				 !is(cond_status(st, "WorkerMachinesUpToDate"), "False") &&
				 !is(cond_status(st, "RollingOut"), "True") && cpd == cpu && wd == wu;
	}
	{
		json_t *tr = condition(st, "TopologyReconciled");
		const char *why = tr ? jstring(tr, "reason") : NULL;
		out->reconcile_failed = is(jstring(tr, "status"), "False") &&
					(is(why, "ReconcileFailed") || is(why, "ClusterClassNotReconciled"));
	}
	{
		/* v1beta1: a condition of severity Error is final; so is a failureReason */
		json_t *v = jget(st, "conditions"), *c;
		size_t i;
		const char *fr = jstring(st, "failureReason"), *fm = jstring(st, "failureMessage");
		if (fr || fm)
			out->fatal = aprintf("%s%s%s", fr ? clean(NULL, fr, strnlen(fr, 128)) : "", fr && fm ? ": " : "",
					     fm ? clean(NULL, fm, strnlen(fm, 256)) : "");
		if (json_is_array(v))
			json_array_foreach(v, i, c)
				if (!out->fatal && is(jstring(c, "severity"), "Error") && !is(jstring(c, "status"), "True")) {
					const char *t = jstring(c, "type"), *r = jstring(c, "reason"), *msg = jstring(c, "message");
					out->fatal = aprintf("%s %s: %s", t ? clean(NULL, t, strnlen(t, 64)) : "?",
							     r ? clean(NULL, r, strnlen(r, 128)) : "",
							     msg ? clean(NULL, msg, strnlen(msg, 256)) : "");
				}
	}
	out->why = not_true(st);
	json_decref(m);
	return 0;
}

/*
 * Argo CD's answer for an object the Application does not hold (yet, or
 * any more): server/application getAppResource's InvalidArgument "KIND
 * GROUP NAME not found as part of application APP" (HTTP 400), or a 404
 */
static int not_there(const struct resp *r)
{
	return r->status == 404 || (r->status == 400 && r->message && strstr(r->message, "not found as part of application"));
}

/* the Cluster as Argo CD shows it: 0 with *st, 1 not there, -1 with *err */
/* the resource API's query for Cluster ns/name at API version `version` */
static const char *cluster_query(const char *ns, const char *name, const char *version)
{
	return aprintf("namespace=%s&resourceName=%s&version=%s&group=cluster.x-k8s.io&kind=Cluster", ns, name, version);
}

static int get_cluster(struct call *c, const char *ns, const char *name, const char *version, struct capi_status *st,
		       const char **err)
{
	struct resp r = { .code = -1 };
	const char *q = cluster_query(ns, name, version);
	int ret = -1;
	json_t *man;

	if (request(c, "GET", app_path(c, "/resource", q), NULL, &r, err) < 0)
		goto out;
	if (not_there(&r)) {
		ret = 1;
		goto out;
	}
	man = r.status == 200 ? jget(r.json, "manifest") : NULL;
	if (!json_is_string(man)) {
		*err = r.status == 200 ? "Argo CD's answer has no manifest" :
		       api_error(c, aprintf("reading the Cluster of '%s'", name), &r);
		goto out;
	}
	if (capi_status_parse(json_string_value(man), json_string_length(man), st) < 0) {
		*err = "the Cluster's manifest is not a JSON object";
		goto out;
	}
	ret = 0;
out:
	resp_reset(&r);
	return ret;
}

int argocd_provision_step(void *ctx, struct step *s, const char *known, const char **uid, const char **err)
{
	struct argocd *a = ctx;
	const struct cluster *cl = s->cluster;
	const struct capi *k = cl->create.capi;
	const struct step *sync = NULL;
	const char *app;
	int ready = s->kind == STEP_READY;	/* ready: available: the Available condition */
	struct capi_status st = { 0 };
	struct call c;
	double failing = 0, start = now_s();
	const char *last = NULL;
	int ret = -1;

	*uid = NULL;
	for (size_t i = 0; i < s->nin; i++) {
		if (s->in[i]->kind == STEP_SYNC && s->in[i]->pkg == k->pkg)
			sync = s->in[i];
		for (size_t j = 0; ready && s->in[i]->kind == STEP_PROVISION && j < s->in[i]->nin; j++)
			if (s->in[i]->in[j]->kind == STEP_SYNC && s->in[i]->in[j]->pkg == k->pkg)
				sync = s->in[i]->in[j];
	}
	if (!sync)
		return *err = "the Cluster's sync step is not in the graph", -1;
	app = argocd_app_name(a->d, sync);
	if (call_open(&c, a, app, s->log, k->timeout) < 0)
		return *err = "cannot start a libcurl handle", -1;
	note(&c, 0, "%s: waiting for the Cluster %s/%s on '%s' (Application %s) to %s", s->id, k->namespace, cl->name,
	     k->management, app, ready ? "be Available" : known ? "converge" : "initialize its control plane");
	for (;;) {
		int got = get_cluster(&c, k->namespace, cl->name, k->api, &st, err), initial = !known || (got == 0 && st.uid && strcmp(st.uid, known));
		if (got < 0 && call_past(&c))
			/* the deadline passed during a request: the wait timed out, with what it saw last (or the
			   request's own failure, when no answer came before it) */
			*err = aprintf("timed out after %d s waiting for the Cluster of '%s' to %s: %s%s", k->timeout, cl->name,
				       ready ? "be Available (a missing cni leaves its nodes NotReady)" :
				       initial ? "initialize" : "converge", last ? "" : "no answer yet: ",
				       last ? (*last ? last : "no conditions") : *err);
		if (got < 0)
			break;
		if (got == 0 && !st.uid) {
			*err = "the Cluster has no usable metadata.uid";
			break;
		}
		if (got == 0 && st.fatal) {
			*err = aprintf("the Cluster of '%s' failed: %s", cl->name, st.fatal);
			break;
		}
		if (got == 0 && st.deleting) {
			*err = aprintf("the Cluster of '%s' is being deleted", cl->name);
			break;
		}
		if (got == 0 && (ready ? st.available : initial ? st.initialized : st.converged)) {
			*uid = st.uid;
			note(&c, 0, "%s: the Cluster %s (phase %s) after %.1f s", s->id, ready ? "is Available" :
			     initial ? "has an initialized control plane" : "has converged", st.phase, now_s() - start);
			ret = 0;
			break;
		}
		if (got == 0 && st.reconcile_failed) {
			if (!failing)
				failing = now_s();
			else if (now_s() - failing > RECONCILE_GRACE) {
				*err = aprintf("the Cluster of '%s' does not reconcile: %s", cl->name, st.why);
				break;
			}
		} else {
			failing = 0;
		}
		if (got == 0 && (!last || strcmp(last, st.why)))
			note(&c, 0, "%s: phase %s; %s", s->id, *st.phase ? st.phase : "(none)", *st.why ? st.why : "no conditions yet");
		if (got == 0)
			last = st.why;
		if (call_past(&c)) {
			*err = got == 1 ? aprintf("timed out after %d s: the Cluster %s/%s is not on the management cluster "
						  "'%s'", k->timeout, k->namespace, cl->name, k->management)
					: aprintf("timed out after %d s waiting for the Cluster of '%s' to %s (phase %s): %s",
						  k->timeout, cl->name, ready ? "be Available (a missing cni leaves its nodes "
						  "NotReady)" : initial ? "initialize" : "converge",
						  *st.phase ? st.phase : "none", *st.why ? st.why : "no conditions");
			break;
		}
		if (nap(argocd_poll_ms(a)) < 0) {
			*err = "interrupted";
			break;
		}
	}
	if (ret < 0)
		note(&c, 0, "error: %s", *err);
	call_close(&c);
	return ret;
}

/* the Cluster named `name` among the Application's resources: 1 with its namespace and version, 0 none,
 * 2 no such Application, -1 with *err (a 403 too: not knowing is not "gone") */
static int tree_cluster(struct call *c, const char *name, const char **ns, const char **version, const char **err)
{
	struct resp r = { .code = -1 };
	json_t *nodes, *n;
	size_t i;
	int ret = -1;

	if (request(c, "GET", app_path(c, "/resource-tree", NULL), NULL, &r, err) < 0)
		goto out;
	if (r.status == 404) {
		ret = 2;	/* no Application: whether its Cluster is gone is for the caller to find out */
		goto out;
	}
	if (r.status != 200) {
		*err = api_error(c, "reading the Application's resources", &r);
		goto out;
	}
	ret = 0;
	nodes = jget(r.json, "nodes");
	if (json_is_array(nodes))
		json_array_foreach(nodes, i, n) {
			const char *g = jstring(n, "group"), *k = jstring(n, "kind"), *nm = jstring(n, "name"),
				   *nsp = jstring(n, "namespace"), *v = jstring(n, "version");
			if (is(g, "cluster.x-k8s.io") && is(k, "Cluster") && is(nm, name) && nsp && v &&
			    strlen(nsp) < 64 && strlen(v) < 16 && strspn(nsp, "abcdefghijklmnopqrstuvwxyz0123456789-.") ==
			    strlen(nsp) && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789") == strlen(v)) {
				*ns = astrdup(nsp);
				*version = astrdup(v);
				ret = 1;
				break;
			}
		}
out:
	resp_reset(&r);
	return ret;
}

/*
 * A refused DELETE of the Cluster.  Argo CD 3.x checks the fine-grained
 * action delete/GROUP/KIND/NS/NAME, not `delete` (argo-cd server/application/
 * application.go getAppLiveResource; util/settings/settings.go
 * ApplicationFineGrainedRBACInheritanceDisabled: true unless argocd-cm sets
 * server.rbac.disableApplicationFineGrainedRBACInheritance: false), and
 * refuses with getAppEnforceRBAC's bare "permission denied".  The account
 * just read the Application's resource tree, so it is that action it lacks.
 */
static const char *delete_refused(struct call *c, const char *ns, const char *name, struct resp *r)
{
	const char *doing = aprintf("deleting the Cluster %s/%s through Application '%s'", ns, name, c->app);

	if (r->status != 403 || !r->message || strcmp(r->message, "permission denied"))
		return api_error(c, doing, r);
	return aprintf("%s: Argo CD refused (403 permission denied): Argo CD 3.x checks a resource's own delete action, "
		       "not 'delete'; the token's account needs 'p, ROLE, applications, delete/cluster.x-k8s.io/Cluster/"
		       "%s/%s, %s, allow' (or delete/*) in its RBAC policy (argocd-rbac-cm, policy.csv)", doing, ns, name,
		       app_rbac_object(c));
}

int argocd_capi_destroy(struct argocd *a, const char *app, const char *name, int timeout, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	const char *ns = NULL, *version = NULL, *q, *last = "";
	int found, ret = -1;

	if (call_open(&c, a, app, NULL, timeout) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if ((found = tree_cluster(&c, name, &ns, &version, err)) != 1) {
		/* no Application (1), or a tree without the Cluster (2: not yet in Argo CD's cache, or excluded):
		   not "gone" on Argo CD's word; the caller asks the management cluster itself */
		ret = found == 2 ? 1 : found == 0 ? 2 : -1;
		goto out;
	}
	q = cluster_query(ns, name, version);
	/* the Cluster alone: Cluster API tears the rest down in order (notes/capi.md §1.6) */
	if (request(&c, "DELETE", app_path(&c, "/resource", q), NULL, &r, err) < 0)
		goto out;
	if (r.status != 200 && !not_there(&r)) {
		*err = delete_refused(&c, ns, name, &r);
		goto out;
	}
	resp_reset(&r);
	for (;;) {
		struct capi_status st;
		int got;
		if (nap(argocd_poll_ms(a)) < 0) {
			*err = "interrupted";
			break;
		}
		got = get_cluster(&c, ns, name, version, &st, err);
		if (got == 1) {
			ret = 0;
			break;
		}
		if (got == 0)
			last = st.why;
		if (call_past(&c)) {	/* also when the deadline passed during the request */
			*err = aprintf("timed out after %d s waiting for the Cluster %s/%s to go%s%s", timeout, ns, name,
				       *last ? ": " : "", last);
			break;
		}
		if (got < 0)
			break;
	}
out:
	resp_reset(&r);
	call_close(&c);
	return ret;
}
