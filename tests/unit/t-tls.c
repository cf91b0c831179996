/*
 * t-tls.c - certmake.c, the CA and certificates of the step tls, read back
 * with libcrypto: the CA's name constraints (issue 35 #9: every URI and
 * email name refused, addresses too), a "*.x" name that covers one label
 * below x and no deeper (a certificate for a.b.x is refused, nothing
 * written), a certificate that verifies against its CA, keys 0600 from
 * their creation whatever the umask, no temporary file left, and
 * certtime.c's notAfter of what it made.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/certmake.h"
#include "base/certtime.h"
#include "base/util.h"
#include "test.h"
#include "scratch.h"

static X509 *load(const char *path)
{
	size_t n;
	char *text = read_file(path, &n);
	BIO *b = text ? BIO_new_mem_buf(text, (int)n) : NULL;
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	free(text);
	return x;
}

/* the count of subtrees of type in st, and whether one holds s */
static int subtrees(const STACK_OF(GENERAL_SUBTREE) *st, int type, const char *s, int *has)
{
	int count = 0;

	*has = 0;
	for (int i = 0; i < sk_GENERAL_SUBTREE_num(st); i++) {
		const GENERAL_NAME *g = sk_GENERAL_SUBTREE_value(st, i)->base;
		if (g->type != type)
			continue;
		count++;
		if (type != GEN_IPADD && (size_t)g->d.ia5->length == strlen(s) &&
		    !memcmp(g->d.ia5->data, s, strlen(s)))
			*has = 1;
	}
	return count;
}

/* X509_verify_cert of leaf against ca alone, for host; X509_V_OK or the error */
static int verify(X509 *ca, X509 *leaf, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int r;

	X509_STORE_add_cert(st, ca);
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	if (host)
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	r = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return r;
}

static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static void test_covers(void)
{
	const char *names[] = { "*.x.test", "localhost" };

	CHECK(certmake_covers(names, 2, "a.x.test"));
	CHECK(certmake_covers(names, 2, "A.X.Test"));
	CHECK(certmake_covers(names, 2, "*.x.test"));
	CHECK(certmake_covers(names, 2, "localhost"));
	CHECK(!certmake_covers(names, 2, "a.b.x.test"));	/* one label below, no deeper */
	CHECK(!certmake_covers(names, 2, "*.a.x.test"));
	CHECK(!certmake_covers(names, 2, "x.test"));
	CHECK(!certmake_covers(names, 2, ".x.test"));
	CHECK(!certmake_covers(names, 2, "a*.x.test"));
	CHECK(!certmake_covers(names, 2, "ax.test"));
	CHECK(!certmake_covers(names, 2, "a.localhost"));
	CHECK(!certmake_covers(names, 0, "localhost"));
}

static void test_ca_and_leaf(void)
{
	const char *names[] = { "localhost", "*.x.test" }, *err = NULL;
	const char *cacrt = path_join(tmp, "ca.crt"), *cakey = path_join(tmp, "ca.key");
	const char *crt = path_join(tmp, "tls.crt"), *key = path_join(tmp, "tls.key");
	const char *deep[] = { "a.x.test", "a.b.x.test" };
	NAME_CONSTRAINTS *nc;
	X509 *ca, *leaf;
	mode_t old = umask(022);
	int has, crit;
	long long na;

	CHECK(certmake_ca(cacrt, cakey, "idpmake CA for t", names, 2, 3650, &err) == 0);
	CHECK_STR(err ? err : "", "");
	CHECK(mode_of(cakey) == 0600);
	CHECK(mode_of(cacrt) == 0644);
	CHECK((ca = load(cacrt)) != NULL);
	if (!ca)
		goto out;
	CHECK(X509_check_ca(ca) == 1);
	nc = X509_get_ext_d2i(ca, NID_name_constraints, &crit, NULL);
	CHECK(nc && crit == 1);
	if (nc) {
		/* permitted: the DNS names ("*.x.test" as x.test), URIs and emails under .invalid alone */
		CHECK(subtrees(nc->permittedSubtrees, GEN_DNS, "localhost", &has) == 2 && has);
		CHECK(subtrees(nc->permittedSubtrees, GEN_DNS, "x.test", &has) == 2 && has);
		CHECK(subtrees(nc->permittedSubtrees, GEN_URI, ".invalid", &has) == 1 && has);
		CHECK(subtrees(nc->permittedSubtrees, GEN_EMAIL, ".invalid", &has) == 1 && has);
		/* excluded: every URI, every email, every address */
		CHECK(subtrees(nc->excludedSubtrees, GEN_URI, "", &has) == 1 && has);
		CHECK(subtrees(nc->excludedSubtrees, GEN_EMAIL, "", &has) == 1 && has);
		CHECK(subtrees(nc->excludedSubtrees, GEN_IPADD, "", &has) == 2);
		NAME_CONSTRAINTS_free(nc);
	}

	/* a certificate for a name two labels below the "*.x.test" name: refused, nothing written */
	err = NULL;
	CHECK(certmake_leaf(crt, key, cacrt, cakey, names, 2, deep, 2, 825, &err) < 0);
	CHECK(err && strstr(err, "'a.b.x.test'") && strstr(err, "one label below"));
	CHECK(access(crt, F_OK) < 0 && access(key, F_OK) < 0);
	err = NULL;
	CHECK(certmake_leaf(crt, key, cacrt, cakey, names, 2, names, 0, 825, &err) < 0 && err);
	/* one label below, and the names themselves: made, and verified for each */
	err = NULL;
	CHECK(certmake_leaf(crt, key, cacrt, cakey, names, 2, deep, 1, 825, &err) == 0);
	CHECK(certmake_leaf(crt, key, cacrt, cakey, names, 2, names, 2, 825, &err) == 0);
	CHECK(mode_of(key) == 0600);
	CHECK((leaf = load(crt)) != NULL);
	if (leaf) {
		CHECK(verify(ca, leaf, "localhost") == X509_V_OK);
		CHECK(verify(ca, leaf, "a.x.test") == X509_V_OK);
		CHECK(verify(ca, leaf, "a.b.x.test") == X509_V_ERR_HOSTNAME_MISMATCH);
		CHECK(X509_check_purpose(leaf, X509_PURPOSE_SSL_SERVER, 0) == 1);
		CHECK(X509_check_ca(leaf) == 0);
		X509_free(leaf);
	}
	/* certtime reads what certmake wrote: 825 days from now */
	{
		size_t n;
		char *pem = read_file(crt, &n);
		na = pem ? cert_not_after(pem, n) : -1;
		free(pem);
		CHECK(na > (long long)time(NULL) + 824 * 86400LL && na <= (long long)time(NULL) + 825 * 86400LL);
	}
	/* a CA key that is not the CA's: refused */
	err = NULL;
	CHECK(certmake_leaf(crt, key, cacrt, key, names, 2, names, 1, 825, &err) < 0);
	CHECK(err && strstr(err, "is not the key of the CA"));
	err = NULL;
	CHECK(certmake_leaf(crt, key, path_join(tmp, "none.crt"), cakey, names, 2, names, 1, 825, &err) < 0);
	CHECK(err && strstr(err, "none.crt"));
	X509_free(ca);
out:
	umask(old);
	/* no temporary file left beside them */
	{
		DIR *dir = opendir(tmp);
		struct dirent *de;
		int left = 0;
		while (dir && (de = readdir(dir)))
			left += strstr(de->d_name, ".tmp") != NULL;
		CHECK(dir && !left);
		if (dir)
			closedir(dir);
	}
}

/* a URI or email name under the CA does not verify, with or without a DNS name beside it */
static void test_no_uri_email(void)
{
	const char *names[] = { "localhost" }, *err = NULL;
	const char *cacrt = path_join(tmp, "nc.crt"), *cakey = path_join(tmp, "nc.key");
	const char *crt = path_join(tmp, "nc-leaf.crt"), *key = path_join(tmp, "nc-leaf.key");
	const char *alts[] = { "DNS:localhost,URI:https://localhost/", "DNS:localhost,email:root@localhost",
			       "URI:https://evil.example/", "DNS:localhost,IP:127.0.0.1" };
	X509 *ca, *leaf;
	EVP_PKEY *cak;

	CHECK(certmake_ca(cacrt, cakey, "idpmake CA for nc", names, 1, 30, &err) == 0);
	CHECK(certmake_leaf(crt, key, cacrt, cakey, names, 1, names, 1, 30, &err) == 0);
	ca = load(cacrt);
	{
		size_t n;
		char *text = read_file(cakey, &n);
		BIO *b = BIO_new_mem_buf(text, (int)n);
		cak = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
		BIO_free(b);
		free(text);
	}
	CHECK(ca && cak);
	if (!ca || !cak)
		return;
	leaf = load(crt);
	CHECK(leaf && verify(ca, leaf, NULL) == X509_V_OK);
	for (size_t i = 0; leaf && i < sizeof(alts) / sizeof(*alts); i++) {
		/* the leaf again, its names replaced, signed with the CA's key: what a stolen key could do */
		X509V3_CTX ctx;
		X509_EXTENSION *e;
		int at = X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1);
		X509_EXTENSION_free(X509_delete_ext(leaf, at));
		X509V3_set_ctx_nodb(&ctx);
		X509V3_set_ctx(&ctx, ca, leaf, NULL, NULL, 0);
		e = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, alts[i]);
		CHECK(e && X509_add_ext(leaf, e, -1) == 1 && X509_sign(leaf, cak, EVP_sha256()) > 0);
		X509_EXTENSION_free(e);
		{
			/* read again, as a verifier gets it (the object keeps what it cached of its extensions) */
			unsigned char *der = NULL;
			const unsigned char *p;
			int len = i2d_X509(leaf, &der);
			X509 *x = (p = der, len > 0 ? d2i_X509(NULL, &p, len) : NULL);
			int r = x ? verify(ca, x, NULL) : -1;
			CHECK(x && r != X509_V_OK);
			if (x && r != X509_V_OK)
				CHECK(r == X509_V_ERR_PERMITTED_VIOLATION || r == X509_V_ERR_EXCLUDED_VIOLATION);
			X509_free(x);
			OPENSSL_free(der);
		}
	}
	X509_free(leaf);
	X509_free(ca);
	EVP_PKEY_free(cak);
}

static void setup(void)
{
	scratch_setup("t-tls");
}

static void teardown(void)
{
	scratch_end();
}

TEST_MAIN_SHUFFLE(setup, teardown, test_covers, test_ca_and_leaf, test_no_uri_email)
