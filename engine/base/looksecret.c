/* looksecret.c - what explain masks and the state keeps no copy of (looksecret.h) */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/looksecret.h"
#include "base/util.h"

static int has_word(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = name; *p; p++)
		if (!strncasecmp(p, word, n))
			return 1;
	return 0;
}

/* a long blank-free word of letters and digits both: an API token, a generated password */
static int token_like(const char *v)
{
	size_t n = 0;
	int alpha = 0, digit = 0;

	for (const char *p = v; *p; p++, n++) {
		if (isspace((unsigned char)*p))
			return 0;
		alpha |= isalpha((unsigned char)*p) != 0;
		digit |= isdigit((unsigned char)*p) != 0;
	}
	/* a path or a URL without a password is not one: it has '/' and reads as a place */
	if (strchr(v, '/'))
		return 0;
	return n >= 20 && alpha && digit;
}

/* one blank-free word of a value */
static int word_secret(const char *w)
{
	static const char *const prefixes[] = { "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-",
						"xoxa-", "sk-", "AKIA", "eyJ" };
	const char *at, *scheme;

	/* scheme://user:password@host */
	if ((scheme = strstr(w, "://")) && (at = strchr(scheme, '@')) && memchr(scheme + 3, ':', (size_t)(at - scheme - 3)))
		return 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		const char *p = strstr(w, prefixes[i]);
		if (p && strlen(p) > strlen(prefixes[i]) + 8)
			return 1;
	}
	return token_like(w);
}

int looks_secret(const char *name, const char *value)
{
	static const char *const words[] = { "token", "password", "passwd", "pass", "pwd", "auth", "private", "secret",
					     "credential", "key" };

	for (size_t i = 0; name && i < sizeof(words) / sizeof(*words); i++)
		if (has_word(name, words[i]))
			return 1;
	if (!value)
		return 0;
	/* in a value (a command, a field's text) "key", "pass", "auth" are too common a word to tell anything */
	for (const char *const *w = (const char *const[]){ "token", "password", "passwd", "secret", "credential", NULL };
	     *w; w++)
		if (has_word(value, *w))
			return 1;
	if (strstr(value, "-----BEGIN"))
		return 1;
	for (const char *p = value; *p; ) {
		size_t n = strcspn(p, " \t\n\"'=");
		if (n && word_secret(astrndup(p, n)))
			return 1;
		p += n;
		p += strspn(p, " \t\n\"'=");
	}
	return 0;
}
