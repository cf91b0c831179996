/*
 * argocapireg.c - CLUSTER:register of a cluster Cluster API made (capi.h;
 * spec/capi.md "Steps"):
 *
 *   1. the Secret NAME-kubeconfig (key `value`) read from the management
 *      cluster with kubectl, through its kube target (kubectl.h), into
 *      memory only, zeroed after use; a kubeconfig there may name no file;
 *   2. by create.credential:
 *      service-account  in the new cluster, over libcurl with the Secret's
 *                       credential held in memory (no file, no child): what
 *                       `argocd cluster add` makes (ServiceAccount
 *                       argocd-manager, ClusterRole argocd-manager-role and
 *                       its binding, Secret argocd-manager-long-lived-token
 *                       in kube-system), applied server-side; its token
 *                       polled, then registered with the cluster's CA;
 *      kubeconfig       the client certificate as found; a token user (EKS's
 *                       15-minute token) is refused before any Argo CD call;
 *   3. POST /api/v1/clusters?upsert=true (argoreg.c), "error getting server
 *      version" retried until create.timeout.
 *
 * Invariant: no credential reaches a log, a message, the state or a key;
 * the request bodies that carry them are logged masked (argoreg.c).
 */
#include <ctype.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/capiowner.h"
#include "argo/kubectl.h"
#include "base/buf.h"
#include "base/certtime.h"
#include "base/pem.h"
#include "base/url.h"
#include "base/util.h"
#include "distro/capi.h"

#define SA_NS "kube-system"
#define SA_NAME "argocd-manager"
#define SA_SECRET "argocd-manager-long-lived-token"

/* the new cluster's API, with the Secret's credential in memory */
struct workload {
	const char *server;
	char *ca, *cert, *key;		/* PEM (malloc'd, zeroed when freed), or NULL */
	size_t nca, ncert, nkey;
	const char *token;		/* points into the kubecred */
	int insecure;
};

static void zfree(char *p, size_t n)
{
	if (p) {
		memwipe(p, n);
		free(p);
	}
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	if (b->len + size * n > (1u << 20))
		return 0;	/* hostile: bounded (and within the room made first: never moved, never freed unwiped) */
	buf_add(b, p, size * n);
	return size * n;
}

/* one request to the new cluster: its status, the body parsed into *out (may be NULL); -1 with *err */
static long kube(const struct workload *w, const char *method, const char *path, const char *ctype, const char *body,
		 json_t **out, const char **err)
{
	CURL *k = curl_easy_init();
	struct curl_slist *h = NULL;
	struct buf b = BUF_INIT;
	char ebuf[CURL_ERROR_SIZE] = "";
	long status = -1;

	if (out)
		*out = NULL;
	if (!k)
		return *err = "cannot start a libcurl handle", -1;
	curl_easy_setopt(k, CURLOPT_URL, aprintf("%s%s", w->server, path));
	curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(k, CURLOPT_ERRORBUFFER, ebuf);
	buf_grow(&b, (1u << 20) + 1);	/* a token Secret's answer is zeroed once, where it was written */
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, &b);
	h = curl_slist_append(h, "Accept: application/json");
	if (w->token) {
		char *line = NULL;
		size_t n = strlen(w->token) + 32;
		line = xcalloc(1, n);
		snprintf(line, n, "Authorization: Bearer %s", w->token);
		h = curl_slist_append(h, line);
		zfree(line, n);
	}
	if (ctype)
		h = curl_slist_append(h, aprintf("Content-Type: %s", ctype));
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, body);
	if (w->ca) {
		struct curl_blob blob = { w->ca, w->nca, CURL_BLOB_NOCOPY };
		curl_easy_setopt(k, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(k, CURLOPT_CAPATH, NULL);	/* the cluster's CA alone, not the system's folder too */
	}
	if (w->cert && w->key) {
		struct curl_blob c = { w->cert, w->ncert, CURL_BLOB_NOCOPY }, kb = { w->key, w->nkey, CURL_BLOB_NOCOPY };
		curl_easy_setopt(k, CURLOPT_SSLCERT_BLOB, &c);
		curl_easy_setopt(k, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(k, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(k, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (w->insecure) {
		curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (curl_easy_perform(k) != CURLE_OK) {
		*err = aprintf("%s %s: %s", method, path, *ebuf ? ebuf : "no answer");
	} else {
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
		if (out && b.len)
			*out = json_loadb(b.s, b.len, 0, NULL);
		if (status >= 300) {
			json_t *m = out && *out ? json_object_get(*out, "message") : NULL;
			*err = aprintf("%s %s: HTTP %ld%s%s", method, path, status, json_is_string(m) ? ": " : "",
				       json_is_string(m) ? clean(NULL, json_string_value(m), json_string_length(m)) : "");
		}
	}
	if (b.len)
		memwipe(b.s, b.len);	/* a token Secret's answer */
	buf_release(&b);
	for (struct curl_slist *x = h; x; x = x->next)
		memwipe(x->data, strlen(x->data));	/* the Authorization line */
	curl_slist_free_all(h);
	curl_easy_cleanup(k);
	return status;
}

/* server-side apply of one object (JSON) at path; a dropped connection, a 409, 429 or 5xx tried again until the deadline */
static int apply(struct call *c, const struct workload *w, const char *path, const char *obj, const char **err)
{
	for (;;) {
		long st = kube(w, "PATCH", aprintf("%s?fieldManager=idpmake&force=true", path),
			       "application/apply-patch+yaml", obj, NULL, err);
		if (st >= 200 && st < 300)
			return 0;
		if ((st >= 0 && st != 409 && st != 429 && st < 500) || call_past(c))
			return -1;
		note(c, 0, "%s; again", *err);
		if (nap(argocd_poll_ms(c->a)) < 0)
			return *err = "interrupted", -1;
	}
}

/* a bearer token a header may carry: printable ASCII, no space */
static int token_ok(const char *t)
{
	if (!*t)
		return 0;
	for (; *t; t++)
		if ((unsigned char)*t <= ' ' || (unsigned char)*t >= 0x7f)
			return 0;
	return 1;
}

/*
 * What `argocd cluster add` makes (util/clusterauth), then the token its
 * Secret gets: malloc'd in *token (base64-decoded), *ca the cluster's CA
 * (base64) from that Secret when it has one.
 */
static int service_account(struct call *c, const struct workload *w, char **token, char **ca, const char **err)
{
	static const char *const objs[][2] = {
		{ "/api/v1/namespaces/" SA_NS "/serviceaccounts/" SA_NAME,
		  "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"" SA_NAME "\",\"namespace\":\"" SA_NS "\"}}" },
		{ "/apis/rbac.authorization.k8s.io/v1/clusterroles/argocd-manager-role",
		  "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":"
		  "\"argocd-manager-role\"},\"rules\":[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]},"
		  "{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}]}" },
		{ "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/argocd-manager-role-binding",
		  "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":"
		  "\"argocd-manager-role-binding\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
		  "\"ClusterRole\",\"name\":\"argocd-manager-role\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":"
		  "\"" SA_NAME "\",\"namespace\":\"" SA_NS "\"}]}" },
		{ "/api/v1/namespaces/" SA_NS "/secrets/" SA_SECRET,
		  "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"kubernetes.io/service-account-token\",\"metadata\":"
		  "{\"name\":\"" SA_SECRET "\",\"namespace\":\"" SA_NS "\",\"annotations\":{\"kubernetes.io/service-account.name\":"
		  "\"" SA_NAME "\"}}}" },
	};

	*token = *ca = NULL;
	for (size_t i = 0; i < sizeof(objs) / sizeof(*objs); i++)
		if (apply(c, w, objs[i][0], objs[i][1], err) < 0)
			return -1;
	note(c, 0, "service account %s/%s made in cluster '%s'; waiting for its token", SA_NS, SA_NAME, c->app);
	for (;;) {
		json_t *sec = NULL, *t, *k;
		long st = kube(w, "GET", "/api/v1/namespaces/" SA_NS "/secrets/" SA_SECRET, NULL, NULL, &sec, err);
		t = st == 200 ? jget(sec, "data.token") : NULL;
		k = st == 200 ? json_object_get(json_object_get(sec, "data"), "ca.crt") : NULL;
		if (json_is_string(t) && json_string_length(t)) {
			size_t n;
			unsigned char *raw = unbase64(json_string_value(t), &n);
			if (raw) {
				*token = xcalloc(1, n + 1);
				memcpy(*token, raw, n);
				memwipe(raw, n);
				free(raw);
			}
			if (json_is_string(k) && json_string_length(k))
				*ca = xstrdup(json_string_value(k));
		}
		if (sec)
			kubectl_json_wipe(sec);
		json_decref(sec);
		if (*token && !token_ok(*token))
			return *err = aprintf("the token of %s/%s is empty or not a token (printable ASCII)", SA_NS,
					      SA_SECRET), -1;
		if (*token)
			return 0;
		if (st >= 0 && st != 200 && st != 404 && st != 429 && st < 500)
			return -1;
		if (call_past(c))
			return *err = aprintf("the token of %s/%s never came", SA_NS, SA_SECRET), -1;
		if (nap(argocd_poll_ms(c->a)) < 0)
			return *err = "interrupted", -1;
	}
}

/* an https URL of a host: no user info, no byte a terminal, a header or a shell could read, bounded */
int kube_server_ok(const char *s)
{
	const char *host = s + 8, *end;

	if (strncmp(s, "https://", 8) || strlen(s) > 512)
		return 0;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || strchr("\"\\<>`{}|^", *p))
			return 0;
	end = host + strcspn(host, "/?#");
	return end > host && !memchr(host, '@', (size_t)(end - host));
}

/* a host as compared: no IPv6 brackets, lower case (arena) */
static const char *host_of(const char *h)
{
	size_t n = strlen(h);
	char *r;

	if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
		h++, n -= 2;
	r = astrndup(h, n);
	for (char *p = r; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return r;
}

/*
 * Before a created cluster's credential goes anywhere: its Cluster on the
 * management cluster is this distro's (capiowner.h; up --adopt takes
 * another's over), and the kubeconfig Secret's server is the Cluster's
 * spec.controlPlaneEndpoint, host and port (issue 35 #5): a Secret that
 * names another cluster's server would register this name over that
 * cluster's entry, or send a hook's kubectl there (argoapi.h).
 */
int capi_secret_server_check(const struct cluster *cl, const char *server, const char *refused, const char **adopting,
			     const char **err)
{
	const struct capi *k = cl->create.capi;
	const char *whose = NULL, *ep = NULL, *e = NULL, *have;
	struct url u;
	/* its Application is the sync's business (provision_owner); a Cluster with no home passed it */
	struct capi_mine m = { k->distro, k->home, NULL, NULL, 1, 0 };
	int r = capiowner_whose(k->mgmt, k->namespace, cl->name, &m, &whose, &ep, &e);

	*adopting = NULL;
	if (r < 0)
		return *err = aprintf("%s: %s", e, refused), -1;
	if (r > 0 && !capiowner_adopt())
		return *err = capiowner_refusal(cl, k->namespace, k->management, whose, k->distro), -1;
	if (r > 0)
		*adopting = whose;
	if (!ep)
		return *err = aprintf("the Cluster %s/%s on '%s' has no spec.controlPlaneEndpoint yet: its kubeconfig "
				      "Secret cannot be checked against it; %s", k->namespace, cl->name,
				      k->management, refused), -1;
	if (url_parse(server, &u) < 0 || !u.host || !u.port)
		return *err = aprintf("Secret %s/%s-kubeconfig: its server is not a URL of a host and port", k->namespace,
				      cl->name), -1;
	have = aprintf("%s:%s", host_of(u.host), u.port);
	if (strcmp(have, host_of(ep)))
		return *err = aprintf("Secret %s/%s-kubeconfig names the server %s, which is not the Cluster's "
				      "spec.controlPlaneEndpoint %s: %s (the Secret of another cluster?)",
				      k->namespace, cl->name, server, ep, refused), -1;
	return 0;
}

/* that, and Argo CD's entry at that server, if any, is this one's (argocd_created_entry): 0, or -1 with *err */
static int cluster_check(struct call *c, const struct cluster *cl, const char *server, const char **err)
{
	const struct capi *k = cl->create.capi;
	const char *whose;

	if (capi_secret_server_check(cl, server, "not registered", &whose, err) < 0)
		return -1;
	if (whose)
		note(c, 1, "adopting the Cluster %s/%s of %s (--adopt)", k->namespace, cl->name, whose);
	return argocd_created_entry(c, cl, server, err);	/* what Argo CD has at that server */
}

static char *pem_of(const char *b64, size_t *n)
{
	unsigned char *p = b64 ? unbase64(b64, n) : NULL;
	return (char *)p;
}

/*
 * credential: external: someone else registers it (an in-cluster registrar);
 * wait until Argo CD knows a cluster of that name, then set its labels
 */
/* is label key k in "labels K1,K2,..." (the register's record of what it set last time)? */
static int in_record(const char *rec, const char *k)
{
	size_t n = strlen(k);

	for (const char *q = rec + 7; *q;) {
		size_t l = strcspn(q, ",");
		if (l == n && !strncmp(q, k, n))
			return 1;
		q += l + (q[l] == ',');
	}
	return 0;
}

/*
 * The labels idpmake owns on a cluster another registered: those it set that
 * the registrar did not have (absent from `have` when first set), or that
 * it owned before (prev, the register's record "labels K1,K2").  A key the
 * registrar had stays the registrar's: set over, never removed.  *drop: the
 * owned keys the distro has dropped since.  The new record.
 */
static const char *owned_labels(const struct cluster *cl, const char *prev, const json_t *have, struct strlist *drop)
{
	struct buf now = BUF_INIT;
	const char *r;
	int any = 0;

	buf_adds(&now, "labels ");
	for (size_t i = 0; i < cl->labels.n; i++) {
		const char *k = cl->labels.v[i].key;
		if ((prev && in_record(prev, k)) || !json_object_get(have, k)) {
			buf_addf(&now, "%s%s", any ? "," : "", k);
			any = 1;
		}
	}
	for (const char *q = prev ? prev + 7 : ""; *q;) {
		size_t l = strcspn(q, ",");
		const char *k = astrndup(q, l);
		int kept = 0;
		for (size_t i = 0; i < cl->labels.n && !kept; i++)
			kept = !strcmp(cl->labels.v[i].key, k);
		if (l && !kept) {
			drop->v = agrow(drop->v, drop->n, sizeof(*drop->v));
			drop->v[drop->n++] = k;
		}
		q += l + (q[l] == ',');
	}
	r = astrdup(now.s);
	buf_release(&now);
	return r;
}

static int external(struct call *c, struct step *s, const char **err)
{
	const struct cluster *cl = s->cluster;
	const char *prev = s->recorded && !strncmp(s->recorded, "labels ", 7) ? s->recorded : NULL;
	struct strlist drop = { 0 };
	struct resp r = { .code = -1 };
	int ret = -1;

	note(c, 0, "credential: external: waiting for Argo CD to know cluster '%s'", cl->name);
	for (;;) {
		const char *server;
		if (request(c, "GET", aprintf("/api/v1/clusters/%s?id.type=name", cl->name), NULL, &r, err) < 0)
			break;
		server = r.status == 200 ? jstr(r.json, "server") : NULL;
		if (server && *server) {
			json_t *entry = json_incref(r.json), *have = json_object_get(entry, "labels");
			server = astrdup(server);
			resp_reset(&r);
			/* kept beside the key once the step succeeds (register_decide hands it back) */
			s->recorded = owned_labels(cl, prev, have, &drop);
			ret = argocd_cluster_labels(c, cl, server, entry, have, &drop, err);
			json_decref(entry);
			if (ret == 0)
				note(c, 0, "cluster '%s' (%s), registered by another, has its labels", cl->name, server);
			return ret;
		}
		if (r.status != 200 && r.status != 404 && r.status != 403) {
			*err = api_error(c, aprintf("looking up cluster '%s'", cl->name), &r);
			break;
		}
		resp_reset(&r);
		if (call_past(c)) {
			*err = aprintf("credential: external: Argo CD never knew cluster '%s' (its registrar registers it "
				       "by that name)", cl->name);
			break;
		}
		if (nap(argocd_poll_ms(c->a)) < 0) {
			*err = "interrupted";
			break;
		}
	}
	resp_reset(&r);
	return ret;
}

static int capi_register(struct call *c, struct step *s, const char **err)
{
	const struct cluster *cl = s->cluster;
	const struct capi *k = cl->create.capi;
	const char *secret = aprintf("%s-kubeconfig", cl->name);
	struct kubecred kc;
	struct workload w = { 0 };
	char *text, *token = NULL, *sa_ca = NULL;
	long long na;
	json_t *cfg = NULL, *tls;
	int ret = -1;

	if (!k->mgmt)
		return *err = "no management cluster", -1;
	if (k->credential == CRED_EXTERNAL)
		return external(c, s, err);
	note(c, 0, "reading Secret %s/%s from the management cluster '%s' (kubectl)", k->namespace, secret, k->management);
	/* which Secret it was, read first: a rotation between the two reads is seen as one next time (register.c) */
	s->recorded = kubectl_secret_rv(k->mgmt, k->namespace, secret, &(const char *){ NULL });
	if (!(text = kubectl_secret_value(k->mgmt, k->namespace, secret, "value", err))) {
		*err = aprintf("management cluster '%s': cannot read Secret %s/%s: %s", k->management, k->namespace,
			       secret, *err);
		return -1;
	}
	ret = kubecred_parse(aprintf("Secret %s/%s", k->namespace, secret), NULL, text, strlen(text), NULL, &kc, err);
	zfree(text, strlen(text));
	if (ret < 0)
		return -1;
	ret = -1;
	if (!kube_server_ok(kc.server)) {
		*err = aprintf("Secret %s/%s: the server is not an https URL of a host (no user, no control bytes)",
			       k->namespace, secret);
		goto out;
	}
	if (kc.insecure || !kc.ca) {
		/* Cluster API always writes the CA: a Secret without it (or insecure) would send the credential blind */
		*err = aprintf("Secret %s/%s: its kubeconfig %s: refused (Cluster API writes the cluster's CA there)",
			       k->namespace, secret, kc.insecure ? "skips TLS verification" : "has no certificate-authority-data");
		goto out;
	}
	if (cluster_check(c, cl, kc.server, err) < 0)
		goto out;
	w.server = kc.server;
	w.insecure = kc.insecure;
	w.ca = pem_of(kc.ca, &w.nca);
	cfg = json_object();
	tls = json_object();
	json_object_set_new(cfg, "tlsClientConfig", tls);
	json_object_set_new(tls, "insecure", json_boolean(kc.insecure));
	if (k->credential == CRED_AWS) {
		/* Argo CD assumes the role (IRSA, Pod Identity): only the CA and the names leave here */
		json_object_set_new(cfg, "awsAuthConfig", json_pack("{s:s, s:s}", "clusterName",
								  k->aws_cluster ? k->aws_cluster : cl->name, "roleARN", k->aws_role));
	} else if (k->credential == CRED_KUBECONFIG) {
		if (!(kc.cert && kc.key)) {
			*err = aprintf("cluster '%s': its kubeconfig Secret holds a token, not a client certificate (an EKS "
				       "token lasts 15 minutes): use credential: aws", cl->name);
			goto out;
		}
		json_object_set_new(tls, "certData", json_string(kc.cert));
		json_object_set_new(tls, "keyData", json_string(kc.key));
		w.cert = pem_of(kc.cert, &w.ncert);
		na = w.cert ? cert_not_after(w.cert, w.ncert) : -1;
		s->recorded = aprintf("%s notafter=%lld", s->recorded ? s->recorded : "-", na > 0 ? na : -1LL);
		if (na <= 0) {
			warn("cluster '%s': the client certificate of Secret %s/%s cannot be read for its notAfter: it is "
			     "not registered again before it expires", cl->name, k->namespace, secret);
		} else if (na - (long long)time(NULL) < 30 * 86400LL) {
			/* register.c registers again from 30 days before, once the Secret is rotated */
			time_t t = (time_t)na;
			char day[32];
			struct tm tm;
			strftime(day, sizeof(day), "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
			warn("cluster '%s': the client certificate of Secret %s/%s %s on %s: Cluster API has not rotated "
			     "it yet; idpmake registers it again once it has", cl->name, k->namespace, secret,
			     na <= (long long)time(NULL) ? "expired" : "expires", day);
		}
	} else {
		w.token = kc.token;
		w.cert = pem_of(kc.cert, &w.ncert);
		w.key = pem_of(kc.key, &w.nkey);
		if (service_account(c, &w, &token, &sa_ca, err) < 0) {
			*err = aprintf("cluster '%s' at %s: making its argocd-manager service account: %s", cl->name,
				       kc.server, *err);
			goto out;
		}
		json_object_set_new(cfg, "bearerToken", json_string(token));
	}
	if (sa_ca || kc.ca)
		json_object_set_new(tls, "caData", json_string(sa_ca ? sa_ca : kc.ca));
	for (;;) {
		const char *sv[] = { token, kc.cert, kc.key };
		int r = argocd_register_created(c, cl, kc.server, cfg, sv, 3, err);
		if (r <= 0) {
			ret = r;
			break;
		}
		if (call_past(c))
			break;
		note(c, 0, "%s; again", *err);
		if (nap(argocd_poll_ms(c->a)) < 0) {
			*err = "interrupted";
			break;
		}
	}
out:
	if (cfg) {
		kubectl_json_wipe(cfg);
		json_decref(cfg);
	}
	zfree(token, token ? strlen(token) : 0);
	zfree(sa_ca, sa_ca ? strlen(sa_ca) : 0);
	zfree(w.ca, w.nca);
	zfree(w.cert, w.ncert);
	zfree(w.key, w.nkey);
	kubecred_free(&kc);
	return ret;
}

int argocd_register_any(void *ctx, struct step *s, const char **err)
{
	struct argocd *a = ctx;
	struct call c;
	int ret;

	if (!s->cluster || !s->cluster->create.capi)
		return argocd_register_step(ctx, s, err);
	if (call_open(&c, a, s->cluster->name, s->log, s->cluster->create.capi->timeout) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if ((ret = capi_register(&c, s, err)) < 0)
		note(&c, 0, "error: %s", *err);
	call_close(&c);
	return ret;
}
