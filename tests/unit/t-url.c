/*
 * t-url.c - url.c: passwords found and masked where libcurl's parser says
 * they end (a '#' written raw is no URL at all, and is masked whole; %23
 * is a '#' in the password), user info stripped, origins compared, bytes
 * percent-encoded, Argo CD servers turned into base URLs; names.c's check
 * of names from elsewhere; and util.c's term_safe, the escaping of hostile
 * text on its way to a terminal; certtime.c's notAfter of a certificate
 * (UTCTime and GeneralizedTime, made by openssl), read by libcrypto, and
 * its refusals.
 */
#include <string.h>

#include "base/certtime.h"
#include "base/names.h"
#include "base/url.h"
#include "base/util.h"
#include "test.h"

static void test_parse(void)
{
	struct url u;

	CHECK(url_parse("https://bob:s3cr%23t@git.example:8443/org/repo.git", &u) == 0);
	CHECK_STR(u.scheme, "https");
	CHECK_STR(u.user, "bob");
	CHECK_STR(u.password, "s3cr#t");
	CHECK_STR(u.password_raw, "s3cr%23t");
	CHECK_STR(u.host, "git.example");
	CHECK_STR(u.port, "8443");
	CHECK(url_parse("https://git.example/org/repo.git", &u) == 0);
	CHECK(!u.user && !u.password);
	CHECK_STR(u.port, "443");
	CHECK(url_parse("http://git.example/r", &u) == 0);
	CHECK_STR(u.port, "80");
	CHECK(url_parse("ssh://git@git.example/r.git", &u) == 0);
	CHECK_STR(u.user, "git");
	CHECK_STR(u.port, "22");
	/* a raw '#' ends the authority: "bob:s3cr" is no host:port */
	CHECK(url_parse("https://bob:s3cr#t@git.example/r.git", &u) < 0);
	CHECK(url_parse("/srv/git/r.git", &u) < 0);
	CHECK(url_parse("git@git.example:org/r.git", &u) < 0);
	/* a password of digits before a raw '#', '?' or '/' parses as a port: refused */
	CHECK(url_parse("https://bob:4711#pw@git.example/r.git", &u) < 0);
	CHECK(url_parse("https://bob:4711?pw@git.example/r.git", &u) < 0);
	CHECK(url_parse("https://bob:4711/pw@git.example/r.git", &u) < 0);
	/* an '@' in a path is fine without a port, or with a user */
	CHECK(url_parse("https://git.example/a@b/r.git", &u) == 0);
	CHECK(url_parse("https://bob@git.example:8443/a@b/r.git", &u) == 0);
}

static void test_masked(void)
{
	const char *m;

	CHECK_STR(url_masked("https://bob:s3cr%23t@git.example/r.git", "***"), "https://bob:***@git.example/r.git");
	CHECK_STR(url_masked("https://bob:s3cr%23t@git.example/r.git", ""), "https://bob@git.example/r.git");
	m = url_masked("https://bob:s3cr#t@git.example/r.git", "***");
	CHECK(!strstr(m, "s3cr") && !strstr(m, "#t"));
	CHECK_STR(m, "https://***@git.example/r.git");
	/* a raw '/' ends the authority: this is the password "p" for the host "ss" */
	CHECK_STR(url_masked("https://bob:p@ss/w?rd@git.example/r.git", "***"), "https://bob:***@ss/w?rd@git.example/r.git");
	m = url_masked("https://bob:pa%40ss%3Fw@git.example/r.git", "***");
	CHECK_STR(m, "https://bob:***@git.example/r.git");
	/* nothing to mask: exactly as written */
	CHECK_STR(url_masked("https://git.example/a@b/r.git", "***"), "https://git.example/a@b/r.git");
	CHECK_STR(url_masked("https://bob@git.example/r.git", "***"), "https://bob@git.example/r.git");
	CHECK_STR(url_masked("/srv/git/r.git", "***"), "/srv/git/r.git");
	CHECK_STR(url_masked("git@git.example:org/r.git", "***"), "git@git.example:org/r.git");
	CHECK_STR(url_masked("https://bob:4711#pw@git.example/r.git", "***"), "https://***@git.example/r.git");
	CHECK_STR(url_strip("https://bob:4711/pw@git.example/r.git", 0), "https://***@git.example/r.git");
}

static void test_strip(void)
{
	CHECK_STR(url_strip("https://bob:s3cr%23t@git.example/r.git", 0), "https://git.example/r.git");
	CHECK_STR(url_strip("https://bob:s3cr%23t@git.example/r.git", 1), "https://bob@git.example/r.git");
	CHECK_STR(url_strip("https://bob@git.example/r.git", 0), "https://git.example/r.git");
	CHECK_STR(url_strip("https://git.example:8443/r.git", 0), "https://git.example:8443/r.git");
	CHECK(!strstr(url_strip("https://bob:s3cr#t@git.example/r.git", 0), "s3cr"));
}

static void test_origin(void)
{
	CHECK(url_same_origin("https://git.example/a.git", "https://bob:x@GIT.example:443/b.git"));
	CHECK(!url_same_origin("https://git.example/a.git", "http://git.example/a.git"));
	CHECK(!url_same_origin("https://git.example/a.git", "https://git.example:8443/a.git"));
	CHECK(!url_same_origin("https://git.example/a.git", "https://git.example.evil/a.git"));
	CHECK(!url_same_origin("https://git.example/a.git", "/srv/a.git"));
	CHECK(!url_same_origin("file:///srv/a.git", "file:///srv/a.git"));
}

static void test_escape(void)
{
	CHECK_STR(url_escape("a b/c#d?e&f=g%"), "a%20b%2Fc%23d%3Fe%26f%3Dg%25");
	CHECK_STR(url_escape("web-1.x_y~"), "web-1.x_y~");
	CHECK_STR(url_escape(""), "");
}

static void test_base(void)
{
	CHECK_STR(url_base("argocd.example", "https", "443"), "https://argocd.example:443");
	CHECK_STR(url_base("argocd.example:8080", "http", "443"), "http://argocd.example:8080");
	CHECK_STR(url_base("argocd.example/argo/", "https", NULL), "https://argocd.example/argo");
	CHECK_STR(url_base("[::1]", "https", "443"), "https://[::1]:443");
	CHECK_STR(url_base("[::1]:9000", "https", "443"), "https://[::1]:9000");
	CHECK_STR(url_base("http://127.0.0.1:8080/", "https", "443"), "http://127.0.0.1:8080");
	CHECK(url_base("bad host", "https", "443") == NULL);
}

/* an Argo CD server with user info: found in every form, shown without it */
static void test_userinfo(void)
{
	const char *m;

	CHECK(url_userinfo("argocd.example") == NULL);
	CHECK(url_userinfo("https://argocd.example:8443/argo") == NULL);
	CHECK(url_userinfo("https://argocd.example/a@b") == NULL);
	CHECK_STR(url_userinfo("http://admin:s3cr%40t@argocd.example:8080"), "http://***@argocd.example:8080/");
	CHECK_STR(url_userinfo("https://TOKEN-Zq5@argocd.example"), "https://***@argocd.example/");
	CHECK_STR(url_userinfo("admin:pw-Zq5@argocd.example:443"), "***@argocd.example:443/");
	CHECK_STR(url_userinfo("https://:pw-Zq5@argocd.example"), "https://***@argocd.example/");
	/* curl refuses it (a raw '#' in the password): still user info, still hidden */
	m = url_userinfo("https://admin:pw#Zq5@argocd.example");
	CHECK(m && !strstr(m, "Zq5") && !strstr(m, "admin"));
	m = url_userinfo("admin:pw#Zq5@argocd.example");
	CHECK(m && !strstr(m, "Zq5") && !strstr(m, "admin"));
}

/*
 * names.c, beside the URLs: the one check of a name idpmake did not make
 * (a GitOps tree's entry, a keys index folder, a bundle or chart member, a
 * render's extra file) before it becomes a path
 */
static void test_names(void)
{
	static const char *const good[] = { "a", "a/b.yaml", "in-cluster/web", "x..y", ".hidden", "a b/c d.yaml" };
	static const char *const bad[] = {
		"", "/etc/passwd", "a//b", "a/", ".", "..", "a/../b", "a/./b", "../x",
		"a\tb", "a\nb", "x\x1b]0;title\x07", "del\x7f", "a/b\rc",
	};
	char long_name[4200];

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		CHECK(name_bad(good[i], NAME_PATH | NAME_NO_GIT) == NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(name_bad(bad[i], NAME_PATH) != NULL);
	CHECK_STR(name_bad("a\x1b[31m", NAME_PATH), "holds a control character");
	CHECK_STR(name_bad("a/b", 0), "holds a '/'");
	CHECK(name_bad("a", 0) == NULL);
	/* .git as git sees it, only when asked */
	CHECK(name_bad("x/.git/config", NAME_PATH) == NULL);
	CHECK_STR(name_bad("x/.git/config", NAME_PATH | NAME_NO_GIT), "names .git");
	CHECK(name_bad(".GIT", NAME_NO_GIT) != NULL);
	CHECK(name_bad(".git. ", NAME_NO_GIT) != NULL);
	CHECK(name_bad("GIT~1", NAME_NO_GIT) != NULL);
	CHECK(name_bad(".gitignore", NAME_NO_GIT) == NULL);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	CHECK(name_bad(long_name, NAME_PATH) != NULL);
	CHECK(name_has_part("a/.idpmake/b", ".idpmake"));
	CHECK(!name_has_part("a/x.idpmake/b", ".idpmake"));
}

/* util.c's term_safe: what git or Argo CD says, as it may reach a terminal */
static void test_term_safe(void)
{
	const char *plain = "Alice <alice@example.com> fix: caf\xc3\xa9 \\ ok";
	CHECK(term_safe(plain) == plain);	/* nothing to escape: no copy */
	CHECK_STR(term_safe("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
	CHECK_STR(term_safe("\x1b]0;title\x07x"), "\\x1b]0;title\\x07x");
	CHECK_STR(term_safe("a\nb\rc\td"), "a\\x0ab\\x0dc\\x09d");
	CHECK_STR(term_safe("del\x7f"), "del\\x7f");
	CHECK_STR(term_safe("c1 \xc2\x9b" "31m \xc2\xa0"), "c1 \\xc2\\x9b31m \xc2\xa0");	/* U+009B, not U+00A0 */
	CHECK_STR(term_safe("end\xc2"), "end\xc2");
	CHECK_STR(term_safe(""), "");
	CHECK(term_safe(NULL) == NULL);
}

/* openssl req -x509 -days 20: notAfter UTCTime 261223184454Z */
static const char cert_utc[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBcTCCARegAwIBAgIUMp/TyMlnuVmIQMUfhglT7jrVt+wwCgYIKoZIzj0EAwIw\n"
	"DjEMMAoGA1UEAwwDdXRjMB4XDTI2MTIwMzE4NDQ1NFoXDTI2MTIyMzE4NDQ1NFow\n"
	"DjEMMAoGA1UEAwwDdXRjMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqZOAacDr\n"
	"F0/gZXdyf1CZk7fqCBiQT6VYOTjgBcPuJONf7K1Y49yFWFEr1TysY7gH39AKCZXo\n"
	"l5wT47XSgxsDrKNTMFEwHQYDVR0OBBYEFH1zdWemqq4OC4fFs+2/8hAQpUAzMB8G\n"
	"A1UdIwQYMBaAFH1zdWemqq4OC4fFs+2/8hAQpUAzMA8GA1UdEwEB/wQFMAMBAf8w\n"
	"CgYIKoZIzj0EAwIDSAAwRQIhALoBRl67YAb7O0Kw3uk5gqAZNF0F4UtjKswM17Hg\n"
	"hTL5AiAv+3+oIQSVZapUPmaX+Hu3XF1yUr/6mI2mg4XciV7N1A==\n"
	"-----END CERTIFICATE-----\n";
/* -days 11000: notAfter GeneralizedTime 20570114184454Z */
static const char cert_gen[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBczCCARmgAwIBAgIUKfoiGwR4S2XMAXYRL8Zr52F0chswCgYIKoZIzj0EAwIw\n"
	"DjEMMAoGA1UEAwwDZ2VuMCAXDTI2MTIwMzE4NDQ1NFoYDzIwNTcwMTE0MTg0NDU0\n"
	"WjAOMQwwCgYDVQQDDANnZW4wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATVyj8p\n"
	"A79kWxTv6SZZ6H23xQqZ8WNDCXkZC/RgFlikdfn93x9sx8j/BS5TcLO65GV5xpvt\n"
	"nQejDwB+TZRzLOdVo1MwUTAdBgNVHQ4EFgQU0Ezyuc7nK4FeJUF0Xa9IpkS88cUw\n"
	"HwYDVR0jBBgwFoAU0Ezyuc7nK4FeJUF0Xa9IpkS88cUwDwYDVR0TAQH/BAUwAwEB\n"
	"/zAKBggqhkjOPQQDAgNIADBFAiBjhbGmJqzazHWcn1NKH3lUHpVRHNFk4qfeMs8u\n"
	"hTiOKwIhAKAwdsre9+PxdpDQtOl3e0Olg93SDqaT+xh+n3xXKmk6\n"
	"-----END CERTIFICATE-----\n";

static void test_certtime(void)
{
	char *t;
	size_t n = strlen(cert_utc);

	CHECK(cert_not_after(cert_utc, n) == 1798051494LL);	/* date -d 'Dec 23 18:44:54 2026 GMT' +%s */
	CHECK(cert_not_after(cert_gen, strlen(cert_gen)) == 2746723494LL);
	/* text around the block, as a bundle has it; the first certificate counts */
	t = xstrdup(aprintf("subject=CN=utc\n%s%s", cert_utc, cert_gen));
	CHECK(cert_not_after(t, strlen(t)) == 1798051494LL);
	free(t);
	/* every cut of the text short of its last newline is refused, and read within it (ASan watches) */
	for (size_t k = 0; k < n - 1; k++) {
		t = xmalloc(k + 1);
		memcpy(t, cert_utc, k);
		t[k] = 0;
		CHECK(cert_not_after(t, k) == -1);
		free(t);
	}
	CHECK(cert_not_after("", 0) == -1);
	CHECK(cert_not_after("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", 58) == -1);
	CHECK(cert_not_after("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", 58) == -1);
	/* a block that asks for a pass phrase gets none: no prompt on the terminal */
	t = xstrdup(aprintf("-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n"
			    "DEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n%s",
			    strchr(cert_utc + 1, '\n') + 1));
	CHECK(cert_not_after(t, strlen(t)) == -1);
	free(t);
	/* over 1 MiB of text is not read at all */
	t = xmalloc((1 << 20) + n + 1);
	memset(t, '\n', 1 << 20);
	memcpy(t + (1 << 20), cert_utc, n + 1);
	CHECK(cert_not_after(t + n, 1 << 20) == 1798051494LL);	/* 1 MiB is */
	CHECK(cert_not_after(t, (1 << 20) + n) == -1);
	free(t);
}

TEST_MAIN(test_parse, test_masked, test_strip, test_origin, test_escape, test_base, test_userinfo, test_names,
	  test_term_safe, test_certtime)
