/*
 * argoapi.c - the HTTP side of the Argo CD client: ARGOCD_SERVER and
 * ARGOCD_OPTS read as the argocd CLI reads them, the token, one request
 * with its retries and byte cap, and Argo CD's error shapes turned into
 * messages (401, 403, code 9...).  The invariants are at the top of argocd.c.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/argoopts.h"
#include "distro/context.h"
#include "base/buf.h"
#include "base/intr.h"
#include "base/re.h"
#include "base/url.h"
#include "base/util.h"

const char argocd_no_token[] = "set ARGOCD_AUTH_TOKEN (or argocd.token-file)";

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
int nap(long ms)
{
	while (ms > 0 && !interrupted()) {
		long slice = ms < 50 ? ms : 50;
		struct timespec ts = { slice / 1000, (slice % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		ms -= slice;
	}
	return interrupted() ? -1 : 0;
}

/* server text made safe to show: one line, at most 600 bytes, the token masked, control characters escaped (term_safe; arena) */
const char *clean(const struct argocd *a, const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	size_t tl = a && a->token ? strlen(a->token) : 0, pl = a && a->password ? strlen(a->password) : 0;
	const char *r;

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	for (size_t i = 0; i < n && b.len < 600; i++) {
		if (tl && n - i >= tl && !memcmp(s + i, a->token, tl)) {
			buf_adds(&b, "***");
			i += tl - 1;
		} else if (pl && n - i >= pl && !memcmp(s + i, a->password, pl)) {
			buf_adds(&b, "***");	/* a login's answer that echoes its body (argologin.c) */
			i += pl - 1;
		} else if (s[i] == '\n' || s[i] == '\r') {
			if (b.len >= 2 && strncmp(b.s + b.len - 2, "; ", 2))
				buf_adds(&b, "; ");
		} else {
			buf_addc(&b, s[i] == '\t' ? ' ' : s[i]);
		}
	}
	if (b.len >= 600)
		buf_adds(&b, "...");
	r = term_safe(astrdup(b.s));	/* hostile: an escape sequence is shown, not obeyed */
	buf_release(&b);
	return r;
}

/* the value at a dotted path of a JSON object, or NULL */
json_t *jget(json_t *o, const char *path)
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
const char *jstr(json_t *o, const char *path)
{
	json_t *v = jget(o, path);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* an RFC 3339 UTC time in seconds; 0 when absent or unreadable */
long long rfc3339(const char *s)
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
void note(struct call *c, int show, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void note(struct call *c, int show, const char *fmt, ...)
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


/* scheme://host:port[/root] from a server as the CLI takes it, or NULL */
static const char *base_url(const char *server, const struct opts *o)
{
	/* the CLI appends :443 when no port is given, plaintext or not, unless grpc-web */
	const char *base = url_base(server, o->plaintext ? "http" : "https", o->grpc_web ? NULL : "443");
	const char *root = o->root;
	size_t n;

	if (!base || !root)
		return base;
	while (*root == '/')
		root++;
	n = strlen(root);
	while (n && root[n - 1] == '/')
		n--;
	return n ? aprintf("%s/%.*s", base, (int)n, root) : base;
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

void argocd_set_git(struct argocd *a, const struct gitops_opts *o)
{
	a->git = *o;
	a->have_git = 1;
}

struct argocd *argocd_open(const struct distro *d, const char *statedir, int verbose, const char **err)
{
	static int curl_ready;
	struct argocd *a;
	struct opts o;
	const char *server, *env, *base, *shown;
	char *token = NULL, *file = NULL, *t;
	const struct context *x;
	int login = 0, ctx_cred, own;

	if (argocd_parse_opts(&o, err) < 0)
		return NULL;
	if ((shown = argocd_server_conflict(d))) {
		*err = shown;	/* the distro's server and the environment's differ (argoserver.c) */
		return NULL;
	}
	server = argocd_server(d);
	if (!server || !*server) {
		*err = "no Argo CD server: set argocd.server in the distro, or ARGOCD_SERVER";
		return NULL;
	}
	if ((shown = url_userinfo(server))) {
		/* Argo CD takes a token, never a password in the URL; one there would reach -v, logs and the state */
		*err = aprintf("the Argo CD server '%s' has a user name or password in it, which Argo CD does not take: "
			       "give the server without it and the token in ARGOCD_AUTH_TOKEN (or argocd.token-file)", shown);
		return NULL;
	}
	/*
	 * A server and its credential come from the same place (context.h): a
	 * context's token and TLS settings go with the server it gave, which
	 * the environment never replaces (argoserver.c).  The distro's go with
	 * its server, or with the environment's when it names none.
	 */
	x = context_gave_server() ? context_active() : NULL;
	if (x) {
		o.plaintext |= x->plaintext;
		if (!o.root)
			o.root = x->grpc_web_root_path;
	}
	if (!o.root)
		o.root = d->argocd.grpc_web_root_path;
	/* a context that gave the server and names its credential: that credential alone, never the
	 * environment's token, which is for another server (review of issue 33) */
	ctx_cred = x && (x->token_env || x->token_file);
	if (!ctx_cred && o.token && *o.token)
		token = xstrdup(o.token);
	else if (!ctx_cred && (env = getenv("ARGOCD_AUTH_TOKEN")) && *env)
		token = xstrdup(env);
	else if (x && x->token_env && !x->token_file) {
		/* the context names the variable that holds the token (context.h) */
		if (!(env = getenv(x->token_env)) || !*env) {
			*err = aprintf("the context '%s' takes the Argo CD token from $%s, which is not set", x->name,
				       x->token_env);
			return NULL;
		}
		token = xstrdup(env);
	} else if (d->argocd.login.ref.name && !d->argocd.token_file) {
		login = 1;	/* argologin.c, once the client is ready */
	} else if (d->argocd.token_file) {
		if (!(file = read_file(d->argocd.token_file, NULL))) {
			*err = aprintf("cannot read argocd.token-file '%s': %s", d->argocd.token_file, strerror(errno));
			return NULL;
		}
		token = file;
	}
	t = token ? trim(token) : login ? (char *)"" : NULL;
	if (!login && (!t || !*t)) {
		free(token);
		*err = d->argocd.token_file ? aprintf("argocd.token-file '%s' is empty: set ARGOCD_AUTH_TOKEN (or argocd.token-file)",
						      d->argocd.token_file)
					    : argocd_no_token;
		return NULL;
	}
	if (!argocd_token_ok(t)) {
		free(token);
		*err = "the Argo CD token has spaces or control characters in it: check ARGOCD_AUTH_TOKEN (or argocd.token-file)";
		return NULL;
	}
	if (!(base = base_url(server, &o))) {
		free(token);
		*err = aprintf("the Argo CD server '%s' is not a host name or URL (check ARGOCD_SERVER or argocd.server)",
			       term_safe(url_masked(server, "***")));
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
	if (!strncmp(base, "http:", 5) && !o.plaintext) {
		/* an http:// URL as the server: the token would go readable on the way; --plaintext says so knowingly */
		free(token);
		*err = aprintf("%s is plain http, and the Argo CD token would go readable on the way: use https, "
			       "or say --plaintext in ARGOCD_OPTS to mean it", url_masked(base, "***"));
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->d = d;
	a->statedir = statedir;
	a->base = base;
	argocd_set_token(a, t);
	free(token);
	a->headers = o.headers;
	a->nheaders = o.nheaders;
	/* a distro must not turn the check off toward a server the environment filled in (the user's
	 * ARGOCD_SERVER, and the token sent there); its ca-file, which replaces the system's CAs, still
	 * applies: a port-forward to the cluster whose CA the distro made (cnoe's tls step) is verified so */
	own = d->argocd.server != NULL;
	a->insecure = o.insecure || (own && d->argocd.insecure);
	if (a->insecure && !strncmp(base, "https:", 6))	/* on every run that talks to Argo CD */
		warn("argocd: TLS verification is off (%s): idpmake does not check that %s is the Argo CD"
		     " server, and sends the token to whoever answers; for a private CA set argocd.ca-file instead",
		     o.insecure ? "--insecure in ARGOCD_OPTS" : x ? "insecure in the context" : "argocd.insecure in the distro",
		     url_masked(base, "***"));
	a->cainfo = o.cacert ? o.cacert : d->argocd.ca_file;
	a->repo_url = argocd_repo_url(d, statedir);
	a->verbose = verbose;
	a->poll_ms = env_ms("IDPMAKE_ARGOCD_POLL_MS", 500);
	a->backoff_ms = env_ms("IDPMAKE_ARGOCD_BACKOFF_MS", 200);
	a->need_login = login;	/* argocd_connect (argologin.c) logs in */
	return a;
}

int argocd_token_ok(const char *t)
{
	for (const char *p = t; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return 0;
	return 1;
}

void argocd_set_token(struct argocd *a, const char *t)
{
	int dots = 0;

	if (a->auth) {
		memwipe(a->auth, strlen(a->auth));
		free(a->auth);
	}
	a->auth = xmalloc(strlen(t) + 32);
	sprintf(a->auth, "Authorization: Bearer %s", t);
	a->token = a->auth + strlen("Authorization: Bearer ");
	for (const char *p = a->token; *p; p++)
		dots += *p == '.';
	a->token_jwt = dots == 2;
}

void argocd_close(struct argocd *a)
{
	if (!a)
		return;
	if (a->watch && a->watch_end)
		a->watch_end(a);	/* argowatch.c, which uses this file: never called from here by name */
	memwipe(a->auth, strlen(a->auth));
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

void resp_reset(struct resp *r)
{
	buf_release(&r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
	r->body = (struct buf)BUF_INIT;	/* "" until a byte comes: decode reads an empty answer as text */
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

struct curl_slist *argocd_curl_setup(struct argocd *a, CURL *k, const char *url, const char *accept, char *ebuf,
				     struct curl_slist *h)
{
	curl_easy_reset(k);
	h = curl_slist_append(h, accept);
	h = curl_slist_append(h, "Expect:");
	if (*a->token)	/* none before a login (argologin.c) */
		h = curl_slist_append(h, a->auth);
	for (size_t i = 0; i < a->nheaders; i++)
		h = curl_slist_append(h, a->headers[i]);
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_USERAGENT, "idpmake/" IDPMAKE_VERSION);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
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
		/* the CA given, alone: libcurl keeps its CA folder (Debian's /etc/ssl/certs) beside a CAINFO */
		curl_easy_setopt(k, CURLOPT_CAINFO, a->cainfo);
		curl_easy_setopt(k, CURLOPT_CAPATH, NULL);
	}
	return h;
}

/* one exchange; the CURLcode (CURLE_OK when an HTTP answer came) */
static CURLcode exchange(struct call *c, const char *method, const char *url, const char *body, struct resp *r,
			 char *ebuf)
{
	struct curl_slist *h = NULL;
	CURL *k = c->curl;
	long timeout = REQUEST_TIMEOUT_MS;
	CURLcode rc;

	if (c->deadline) {
		long left = (long)((c->deadline - now_s()) * 1000);
		if (left < timeout)
			timeout = left < 1000 ? 1000 : left;
	}
	if (strcmp(method, "GET"))
		h = curl_slist_append(h, "Content-Type: application/json");	/* invariant 1 */
	h = argocd_curl_setup(c->a, k, url, "Accept: application/json", ebuf, h);
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, timeout);
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
/*
 * An HTML error page (a proxy or load balancer in front of Argo CD answers
 * 502 or 503 with one): its <title>, else its text without the markup, on
 * one line, at most 200 bytes.
 */
static struct re *html_title, *html_tags, *html_space;

static void html_compile(void)
{
	const char *err;
	html_title = re_compile("(?is)\\A.*?<title[^>]*>(.*?)</title>.*\\z", &err);
	html_tags = re_compile("(?is)<(script|style)\\b.*?</\\1\\s*>|<!--.*?-->|<[^>]*>", &err);
	html_space = re_compile("\\s+", &err);
}

static const char *html_text(const char *html)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct buf a = BUF_INIT, b = BUF_INIT;
	const char *t = "";
	size_t n;

	pthread_once(&once, html_compile);
	if (!html_title || !html_tags || !html_space)
		return t;
	if (re_match(html_title, html, strlen(html)) == 1 && re_subst(html_title, html, strlen(html), "$1", SIZE_MAX, &a) >= 0)
		html = a.s;
	if (re_subst(html_tags, html, strlen(html), " ", SIZE_MAX, &b) >= 0 &&
	    re_subst(html_space, b.s, b.len, " ", SIZE_MAX, &a) >= 0) {
		t = a.s + (a.s[0] == ' ');
		n = strlen(t) > 200 ? 200 : strlen(t);
		while (n && t[n - 1] == ' ')
			n--;
		t = astrndup(t, n);
	}
	buf_release(&a);
	buf_release(&b);
	return t;
}

static void decode(struct argocd *a, struct resp *r, const char *ctype)
{
	json_error_t je;

	r->json = json_loadb(r->body.s, r->body.len, 0, &je);
	if (r->status != 200) {
		json_t *code = r->json ? json_object_get(r->json, "code") : NULL;
		const char *m = r->json ? jstr(r->json, "message") : "";
		const char *lead = r->body.s ? r->body.s + strspn(r->body.s, " \t\r\n") : "";
		if (!*m && r->json)
			m = jstr(r->json, "error");
		if (!*m && !r->json && ((ctype && !strncasecmp(ctype, "text/html", 9)) || *lead == '<'))
			m = aprintf("an HTML page, not Argo CD's JSON (a proxy in front of Argo CD?): %s",
				    *html_text(lead) ? html_text(lead) : "(no text)");
		else if (!*m && !r->json)
			m = r->body.s;
		r->code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
		r->message = clean(a, m, strlen(m));
	}
}

void resp_decode(struct argocd *a, struct resp *r, const char *ctype)
{
	decode(a, r, ctype);
}

/*
 * A request with the retries of invariant 2: 0 with an HTTP answer in *r
 * (any status), or -1 with *err when none came.
 */
int request(struct call *c, const char *method, const char *path, json_t *body, struct resp *r,
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
			char *ctype = NULL;
			curl_easy_getinfo(c->curl, CURLINFO_CONTENT_TYPE, &ctype);
			decode(a, r, ctype);
			note(c, 1, "%s %s%s -> %ld (%d ms)", method, url, *a->token ? " (Authorization: Bearer ***)" : "", r->status,
			     (int)((now_s() - t0) * 1000));
			retry = ((r->status >= 500 && r->status != 501) || r->status == 429) &&
				!(c->settled && c->settled(r));
			if (!retry || c->once) {
				ret = 0;
				break;
			}
			*err = aprintf("Argo CD answered %s %s with HTTP %ld: %s", method, path, r->status,
				       r->message && *r->message ? r->message : "(no message)");
		} else {
			const char *e = *ebuf ? ebuf : curl_easy_strerror(rc);
			const char *why = r->over ? aprintf("the response is larger than %u MiB", BODY_CAP >> 20)
						  : clean(a, e, strlen(e));
			note(c, 1, "%s %s%s -> %s", method, url, *a->token ? " (Authorization: Bearer ***)" : "", why);
			retry = transient(rc);
			*err = aprintf("cannot reach Argo CD at %s: %s", a->base, why);
			if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
				*err = aprintf("%s (for a private CA set argocd.ca-file; --insecure in ARGOCD_OPTS or "
					       "argocd.insecure skips verification)", *err);
			else if (rc == CURLE_SSL_CONNECT_ERROR && !strncmp(a->base, "https:", 6))
				*err = aprintf("%s (a plain-HTTP server needs --plaintext in ARGOCD_OPTS)", *err);
		}
		if (!retry || c->once)
			break;
		if (attempt == RETRIES) {
			*err = aprintf("%s (tried %d times)", *err, attempt + 1);
			break;
		}
		if (c->deadline && now_s() + wait / 1000.0 > c->deadline) {
			*err = aprintf("%s (gave up at the step's timeout)", *err);
			c->out_of_time = 1;	/* call_past: the wait is over, though the clock may be a few ms short */
			break;
		}
		note(c, 0, "retrying in %ld ms", wait);
		if (nap(wait) < 0) {
			*err = "interrupted";
			break;
		}
		wait *= 2;
	}
	if (text)
		memwipe(text, strlen(text));	/* a login's password (argologin.c) */
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
		return aprintf("Argo CD denied '%s' on %s '%s' (403): the token's account needs that permission "
			       "in its RBAC policy (argocd-rbac-cm, policy.csv)", act, res, obj);
	}
}

/* the error for an answer that is not a 200 */
const char *api_error(struct call *c, const char *doing, struct resp *r)
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
			/* idpmake names the project: a missing Application would be a 404 */
			return aprintf("Argo CD denied access to application '%s' (403 permission denied): the token's account "
				       "may not get it in project '%s', or Argo CD does not serve namespace '%s'; grant it in "
				       "the account's RBAC policy (argocd-rbac-cm, policy.csv)", c->app, a->d->argocd.project,
				       a->d->argocd.namespace);
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

const char *app_rbac_object(struct call *c)
{
	const struct distro *d = c->a->d;
	return strcmp(d->argocd.namespace, "argocd") ? aprintf("%s/%s/%s", d->argocd.project, d->argocd.namespace, c->app)
						     : aprintf("%s/%s", d->argocd.project, c->app);
}

const char *app_path(struct call *c, const char *suffix, const char *query)
{
	const struct distro *d = c->a->d;
	return aprintf("/api/v1/applications/%s%s?appNamespace=%s&project=%s%s%s", url_escape(c->app), suffix,
		       url_escape(d->argocd.namespace), url_escape(d->argocd.project), query ? "&" : "", query ? query : "");
}

int call_open(struct call *c, struct argocd *a, const char *app, const char *log, int timeout)
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

void call_close(struct call *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	if (c->log)
		fclose(c->log);
}
