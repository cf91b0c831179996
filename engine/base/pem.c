/*
 * pem.c - what a certificate or key setting may hold (pem.h): PEM blocks
 * of the kind wanted, and the base64 that kubeconfig -data settings wrap
 * them in.  Nothing here quotes what it reads: it may be a key.
 */
#include <stdlib.h>
#include <string.h>

#include "base/pem.h"
#include "base/util.h"

static int b64char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
	       c == '=';
}

/*
 * NULL when s is PEM holding what `want` asks for: CERTIFICATE blocks only
 * (text between them allowed, as CA bundles have), or one private key
 * ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"..., an EC PARAMETERS
 * block beside it); else why not, never quoting s (it may be a key).
 */
const char *pem_check(const char *s, size_t n, enum pem_want want)
{
	const char *p = s, *end = s + n;
	int certs = 0, keys = 0;

	if (memchr(s, 0, n))
		return "is not PEM text (it holds NUL bytes)";
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *lab, *lend;
		size_t ll;
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) < 16 || strncmp(p, "-----BEGIN ", 11)) {
			p = eol + (eol < end);	/* text around the blocks, as openssl writes it */
			continue;
		}
		lab = p + 11;
		if (!(lend = strstr(lab, "-----")) || lend > eol)
			return "has a malformed PEM BEGIN line";
		ll = (size_t)(lend - lab);
		if (ll == 11 && !strncmp(lab, "CERTIFICATE", 11))
			certs++;
		else if ((ll == 11 && !strncmp(lab, "PRIVATE KEY", 11)) ||
			 (ll > 12 && !strncmp(lend - 12, " PRIVATE KEY", 12)))
			keys++;
		else if (!(want == PEM_KEY && ll == 13 && !strncmp(lab, "EC PARAMETERS", 13)))
			return aprintf("holds a PEM block '%.*s', not a %s", (int)(ll < 40 ? ll : 40), lab,
				       want == PEM_CERT ? "certificate" : "private key");
		/* the body: base64 lines (a legacy encrypted key's "Name: value" headers too), then the END line */
		for (p = eol + (eol < end);; ) {
			if (p >= end)
				return "has a PEM block without its END line";
			eol = memchr(p, '\n', (size_t)(end - p));
			if (!eol)
				eol = end;
			if (!strncmp(p, "-----END ", 9)) {
				if ((size_t)(eol - p) < 14 + ll || strncmp(p + 9, lab, ll) || strncmp(p + 9 + ll, "-----", 5))
					return "has a PEM END line that does not match its BEGIN";
				p = eol + (eol < end);
				break;
			}
			for (const char *q = p; q < eol; q++)
				if (!b64char((unsigned char)*q) && *q != '\r' && *q != ' ' && *q != '\t' &&
				    !(want == PEM_KEY && memchr(p, ':', (size_t)(eol - p))))
					return "has a PEM block whose body is not base64";
			p = eol + (eol < end);
		}
	}
	if (want == PEM_CERT && keys)
		return "holds a private key, not (only) certificates";
	if (want == PEM_CERT && !certs)
		return "is not a PEM certificate (-----BEGIN CERTIFICATE-----)";
	if (want == PEM_KEY && (keys != 1 || certs))
		return keys > 1 || (keys && certs) ? "holds more than a private key"
		       : certs ? "holds a certificate, not a private key"
			       : "is not a PEM private key (-----BEGIN PRIVATE KEY-----)";
	return NULL;
}

static int b64val(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 :
	       c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * base64 text decoded (malloc'd and NUL-terminated, so that pem_check's
 * string functions stop at its end; *n its length), or NULL when it is not
 * base64 as Go's StdEncoding reads it (Argo CD and kubectl do): groups of
 * four, '=' only as the last one or two; line breaks and spaces skipped
 */
unsigned char *unbase64(const char *s, size_t *n)
{
	size_t len = strlen(s), o = 0, chars = 0;
	unsigned char *out = xmalloc(len / 4 * 3 + 4);
	unsigned v = 0;
	int bits = 0, pad = 0;

	for (const char *p = s; *p; p++) {
		int x = b64val((unsigned char)*p);
		if (*p == '\n' || *p == '\r' || *p == ' ')
			continue;
		chars++;
		if (*p == '=') {
			pad++;
			continue;
		}
		if (x < 0 || pad) {
			free(out);
			return NULL;
		}
		v = v << 6 | (unsigned)x;
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	if (chars % 4 || pad > 2) {
		free(out);
		return NULL;
	}
	out[o] = 0;
	*n = o;
	return out;
}
