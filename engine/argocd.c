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
 *                Failed/Error --> fail with operationState.message
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

#include "argocd.h"
#include "buf.h"
#include "build.h"
#include "bundle.h"
#include "manifest.h"
#include "plan.h"
#include "util.h"
#include "yaml.h"

#ifndef IDPMAKE_VERSION
#define IDPMAKE_VERSION "dev"
#endif

#define BODY_CAP (16u << 20)		/* bytes of a response body kept */
#define RETRIES 5			/* retries of one request (invariant 2) */
#define REQUEST_TIMEOUT_MS 60000L	/* one request, capped by the step's deadline */
#define DELETE_TIMEOUT 300		/* seconds argocd_delete_app waits for the app to go */
#define DEFAULT_TIMEOUT 300		/* seconds, when a package says 0 */

static const char FINALIZER[] = "resources-finalizer.argocd.argoproj.io";
static const char IN_CLUSTER[] = "https://kubernetes.default.svc";

struct argocd {
	const struct distro *d;
	const char *statedir;
	const char *base;		/* scheme://host:port[/root-path], no trailing '/' */
	char *auth;			/* "Authorization: Bearer TOKEN" (malloc'd; never shown) */
	const char *token;		/* points into auth, for masking */
	const char **headers;		/* -H "K: V" from ARGOCD_OPTS */
	size_t nheaders;
	int insecure;			/* no TLS verification */
	const char *cainfo;		/* CA bundle, or NULL */
	const char *repo_url;		/* the GitOps repository, as Applications name it */
	int verbose;
	long poll_ms, backoff_ms;
	int token_jwt;			/* the token has Argo CD's a.b.c shape */
};

/* one conversation: a step's (or a call's) curl handle, log and deadline */
struct call {
	struct argocd *a;
	CURL *curl;
	FILE *log;			/* the step's log, or NULL */
	double deadline;		/* now_s() value; 0: none */
	const char *app;		/* the application's name */
};

struct resp {
	long status;			/* HTTP status */
	struct buf body;		/* up to BODY_CAP bytes */
	int over;			/* the body was longer */
	json_t *json;			/* the body parsed, or NULL */
	int code;			/* the gRPC code of an error body, or -1 */
	const char *message;		/* the message of an error body (masked, arena), or the text */
};

/* ---- small helpers ------------------------------------------------------ */

static long env_ms(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return *end || n < 0 ? def : n;
}

/* sleep ms, in slices, so that an interrupt ends the wait: -1 when interrupted */
static int nap(long ms)
{
	while (ms > 0 && !build_interrupted) {
		long slice = ms < 50 ? ms : 50;
		struct timespec ts = { slice / 1000, (slice % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		ms -= slice;
	}
	return build_interrupted ? -1 : 0;
}

/* server text made safe to show: one line, at most 600 bytes, the token masked (arena) */
static const char *clean(const struct argocd *a, const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	size_t tl = a && a->token ? strlen(a->token) : 0;
	const char *r;

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	for (size_t i = 0; i < n && b.len < 600; i++) {
		if (tl && n - i >= tl && !memcmp(s + i, a->token, tl)) {
			buf_adds(&b, "***");
			i += tl - 1;
		} else if (s[i] == '\n' || s[i] == '\r') {
			if (b.len >= 2 && strncmp(b.s + b.len - 2, "; ", 2))
				buf_adds(&b, "; ");
		} else {
			buf_addc(&b, (unsigned char)s[i] < ' ' ? ' ' : s[i]);
		}
	}
	if (b.len >= 600)
		buf_adds(&b, "...");
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

/* percent-encode for a path segment or a query value */
static const char *esc(const char *s)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (; *s; s++)
		if (isalnum((unsigned char)*s) || strchr("-._~", *s))
			buf_addc(&b, *s);
		else
			buf_addf(&b, "%%%02X", (unsigned char)*s);
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

/* the value at a dotted path of a JSON object, or NULL */
static json_t *jget(json_t *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		o = json_is_object(o) ? json_object_get(o, key) : NULL;
		path += n + (path[n] == '.');
	}
	return o;
}

/* the string at a dotted path, or "" */
static const char *jstr(json_t *o, const char *path)
{
	json_t *v = jget(o, path);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* an RFC 3339 UTC time in seconds; 0 when absent or unreadable */
static long long rfc3339(const char *s)
{
	struct tm tm;
	int y, mo, d, h, mi, sec;

	if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &sec) != 6)
		return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (long long)timegm(&tm);
}

/* a line in the step's log, and on stderr with -v */
static void note(struct call *c, int show, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(struct call *c, int show, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (c->log) {
		fprintf(c->log, "%s\n", b.s);
		fflush(c->log);
	}
	if (show && c->a->verbose)
		fprintf(stderr, "%s: %s\n", argv0, b.s);
	buf_release(&b);
}

/* ---- settings: ARGOCD_OPTS, the server, the token ------------------------ */

struct opts {
	const char *server, *token, *root, *cacert;
	int plaintext, insecure, grpc_web;
	const char **headers;
	size_t nheaders;
};

static int parse_bool(const char *v)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (!strcmp(v, yes[i]))
			return 1;
	return 0;
}

/* split shell-quoted words, as the argocd CLI does with ARGOCD_OPTS */
static int split_words(const char *s, struct strvec *out, const char **err)
{
	struct buf w = BUF_INIT;
	int inword = 0;

	for (;;) {
		char ch = *s;
		if (!ch || isspace((unsigned char)ch)) {
			if (inword)
				strvec_push(out, w.s);
			buf_reset(&w);
			inword = 0;
			if (!ch)
				break;
			s++;
			continue;
		}
		inword = 1;
		if (ch == '\'') {
			const char *end = strchr(s + 1, '\'');
			if (!end)
				goto unterminated;
			buf_add(&w, s + 1, (size_t)(end - s - 1));
			s = end + 1;
		} else if (ch == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
					s++;
				buf_addc(&w, *s);
			}
			if (!*s)
				goto unterminated;
			s++;
		} else if (ch == '\\' && s[1]) {
			buf_addc(&w, s[1]);
			s += 2;
		} else {
			buf_addc(&w, ch);
			s++;
		}
	}
	buf_release(&w);
	return 0;
unterminated:
	buf_release(&w);
	*err = "ARGOCD_OPTS has an unterminated quote";
	return -1;
}

static int parse_opts(struct opts *o, const char **err)
{
	/* the argocd CLI's global switches; every other flag takes a value */
	static const char *const bools[] = { "plaintext", "insecure", "grpc-web", "core", "prompts-enabled",
					     "redis-compress" };
	const char *env = getenv("ARGOCD_OPTS");
	struct strvec w = STRVEC_INIT;

	memset(o, 0, sizeof(*o));
	if (!env || !*env)
		return 0;
	if (split_words(env, &w, err) < 0)
		return -1;
	for (size_t i = 0; i < w.n; i++) {
		const char *t = w.v[i], *name, *eq, *val = NULL;
		int isbool = 0;
		if (t[0] != '-' || !t[1]) {
			/* never print the word: it may be a token without its flag */
			*err = aprintf("ARGOCD_OPTS invalid at word %zu: a value with no flag before it", i + 1);
			strvec_clear(&w);
			return -1;
		}
		name = t + (t[1] == '-' ? 2 : 1);
		if ((eq = strchr(name, '='))) {
			val = eq + 1;
			name = astrndup(name, (size_t)(eq - name));
		}
		for (size_t k = 0; k < sizeof(bools) / sizeof(*bools); k++)
			if (!strcmp(name, bools[k]))
				isbool = 1;
		if (!val) {
			if (!isbool && i + 1 < w.n && w.v[i + 1][0] != '-')
				val = w.v[++i];
			else
				val = "true";
		}
		if (!strcmp(name, "server"))
			o->server = astrdup(val);
		else if (!strcmp(name, "auth-token"))
			o->token = astrdup(val);
		else if (!strcmp(name, "grpc-web-root-path"))
			o->root = astrdup(val);
		else if (!strcmp(name, "server-crt"))
			o->cacert = astrdup(val);
		else if (!strcmp(name, "plaintext"))
			o->plaintext |= parse_bool(val);
		else if (!strcmp(name, "insecure"))
			o->insecure |= parse_bool(val);
		else if (!strcmp(name, "grpc-web"))
			o->grpc_web |= parse_bool(val);
		else if (!strcmp(name, "H") || !strcmp(name, "header")) {
			/* a string slice: comma-separated values allowed */
			const char *p = val;
			while (*p) {
				size_t n = strcspn(p, ",");
				if (n && memchr(p, ':', n)) {
					o->headers = agrow(o->headers, o->nheaders, sizeof(*o->headers));
					o->headers[o->nheaders++] = astrndup(p, n);
				}
				p += n + (p[n] == ',');
			}
		}
	}
	strvec_clear(&w);
	return 0;
}

const char *argocd_opts_server(void)
{
	struct opts o;
	const char *err;

	if (parse_opts(&o, &err) < 0 || !o.server || !*o.server)
		return NULL;
	return o.server;
}

/* scheme://host:port[/root] from a server as the CLI takes it */
static const char *base_url(const char *server, const struct opts *o)
{
	const char *s = server, *root = o->root;
	struct buf b = BUF_INIT;
	const char *r;
	size_t n;

	if (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8)) {
		buf_adds(&b, s);
	} else {
		const char *slash = strchr(s, '/'), *host_end = slash ? slash : s + strlen(s);
		const char *colon = memchr(s, ':', (size_t)(host_end - s));
		buf_addf(&b, "%s://", o->plaintext ? "http" : "https");
		buf_add(&b, s, (size_t)(host_end - s));
		/* the CLI appends :443 when no port is given, plaintext or not, unless grpc-web */
		if ((!colon || s[0] == '[') && !o->grpc_web && !(s[0] == '[' && strstr(s, "]:")))
			buf_adds(&b, ":443");
		buf_adds(&b, host_end);
	}
	while (b.len && b.s[b.len - 1] == '/')
		b.s[--b.len] = 0;
	if (root && *root) {
		while (*root == '/')
			root++;
		n = strlen(root);
		while (n && root[n - 1] == '/')
			n--;
		if (n) {
			buf_addc(&b, '/');
			buf_add(&b, root, n);
		}
	}
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

static char *trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

struct argocd *argocd_open(const struct distro *d, const char *statedir, int verbose, const char **err)
{
	static int curl_ready;
	struct argocd *a;
	struct opts o;
	const char *server, *env;
	char *token = NULL, *file = NULL, *t;

	if (parse_opts(&o, err) < 0)
		return NULL;
	env = getenv("ARGOCD_SERVER");
	server = o.server && *o.server ? o.server : env && *env ? env : d->argocd.server;
	if (!server || !*server) {
		*err = "no Argo CD server: set argocd.server in the distro, or ARGOCD_SERVER";
		return NULL;
	}
	if (o.token && *o.token)
		token = xstrdup(o.token);
	else if ((env = getenv("ARGOCD_AUTH_TOKEN")) && *env)
		token = xstrdup(env);
	else if (d->argocd.token_file) {
		if (!(file = read_file(d->argocd.token_file, NULL))) {
			*err = aprintf("cannot read argocd.token-file '%s': %s", d->argocd.token_file, strerror(errno));
			return NULL;
		}
		token = file;
	}
	t = token ? trim(token) : NULL;
	if (!t || !*t) {
		free(token);
		*err = d->argocd.token_file ? aprintf("argocd.token-file '%s' is empty: set ARGOCD_AUTH_TOKEN (or argocd.token-file)",
						      d->argocd.token_file)
					    : "set ARGOCD_AUTH_TOKEN (or argocd.token-file)";
		return NULL;
	}
	for (const char *p = t; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			free(token);
			*err = "the Argo CD token has spaces or control characters in it: check ARGOCD_AUTH_TOKEN (or argocd.token-file)";
			return NULL;
		}
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			free(token);
			*err = "cannot initialise libcurl";
			return NULL;
		}
		curl_ready = 1;
	}
	a = xcalloc(1, sizeof(*a));
	a->d = d;
	a->statedir = statedir;
	a->base = base_url(server, &o);
	a->auth = xmalloc(strlen(t) + 32);
	sprintf(a->auth, "Authorization: Bearer %s", t);
	a->token = a->auth + strlen("Authorization: Bearer ");
	{
		int dots = 0;
		for (const char *p = a->token; *p; p++)
			dots += *p == '.';
		a->token_jwt = dots == 2;
	}
	free(token);
	a->headers = o.headers;
	a->nheaders = o.nheaders;
	a->insecure = o.insecure || d->argocd.insecure;
	a->cainfo = o.cacert ? o.cacert : d->argocd.ca_file;
	a->repo_url = argocd_repo_url(d, statedir);
	a->verbose = verbose;
	a->poll_ms = env_ms("IDPMAKE_ARGOCD_POLL_MS", 500);
	a->backoff_ms = env_ms("IDPMAKE_ARGOCD_BACKOFF_MS", 200);
	return a;
}

void argocd_close(struct argocd *a)
{
	if (!a)
		return;
	memset(a->auth, 0, strlen(a->auth));
	free(a->auth);
	free(a);
}

/* ---- HTTP ------------------------------------------------------------------ */

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct resp *r = ctx;
	size_t len = size * n;

	if (r->body.len + len > BODY_CAP) {
		r->over = 1;
		return 0;	/* ends the transfer with CURLE_WRITE_ERROR */
	}
	buf_add(&r->body, p, len);
	return len;
}

static void resp_reset(struct resp *r)
{
	buf_release(&r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
	r->code = -1;
}

static int transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* one exchange; the CURLcode (CURLE_OK when an HTTP answer came) */
static CURLcode exchange(struct call *c, const char *method, const char *url, const char *body, struct resp *r,
			 char *ebuf)
{
	struct argocd *a = c->a;
	struct curl_slist *h = NULL;
	CURL *k = c->curl;
	long timeout = REQUEST_TIMEOUT_MS;
	CURLcode rc;

	if (c->deadline) {
		long left = (long)((c->deadline - now_s()) * 1000);
		if (left < timeout)
			timeout = left < 1000 ? 1000 : left;
	}
	curl_easy_reset(k);
	h = curl_slist_append(h, "Accept: application/json");
	if (strcmp(method, "GET"))
		h = curl_slist_append(h, "Content-Type: application/json");	/* invariant 1 */
	h = curl_slist_append(h, "Expect:");
	h = curl_slist_append(h, a->auth);
	for (size_t i = 0; i < a->nheaders; i++)
		h = curl_slist_append(h, a->headers[i]);
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_USERAGENT, "idpmake/" IDPMAKE_VERSION);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k, CURLOPT_ERRORBUFFER, ebuf);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(k, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (a->insecure) {
		curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (a->cainfo) {
		curl_easy_setopt(k, CURLOPT_CAINFO, a->cainfo);
	}
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, r);
	if (!strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH") || body) {
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
	}
	if (strcmp(method, "GET") && strcmp(method, "POST"))
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	ebuf[0] = 0;
	rc = curl_easy_perform(k);
	if (rc == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	return rc;
}

/* fill code/message/json from the body */
static void decode(struct argocd *a, struct resp *r)
{
	json_error_t je;

	r->json = json_loadb(r->body.s, r->body.len, 0, &je);
	if (r->status != 200) {
		json_t *code = r->json ? json_object_get(r->json, "code") : NULL;
		const char *m = r->json ? jstr(r->json, "message") : "";
		if (!*m && r->json)
			m = jstr(r->json, "error");
		if (!*m && !r->json)
			m = r->body.s;
		r->code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
		r->message = clean(a, m, strlen(m));
	}
}

/*
 * A request with the retries of invariant 2: 0 with an HTTP answer in *r
 * (any status), or -1 with *err when none came.
 */
static int request(struct call *c, const char *method, const char *path, json_t *body, struct resp *r,
		   const char **err)
{
	struct argocd *a = c->a;
	const char *url = aprintf("%s%s", a->base, path);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	char ebuf[CURL_ERROR_SIZE];
	long wait = a->backoff_ms;
	int ret = -1;

	for (int attempt = 0;; attempt++) {
		double t0 = now_s();
		CURLcode rc;
		int retry;

		resp_reset(r);
		rc = exchange(c, method, url, text, r, ebuf);
		if (rc == CURLE_OK) {
			decode(a, r);
			note(c, 1, "%s %s (Authorization: Bearer ***) -> %ld (%d ms)", method, url, r->status,
			     (int)((now_s() - t0) * 1000));
			retry = (r->status >= 500 && r->status != 501) || r->status == 429;
			if (!retry) {
				ret = 0;
				break;
			}
			*err = aprintf("Argo CD answered %s %s with HTTP %ld: %s", method, path, r->status,
				       r->message && *r->message ? r->message : "(no message)");
		} else {
			const char *e = *ebuf ? ebuf : curl_easy_strerror(rc);
			const char *why = r->over ? aprintf("the response is larger than %u MiB", BODY_CAP >> 20)
						  : clean(a, e, strlen(e));
			note(c, 1, "%s %s (Authorization: Bearer ***) -> %s", method, url, why);
			retry = transient(rc);
			*err = aprintf("cannot reach Argo CD at %s: %s", a->base, why);
			if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
				*err = aprintf("%s (for a private CA set argocd.ca-file; --insecure in ARGOCD_OPTS or "
					       "argocd.insecure skips verification)", *err);
			else if (rc == CURLE_SSL_CONNECT_ERROR && !strncmp(a->base, "https:", 6))
				*err = aprintf("%s (a plain-HTTP server needs --plaintext in ARGOCD_OPTS)", *err);
		}
		if (!retry)
			break;
		if (attempt == RETRIES) {
			*err = aprintf("%s (tried %d times)", *err, attempt + 1);
			break;
		}
		if (c->deadline && now_s() + wait / 1000.0 > c->deadline) {
			*err = aprintf("%s (gave up at the step's timeout)", *err);
			break;
		}
		note(c, 0, "retrying in %ld ms", wait);
		if (nap(wait) < 0) {
			*err = "interrupted";
			break;
		}
		wait *= 2;
	}
	free(text);
	return ret;
}

/* "permission denied: applications, sync, default/x, sub: ..., iat: ..." */
static const char *denied(const char *m)
{
	static const char prefix[] = "permission denied: ";
	const char *p, *c1, *c2;

	if (strncmp(m, prefix, sizeof(prefix) - 1))
		return NULL;
	p = m + sizeof(prefix) - 1;
	if (!(c1 = strstr(p, ", ")) || !(c2 = strstr(c1 + 2, ", ")))
		return NULL;
	{
		const char *res = astrndup(p, (size_t)(c1 - p)), *act = astrndup(c1 + 2, (size_t)(c2 - c1 - 2));
		const char *obj = c2 + 2, *end = strstr(obj, ", sub:");
		obj = end ? astrndup(obj, (size_t)(end - obj)) : obj;
		return aprintf("Argo CD denied '%s' on %s '%s' (403): the token's account needs that permission", act, res,
			       obj);
	}
}

/* the error for an answer that is not a 200 */
static const char *api_error(struct call *c, const char *doing, struct resp *r)
{
	struct argocd *a = c->a;
	const char *m = r->message && *r->message ? r->message : "(no message)";

	switch (r->status) {
	case 401:
		return aprintf("Argo CD refused the token (401): set ARGOCD_AUTH_TOKEN to a valid token (Argo CD said: %s%s)",
			       m, a->token_jwt ? "" : "; the token is not JWT-shaped (three parts separated by '.')");
	case 403: {
		const char *d = denied(m);
		if (d)
			return d;
		if (!strcmp(m, "permission denied"))
			return aprintf("Argo CD denied access to application '%s' (403): it does not exist in namespace '%s', "
				       "or the token's account may not see it", c->app, a->d->argocd.namespace);
		return aprintf("%s: Argo CD refused (403): %s", doing, m);
	}
	case 404:
		if (r->code == 5)
			return aprintf("%s: %s (404)", doing, m);
		return aprintf("%s: Argo CD has no such endpoint at %s (404: %s); is the server's root path right (--grpc-web-root-path)?",
			       doing, a->base, m);
	case 415:
		return aprintf("%s: Argo CD refused the request's Content-Type (415): %s", doing, m);
	default:
		return aprintf("%s: Argo CD answered HTTP %ld: %s", doing, r->status, m);
	}
}

static const char *app_path(struct call *c, const char *suffix, const char *query)
{
	const struct distro *d = c->a->d;
	return aprintf("/api/v1/applications/%s%s?appNamespace=%s&project=%s%s%s", esc(c->app), suffix,
		       esc(d->argocd.namespace), esc(d->argocd.project), query ? "&" : "", query ? query : "");
}

static int call_open(struct call *c, struct argocd *a, const char *app, const char *log, int timeout)
{
	memset(c, 0, sizeof(*c));
	c->a = a;
	c->app = app;
	if (!(c->curl = curl_easy_init()))
		return -1;
	if (log)
		c->log = fopen(log, "a");
	if (timeout > 0)
		c->deadline = now_s() + timeout;
	return 0;
}

static void call_close(struct call *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	if (c->log)
		fclose(c->log);
}

/* ---- the Application ---------------------------------------------------- */

const char *argocd_app_name(const struct distro *d, const struct step *s)
{
	struct vars v;

	vars_init(&v, d, s->cluster, s->pkg, s->namespace);
	return expand(d->argocd.app_name, (struct loc){ d->file, 0, 0 }, &v);
}

const char *argocd_repo_url(const struct distro *d, const char *statedir)
{
	const char *u = d->git.remote, *scheme, *host, *at, *end;
	char real[4096];

	if (!u) {
		if (statedir && realpath(statedir, real))
			return aprintf("file://%s/gitops.git", real);
		return aprintf("file://%s/gitops.git", statedir ? statedir : ".idpmake");
	}
	/* drop user:password@ from scheme://user:password@host/... */
	if (!(scheme = strstr(u, "://")))
		return u;
	host = scheme + 3;
	end = host + strcspn(host, "/?#");
	if (!(at = memchr(host, '@', (size_t)(end - host))))
		return u;
	while (memchr(at + 1, '@', (size_t)(end - at - 1)))
		at = memchr(at + 1, '@', (size_t)(end - at - 1));
	return aprintf("%.*s%s", (int)(host - u), u, at + 1);
}

static int helm_app(const struct step *s)
{
	return s->pkg->rule && s->pkg->rule->builtin == RENDER_HELM && !s->pkg->render_local;
}

json_t *argocd_app_spec(const struct distro *d, const struct step *s, const char *repo_url)
{
	const char *name = argocd_app_name(d, s);
	json_t *app = json_object(), *md = json_object(), *labels = json_object(), *spec = json_object(),
	       *src = json_object(), *dst = json_object();

	json_object_set_new(app, "apiVersion", json_string("argoproj.io/v1alpha1"));
	json_object_set_new(app, "kind", json_string("Application"));
	json_object_set_new(md, "name", json_string(name ? name : ""));
	json_object_set_new(md, "namespace", json_string(d->argocd.namespace));
	json_object_set_new(labels, "idpmake.io/distro", json_string(d->name ? d->name : ""));
	json_object_set_new(labels, "idpmake.io/cluster", json_string(s->cluster->name));
	json_object_set_new(labels, "idpmake.io/package", json_string(s->pkg->name));
	json_object_set_new(md, "labels", labels);
	json_object_set_new(md, "finalizers", json_pack("[s]", FINALIZER));
	json_object_set_new(app, "metadata", md);

	json_object_set_new(spec, "project", json_string(d->argocd.project));
	if (helm_app(s)) {
		struct vars v;
		const struct package *p = s->pkg;
		const char *repo, *chart, *ver;
		json_t *helm = json_object();
		vars_init(&v, d, s->cluster, p, s->namespace);
		repo = p->chart.repo ? expand(p->chart.repo, p->loc, &v) : NULL;
		chart = p->chart.name ? expand(p->chart.name, p->loc, &v) : NULL;
		ver = p->chart.version ? expand(p->chart.version, p->loc, &v) : "*";
		json_object_set_new(src, "repoURL", json_string(repo ? repo : ""));
		json_object_set_new(src, "chart", json_string(chart ? chart : ""));
		json_object_set_new(src, "targetRevision", json_string(ver ? ver : "*"));
		json_object_set_new(helm, "releaseName", json_string(p->name));
		json_object_set_new(src, "helm", helm);
	} else {
		json_object_set_new(src, "repoURL", json_string(repo_url));
		json_object_set_new(src, "path", json_string(s->gitpath));
		json_object_set_new(src, "targetRevision", json_string(d->git.branch));
	}
	json_object_set_new(spec, "source", src);
	if (s->cluster->argo_name)
		json_object_set_new(dst, "name", json_string(s->cluster->argo_name));
	else
		json_object_set_new(dst, "server", json_string(s->cluster->server ? s->cluster->server : IN_CLUSTER));
	json_object_set_new(dst, "namespace", json_string(s->namespace));
	json_object_set_new(spec, "destination", dst);
	if (s->pkg->sync.options.n) {
		json_t *opts = json_array();
		for (size_t i = 0; i < s->pkg->sync.options.n; i++)
			json_array_append_new(opts, json_string(s->pkg->sync.options.v[i]));
		json_object_set_new(spec, "syncPolicy", json_pack("{s:o}", "syncOptions", opts));
	}
	json_object_set_new(app, "spec", spec);
	return app;
}

/* YAML to JSON, every scalar a string (an ApplicationSource has no other kind) */
static json_t *ytojson(const struct ynode *n)
{
	json_t *o;

	switch (n->type) {
	case Y_SCALAR:
		return json_stringn(n->s, n->slen);
	case Y_SEQ:
		o = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(o, ytojson(n->v[i]));
		return o;
	default:
		o = json_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_set_new(o, n->k[i]->s, ytojson(n->v[i]));
		return o;
	}
}

/* a helm package's source from its rendered Application (with helm.values) */
static int helm_source(struct argocd *a, struct step *s, json_t *app, const char **err)
{
	struct step *r = render_of(s);
	struct bundle b;
	int found = 0;

	if (!r || hash_zero(r->output) || bundle_read(bundle_path(a->statedir, r->output), &b) < 0) {
		*err = aprintf("the rendered Application of '%s' is missing: run up again", s->pkg->name);
		return -1;
	}
	for (size_t i = 0; i < b.n && !found; i++) {
		struct ypool *p;
		struct ynode **docs, *src;
		size_t nd;
		if (strncmp(b.v[i].name, "application.", 12))
			continue;
		p = ypool_new();
		if (yaml_parse(p, b.v[i].name, b.v[i].data, b.v[i].len, &docs, &nd) == 0 && nd &&
		    (src = ypath(docs[0], "spec.source")) && src->type == Y_MAP) {
			json_object_set_new(json_object_get(app, "spec"), "source", ytojson(src));
			found = 1;
		}
		ypool_free(p);
	}
	bundle_free(&b);
	if (!found) {
		*err = aprintf("the rendered output of '%s' has no Application with a spec.source", s->pkg->name);
		return -1;
	}
	return 0;
}

/* ---- waiting ------------------------------------------------------------- */

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
	} else {
		const char *m = jstr(app, "status.health.message");
		buf_addf(&b, "application '%s' is Degraded%s%s", c->app, *m ? ": " : "", m);
		add_items(&b, app, "status.resources", "health.status", NULL, degraded);
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

/* GET the application: 0 with *app, or -1 with *err */
static int get_app(struct call *c, int refresh, json_t **app, const char **err)
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

static int past(struct call *c)
{
	return c->deadline && now_s() >= c->deadline;
}

/* wait until no operation runs (code 9 refusals); -1 with *err */
static int wait_idle(struct call *c, int timeout, const char **err)
{
	const char *last = NULL;

	for (;;) {
		json_t *app;
		const char *phase;
		if (nap(c->a->poll_ms) < 0)
			return *err = "interrupted", -1;
		if (get_app(c, 0, &app, err) < 0)
			return -1;
		if (!json_object_get(app, "operation")) {
			json_decref(app);
			return 0;
		}
		phase = astrdup(jstr(app, "status.operationState.phase"));
		if (!last || strcmp(last, phase))
			note(c, 0, "application '%s': waiting for the running operation (%s) to finish", c->app,
			     *phase ? phase : "not started");
		last = phase;
		if (past(c)) {
			*err = aprintf("timed out after %d s waiting for another operation on application '%s' to finish "
				       "(Argo CD refused the sync: another operation is already in progress)", timeout, c->app);
			json_decref(app);
			return -1;
		}
		json_decref(app);
	}
}

/* poll after the sync was accepted; -1 with *err */
static int wait_done(struct call *c, struct step *s, const char *want_rev, int timeout, const char **err)
{
	int refreshed = 0, refresh = 0, polls = 0, wait_healthy = s->pkg->sync.wait_healthy;
	const char *last = NULL;

	for (;; polls++) {
		json_t *app;
		const char *sync, *health, *phase, *rev, *state;
		int synced, at_rev;
		if (nap(c->a->poll_ms) < 0)
			return *err = "interrupted", -1;
		if (get_app(c, refresh, &app, err) < 0)
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
		if (op_done(app)) {
			if (strcmp(phase, "Succeeded")) {
				*err = failure(c, app, "sync");
				json_decref(app);
				return -1;
			}
			synced = !strcmp(sync, "Synced");
			at_rev = !want_rev || !strcmp(rev, want_rev);
			if (synced && !at_rev && refreshed) {
				/* compared after a refresh: a newer push, not a stale cache */
				note(c, 0, "application '%s' is Synced at %s, newer than %s", c->app, rev, want_rev);
				want_rev = NULL;
				at_rev = 1;
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
		if (past(c)) {
			*err = timed_out(c, app, timeout, wait_healthy ? "Synced and Healthy" : "Synced");
			json_decref(app);
			return -1;
		}
		json_decref(app);
	}
}

/*
 * The revision to sync: the commit this run pushed.  When this run pushed
 * nothing (a retry of a failed sync), NULL: Argo CD syncs the branch head,
 * which holds the folder as last pushed.
 */
static const char *pushed_commit(const struct step *s, const char *commit)
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

int argocd_sync_step(void *ctx, struct step *s, const char *commit, const char **err)
{
	struct argocd *a = ctx;
	const struct distro *d = a->d;
	int timeout = s->pkg->sync.timeout > 0 ? s->pkg->sync.timeout : DEFAULT_TIMEOUT, helm = helm_app(s), ret = -1;
	const char *name = argocd_app_name(d, s), *want_rev = helm ? NULL : pushed_commit(s, commit);
	struct resp r = { .code = -1 };
	struct call c;
	json_t *app, *body;

	if (!name)
		return *err = "argocd.app-name has an undefined variable (see above)", -1;
	if (call_open(&c, a, name, s->log, timeout) < 0)
		return *err = "cannot start a libcurl handle", -1;
	app = argocd_app_spec(d, s, a->repo_url);
	if (helm && helm_source(a, s, app, err) < 0)
		goto out;
	note(&c, 0, "application '%s' in namespace '%s' (project '%s'), %s %s", name, d->argocd.namespace,
	     d->argocd.project, helm ? "chart" : "commit", helm ? jstr(app, "spec.source.chart") : commit ? commit : d->git.branch);

	/* create or update (API.md 5.3) */
	if (request(&c, "POST", "/api/v1/applications?upsert=true", app, &r, err) < 0)
		goto out;
	if (r.status != 200) {
		*err = api_error(&c, aprintf("creating or updating application '%s'", name), &r);
		goto out;
	}

	/* sync (API.md 5.7); a running operation is waited out */
	body = json_object();
	json_object_set_new(body, "name", json_string(name));
	json_object_set_new(body, "appNamespace", json_string(d->argocd.namespace));
	json_object_set_new(body, "project", json_string(d->argocd.project));
	if (want_rev)
		json_object_set_new(body, "revision", json_string(want_rev));
	json_object_set_new(body, "prune", json_boolean(s->pkg->sync.prune));
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
			ret = 0;
			break;
		}
		if (r.status == 400 && r.code == 9 && strstr(r.message, "another operation is already in progress")) {
			if (wait_idle(&c, timeout, err) < 0)
				break;
			continue;
		}
		*err = api_error(&c, aprintf("syncing application '%s'", name), &r);
		break;
	}
	json_decref(body);
	if (ret == 0)
		ret = wait_done(&c, s, want_rev, timeout, err);
	if (ret == 0)
		note(&c, 0, "application '%s' is Synced%s", name, s->pkg->sync.wait_healthy ? " and Healthy" : "");
out:
	if (ret < 0)
		note(&c, 0, "error: %s", *err);
	resp_reset(&r);
	json_decref(app);
	call_close(&c);
	return ret;
}

int argocd_app_status(struct argocd *a, const char *app, int refresh, char **sync_status, char **health,
		      const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	int ret = -1;

	*sync_status = *health = NULL;
	if (call_open(&c, a, app, NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "GET", app_path(&c, "", refresh ? "refresh=normal" : NULL), NULL, &r, err) == 0) {
		if (r.status == 200 && json_is_object(r.json)) {
			*sync_status = xstrdup(jstr(r.json, "status.sync.status"));
			*health = xstrdup(jstr(r.json, "status.health.status"));
			ret = 0;
		} else if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied"))) {
			ret = 1;
		} else {
			*err = api_error(&c, aprintf("reading application '%s'", app), &r);
		}
	}
	resp_reset(&r);
	call_close(&c);
	return ret;
}

int argocd_delete_app(struct argocd *a, const char *app, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	int ret = -1;

	if (call_open(&c, a, app, NULL, DELETE_TIMEOUT) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "DELETE", app_path(&c, "", "cascade=true"), NULL, &r, err) < 0)
		goto out;
	if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied"))) {
		ret = 0;	/* already gone */
		goto out;
	}
	if (r.status != 200) {
		*err = api_error(&c, aprintf("deleting application '%s'", app), &r);
		goto out;
	}
	/* the object stays, with a deletionTimestamp, until its resources are gone (API.md 5.5) */
	for (;;) {
		if (nap(a->poll_ms) < 0) {
			*err = "interrupted";
			break;
		}
		if (request(&c, "GET", app_path(&c, "", NULL), NULL, &r, err) < 0)
			break;
		if (r.status == 404 || (r.status == 403 && !strcmp(r.message, "permission denied"))) {
			ret = 0;
			break;
		}
		if (r.status != 200) {
			*err = api_error(&c, aprintf("reading application '%s'", app), &r);
			break;
		}
		if (past(&c)) {
			*err = aprintf("timed out after %d s waiting for application '%s' to be deleted", DELETE_TIMEOUT, app);
			break;
		}
	}
out:
	resp_reset(&r);
	call_close(&c);
	return ret;
}
