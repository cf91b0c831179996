/*
 * objects.c - a render's objects: each one checked, emitted and set aside
 * as soon as its renderer hands it over, then all of them named and written
 * as one bundle.
 *
 * A renderer gives every object to add_obj as it is parsed (manifests and
 * rules parse one document at a time, yaml_parse_each).  add_obj checks
 * its apiVersion, kind and names, emits it with sorted keys and appends the
 * bytes to a spill: memory up to SPILL_MEM, then an unlinked file under
 * TMPDIR.  What stays in memory per object is its file name, namespace,
 * place and offset, so a render holds one object's tree at a time, not the
 * whole output (issue 10: a 100 MB bundle).  objects_write then names the
 * objects (KIND.NAME.yaml, NAMESPACE.KIND.NAME.yaml where two collide),
 * sorts them and streams the bundle into the cache, hashing as it writes.
 */
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/bundle.h"
#include "render/capicheck.h"
#include "distro/capi.h"
#include "base/hash.h"
#include "base/intr.h"
#include "base/names.h"
#include "base/re.h"
#include "render/renderers.h"
#include "base/util.h"
#include "base/yaml.h"

#define SPILL_MEM ((size_t)8 << 20)

static char *lower(const char *s)
{
	char *r = xstrdup(s);
	for (char *p = r; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return r;
}

/*
 * Object names become file names (KIND.NAME.yaml), so they are checked
 * against Kubernetes' own rules before any file is named after them (issue
 * 12 #5: a ConfigMap named x/../../../tmp/f was written outside `render -o`'s
 * folder; a name with a space made a bundle its reader refused).  Most kinds
 * take DNS-1123 subdomains; RBAC's four kinds take path segment names (no
 * '/' or '%', not . or ..), to which the bundle adds: no control character.
 * Kinds are DNS-1035 labels once lower-cased (CRD names.kind), namespaces
 * DNS-1123 labels.
 */
static int path_segment_kind(const char *api, const char *kind)
{
	return !strncmp(api, "rbac.authorization.k8s.io/", 26) &&
	       (!strcmp(kind, "Role") || !strcmp(kind, "ClusterRole") || !strcmp(kind, "RoleBinding") ||
		!strcmp(kind, "ClusterRoleBinding"));
}

/* NULL when the name is fine, else the rule it breaks */
static const char *bad_name(const char *api, const char *kind, const char *name)
{
	if (!path_segment_kind(api, kind))
		return is_dns_subdomain(name) ? NULL :
		       "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending "
		       "with a letter or digit, at most 253 characters";
	if (!strcmp(name, ".") || !strcmp(name, "..") || strpbrk(name, "/%"))
		return "a path segment name: no '/' or '%', not '.' or '..'";
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "without control characters";
	return NULL;
}

static int bad_kind(const char *kind)
{
	size_t n = strlen(kind);
	if (!n || n > 63 || !isalpha((unsigned char)kind[0]) || !isalnum((unsigned char)kind[n - 1]))
		return 1;
	for (const char *c = kind; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-')
			return 1;
	return 0;
}

/* where to point an error about node n: its place in a file, else the package */
static struct loc where(const struct step *s, const struct ynode *n, const struct ynode *obj)
{
	if (n && n->loc.file)
		return n->loc;
	if (obj && obj->loc.file)
		return obj->loc;
	return (struct loc){ aprintf("package '%s'", s->pkg->name), 0, 0 };
}

static int check_names(const struct step *s, const struct ynode *obj, const struct ynode *api,
		       const struct ynode *kind, const struct ynode *name, const struct ynode *nsn)
{
	const char *why;
	int errs = 0;

	if (bad_kind(kind->s)) {
		loc_error(where(s, kind, obj), "package '%s': kind '%s' is not a valid Kubernetes kind", s->pkg->name,
			  kind->s);
		errs++;
	} else if ((why = bad_name(api->s, kind->s, name->s))) {
		loc_error(where(s, name, obj), "package '%s': %s name '%s' is not valid in Kubernetes: it must be %s",
			  s->pkg->name, kind->s, name->s, why);
		errs++;
	}
	if (nsn && nsn->type == Y_SCALAR && !is_dns_label(nsn->s)) {
		loc_error(where(s, nsn, obj), "package '%s': %s '%s' has namespace '%s', which is not a DNS-1123 label "
			  "(lower-case letters, digits and '-', at most 63 characters)", s->pkg->name, kind->s, name->s, nsn->s);
		errs++;
	}
	return errs;
}

/* ---- the spill ---------------------------------------------------------- */

/* append emitted bytes; 0, or -1 with o->werr set (the first failure is kept) */
static int spill(struct objects *o, const char *p, size_t n, long long *off)
{
	if (o->werr)
		return -1;
	if (o->fd < 0 && o->mem.len + n > SPILL_MEM) {
		const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		char *tmpl = xstrdup(aprintf("%s/idpmake-render-XXXXXX", dir));
		if ((o->fd = mkstemp(tmpl)) < 0) {
			o->werr = errno;
			free(tmpl);
			return -1;
		}
		unlink(tmpl);	/* gone with the descriptor, even after a crash */
		free(tmpl);
		if (write_all(o->fd, o->mem.s, o->mem.len) < 0) {
			o->werr = errno;
			return -1;
		}
		o->flen = (long long)o->mem.len;
		buf_release(&o->mem);
	}
	if (o->fd < 0) {
		*off = (long long)o->mem.len;
		buf_add(&o->mem, p, n);
		return 0;
	}
	if (write_all(o->fd, p, n) < 0) {
		o->werr = errno;
		return -1;
	}
	*off = o->flen;
	o->flen += (long long)n;
	return 0;
}

/* the bytes of object i: in memory, or read into *tmp (malloc'd, reused) */
static const char *obj_data(const struct objects *o, const struct obj *ob, char **tmp, size_t *cap)
{
	size_t got = 0;

	if (o->fd < 0)
		return o->mem.s + ob->off;
	if (*cap < ob->len + 1) {
		*tmp = xrealloc(*tmp, ob->len + 1);
		*cap = ob->len + 1;
	}
	while (got < ob->len) {
		ssize_t r = pread(o->fd, *tmp + got, ob->len - got, (off_t)(ob->off + (long long)got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return NULL;
		got += (size_t)r;
	}
	return *tmp;
}

const char *objects_data(const struct objects *o, size_t i, char **tmp, size_t *cap)
{
	return obj_data(o, &o->v[i], tmp, cap);
}

void objects_drop(struct objects *o, size_t i)
{
	free(o->v[i].base);
	free(o->v[i].ns);
	free(o->v[i].name);
	memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof(*o->v));
	o->n--;
}

void objects_add_file(struct objects *o, const char *name, const char *data, size_t len)
{
	o->extra = xrealloc(o->extra, (o->nextra + 1) * sizeof(*o->extra));
	o->extra[o->nextra].name = astrdup(name);
	o->extra[o->nextra].data = astrndup(data, len);
	o->extra[o->nextra++].len = len;
}

/* ---- objects in ----------------------------------------------------------- */

void add_obj(struct objects *o, struct ynode *n)
{
	struct ynode *api = yget(n, "apiVersion"), *kind = yget(n, "kind"), *name = ypath(n, "metadata.name"),
		     *nsn = ypath(n, "metadata.namespace");
	struct buf out = BUF_INIT;
	struct obj *ob;

	if (!api || !kind || !name || api->type != Y_SCALAR || kind->type != Y_SCALAR || name->type != Y_SCALAR ||
	    !name->slen) {
		loc_error(n->loc, "a Kubernetes object needs apiVersion, kind and metadata.name");
		o->errs++;
		return;
	}
	if (check_names(o->s, n, api, kind, name, nsn)) {
		o->errs++;
		return;
	}
	if (o->s->pkg && o->s->pkg->capi_of && o->s->pkg->capi_of->create.capi->spec_pkg) {
		int r = capi_spec_object(o->pool, o->s, n);	/* the Cluster gets idpmake's labels */
		if (r < 0) {
			o->errs++;
			return;
		}
		o->capi_cluster += r;
	}
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 16;
		o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
	}
	ob = &o->v[o->n];
	memset(ob, 0, sizeof(*ob));
	if (yaml_emit(n, &out) < 0) {
		loc_error(n->loc, "cannot emit this object");
		o->errs++;
		buf_release(&out);
		return;
	}
	if (spill(o, out.s, out.len, &ob->off) < 0) {
		buf_release(&out);
		return;	/* objects_write reports o->werr */
	}
	ob->len = out.len;
	buf_release(&out);
	{
		char *k = lower(kind->s), *nm = lower(name->s);
		ob->base = xstrdup(aprintf("%s.%s.yaml", k, nm));
		free(k);
		free(nm);
	}
	ob->ns = nsn && nsn->type == Y_SCALAR ? lower(nsn->s) : xstrdup("_");
	ob->loc = n->loc;
	o->n++;
}

void objects_init(struct objects *o, const struct step *s)
{
	memset(o, 0, sizeof(*o));
	o->pool = ypool_new();
	o->s = s;
	o->fd = -1;
}

void objects_free(struct objects *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].base);
		free(o->v[i].ns);
		free(o->v[i].name);
	}
	free(o->v);
	free(o->extra);
	buf_release(&o->mem);
	if (o->fd >= 0)
		close(o->fd);
	ypool_free(o->pool);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

/* ---- naming --------------------------------------------------------------- */

static const struct objects *sort_o;	/* qsort has no argument; callers hold name_lock */

static int by_base(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct obj *x = &sort_o->v[i], *y = &sort_o->v[j];
	int c = strcmp(x->base, y->base);

	if (!c)
		c = strcmp(x->ns, y->ns);
	return c ? c : (i > j) - (i < j);	/* then in the order they came */
}

struct ent {
	const char *name;
	const struct obj *ob;			/* an object, or */
	const struct bundle_entry *extra;	/* a file that is not one */
};

static int entcmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Name every object and sort the entries by name: KIND.NAME.yaml, or
 * NAMESPACE.KIND.NAME.yaml when another object has the same KIND.NAME.yaml
 * (the same in the same namespace twice is an error).  Sorting by base name
 * finds the collisions without comparing every pair.
 */
static struct ent *name_all(struct objects *o, size_t *nent, const char **err)
{
	size_t *idx, n = 0;
	struct ent *e;
	int errs = o->errs;

	if (o->werr) {
		*err = aprintf("cannot set the rendered objects aside in %s: %s",
			       getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(o->werr));
		return NULL;
	}
	/* a file of an argocd-app folder: its name goes into the bundle's header line */
	for (size_t i = 0; i < o->nextra; i++) {
		const char *why = name_bad(o->extra[i].name, NAME_PATH);
		if (why) {
			error("package '%s': a file name %s", o->s->pkg->name, why);
			errs++;
		}
	}
	if (errs) {
		*err = "objects refused (see above)";
		return NULL;
	}
	idx = xcalloc(o->n + 1, sizeof(*idx));
	for (size_t i = 0; i < o->n; i++)
		idx[i] = i;
	pthread_mutex_lock(&name_lock);
	sort_o = o;
	qsort(idx, o->n, sizeof(*idx), by_base);
	pthread_mutex_unlock(&name_lock);
	for (size_t i = 0; i < o->n;) {
		size_t j = i + 1;
		while (j < o->n && !strcmp(o->v[idx[i]].base, o->v[idx[j]].base))
			j++;
		for (size_t k = i; k < j; k++) {
			struct obj *ob = &o->v[idx[k]];
			if (j - i == 1) {
				ob->name = xstrdup(o->single && o->n == 1 ? o->single : ob->base);
				continue;
			}
			ob->name = xstrdup(aprintf("%s.%s", ob->ns, ob->base));
			if (k > i && !strcmp(ob->ns, o->v[idx[k - 1]].ns)) {
				/* the first of a namespace's copies is the one the others point at */
				size_t first = k - 1;
				while (first > i && !strcmp(o->v[idx[first - 1]].ns, ob->ns))
					first--;
				loc_error(ob->loc, "package '%s': object %s is defined twice (also at %s:%d)", o->s->pkg->name,
					  ob->base, o->v[idx[first]].loc.file, o->v[idx[first]].loc.line);
				errs++;
			}
		}
		i = j;
		if (interrupted()) {
			free(idx);
			*err = "interrupted";
			return NULL;
		}
	}
	free(idx);
	if (errs) {
		*err = "duplicate objects (see above)";
		return NULL;
	}
	e = xcalloc(o->n + o->nextra + 1, sizeof(*e));
	for (size_t i = 0; i < o->n; i++)
		e[n++] = (struct ent){ o->v[i].name, &o->v[i], NULL };
	for (size_t i = 0; i < o->nextra; i++)
		e[n++] = (struct ent){ o->extra[i].name, NULL, &o->extra[i] };
	qsort(e, n, sizeof(*e), entcmp);
	/* kind "a" named "configmap.x" would take ConfigMap x of namespace a's file */
	for (size_t i = 1; i < n; i++)
		if (!strcmp(e[i - 1].name, e[i].name)) {
			*err = aprintf("two objects would be written to the same file %s (rename one)", e[i].name);
			free(e);
			return NULL;
		}
	*nent = n;
	return e;
}

/* ---- objects out ---------------------------------------------------------- */

int objects_bundle(struct objects *o, struct bundle *b, const char **err)
{
	size_t n;
	struct ent *e = name_all(o, &n, err);
	char *tmp = NULL;
	size_t cap = 0;

	memset(b, 0, sizeof(*b));
	if (!e)
		return -1;
	b->v = xcalloc(n + 1, sizeof(*b->v));
	for (size_t i = 0; i < n; i++) {
		if (e[i].extra) {
			b->v[b->n++] = *e[i].extra;
			continue;
		}
		const char *data = obj_data(o, e[i].ob, &tmp, &cap);
		if (!data) {
			*err = aprintf("cannot read back the rendered objects: %s", strerror(errno ? errno : EIO));
			free(tmp);
			free(e);
			free(b->v);
			b->v = NULL;
			b->n = 0;
			return -1;
		}
		b->v[b->n++] = (struct bundle_entry){ astrdup(e[i].name), astrndup(data, e[i].ob->len), e[i].ob->len };
	}
	free(tmp);
	free(e);
	return 0;
}

/*
 * A run killed while it wrote a bundle (a second Ctrl-C, the OOM killer)
 * left its render.tmpPID.N, as big as the bundle, in the cache for good.
 * Every writer of the cache's bundles holds the state lock (up, render,
 * diff), so one of another process is stale: removed, once a process.
 */
static void sweep_stale(const char *dir)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int done;
	DIR *d;
	struct dirent *e;

	pthread_mutex_lock(&lock);
	if (!done && (d = opendir(dir))) {
		while ((e = readdir(d))) {
			char *end;
			long pid;
			if (strncmp(e->d_name, "render.tmp", 10))
				continue;
			pid = strtol(e->d_name + 10, &end, 10);
			if (end > e->d_name + 10 && *end == '.' && pid != (long)getpid() &&
			    unlinkat(dirfd(d), e->d_name, 0) == 0)
				warn("removed %s/%s, left by an interrupted run", dir, e->d_name);
		}
		closedir(d);
	}
	done = 1;
	pthread_mutex_unlock(&lock);
}

/* write p[0..n) to fd and the hash; 0 or -1 (errno) */
static int put(int fd, struct hasher *h, const void *p, size_t n)
{
	hasher_add(h, p, n);
	return write_all(fd, p, n);
}

int objects_write(struct objects *o, const char *statedir, struct hash *output, const char **err)
{
	size_t n, cap = 0;
	struct ent *e = name_all(o, &n, err);
	struct hasher *h;
	char *tmp = NULL, *tpath;
	const char *dir = aprintf("%s/cache/rendered", statedir), *path;
	int fd, ret = -1, e2;
	struct stat st;
	long long total = 0;

	if (!e)
		return -1;
	if (mkdirs(dir) < 0) {
		*err = aprintf("cannot create %s: %s", dir, strerror(errno));
		free(e);
		return -1;
	}
	sweep_stale(dir);
	if ((fd = open_tmp_beside(aprintf("%s/render", dir), &tpath)) < 0) {
		*err = aprintf("cannot write in %s: %s", dir, strerror(errno));
		free(tpath);
		free(e);
		return -1;
	}
	h = hasher_new();
	if (put(fd, h, BUNDLE_MAGIC, strlen(BUNDLE_MAGIC)) < 0)
		goto werr;
	total += (long long)strlen(BUNDLE_MAGIC);
	for (size_t i = 0; i < n; i++) {
		const char *data;
		size_t len;
		if (e[i].extra) {
			data = e[i].extra->data;
			len = e[i].extra->len;
		} else {
			len = e[i].ob->len;
			if (!(data = obj_data(o, e[i].ob, &tmp, &cap))) {
				*err = aprintf("cannot read back the rendered objects: %s", strerror(errno ? errno : EIO));
				goto fail;
			}
		}
		const char *hdr = aprintf("%s %zu\n", e[i].name, len);
		if (put(fd, h, hdr, strlen(hdr)) < 0 || put(fd, h, data, len) < 0 || put(fd, h, "\n", 1) < 0)
			goto werr;
		total += (long long)(strlen(hdr) + len + 1);
	}
	if (fsync(fd) < 0)
		goto werr;
	*output = hasher_end(h);
	h = NULL;
	path = bundle_path(statedir, *output);
	/* identical outputs share a file; one already there is reused only when it hashes right */
	if (stat(path, &st) == 0 && (long long)st.st_size == total && bundle_check(statedir, *output) == 0) {
		unlink(tpath);
	} else if (mkdirs(path_dir(path)) < 0 || rename(tpath, path) < 0 || sync_dir(path) < 0) {
		*err = aprintf("cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	ret = 0;
	goto done;
werr:
	*err = aprintf("cannot write %s: %s", tpath, strerror(errno));
fail:
	e2 = errno;
	unlink(tpath);
	errno = e2;
done:
	if (h)
		hasher_end(h);
	close(fd);
	free(tpath);
	free(tmp);
	free(e);
	return ret;
}
