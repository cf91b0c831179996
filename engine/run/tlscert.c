/*
 * tlscert.c - the step tls (tlscert.h): what idpbuilder does with its own
 * certificate, done by a step of the graph, so that the platform's
 * ingress serves a certificate idpmake's git and Argo CD clients verify
 * (no `insecure`), and the user makes none by hand.
 *
 * The CA's key never leaves STATE/tls (0600 in a 0700 folder); the hooks
 * get the paths of the certificate, its key and the CA (hook.c), as the
 * cnoe distro's tls hook puts them in the ingress Secret.  The keys and
 * certificates are made in this process by libcrypto (base/certmake.c):
 * no openssl child, no key in an argv.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/certmake.h"
#include "base/hash.h"
#include "base/url.h"
#include "base/util.h"
#include "argo/argocd.h"
#include "distro/create.h"
#include "distro/manifest.h"
#include "graph/state.h"
#include "run/tlscert.h"

static const char *const files[] = { "ca.crt", "ca.key", "tls.crt", "tls.key" };

const char *tlscert_file(const char *statedir, const char *name)
{
	return aprintf("%s/tls/%s", statedir, name);
}

/* the names, expanded and checked; NULL with *err */
static const char **hosts(const struct distro *d, size_t *n, const char **err)
{
	const char **v = amalloc((d->tls.hosts.n + 1) * sizeof(*v));
	struct vars vars;

	vars_init(&vars, d, NULL, NULL, NULL);
	for (*n = 0; *n < d->tls.hosts.n; (*n)++) {
		const char *h = expand(d->tls.hosts.v[*n], d->tls.hosts.loc[*n], &vars);
		if (!h || !tls_host_ok(h)) {
			*err = aprintf("tls host '%s' is not a DNS name once expanded", h ? h : d->tls.hosts.v[*n]);
			return NULL;
		}
		v[*n] = h;
	}
	return v;
}

static struct hash key_of(const char **v, size_t n)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "tls v3: a CA constrained to the names (no address, URI or email), then a certificate for");
	for (size_t i = 0; i < n; i++)
		hasher_adds(h, v[i]);
	return hasher_end(h);
}

static int have_all(const char *statedir)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		if (access(tlscert_file(statedir, files[i]), R_OK))
			return 0;
	return 1;
}

void tlscert_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	const char *err = NULL, **v;
	size_t n;

	if (!(v = hosts(pl->g->d, &n, &err))) {
		s->dirty = 1;
		s->reason = R_KEY_CHANGED;
		s->why = err;
		return;
	}
	s->key = key_of(v, n);
	if (rec->ok && hash_eq(rec->key, s->key) && !have_all(pl->statedir)) {
		s->dirty = 1;
		s->reason = R_FORCED;
		s->why = aprintf("a file of %s/tls is gone", pl->statedir);
		return;
	}
	s->output = rec->output;
	plan_compare(s, rec, "the certificate's names changed");
}

static struct hash hash_certs(const char *statedir)
{
	struct hasher *h = hasher_new();

	for (size_t i = 0; i < 3; i += 2) {
		size_t len;
		char *text = read_file(tlscert_file(statedir, files[i]), &len);
		hasher_add(h, text ? text : "", text ? len : 0);
		free(text);
	}
	return hasher_end(h);
}

int tlscert_run(struct planner *pl, struct step *s, struct hash *output, const char **err)
{
	const struct distro *d = pl->g->d;
	const char *dir = aprintf("%s/tls", pl->statedir), **v, *names = aprintf("%s/names", dir);
	const char *canames = aprintf("%s/ca.names", dir), *cacrt = tlscert_file(pl->statedir, "ca.crt");
	const char *cakey = tlscert_file(pl->statedir, "ca.key");
	struct buf want = BUF_INIT, cawant = BUF_INIT;
	size_t n, len;
	char *had;
	int r = -1;

	*err = NULL;
	if (!(v = hosts(d, &n, err)))
		return -1;
	if (mkdirs(dir) < 0 || chmod(dir, 0700) < 0) {
		*err = aprintf("cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		buf_addf(&want, "%s\n", v[i]);
	/* ca.names says what the CA was made as: a CA of before v3 (URIs and emails not refused) is made again */
	buf_addf(&cawant, "# constraints v3\n%s", want.s);
	/* the CA once for these names: an interrupted bootstrap keeps it (and what trusts it) */
	had = read_file(canames, &len);
	if (!had || strcmp(had, cawant.s) || access(cacrt, R_OK) || access(cakey, R_OK)) {
		unlink(names);	/* a new CA: a new certificate */
		if (certmake_ca(cacrt, cakey, aprintf("idpmake CA for %.48s", d->name), v, n, 3650, err) < 0 ||
		    write_file_atomic(canames, cawant.s, cawant.len) < 0) {
			if (!*err)
				*err = aprintf("cannot keep the CA in %s: %s", dir, strerror(errno));
			free(had);
			goto out;
		}
	}
	free(had);
	had = read_file(names, &len);
	if (!had || strcmp(had, want.s) || access(tlscert_file(pl->statedir, "tls.crt"), R_OK) ||
	    access(tlscert_file(pl->statedir, "tls.key"), R_OK)) {
		/* signed for the names the CA was made for (ca.names, above) and no others */
		if (certmake_leaf(tlscert_file(pl->statedir, "tls.crt"), tlscert_file(pl->statedir, "tls.key"), cacrt,
				  cakey, v, n, v, n, 825, err) < 0 ||
		    write_file_atomic(names, want.s, want.len) < 0) {
			if (!*err)
				*err = aprintf("cannot keep the certificate in %s: %s", dir, strerror(errno));
			free(had);
			goto out;
		}
		unlink(aprintf("%s/tls.csr", dir));	/* left by the openssl commands of before */
		unlink(aprintf("%s/ca.srl", dir));
		s->why = aprintf("a certificate for %s, signed by the CA in %s", v[0], dir);
	}
	free(had);
	*output = hash_certs(pl->statedir);
	r = 0;
out:
	buf_release(&want);
	buf_release(&cawant);
	return r;
}

/* is `host` one of the names (a "*.x" name: one label more than x)? */
static int named(const char *const *v, size_t n, const char *host)
{
	for (size_t i = 0; host && i < n; i++) {
		const char *dot = strchr(host, '.');
		if (!strcasecmp(v[i], host) || (!strncmp(v[i], "*.", 2) && dot && !strcasecmp(v[i] + 2, dot + 1)))
			return 1;
	}
	return 0;
}

/* the host of a URL or of "host:port" (Argo CD's server), or NULL */
static const char *host_of(const char *s)
{
	struct url u;
	size_t n;

	if (!s)
		return NULL;
	if (strstr(s, "://"))
		return url_parse(s, &u) == 0 ? u.host : NULL;
	n = strcspn(s, ":/");
	return n ? astrndup(s, n) : NULL;
}

int tlscert_trust(struct distro *d, const char *statedir)
{
	const char *ca = tlscert_file(statedir, "ca.crt"), **v, *err;
	size_t n;
	int set = 0;

	if (!d->tls.hosts.n || access(ca, R_OK) || !(v = hosts(d, &n, &err)))
		return 0;
	/*
	 * only for a server of those names: a CA file replaces the system's (CURLOPT_CAINFO), and
	 * libgit2's is the whole process's, so git gets a pin (gitremote.c) instead of the CA
	 */
	if (!d->git.ca_file && !d->git.pin_cert && named(v, n, host_of(d->git.remote))) {
		d->git.pin_cert = tlscert_file(statedir, "tls.crt");
		set = 1;
	}
	if (!d->argocd.ca_file && !d->argocd.insecure && named(v, n, host_of(argocd_server(d)))) {
		d->argocd.ca_file = ca;
		set = 1;
	}
	return set;
}
