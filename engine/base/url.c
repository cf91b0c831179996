/*
 * url.c - URLs parsed, masked and escaped with libcurl's URL API (url.h).
 *
 * Every function here parses with curl_url(); none looks for ':' or '@'
 * itself, except url_masked's fallback for a string curl refuses, which
 * hides everything between "scheme://" and the last '@'.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/url.h"
#include "base/util.h"

/* the schemes idpmake meets, and any other: curl knows the ports of some only */
#define PARSE_FLAGS (CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS)

/* one part of h, in the arena, or NULL when absent */
static const char *part(CURLU *h, CURLUPart what, unsigned int flags)
{
	char *s = NULL;
	const char *r;

	if (curl_url_get(h, what, &s, flags) != CURLUE_OK || !s)
		return NULL;
	r = astrdup(s);
	curl_free(s);
	return r;
}

int url_has_scheme(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
	return n > 0 && !strncmp(s + n, "://", 3);
}

/* part `what` of h holds an '@' */
static int has_at(CURLU *h, CURLUPart what)
{
	char *s = NULL;
	int r = curl_url_get(h, what, &s, 0) == CURLUE_OK && s && strchr(s, '@');

	curl_free(s);
	return r;
}

/*
 * A raw '#', '?' or '/' in a password ends the authority early, and what
 * is left of it may still parse: "https://bob:4711#pw@host/r" is host bob,
 * port 4711 and the fragment "pw@host/r", with no password for the masking
 * to find.  An '@' in the fragment, or after an explicit port with no user,
 * is that mistake: refused (url_masked then hides up to the last '@').
 */
static CURLU *parse(const char *s)
{
	CURLU *h;
	char *user = NULL, *port = NULL;
	int bad;

	if (!url_has_scheme(s) || !(h = curl_url()))
		return NULL;
	if (curl_url_set(h, CURLUPART_URL, s, PARSE_FLAGS) != CURLUE_OK) {
		curl_url_cleanup(h);
		return NULL;
	}
	bad = has_at(h, CURLUPART_FRAGMENT) ||
	      (curl_url_get(h, CURLUPART_USER, &user, 0) != CURLUE_OK &&
	       curl_url_get(h, CURLUPART_PORT, &port, 0) == CURLUE_OK &&
	       (has_at(h, CURLUPART_PATH) || has_at(h, CURLUPART_QUERY)));
	curl_free(user);
	curl_free(port);
	if (bad) {
		curl_url_cleanup(h);
		return NULL;
	}
	return h;
}

int url_parse(const char *s, struct url *u)
{
	CURLU *h = parse(s);

	memset(u, 0, sizeof(*u));
	if (!h)
		return -1;
	u->scheme = part(h, CURLUPART_SCHEME, 0);
	u->user = part(h, CURLUPART_USER, CURLU_URLDECODE);
	u->password = part(h, CURLUPART_PASSWORD, CURLU_URLDECODE);
	u->password_raw = part(h, CURLUPART_PASSWORD, 0);
	u->host = part(h, CURLUPART_HOST, 0);
	u->port = part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT);
	if (!u->port && u->scheme && !strcmp(u->scheme, "ssh"))
		u->port = "22";
	curl_url_cleanup(h);
	return 0;
}

/*
 * s with its password set to `with` (NULL: removed) and, when !keep_user,
 * its user removed; s itself when there is nothing to change, so a URL
 * without a password is used exactly as written.
 */
static const char *rebuild(CURLU *h, const char *s, int keep_user, const char *with)
{
	char *pw = NULL, *user = NULL, *out = NULL;
	const char *r = s;

	curl_url_get(h, CURLUPART_PASSWORD, &pw, 0);
	curl_url_get(h, CURLUPART_USER, &user, 0);
	if (pw || (user && !keep_user)) {
		if (curl_url_set(h, CURLUPART_PASSWORD, with, 0) == CURLUE_OK &&
		    (keep_user || curl_url_set(h, CURLUPART_USER, NULL, 0) == CURLUE_OK) &&
		    curl_url_get(h, CURLUPART_URL, &out, 0) == CURLUE_OK && out)
			r = astrdup(out);
		else
			r = NULL;
	}
	curl_free(out);
	curl_free(pw);
	curl_free(user);
	return r;
}

/* what is shown of a string curl refuses: its scheme, "***@" and what follows the last '@' */
static const char *fallback(const char *s)
{
	const char *auth, *at;

	if (!url_has_scheme(s))
		return s;
	auth = strstr(s, "://") + 3;
	if (!(at = strrchr(auth, '@')))
		return s;
	return aprintf("%.*s***@%s", (int)(auth - s), s, at + 1);
}

const char *url_masked(const char *s, const char *with)
{
	CURLU *h = parse(s);
	const char *r;

	if (!h)
		return fallback(s);
	r = rebuild(h, s, 1, *with ? with : NULL);
	curl_url_cleanup(h);
	return r ? r : fallback(s);
}

const char *url_strip(const char *s, int keep_user)
{
	CURLU *h = parse(s);
	const char *r;

	if (!h)
		return fallback(s);
	r = rebuild(h, s, keep_user, NULL);
	curl_url_cleanup(h);
	return r ? r : fallback(s);
}

int url_same_origin(const char *a, const char *b)
{
	struct url x, y;

	if (url_parse(a, &x) < 0 || url_parse(b, &y) < 0 || !x.host || !y.host)
		return 0;
	return !strcmp(x.scheme, y.scheme) && !strcasecmp(x.host, y.host) &&
	       (x.port && y.port ? !strcmp(x.port, y.port) : x.port == y.port);
}

int url_http_refused(const struct url *u)
{
	const char *allow = getenv("IDPMAKE_GIT_ALLOW_HTTP");

	return u->scheme && !strcmp(u->scheme, "http") && (!allow || strcmp(allow, "1"));
}

int url_may_send_credentials(const struct url *u, const char *what)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int warned;

	if (!u->scheme || strcmp(u->scheme, "http"))
		return 1;
	if (url_http_refused(u))
		return 0;
	pthread_mutex_lock(&lock);
	if (!warned++)
		warn("sending %s to %s over plain http, readable on the way (IDPMAKE_GIT_ALLOW_HTTP=1)",
		     what, u->host ? u->host : "?");
	pthread_mutex_unlock(&lock);
	return 1;
}

static const char *git_token_origin;

void url_git_token_from(const char *origin)
{
	git_token_origin = origin;
}

const char *url_git_token_name(void)
{
	return git_token_origin ? git_token_origin : "IDPMAKE_GIT_TOKEN";
}

const char *url_userinfo(const char *server)
{
	int given = url_has_scheme(server);
	const char *s = given ? server : aprintf("https://%s", server);
	CURLU *h = parse(s);
	char *user = NULL, *pw = NULL, *out = NULL;
	const char *r = NULL;

	if (!h) {
		/* not parsed: an '@' in its authority is user info all the same */
		const char *auth = given ? strstr(s, "://") + 3 : s;
		if (strchr(auth, '@'))
			r = given ? fallback(s) : aprintf("***@%s", strrchr(auth, '@') + 1);
		return r;
	}
	curl_url_get(h, CURLUPART_USER, &user, 0);
	curl_url_get(h, CURLUPART_PASSWORD, &pw, 0);
	if (user || pw) {
		if (curl_url_set(h, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
		    curl_url_set(h, CURLUPART_USER, "***", 0) == CURLUE_OK &&
		    curl_url_get(h, CURLUPART_URL, &out, 0) == CURLUE_OK && out)
			r = given ? astrdup(out) : astrdup(out + strlen("https://"));
		else
			r = given ? fallback(s) : "***@(hidden)";
	}
	curl_free(out);
	curl_free(user);
	curl_free(pw);
	curl_url_cleanup(h);
	return r;
}

const char *url_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0);
	const char *r;

	if (!e)
		fatal("out of memory");
	r = astrdup(e);
	curl_free(e);
	return r;
}

const char *url_base(const char *server, const char *scheme, const char *port)
{
	int given = url_has_scheme(server);
	const char *s = given ? server : aprintf("%s://%s", scheme, server);
	CURLU *h = parse(s);
	char *out = NULL, *p = NULL;
	const char *r = NULL;
	size_t n;

	if (!h)
		return NULL;
	if (!given && port && curl_url_get(h, CURLUPART_PORT, &p, 0) == CURLUE_NO_PORT)
		curl_url_set(h, CURLUPART_PORT, port, 0);
	if (curl_url_get(h, CURLUPART_URL, &out, 0) == CURLUE_OK && out) {
		n = strlen(out);
		while (n && out[n - 1] == '/')
			n--;
		r = astrndup(out, n);
	}
	curl_free(p);
	curl_free(out);
	curl_url_cleanup(h);
	return r;
}

const char *url_owner_form(const char *url)
{
	char *k = astrdup(url_strip(url, 0)), *p = strstr(k, "://"), *host, *end;
	size_t n;

	if (p) {
		for (char *q = k; q < p; q++)
			*q = (char)tolower((unsigned char)*q);
		host = p + 3;
		end = host + strcspn(host, "/");
		for (char *q = host; q < end; q++)
			*q = (char)tolower((unsigned char)*q);
		static const char *const dflt[][2] = { { "https", ":443" }, { "http", ":80" }, { "ssh", ":22" } };
		for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
			size_t sl = strlen(dflt[i][0]), pl = strlen(dflt[i][1]);
			if ((size_t)(p - k) == sl && !strncmp(k, dflt[i][0], sl) && (size_t)(end - host) > pl &&
			    !strncmp(end - pl, dflt[i][1], pl)) {
				memmove(end - pl, end, strlen(end) + 1);
				break;
			}
		}
	}
	n = strlen(k);
	while (n && k[n - 1] == '/')
		n--;
	if (n > 4 && !strncasecmp(k + n - 4, ".git", 4))
		n -= 4;
	while (n && k[n - 1] == '/')
		n--;
	k[n] = 0;
	return k;
}
