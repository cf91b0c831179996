/*
 * argoopts.c - ARGOCD_OPTS, as the argocd CLI reads it (argoopts.h): its own
 * file so that the server's resolution (argoserver.c) and the client
 * (argoapi.c) both read it, neither through the other.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argo/argocd.h"
#include "argo/argoopts.h"
#include "base/buf.h"
#include "base/util.h"


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

int argocd_parse_opts(struct opts *o, const char **err)
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

	if (argocd_parse_opts(&o, &err) < 0 || !o.server || !*o.server)
		return NULL;
	return o.server;
}
