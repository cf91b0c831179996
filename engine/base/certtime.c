/*
 * certtime.c - the notAfter of a PEM certificate (certtime.h), read by
 * libcrypto (linked for libcurl already, and for certmake.c).
 *
 * The certificate is hostile input (a kubeconfig Secret): the text is
 * capped, read through a read-only memory BIO (nothing copied, nothing
 * past its n bytes), a PEM block that asks for a pass phrase gets none
 * (no prompt on the terminal), and libcrypto's error queue is left empty
 * for the next library call.  The time is ASN1_TIME_diff from the epoch:
 * no struct tm and no timegm.  fuzz-capi reads it.
 */
#include <limits.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "base/certtime.h"

/* a client certificate is a few kB, a bundle of them some tens */
#define CERTTIME_MAX (1 << 20)

/* the pass phrase of an encrypted block: none (libcrypto's default would ask the terminal) */
static int no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

long long cert_not_after(const char *pem, size_t n)
{
	BIO *b;
	X509 *x = NULL;
	ASN1_TIME *epoch = NULL;
	int days, secs;
	long long t = -1;

	if (!pem || !n || n > CERTTIME_MAX || !(b = BIO_new_mem_buf(pem, (int)n)))
		return -1;
	/* the first CERTIFICATE block: text and other blocks before it are skipped */
	if ((x = PEM_read_bio_X509(b, NULL, no_pass, NULL)) && (epoch = ASN1_TIME_set(NULL, 0)) &&
	    ASN1_TIME_diff(&days, &secs, epoch, X509_get0_notAfter(x)))
		t = (long long)days * 86400 + secs;
	ASN1_TIME_free(epoch);
	X509_free(x);
	BIO_free(b);
	ERR_clear_error();
	return t < 0 ? -1 : t;
}
