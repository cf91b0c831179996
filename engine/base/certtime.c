/*
 * certtime.c - the notAfter of a PEM certificate (certtime.h).
 *
 * No dependency of idpmake reads X.509 (libcurl reads the certificates of
 * the servers it connects to, not a client certificate handed to it), and
 * one field is all that is needed, so this walks the DER along one path
 * (RFC 5280 4.1):
 *
 *     Certificate  SEQUENCE { tbsCertificate SEQUENCE {
 *         [0] version OPTIONAL, serialNumber INTEGER, signature SEQUENCE,
 *         issuer SEQUENCE, validity SEQUENCE { notBefore, notAfter } ... } ... }
 *
 * with notAfter a UTCTime (YYMMDDHHMMSSZ, 1950-2049) or GeneralizedTime
 * (YYYYMMDDHHMMSSZ).  The certificate is hostile input (a kubeconfig
 * Secret): every length is checked against what is left, nothing is
 * trusted past it, and anything else is -1.  fuzz-capi reads it.
 */
#include <stdlib.h>
#include <string.h>

#include "base/certtime.h"
#include "base/pem.h"

/* one DER TLV in [p, end): its tag, its contents [*c, *c + *len); what follows it, or NULL when malformed */
static const unsigned char *tlv(const unsigned char *p, const unsigned char *end, int *tag,
				const unsigned char **c, size_t *len)
{
	size_t l;

	if (end - p < 2 || (p[0] & 0x1f) == 0x1f)	/* a high tag number is on no path read here */
		return NULL;
	*tag = p[0];
	l = p[1];
	p += 2;
	if (l & 0x80) {
		size_t nb = l & 0x7f;
		if (!nb || nb > 4 || (size_t)(end - p) < nb)
			return NULL;
		l = 0;
		while (nb--)
			l = l << 8 | *p++;
	}
	if ((size_t)(end - p) < l)
		return NULL;
	*c = p;
	*len = l;
	return p + l;
}

static int digits(const unsigned char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* days from 1970-01-01 to y-m-d (proleptic Gregorian) */
static long long days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* a UTCTime (0x17) or GeneralizedTime (0x18) in Unix seconds, or -1 */
static long long der_time(int tag, const unsigned char *s, size_t n)
{
	int y, mo, d, h, mi, sec, yl = tag == 0x17 ? 2 : 4;

	if ((tag != 0x17 && tag != 0x18) || n != (size_t)yl + 11 || s[n - 1] != 'Z' || digits(s, yl, &y) < 0 ||
	    digits(s + yl, 2, &mo) < 0 || digits(s + yl + 2, 2, &d) < 0 || digits(s + yl + 4, 2, &h) < 0 ||
	    digits(s + yl + 6, 2, &mi) < 0 || digits(s + yl + 8, 2, &sec) < 0)
		return -1;
	if (tag == 0x17)
		y += y < 50 ? 2000 : 1900;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
}

static long long der_not_after(const unsigned char *der, size_t n)
{
	const unsigned char *c, *end, *p, *v;
	size_t len, vlen;
	int tag;

	if (!tlv(der, der + n, &tag, &c, &len) || tag != 0x30 ||	/* Certificate */
	    !tlv(c, c + len, &tag, &c, &len) || tag != 0x30)	/* tbsCertificate */
		return -1;
	end = c + len;
	if (!(p = tlv(c, end, &tag, &v, &vlen)))
		return -1;
	if (tag == 0xa0 && !(p = tlv(p, end, &tag, &v, &vlen)))	/* [0] version, then serialNumber */
		return -1;
	if (tag != 0x02 ||
	    !(p = tlv(p, end, &tag, &v, &vlen)) || tag != 0x30 ||	/* signature */
	    !(p = tlv(p, end, &tag, &v, &vlen)) || tag != 0x30 ||	/* issuer */
	    !tlv(p, end, &tag, &v, &vlen) || tag != 0x30)		/* validity */
		return -1;
	end = v + vlen;
	if (!(p = tlv(v, end, &tag, &c, &len)) || !tlv(p, end, &tag, &c, &len))	/* notBefore, notAfter */
		return -1;
	return der_time(tag, c, len);
}

long long cert_not_after(const char *pem, size_t n)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----", endl[] = "-----END CERTIFICATE-----";
	const char *b = NULL, *e;
	char *body;
	unsigned char *der;
	size_t dn;
	long long t;

	for (size_t i = 0; i + sizeof(begin) - 1 <= n && !b; i++)
		if (!memcmp(pem + i, begin, sizeof(begin) - 1))
			b = pem + i + sizeof(begin) - 1;
	if (!b)
		return -1;
	for (e = b; (size_t)(pem + n - e) >= sizeof(endl) - 1; e++)
		if (!memcmp(e, endl, sizeof(endl) - 1))
			break;
	if ((size_t)(pem + n - e) < sizeof(endl) - 1)
		return -1;
	body = malloc((size_t)(e - b) + 1);
	if (!body)
		return -1;
	memcpy(body, b, (size_t)(e - b));
	body[e - b] = 0;
	der = unbase64(body, &dn);
	free(body);
	if (!der)
		return -1;
	t = der_not_after(der, dn);
	free(der);
	return t;
}
