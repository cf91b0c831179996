/* re.c - PCRE2 wrappers */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "re.h"
#include "util.h"

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

int re_subst(const struct re *re, const char *s, size_t len, const char *repl, struct buf *out)
{
	PCRE2_SIZE outlen = len + len / 4 + 256;
	int r;

	for (;;) {
		buf_reset(out);
		buf_grow(out, outlen);
		PCRE2_SIZE n = outlen;
		r = pcre2_substitute(re->code, (PCRE2_SPTR)s, len, 0,
				     PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
				     NULL, NULL, (PCRE2_SPTR)repl, PCRE2_ZERO_TERMINATED,
				     (PCRE2_UCHAR *)out->s, &n);
		if (r == PCRE2_ERROR_NOMEMORY) {
			outlen = n + 1;
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

int is_dns_label(const char *s)
{
	static struct re *label;
	/* compiled on first use, from the main thread (manifest checks) */
	if (!label) {
		const char *err;
		label = re_compile("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", &err);
	}
	return re_match(label, s, strlen(s));
}
