/* re.c - PCRE2 wrappers */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/re.h"
#include "base/util.h"

struct re {
	pcre2_code *code;
};

struct re *re_compile(const char *pattern, const char **err)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
					 PCRE2_UTF | PCRE2_MULTILINE, &ec, &off, NULL);
	struct re *re;

	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		*err = aprintf("%s at offset %zu", (char *)msg, (size_t)off);
		return NULL;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
	re = xmalloc(sizeof(*re));
	re->code = code;
	return re;
}

int re_match(const struct re *re, const char *s, size_t len)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
	int r = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return r >= 0;
}

int re_subst(const struct re *re, const char *s, size_t len, const char *repl, size_t max, struct buf *out)
{
	PCRE2_SIZE outlen = len + len / 4 + 256;
	int r;

	/*
	 * without PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, which would go on through
	 * every match to count what does not fit: grow the buffer by doubling,
	 * up to max (and its NUL)
	 */
	if (outlen > max)
		outlen = max + 1;
	for (;;) {
		buf_reset(out);
		buf_grow(out, outlen);
		PCRE2_SIZE n = outlen;
		r = pcre2_substitute(re->code, (PCRE2_SPTR)s, len, 0, PCRE2_SUBSTITUTE_GLOBAL,
				     NULL, NULL, (PCRE2_SPTR)repl, PCRE2_ZERO_TERMINATED,
				     (PCRE2_UCHAR *)out->s, &n);
		if (r == PCRE2_ERROR_NOMEMORY) {
			if (outlen > max)
				return -2;
			outlen = outlen > max / 2 ? max + 1 : outlen * 2;
			continue;
		}
		if (r < 0)
			return -1;
		out->len = n;
		out->s[n] = 0;
		return r;
	}
}

void re_free(struct re *re)
{
	if (re) {
		pcre2_code_free(re->code);
		free(re);
	}
}

/*
 * Kubernetes' name rules (k8s.io/apimachinery/pkg/util/validation), compiled
 * once for every thread.  \A and \z, not ^ and $: re_compile is multi-line,
 * and "ok\n../x" must not pass.
 */
static struct re *label, *subdomain;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_init(void)
{
	const char *err;
	label = re_compile("\\A[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\z", &err);
	subdomain = re_compile("\\A[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\z", &err);
	if (!label || !subdomain)
		fatal("internal regex: %s", err);
}

int is_dns_label(const char *s)
{
	pthread_once(&names_once, names_init);
	return re_match(label, s, strlen(s));
}

int is_dns_subdomain(const char *s)
{
	pthread_once(&names_once, names_init);
	return strlen(s) <= 253 && re_match(subdomain, s, strlen(s));
}
