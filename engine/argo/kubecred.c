/*
 * kubecred.c - a kubeconfig's credential for one context (argoapi.h
 * struct kubecred), from a file (register.kubeconfig) or from a Secret's
 * text (a cluster Cluster API made: argocapireg.c), and the PEM checks of
 * what its certificate and key settings hold.
 *
 * Invariant: what it reads is a credential. It lives in malloc'd memory
 * that is zeroed when freed (kubecred_free, memwipe: never dropped as a
 * dead store), the parsed tree's pool is zeroed before it goes (also after
 * a parse error; libyaml's own parser buffers are not), and no message
 * quotes a value: a path or a setting's name at most.  A kubeconfig read from a Secret
 * (dir NULL) may name no file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argo/argoapi.h"
#include "base/pem.h"
#include "base/util.h"
#include "base/yaml.h"

static char *base64(const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = 0;
	return out;
}

/* ---- PEM (pem.c): what a certificate or key setting may hold -------------- */

/* *-data as written (base64 of PEM): checked as its file would be; -1 with *err */
static int data_check(const char *b64, const char *what, enum pem_want want, const char **err)
{
	size_t n = 0;
	unsigned char *d = unbase64(b64, &n);
	const char *why = !d ? "is not base64" : n > PEM_CAP ? "is larger than 1 MiB: not PEM" :
			  pem_check((const char *)d, n, want);

	if (d) {
		memwipe(d, n);
		free(d);
	}
	if (why)
		return *err = aprintf("%s %s", what, why), -1;
	return 0;
}

char *kubecred_file_base64(const char *path, const char *what, enum pem_want want, const char **err)
{
	size_t len;
	struct stat st;
	char *data, *r;
	const char *why;
	int fd;

	/* one open file checked and read: not a path that may become a FIFO or a larger file in between */
	if ((fd = open_regular(path)) < 0 || fstat(fd, &st) < 0) {
		*err = aprintf("cannot read %s '%s': %s", what, path,
			       errno == EINVAL ? "not a regular file" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (st.st_size > PEM_CAP) {
		*err = aprintf("%s '%s' is larger than 1 MiB: not a PEM file", what, path);
		close(fd);
		return NULL;
	}
	if (!(data = read_fd(fd, &len))) {
		*err = aprintf("cannot read %s '%s': %s", what, path, strerror(errno));
		return NULL;
	}
	if (len > PEM_CAP)
		why = "grew past 1 MiB while read: not a PEM file";
	else
		why = pem_check(data, len, want);
	if (why) {
		*err = aprintf("%s '%s' %s", what, path, why);
		r = NULL;
	} else {
		r = base64((const unsigned char *)data, len);
	}
	memwipe(data, len);
	free(data);
	return r;
}

/* ---- kubeconfig ----------------------------------------------------------- */

void kubecred_free(struct kubecred *k)
{
	char *v[] = { k->ca, k->cert, k->key, k->token };
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		if (v[i]) {
			memwipe(v[i], strlen(v[i]));
			free(v[i]);
		}
	memset(k, 0, sizeof(*k));
}

/* the entry of a kubeconfig list (clusters, contexts, users) named `name`, its `field` map */
static const struct ynode *kube_entry(const struct ynode *doc, const char *list, const char *field, const char *name)
{
	const struct ynode *l = yget(doc, list);

	for (size_t i = 0; l && l->type == Y_SEQ && i < l->n; i++)
		if (ystr_eq(yget(l->v[i], "name"), name))
			return yget(l->v[i], field);
	return NULL;
}

static const char *kstr(const struct ynode *m, const char *key)
{
	const struct ynode *n = m ? yget(m, key) : NULL;
	return n && n->type == Y_SCALAR && !yisnull(n) ? n->s : NULL;
}

/* base64 of `data` as written, or of the file `file` (relative to the kubeconfig; dir NULL: none may be named): PEM of what is wanted */
static int kube_blob(const char *dir, const char *data, const char *file, const char *what, enum pem_want want,
		     char **out, const char **err)
{
	if (file && !data && !dir)
		return *err = aprintf("%s names a file: a kubeconfig read from a Secret may not", what), -1;
	if (data) {
		if (data_check(data, aprintf("%s-data", what), want, err) < 0)
			return -1;
		*out = xstrdup(data);
		return 0;
	}
	if (file && !(*out = kubecred_file_base64(file[0] == '/' ? file : path_join(dir, file), what, want, err)))
		return -1;
	return 0;
}

int kubecred_read(const struct cluster *cl, struct kubecred *k, const char **err)
{
	size_t len;
	char *text = read_file(cl->reg.kubeconfig, &len);
	int ret;

	memset(k, 0, sizeof(*k));
	if (!text)
		return *err = aprintf("cannot read kubeconfig '%s': %s", cl->reg.kubeconfig, strerror(errno)), -1;
	ret = kubecred_parse(cl->reg.kubeconfig, path_dir(cl->reg.kubeconfig), text, len, cl->reg.context, k, err);
	memwipe(text, len);
	free(text);
	return ret;
}

int kubecred_parse(const char *path, const char *dir, const char *text, size_t len, const char *context,
		   struct kubecred *k, const char **err)
{
	const char *ctxname, *cname, *uname, *f;
	const struct ynode *doc = NULL, *ctx, *cluster, *user;
	struct ypool *p;
	struct ynode **docs = NULL;
	size_t ndocs = 0;
	int ret = -1;

	memset(k, 0, sizeof(*k));
	p = ypool_new();
	if (yaml_parse(p, path, text, len, &docs, &ndocs) < 0 || ndocs != 1 || docs[0]->type != Y_MAP) {
		*err = aprintf("kubeconfig '%s' is not one YAML mapping", path);
		goto out;
	}
	doc = docs[0];
	ctxname = context ? context : kstr(doc, "current-context");
	if (!ctxname) {
		*err = aprintf("kubeconfig '%s' has no current-context: give register.context", path);
		goto out;
	}
	if (!(ctx = kube_entry(doc, "contexts", "context", ctxname))) {
		*err = aprintf("kubeconfig '%s' has no context '%s'", path, ctxname);
		goto out;
	}
	cname = kstr(ctx, "cluster");
	uname = kstr(ctx, "user");
	if (!cname || !(cluster = kube_entry(doc, "clusters", "cluster", cname))) {
		*err = aprintf("kubeconfig '%s': context '%s' names no cluster the file has ('%s')", path, ctxname,
			       cname ? cname : "");
		goto out;
	}
	if (!uname || !(user = kube_entry(doc, "users", "user", uname))) {
		*err = aprintf("kubeconfig '%s': context '%s' names no user the file has ('%s')", path, ctxname,
			       uname ? uname : "");
		goto out;
	}
	k->server = astrdup(kstr(cluster, "server") ? kstr(cluster, "server") : "");
	k->insecure = ystr_eq(yget(cluster, "insecure-skip-tls-verify"), "true");
	if (kube_blob(dir, kstr(cluster, "certificate-authority-data"), kstr(cluster, "certificate-authority"),
		      "the kubeconfig's certificate-authority", PEM_CERT, &k->ca, err) < 0 ||
	    kube_blob(dir, kstr(user, "client-certificate-data"), kstr(user, "client-certificate"),
		      "the kubeconfig's client-certificate", PEM_CERT, &k->cert, err) < 0 ||
	    kube_blob(dir, kstr(user, "client-key-data"), kstr(user, "client-key"), "the kubeconfig's client-key",
		      PEM_KEY, &k->key, err) < 0)
		goto out;
	if (kstr(user, "token")) {
		k->token = xstrdup(kstr(user, "token"));
	} else if ((f = kstr(user, "tokenFile")) && !dir) {
		*err = aprintf("%s: user '%s' names a tokenFile: a kubeconfig read from a Secret may not", path, uname);
		goto out;
	} else if (f) {
		size_t tl;
		if (!(k->token = read_file(f[0] == '/' ? f : path_join(dir, f), &tl))) {
			*err = aprintf("cannot read the kubeconfig's tokenFile '%s': %s", f, strerror(errno));
			goto out;
		}
		while (tl && (k->token[tl - 1] == '\n' || k->token[tl - 1] == '\r' || k->token[tl - 1] == ' '))
			k->token[--tl] = 0;
	}
	if (!k->token && !(k->cert && k->key)) {
		*err = aprintf("kubeconfig '%s': user '%s' has neither a token nor a client certificate and key "
			       "(exec and auth-provider users are not supported)", path, uname);
		goto out;
	}
	ret = 0;
out:
	(void)doc;
	ypool_free_wipe(p);	/* every node, also of a document a parse error left half-built */
	if (ret < 0)
		kubecred_free(k);
	return ret;
}

