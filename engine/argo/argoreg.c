/*
 * argoreg.c - registration in Argo CD (fleet.md "Clusters"): the
 * CLUSTER:register and repository:register steps, the lookup of clusters
 * named only by `name`, and unregistering for `up --prune`.
 *
 *   CLUSTER:register     POST /api/v1/clusters?upsert=true  {server, name,
 *                        config: {bearerToken | TLS client cert, tlsClientConfig},
 *                        labels, annotations}: Argo CD's create compares the
 *                        labels and annotations too (Cluster.Equals: a
 *                        label-only difference is a difference) and, with
 *                        upsert, updates the cluster, so this one request sets
 *                        them; when only the labels changed since the last
 *                        registration (argocd_register_labels_only),
 *                        PUT /api/v1/clusters/SERVER?updatedFields=labels&updatedFields=annotations
 *                        alone, which reads and sends no credential.  Argo CD
 *                        reaches the cluster (its server version) before it
 *                        saves either, the PUT with the credentials it holds;
 *                        when it cannot, HTTP 500, nothing is saved, and the
 *                        step fails at once naming the cluster (unreachable).
 *   repository:register  POST /api/v1/repositories?upsert=true {repo, type: git,
 *                        name: idpmake/DISTRO (whose it is: owner.c),
 *                        username: IDPMAKE_GIT_USERNAME (default git),
 *                        password: IDPMAKE_GIT_TOKEN}; no token: nothing to register.
 *   name-only clusters   GET /api/v1/clusters/NAME?id.type=name, once per run
 *                        and cluster, before the run's first sync
 *                        (argocd_cluster_lookup, from build.c), else by the
 *                        first sync to it (the others wait for that answer);
 *                        an unknown cluster fails its syncs.
 *
 * Invariant: the credentials (bearer token, client key and certificate data,
 * repository password) go only into request bodies.  The step's log and -v
 * show bodies with them as "***"; a message from the server that quotes one
 * is masked; nothing here reaches the state or a key.  The annotations
 * idpmake.io/cluster and idpmake.io/distro mark a cluster idpmake
 * registered: --prune deletes only those, and only when the state records
 * that idpmake registered them.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/gitcred.h"
#include "argo/kubectl.h"
#include "base/hash.h"
#include "base/pem.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"
#include "argo/argohome.h"
#include "argo/capiowner.h"
#include "graph/adopt.h"
#include "distro/capi.h"

/* ---- secrets: kept in malloc'd memory, wiped after use ------------------- */

#define NSECRETS 4

struct secrets {
	char *v[NSECRETS];
	size_t n;
};

static const char *keep(struct secrets *sc, const char *s)
{
	if (!s || !*s || sc->n == NSECRETS)
		return s;
	return sc->v[sc->n++] = xstrdup(s);
}

static void wipe(struct secrets *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		memwipe(sc->v[i], strlen(sc->v[i]));
		free(sc->v[i]);
	}
	sc->n = 0;
}

/* s with every secret replaced by "***" (arena) */
static const char *mask(const struct secrets *sc, const char *s)
{
	struct buf b = BUF_INIT;
	const char *r;

	if (!s)
		return s;
	while (*s) {
		size_t hit = 0;
		for (size_t i = 0; i < sc->n && !hit; i++) {
			size_t l = strlen(sc->v[i]);
			if (l >= 3 && !strncmp(s, sc->v[i], l))
				hit = l;
		}
		if (hit) {
			buf_adds(&b, "***");
			s += hit;
		} else {
			buf_addc(&b, *s++);
		}
	}
	r = astrdup(b.s ? b.s : "");
	buf_release(&b);
	return r;
}

/* a JSON value that holds a credential, its strings zeroed before jansson frees them */
static void zdecref(json_t *v)
{
	kubectl_json_wipe(v);
	json_decref(v);
}

/* o's field key, if there, as "***": its string zeroed first (jansson frees it as it is) */
static void hide_field(json_t *o, const char *key)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	if (v) {
		kubectl_json_wipe(v);
		json_object_set_new(o, key, json_string("***"));
	}
}

/* a request body for the log and -v: secret fields shown as "***" */
static void note_body(struct call *c, const char *what, json_t *body)
{
	/* the CA and client certificate too: what a file held stays out of the logs, whatever it was */
	static const char *const hide[] = { "bearerToken", "password", "keyData", "certData", "caData" };
	json_t *copy = json_deep_copy(body);
	char *text;

	for (size_t i = 0; i < sizeof(hide) / sizeof(*hide); i++) {
		hide_field(copy, hide[i]);
		hide_field(jget(copy, "config"), hide[i]);
		hide_field(jget(copy, "config.tlsClientConfig"), hide[i]);
	}
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	note(c, 1, "%s %s", what, text ? text : "?");
	free(text);
	zdecref(copy);	/* what else of the body was copied (a hidden field under another name) */
}

/* ---- small helpers -------------------------------------------------------- */

/* percent-encoded for a path segment (arena) */
static const char *seg(struct call *c, const char *s)
{
	char *e = curl_easy_escape(c->curl, s, 0);
	const char *r = astrdup(e ? e : "");
	curl_free(e);
	return r;
}

/* ---- per-run, per-cluster memory: labels-only hints, name lookups --------- */

enum { LOOK_NONE, LOOK_RUNNING, LOOK_KNOWN, LOOK_MISSING };

struct memo {
	const struct cluster *cl;
	int labels_only;
	int look;
	const char *missing;		/* the error of LOOK_MISSING */
};

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t memo_cond = PTHREAD_COND_INITIALIZER;
static struct memo *memos;
static size_t nmemos;

/* the cluster's entry; call with memo_lock held */
static struct memo *memo_of(const struct cluster *cl)
{
	for (size_t i = 0; i < nmemos; i++)
		if (memos[i].cl == cl)
			return &memos[i];
	memos = agrow(memos, nmemos, sizeof(*memos));
	memset(&memos[nmemos], 0, sizeof(*memos));
	memos[nmemos].cl = cl;
	return &memos[nmemos++];
}

void argocd_register_labels_only(const struct cluster *cl)
{
	pthread_mutex_lock(&memo_lock);
	memo_of(cl)->labels_only = 1;
	pthread_mutex_unlock(&memo_lock);
}

struct hash argocd_cluster_connection(const struct distro *d, const struct cluster *cl)
{
	struct hasher *h = hasher_new();

	/* what the registration says besides labels; where the credential comes from, never what it is */
	hasher_adds(h, "cluster-connection");
	hasher_adds(h, d->name);
	hasher_adds(h, cl->name);
	hasher_adds(h, cl->server);
	hasher_adds(h, cl->reg.token_env);
	hasher_adds(h, cl->reg.kubeconfig);
	hasher_adds(h, cl->reg.context);
	hasher_adds(h, cl->reg.ca_file);
	hasher_add(h, &cl->reg.insecure, sizeof(cl->reg.insecure));
	return hasher_end(h);
}

int argocd_cluster_known(struct call *c, const struct cluster *cl, const char **err)
{
	struct memo *m;
	struct resp r = { .code = -1 };
	int ret = -1, look;

	pthread_mutex_lock(&memo_lock);
	m = memo_of(cl);
	while (m->look == LOOK_RUNNING)
		pthread_cond_wait(&memo_cond, &memo_lock);
	if (m->look == LOOK_KNOWN || m->look == LOOK_MISSING) {
		look = m->look;
		*err = m->missing;
		pthread_mutex_unlock(&memo_lock);
		return look == LOOK_KNOWN ? 0 : -1;
	}
	m->look = LOOK_RUNNING;
	pthread_mutex_unlock(&memo_lock);

	look = LOOK_NONE;	/* no answer: the next sync asks again */
	if (request(c, "GET", aprintf("/api/v1/clusters/%s?id.type=name", seg(c, cl->argo_name)), NULL, &r, err) == 0) {
		if (r.status == 200) {
			note(c, 0, "cluster '%s' is known to Argo CD as '%s' (%s)", cl->name, cl->argo_name,
			     jstr(r.json, "server"));
			look = LOOK_KNOWN;
			ret = 0;
		} else if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied"))) {
			*err = aprintf("cluster '%s' is not known to Argo CD (destination.name '%s'): register it in Argo "
				       "CD under that name (argocd cluster add), or give it server: and register: in the "
				       "distro", cl->name, cl->argo_name);
			look = LOOK_MISSING;
		} else {
			*err = api_error(c, aprintf("looking up cluster '%s' (destination.name '%s')", cl->name, cl->argo_name),
					 &r);
		}
	}
	resp_reset(&r);
	pthread_mutex_lock(&memo_lock);
	m = memo_of(cl);	/* again: another cluster's first look-up may have moved the array (agrow) */
	m->look = look;
	m->missing = look == LOOK_MISSING ? *err : NULL;
	pthread_cond_broadcast(&memo_cond);
	pthread_mutex_unlock(&memo_lock);
	return ret;
}

int argocd_cluster_lookup(void *ctx, const struct cluster *cl, const char *log, const char **err)
{
	struct call c;
	int ret, look;

	if (call_open(&c, ctx, cl->name, log, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	ret = argocd_cluster_known(&c, cl, err);
	if (ret < 0)
		note(&c, 0, "error: %s", *err);
	call_close(&c);
	if (ret == 0)
		return 0;
	pthread_mutex_lock(&memo_lock);
	look = memo_of(cl)->look;
	pthread_mutex_unlock(&memo_lock);
	return look == LOOK_MISSING ? 1 : -1;
}

/* ---- CLUSTER:register ----------------------------------------------------- */

static json_t *kv_object(const struct kvlist *l)
{
	json_t *o = json_object();
	for (size_t i = 0; i < l->n; i++)
		json_object_set_new(o, l->v[i].key, json_string(l->v[i].value));
	return o;
}

static json_t *annotations(const struct argocd *a, const struct cluster *cl)
{
	json_t *o = owner_annotations(a->d, a->repo_url);	/* where the distro pushes (owner.c) */

	json_object_set_new(o, "idpmake.io/cluster", json_string(cl->name));
	json_object_set_new(o, "idpmake.io/distro", json_string(a->d->name ? a->d->name : ""));
	return o;
}

/* the cluster's config: credential and TLS; NULL with *err */
static json_t *cluster_config(struct call *c, const struct cluster *cl, struct secrets *sc, const char **err)
{
	json_t *cfg = json_object(), *tls = json_object();
	int insecure = cl->reg.insecure;

	if (cl->reg.token_env) {
		const char *t = getenv(cl->reg.token_env);
		if (!t || !*t) {
			*err = aprintf("cluster '%s': the variable %s (register.token-env) is not set or empty", cl->name,
				       cl->reg.token_env);
			goto fail;
		}
		json_object_set_new(cfg, "bearerToken", json_string(keep(sc, t)));
	} else {
		struct kubecred k;
		if (kubecred_read(cl, &k, err) < 0)
			goto fail;
		if (!cl->server) {
			*err = aprintf("cluster '%s' registers from kubeconfig '%s' but has no 'server': give server: %s (the "
				       "Applications' destination)", cl->name, cl->reg.kubeconfig, k.server);
			kubecred_free(&k);
			goto fail;
		}
		if (strcmp(k.server, cl->server))
			note(c, 1, "cluster '%s': the kubeconfig's server %s differs from the distro's; Argo CD is given %s",
			     cl->name, url_userinfo(k.server) ? url_userinfo(k.server) : k.server, cl->server);
		if (k.token)
			json_object_set_new(cfg, "bearerToken", json_string(keep(sc, k.token)));
		if (k.cert && k.key) {
			json_object_set_new(tls, "certData", json_string(keep(sc, k.cert)));
			json_object_set_new(tls, "keyData", json_string(keep(sc, k.key)));
		}
		if (k.ca)
			json_object_set_new(tls, "caData", json_string(k.ca));
		insecure |= k.insecure;
		kubecred_free(&k);
	}
	if (cl->reg.ca_file) {
		char *ca = kubecred_file_base64(cl->reg.ca_file, "register.ca-file", PEM_CERT, err);
		if (!ca)
			goto fail;
		json_object_set_new(tls, "caData", json_string(ca));
		free(ca);
	}
	json_object_set_new(tls, "insecure", json_boolean(insecure));
	json_object_set_new(cfg, "tlsClientConfig", tls);
	return cfg;
fail:
	zdecref(tls);
	zdecref(cfg);
	return NULL;
}

/* the cluster's name, labels and annotations: the PUT's body, and the POST's without config */
static json_t *cluster_body(const struct argocd *a, const struct cluster *cl)
{
	json_t *b = json_object();

	json_object_set_new(b, "server", json_string(cl->server));
	json_object_set_new(b, "name", json_string(cl->name));
	json_object_set_new(b, "labels", kv_object(&cl->labels));
	json_object_set_new(b, "annotations", annotations(a, cl));
	return b;
}

/*
 * Argo CD's server/cluster Create and Update reach the cluster (its server
 * version) with the credentials they are about to save, and save nothing
 * when that fails: HTTP 500 "error getting server version: ..." (create) or
 * "failed to get server version: ..." (update), also "failed to create
 * discovery client" (a CA that is not PEM) and "REST config".  That answer
 * is final, not a hiccup to retry.
 */
static int unreachable(const struct resp *r)
{
	const char *m = r->message ? r->message : "";

	return r->status == 500 && (strstr(m, "server version") || strstr(m, "discovery client") ||
				    strstr(m, "REST config"));
}

static const char *unreachable_error(const struct cluster *cl, const char *doing, const char *creds,
				     const struct resp *r)
{
	return aprintf("%s: Argo CD could not reach cluster '%s' at %s with %s, so it saved nothing (HTTP 500: %s); "
		       "check the cluster's server address and that %s",
		       doing, cl->name, cl->server, creds, r->message, !strcmp(creds, "the credentials it holds")
		       ? "they are still valid (a label change sends none: register again with a new credential)"
		       : "the register credential is valid for it");
}

/* PUT the labels and annotations: 0; 1 when Argo CD has no such cluster; -1 with *err */
static int put_labels(struct call *c, const struct cluster *cl, json_t *body, const char **err)
{
	const char *path = aprintf("/api/v1/clusters/%s?updatedFields=labels&updatedFields=annotations", seg(c, cl->server));
	struct resp r = { .code = -1 };
	int ret = -1;

	c->settled = unreachable;
	if (request(c, "PUT", path, body, &r, err) < 0)
		goto out;
	if (r.status == 200)
		ret = 0;
	else if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied")))
		ret = 1;
	else if (unreachable(&r))
		*err = unreachable_error(cl, aprintf("setting the labels of cluster '%s'", cl->name),
					 "the credentials it holds", &r);
	else
		*err = api_error(c, aprintf("setting the labels of cluster '%s'", cl->name), &r);
out:
	resp_reset(&r);
	return ret;
}

static int register_cluster(struct call *c, const struct cluster *cl, const char **err)
{
	struct secrets sc = { { 0 }, 0 };
	struct resp r = { .code = -1 };
	json_t *body = cluster_body(c->a, cl), *cfg;
	int labels_only, ret = -1;

	if (!cl->server) {
		*err = aprintf("cluster '%s' has no 'server' to register", cl->name);
		goto out;
	}
	pthread_mutex_lock(&memo_lock);
	labels_only = memo_of(cl)->labels_only;
	pthread_mutex_unlock(&memo_lock);
	if (labels_only) {
		/* registered before with this server, name and credential source: the labels alone */
		note_body(c, "only the labels changed:", body);
		if ((ret = put_labels(c, cl, body, err)) <= 0)
			goto out;
		note(c, 1, "cluster '%s' is no longer in Argo CD: registering it again", cl->name);
		ret = -1;
	}
	if (!(cfg = cluster_config(c, cl, &sc, err)))
		goto out;
	json_object_set_new(body, "config", cfg);
	note_body(c, "upsert cluster", body);
	c->settled = unreachable;
	if (request(c, "POST", "/api/v1/clusters?upsert=true", body, &r, err) < 0)
		goto out;
	if (r.status != 200) {
		*err = unreachable(&r) ? unreachable_error(cl, aprintf("registering cluster '%s'", cl->name),
							     "the given credentials", &r)
				       : api_error(c, aprintf("registering cluster '%s' (%s)", cl->name, cl->server), &r);
		goto out;
	}
	ret = 0;	/* the upsert set the labels and annotations too */
out:
	if (ret == 0)
		note(c, 0, "cluster '%s' (%s) is registered in Argo CD", cl->name, cl->server);
	if (ret < 0 && *err)
		*err = mask(&sc, *err);
	resp_reset(&r);
	zdecref(body);
	wipe(&sc);
	return ret;
}

int argocd_register_created(struct call *c, const struct cluster *cl, const char *server, json_t *cfg,
			    const char *const *sv, size_t n, const char **err)
{
	struct secrets sc = { { 0 }, 0 };
	struct resp r = { .code = -1 };
	const char *old = NULL;
	json_t *body;
	int ret = -1;

	if (argocd_stale_entry(c, cl, server, &old, err) < 0)
		return -1;
	body = cluster_body(c->a, cl);
	for (size_t i = 0; i < n; i++)
		keep(&sc, sv[i]);
	json_object_set_new(body, "server", json_string(server));
	json_object_set(body, "config", cfg);
	note_body(c, "upsert cluster", body);
	c->settled = unreachable;
	if (request(c, "POST", "/api/v1/clusters?upsert=true", body, &r, err) < 0)
		goto out;
	if (r.status == 200) {
		note(c, 0, "cluster '%s' (%s) is registered in Argo CD", cl->name, server);
		ret = 0;
		if (old && argocd_drop_stale(c, cl, old, server, err) < 0)
			ret = -1;	/* its entry at the endpoint of before: gone, so that the name means one server */
	} else if (unreachable(&r)) {
		*err = aprintf("Argo CD cannot reach cluster '%s' at %s yet (HTTP 500: %s)", cl->name, server, r.message);
		ret = 1;
	} else {
		*err = api_error(c, aprintf("registering cluster '%s' (%s)", cl->name, server), &r);
	}
out:
	if (ret != 0 && *err)
		*err = mask(&sc, *err);
	resp_reset(&r);
	json_decref(body);	/* cfg is the caller's, which may try again with it (argocapireg.c wipes it) */
	wipe(&sc);
	return ret;
}

int argocd_cluster_labels(struct call *c, const struct cluster *cl, const char *server, json_t *entry,
			  const json_t *have, const struct strlist *drop, const char **err)
{
	json_t *labels, *ours, *body;
	struct resp r = { .code = -1 };
	int ret;

	if (entry && (*err = argocd_created_over(c, cl, server, entry)))
		return -1;	/* another distro's registration: its labels are not this one's to set */
	labels = json_is_object(have) ? json_deep_copy(have) : json_object();
	ours = kv_object(&cl->labels);

	for (size_t i = 0; drop && i < drop->n; i++)
		json_object_del(labels, drop->v[i]);	/* idpmake's, dropped from the distro since */
	/* the registrar's labels stay; the distro's are set over them (updatedFields=labels replaces the map) */
	if (json_object_update(labels, ours) < 0 || (json_is_object(have) && json_equal(labels, have))) {
		json_decref(labels);
		json_decref(ours);
		return 0;	/* already so: no request */
	}
	json_decref(ours);
	body = json_pack("{s:s, s:s, s:o}", "server", server, "name", cl->name, "labels", labels);
	ret = request(c, "PUT", aprintf("/api/v1/clusters/%s?updatedFields=labels", seg(c, server)), body, &r, err);

	if (ret == 0 && r.status != 200) {
		*err = api_error(c, aprintf("setting the labels of cluster '%s'", cl->name), &r);
		ret = -1;
	}
	resp_reset(&r);
	json_decref(body);
	return ret;
}

/* ---- repository:register ------------------------------------------------ */

static int register_repo(struct call *c, const char **err)
{
	struct argocd *a = c->a;
	const char *token = NULL, *user = NULL;
	struct secrets sc = { { 0 }, 0 };
	struct resp r = { .code = -1 };
	json_t *body;
	int ret = -1;

	if (!gitcred_given()) {
		note(c, 1, "no IDPMAKE_GIT_TOKEN: the repository %s is left to Argo CD's own settings", a->repo_url);
		return 0;
	}
	{
		/* the password goes in the body: to an Argo CD over plain http only when allowed, as git's */
		struct url u;
		if (url_parse(a->base, &u) == 0 && !url_may_send_credentials(&u, aprintf("%s (repository:register)", url_git_token_name())))
			return *err = aprintf("repository:register would send %s to Argo CD at %s over plain http: use "
					      "https, or set IDPMAKE_GIT_ALLOW_HTTP=1", url_git_token_name(), a->base), -1;
	}
	/* read now, when it is sent (gitcred.h): a bootstrap's hooks may have made it */
	if (gitcred_get(&user, &token, 0) <= 0)
		return *err = aprintf("repository:register: %s could not be read (said above)", url_git_token_name()), -1;
	if (!user)
		user = "git";
	/* named idpmake/DISTRO: a repository has no labels, the name tells whose it is (owner.c) */
	body = json_pack("{s:s, s:s, s:s, s:s, s:s}", "repo", a->repo_url, "type", "git", "name", owner_repo_name(a->d),
			 "username", user, "password", keep(&sc, token));
	note_body(c, "upsert repository", body);
	if (request(c, "POST", "/api/v1/repositories?upsert=true", body, &r, err) == 0) {
		if (r.status == 200) {
			note(c, 0, "repository %s is registered in Argo CD (user %s)", a->repo_url, user);
			ret = 0;
		} else {
			*err = api_error(c, aprintf("registering repository %s", a->repo_url), &r);
		}
	}
	if (ret < 0 && *err)
		*err = mask(&sc, *err);
	resp_reset(&r);
	zdecref(body);
	wipe(&sc);
	return ret;
}

int argocd_register_step(void *ctx, struct step *s, const char **err)
{
	struct argocd *a = ctx;
	struct call c;
	int ret;

	if (call_open(&c, a, s->cluster ? s->cluster->name : "repository", s->log, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	ret = s->cluster ? register_cluster(&c, s->cluster, err) : register_repo(&c, err);
	if (ret < 0)
		note(&c, 0, "error: %s", *err);
	call_close(&c);
	return ret;
}

/* ---- pre-flight and --refresh --------------------------------------------- */

int argocd_register_check(struct argocd *a, const struct step *s, const char **err)
{
	struct argocd quiet = { 0 };
	struct call c = { .a = &quiet };
	struct secrets sc = { { 0 }, 0 };
	json_t *cfg;

	if (!s->cluster) {
		/* repository:register sends IDPMAKE_GIT_TOKEN in its body: to Argo CD over plain http only when allowed */
		struct url u;
		if (a && gitcred_given() && url_parse(a->base, &u) == 0 &&
		    !url_may_send_credentials(&u, aprintf("%s (repository:register)", url_git_token_name())))
			return *err = aprintf("it would send %s to Argo CD at %s over plain http: use https, or set "
					      "IDPMAKE_GIT_ALLOW_HTTP=1", url_git_token_name(), a->base), -1;
		return 0;
	}
	if (s->cluster->create.capi)
		return 0;	/* its credential is read from Cluster API when it is made (argocapireg.c) */
	if (!s->cluster->server)
		return *err = aprintf("cluster '%s' has no 'server' to register", s->cluster->name), -1;
	/* the credential as the step reads it (variable, kubeconfig and context, ca-file), then dropped */
	if (!(cfg = cluster_config(&c, s->cluster, &sc, err))) {
		*err = mask(&sc, *err);
		wipe(&sc);
		return -1;
	}
	zdecref(cfg);
	wipe(&sc);
	return 0;
}

int argocd_list_field(struct argocd *a, const char *what, const char *field, const char ***out, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	json_t *items, *it;
	size_t i;
	int n = -1;

	*out = NULL;
	if (call_open(&c, a, what, NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "GET", aprintf("/api/v1/%s", what), NULL, &r, err) < 0)
		goto out;
	if (r.status != 200 || !json_is_object(r.json)) {
		*err = r.status == 200 ? aprintf("listing %s: Argo CD's answer is not a JSON object", what)
				       : api_error(&c, aprintf("listing %s", what), &r);
		goto out;
	}
	items = json_object_get(r.json, "items");
	*out = amalloc((json_array_size(items) + 1) * sizeof(**out));
	n = 0;
	json_array_foreach(items, i, it)
		if (json_is_string(json_object_get(it, field)))
			(*out)[n++] = astrdup(json_string_value(json_object_get(it, field)));
out:
	resp_reset(&r);
	call_close(&c);
	return n;
}

/* ---- up --prune ----------------------------------------------------------- */

int argocd_unregister_cluster(struct argocd *a, const char *name, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	const char *server, *mark;
	int ret = -1;

	if (call_open(&c, a, name, NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "GET", aprintf("/api/v1/clusters/%s?id.type=name", seg(&c, name)), NULL, &r, err) < 0)
		goto out;
	if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied"))) {
		ret = 1;
		goto out;
	}
	if (r.status != 200) {
		*err = api_error(&c, aprintf("looking up cluster '%s'", name), &r);
		goto out;
	}
	mark = json_string_value(json_object_get(json_object_get(r.json, "annotations"), "idpmake.io/cluster"));
	if (!mark || strcmp(mark, name)) {
		ret = 2;	/* not marked as the one idpmake registered: someone else's now */
		goto out;
	}
	mark = json_string_value(json_object_get(json_object_get(r.json, "annotations"), "idpmake.io/distro"));
	if ((mark && strcmp(mark, a->d->name ? a->d->name : "")) || !owner_same_home(a, json_object_get(r.json, "annotations"))) {
		ret = 3;	/* another distro registered it since (up --adopt): its, not this one's */
		goto out;
	}
	server = astrdup(jstr(r.json, "server"));
	if (request(&c, "DELETE", aprintf("/api/v1/clusters/%s", seg(&c, server)), NULL, &r, err) < 0)
		goto out;
	if (r.status == 200 || r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied")))
		ret = 0;
	else
		*err = api_error(&c, aprintf("unregistering cluster '%s' (%s)", name, server), &r);
out:
	resp_reset(&r);
	call_close(&c);
	return ret;
}
