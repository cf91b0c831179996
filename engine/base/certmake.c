/*
 * certmake.c - the CA and the server certificates of the step tls
 * (certmake.h), made by libcrypto in this process: no openssl child, so
 * no key or pass phrase in an argv and no key file another process writes.
 *
 * The names reach the certificates as GENERAL_NAME structures, never
 * through openssl's configuration syntax, so no name can add a constraint
 * or an extension.  The constant extensions go through X509V3_EXT_conf_nid
 * (the openssl command's own path).  A PEM is written to memory, then to
 * its file (certificates) or its 0600 file (keys, the memory cleansed).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/certmake.h"
#include "base/util.h"

/* *err: what failed, and libcrypto's first error; the queue emptied */
static int fail(const char **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	if (e) {
		ERR_error_string_n(e, buf, sizeof(buf));
		*err = aprintf("%s: %s", what, buf);
	} else {
		*err = aprintf("%s", what);
	}
	ERR_clear_error();
	return -1;
}

static int no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* a PEM of x (a certificate) or of k (a private key, 0600) to path; 0 or -1 with *err */
static int write_pem(const char *path, X509 *x, EVP_PKEY *k, const char **err)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long len;
	int r = -1;

	if (!b || !(x ? PEM_write_bio_X509(b, x) : PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)) ||
	    (len = BIO_get_mem_data(b, &data)) <= 0) {
		BIO_free(b);
		return fail(err, aprintf("cannot write %s", path));
	}
	if ((x ? write_file_atomic(path, data, (size_t)len) : write_file_private(path, data, (size_t)len)) == 0)
		r = 0;
	else
		*err = aprintf("cannot write %s: %s", path, strerror(errno));
	if (k)
		OPENSSL_cleanse(data, (size_t)len);
	BIO_free(b);
	return r;
}

/* one GENERAL_NAME of type (GEN_DNS, GEN_URI, GEN_EMAIL) holding s, or of GEN_IPADD holding len bytes */
static GENERAL_NAME *gname(int type, const void *s, int len)
{
	GENERAL_NAME *g = GENERAL_NAME_new();
	ASN1_STRING *v = type == GEN_IPADD ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();

	if (!g || !v || !ASN1_STRING_set(v, s, len)) {
		GENERAL_NAME_free(g);
		ASN1_STRING_free(v);
		return NULL;
	}
	GENERAL_NAME_set0_value(g, type, v);
	return g;
}

/* a subtree of that name pushed on st; 0 or -1 */
static int subtree(STACK_OF(GENERAL_SUBTREE) *st, int type, const void *s, int len)
{
	GENERAL_SUBTREE *t = GENERAL_SUBTREE_new();
	GENERAL_NAME *g = gname(type, s, len);

	if (!t || !g) {
		GENERAL_SUBTREE_free(t);
		GENERAL_NAME_free(g);
		return -1;
	}
	GENERAL_NAME_free(t->base);	/* the empty name GENERAL_SUBTREE_new made */
	t->base = g;
	if (!sk_GENERAL_SUBTREE_push(st, t)) {
		GENERAL_SUBTREE_free(t);
		return -1;
	}
	return 0;
}

static const char *dns_base(const char *name)
{
	return strncmp(name, "*.", 2) ? name : name + 2;
}

/* the CA's nameConstraints (certmake.h says which), added to x as critical; 0 or -1 */
static int name_constraints(X509 *x, const char *const *names, size_t n)
{
	static const unsigned char zeros[32];
	NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
	int r = -1;

	if (!nc || !(nc->permittedSubtrees = sk_GENERAL_SUBTREE_new_null()) ||
	    !(nc->excludedSubtrees = sk_GENERAL_SUBTREE_new_null()))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const char *b = dns_base(names[i]);
		int dup = 0;
		for (size_t k = 0; k < i; k++)
			dup |= !strcasecmp(b, dns_base(names[k]));
		if (!dup && subtree(nc->permittedSubtrees, GEN_DNS, b, (int)strlen(b)) < 0)
			goto out;
	}
	/* an address is zero bytes under a zero mask: all of IPv4, all of IPv6 */
	if (subtree(nc->permittedSubtrees, GEN_URI, ".invalid", 8) < 0 ||
	    subtree(nc->permittedSubtrees, GEN_EMAIL, ".invalid", 8) < 0 ||
	    subtree(nc->excludedSubtrees, GEN_IPADD, zeros, 8) < 0 ||
	    subtree(nc->excludedSubtrees, GEN_IPADD, zeros, 32) < 0 ||
	    subtree(nc->excludedSubtrees, GEN_URI, "", 0) < 0 || subtree(nc->excludedSubtrees, GEN_EMAIL, "", 0) < 0)
		goto out;
	r = X509_add1_ext_i2d(x, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1 ? 0 : -1;
out:
	NAME_CONSTRAINTS_free(nc);
	return r;
}

/* the names as a critical-when-asked subjectAltName of x; 0 or -1 */
static int alt_names(X509 *x, const char *const *names, size_t n, int critical)
{
	GENERAL_NAMES *gs = GENERAL_NAMES_new();
	int r = -1;

	for (size_t i = 0; gs && i < n; i++) {
		GENERAL_NAME *g = gname(GEN_DNS, names[i], (int)strlen(names[i]));
		if (!g || !sk_GENERAL_NAME_push(gs, g)) {
			GENERAL_NAME_free(g);
			goto out;
		}
	}
	if (gs)
		r = X509_add1_ext_i2d(x, NID_subject_alt_name, gs, critical, X509V3_ADD_DEFAULT) == 1 ? 0 : -1;
out:
	GENERAL_NAMES_free(gs);
	return r;
}

/* extensions written as openssl's configuration writes them: constants only */
static int conf_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int r;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if (!(e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)))
		return -1;
	r = X509_add_ext(x, e, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(e);
	return r;
}

/* a v3 certificate of key k, serial random, valid days from now, subject CN cn (none when NULL) */
static X509 *new_cert(EVP_PKEY *k, const char *cn, int days)
{
	unsigned char serial[16];
	X509 *x = X509_new();
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;
	int ok;

	if (!x || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] = (serial[0] & 0x7f) | 0x40;	/* positive, and never shorter than 127 bits */
	ok = (bn = BN_bin2bn(serial, sizeof(serial), NULL)) && (ai = BN_to_ASN1_INTEGER(bn, NULL)) &&
	     X509_set_version(x, X509_VERSION_3) && X509_set_serialNumber(x, ai) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), 0) && X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL) &&
	     X509_set_pubkey(x, k) &&
	     (!cn || X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
						(const unsigned char *)cn, -1, -1, 0));
	BN_free(bn);
	ASN1_INTEGER_free(ai);
	if (ok)
		return x;
fail:
	X509_free(x);
	return NULL;
}

int certmake_ca(const char *crt_path, const char *key_path, const char *cn, const char *const *names, size_t n,
		int days, const char **err)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	X509 *x = NULL;
	int r = -1;

	if (!k)
		return fail(err, "cannot make the CA's RSA key");
	if (!(x = new_cert(k, cn, days)) || !X509_set_issuer_name(x, X509_get_subject_name(x)) ||
	    conf_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    conf_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    conf_ext(x, x, NID_subject_key_identifier, "hash") < 0 || name_constraints(x, names, n) < 0 ||
	    !X509_sign(x, k, EVP_sha256())) {
		fail(err, "cannot make the CA's certificate");
		goto out;
	}
	if (write_pem(key_path, NULL, k, err) == 0 && write_pem(crt_path, x, NULL, err) == 0)
		r = 0;
out:
	X509_free(x);
	EVP_PKEY_free(k);
	return r;
}

int certmake_covers(const char *const *ca_names, size_t nca, const char *name)
{
	const char *dot = strchr(name, '.');

	for (size_t i = 0; i < nca; i++) {
		if (!strcasecmp(ca_names[i], name))
			return 1;
		/* "*.x" covers one label (not a '*', not empty) and x: a.x; not a.b.x, nor x */
		if (!strncmp(ca_names[i], "*.", 2) && dot && dot > name && !memchr(name, '*', (size_t)(dot - name)) &&
		    !strcasecmp(ca_names[i] + 2, dot + 1))
			return 1;
	}
	return 0;
}

/* a file's PEM certificate (want_cert) or private key; NULL with *err */
static void *read_pem(const char *path, int want_cert, const char **err)
{
	size_t len;
	char *text = read_file(path, &len);
	BIO *b = text && len < (1 << 20) ? BIO_new_mem_buf(text, (int)len) : NULL;
	void *v = NULL;
	int e = errno, got = text != NULL;

	if (b)
		v = want_cert ? (void *)PEM_read_bio_X509(b, NULL, no_pass, NULL)
			      : (void *)PEM_read_bio_PrivateKey(b, NULL, no_pass, NULL);
	BIO_free(b);
	if (text) {
		OPENSSL_cleanse(text, len);
		free(text);
	}
	if (!v)
		fail(err, aprintf("cannot read the %s in %s%s%s", want_cert ? "certificate" : "key", path,
				  got ? "" : ": ", got ? "" : strerror(e)));
	return v;
}

int certmake_leaf(const char *crt_path, const char *key_path, const char *ca_crt, const char *ca_key,
		  const char *const *ca_names, size_t nca, const char *const *names, size_t n, int days,
		  const char **err)
{
	X509 *ca = NULL, *x = NULL;
	EVP_PKEY *cak = NULL, *k = NULL;
	int r = -1, cn;

	for (size_t i = 0; i < n; i++)
		if (!certmake_covers(ca_names, nca, names[i])) {
			*err = aprintf("the CA in %s signs no certificate for '%s': it is made for the names in ca.names "
				       "(a '*.x' name covers one label below x, no deeper)", ca_crt, names[i]);
			return -1;
		}
	if (!n) {
		*err = aprintf("a certificate needs a name");
		return -1;
	}
	if (!(ca = read_pem(ca_crt, 1, err)) || !(cak = read_pem(ca_key, 0, err)))
		goto out;
	if (X509_check_private_key(ca, cak) != 1) {
		fail(err, aprintf("the key %s is not the key of the CA %s", ca_key, ca_crt));
		goto out;
	}
	if (!(k = EVP_RSA_gen(2048))) {
		fail(err, "cannot make the certificate's RSA key");
		goto out;
	}
	cn = strlen(names[0]) <= 64;	/* X.520's upper bound: a longer first name is in subjectAltName alone */
	if (!(x = new_cert(k, cn ? names[0] : NULL, days)) || !X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
	    conf_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    conf_ext(x, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") < 0 ||
	    conf_ext(x, ca, NID_ext_key_usage, "serverAuth") < 0 || alt_names(x, names, n, !cn) < 0 ||
	    conf_ext(x, ca, NID_subject_key_identifier, "hash") < 0 ||
	    conf_ext(x, ca, NID_authority_key_identifier, "keyid:always") < 0 || !X509_sign(x, cak, EVP_sha256())) {
		fail(err, "cannot make the certificate");
		goto out;
	}
	if (write_pem(key_path, NULL, k, err) == 0 && write_pem(crt_path, x, NULL, err) == 0)
		r = 0;
out:
	X509_free(ca);
	X509_free(x);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(k);
	return r;
}
