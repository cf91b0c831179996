/*
 * pack.c - `idpmake pack [-o FILE]`: the distro, its extends chain, its git:
 * sources at their resolved commits and its Helm charts at their pinned
 * versions, in one tar archive (libarchive) with a digest per member
 * (format in pack.h).
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "base/exec.h"
#include "base/hash.h"
#include "base/intr.h"
#include "distro/manifest.h"
#include "pack/pack.h"
#include "git/source.h"
#include "graph/state.h"
#include "base/util.h"
#include "base/yaml.h"

struct member {
	const char *name;	/* in the archive */
	const char *src;	/* on disk */
	int exec;		/* mode 0755 rather than 0644 */
	size_t size;		/* as measured, then copied */
	char hex[33];		/* its XXH3 */
};

/* a file a credential setting names: never packed */
struct secret {
	const char *real;	/* its real path */
	const char *why;	/* the setting that names it */
};

struct packer {
	struct member *v;
	size_t n;
	struct secret *sec;
	size_t nsec, nleft;	/* nleft: files left out for being one */
	struct buf index;	/* the lines after the file lines */
	const char *out;	/* the archive being written, as an absolute path: never a member of itself */
};

static void add(struct packer *pk, const char *name, const char *src, int exec)
{
	pk->v = agrow(pk->v, pk->n, sizeof(*pk->v));
	pk->v[pk->n++] = (struct member){ .name = name, .src = src, .exec = exec };
}

static void add_secret(struct packer *pk, const char *path, const char *why)
{
	char *real = path ? realpath(path, NULL) : NULL;

	if (!real)
		return;	/* not there: nothing to leave out */
	pk->sec = agrow(pk->sec, pk->nsec, sizeof(*pk->sec));
	pk->sec[pk->nsec++] = (struct secret){ astrdup(real), why };
	free(real);
}

/* the setting naming the file at real path REAL as a credential, or NULL */
static const char *secret_of(const struct packer *pk, const char *real)
{
	for (size_t i = 0; real && i < pk->nsec; i++)
		if (!strcmp(pk->sec[i].real, real))
			return pk->sec[i].why;
	return NULL;
}

static int parse_secrets(struct packer *pk, const char *file, int kube);

/*
 * A kubeconfig a setting names: left out, and so is every file it names
 * (its client-key, client-certificate, tokenFile, certificate-authority,
 * relative to the kubeconfig as kubectl reads them).  One that does not
 * parse is still left out; the files it names are then unknown.
 */
static void add_kubeconfig(struct packer *pk, const char *path, const char *why)
{
	size_t n = pk->nsec;

	if (!path)
		return;
	if (*path == '~' && path[1] == '/' && getenv("HOME"))
		path = path_join(getenv("HOME"), path + 2);
	add_secret(pk, path, why);
	for (size_t i = 0; i < n; i++)
		if (pk->nsec > n && !strcmp(pk->sec[i].real, pk->sec[n].real))
			return;	/* read already */
	if (pk->nsec > n)
		parse_secrets(pk, pk->sec[n].real, 1);
}

/*
 * every key naming a credential file anywhere in a YAML file's tree: a
 * distro file's token-file, ca-file and kubeconfig, or (KUBE) a kubeconfig's
 */
static void secrets_in(struct packer *pk, const struct ynode *n, int kube)
{
	static const char *const dkeys[] = { "token-file", "ca-file", "kubeconfig", NULL };
	static const char *const kkeys[] = { "client-key", "client-certificate", "tokenFile", "certificate-authority",
					     NULL };
	const char *const *keys = kube ? kkeys : dkeys;

	if (n->type == Y_SEQ)
		for (size_t i = 0; i < n->n; i++)
			secrets_in(pk, n->v[i], kube);
	if (n->type != Y_MAP)
		return;
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *k = n->k[i], *v = n->v[i];
		for (size_t j = 0; keys[j]; j++) {
			const char *why = aprintf("%s:%d: %s", v->loc.file, v->loc.line, keys[j]);
			const char *path;
			if (k->type != Y_SCALAR || strcmp(k->s, keys[j]) || v->type != Y_SCALAR || yisnull(v))
				continue;
			path = path_join(path_dir(v->loc.file), v->s);
			if (!kube && !strcmp(keys[j], "kubeconfig"))
				add_kubeconfig(pk, v->s[0] == '~' ? v->s : path, why);
			else
				add_secret(pk, path, why);
		}
		secrets_in(pk, v, kube);
	}
}

/* FILE's credential settings (KUBE: a kubeconfig's); -1 when a distro file cannot be read or parsed */
static int parse_secrets(struct packer *pk, const char *file, int kube)
{
	struct ypool *p = ypool_new();
	struct ynode **docs;
	size_t len, ndocs;
	char *text = read_file(file, &len);
	int r;

	if (!text) {
		ypool_free(p);
		return kube ? 0 : error("pack: cannot read %s:", file);
	}
	r = yaml_parse(p, file, text, len, &docs, &ndocs);
	free(text);
	for (size_t j = 0; r == 0 && j < ndocs; j++)
		secrets_in(pk, docs[j], kube);
	ypool_free(p);
	return r < 0 && !kube ? -1 : 0;
}

/*
 * The files credential settings name: the distro's as loaded (with its
 * context's) and those that any file of its extends chain writes, also
 * where a later one overrides them.
 */
static int collect_secrets(struct packer *pk, struct ctx *c)
{
	const char *const *chain;
	size_t nchain = manifest_chain(&chain);
	const struct distro *d = c->d;

	add_secret(pk, d->argocd.token_file, "argocd.token-file");
	add_secret(pk, d->argocd.ca_file, "argocd.ca-file");
	add_secret(pk, d->git.ca_file, "git.ca-file");
	for (size_t i = 0; i < d->nclusters; i++) {
		add_secret(pk, d->clusters[i].reg.ca_file, aprintf("cluster '%s': register.ca-file", d->clusters[i].name));
		add_kubeconfig(pk, d->clusters[i].reg.kubeconfig,
			       aprintf("cluster '%s': register.kubeconfig", d->clusters[i].name));
	}
	for (size_t i = 0; i < nchain; i++)
		if (parse_secrets(pk, chain[i], 0) < 0)
			return -1;
	return 0;
}

/* every file of DIR (scan_tree's: no dotfiles, no symlink out) under PREFIX/ */
static int add_tree(struct packer *pk, const char *dir, const char *prefix)
{
	struct tree t;

	memset(&t, 0, sizeof(t));
	if (scan_tree(dir, NULL, &t) < 0)
		return -1;
	for (size_t i = 0; i < t.n; i++) {
		const char *src = path_join(dir, t.v[i].path);
		char *real = realpath(src, NULL);
		struct stat st;
		int self = real && pk->out && !strcmp(real, pk->out);
		const char *why = secret_of(pk, real);
		free(real);
		if (self)
			continue;	/* an earlier pack to the same file, in the distro's folder */
		if (why) {
			fprintf(stderr, "idpmake: pack: leaving out %s: %s names it, and a credential is never packed\n",
				src, why);
			pk->nleft++;
			continue;
		}
		add(pk, aprintf("%s/%s", prefix, t.v[i].path), src, !stat(src, &st) && (st.st_mode & 0100));
	}
	tree_free(&t);
	return 0;
}

/* a field of an index line: no space, no newline, never empty */
static int field_ok(const char *s)
{
	return s && *s && !strpbrk(s, " \n\r\t");
}

static int add_git(struct packer *pk, struct ctx *c, struct package *p, size_t *ngit)
{
	char commit[41];
	const char *dir, *err, *ref = p->git.ref ? p->git.ref : "HEAD", *sub = p->git.path ? p->git.path : ".";
	const char *prefix = aprintf("git/%zu", *ngit);

	if (!field_ok(p->git.url) || !field_ok(ref) || !field_ok(sub))
		return error("pack: package '%s': its git source's url, ref or path has a space", p->name);
	if (source_git(c->st, c->statedir, p, c->refresh, 0, commit, &dir, &err) < 0)
		return error("pack: package '%s': %s", p->name, err);
	/* the same source twice (one repository, two packages) is packed once */
	if (strstr(pk->index.s, aprintf(" %s %s %s\n", p->git.url, ref, sub)))
		return 0;
	if (add_tree(pk, dir, prefix) < 0)
		return -1;
	buf_addf(&pk->index, "git %s %s %s %s %s\n", commit, prefix, p->git.url, ref, sub);
	++*ngit;
	return 0;
}

/* `helm pull` of one chart into a folder of its own; the .tgz it wrote */
static int add_chart(struct packer *pk, struct ctx *c, const char *repo, const char *name, const char *version,
		     size_t *ncharts, const char *tmp)
{
	const char *dir = aprintf("%s/%zu", tmp, *ncharts), *log = aprintf("%s.log", dir), *file;
	const char *argv[] = { "helm", "pull", name, "--repo", repo, "--version", version, "-d", dir, NULL };
	struct proc pr = { .argv = argv, .log = log, .timeout = 300 };
	struct tree t;

	if (!field_ok(repo) || !field_ok(name) || !field_ok(version))
		return error("pack: chart '%s' from %s: its repository, name or version has a space", name, repo);
	if (strstr(pk->index.s, aprintf(" %s %s %s\n", repo, name, version)))
		return 0;
	if (!which("helm"))
		return error("pack: chart '%s' version '%s': 'helm' is not installed (it pulls the charts)", name,
			     version);
	if (mkdirs(dir) < 0)
		return error("pack: cannot create %s:", dir);
	if (c->verbose)
		fprintf(stderr, "%s\n", proc_command(argv));
	if (proc_run(&pr) < 0) {
		size_t len;
		char *out = read_file(log, &len);
		error("pack: helm pull of chart '%s' version '%s' from %s: %s%s%s", name, version, repo,
		      proc_failure(&pr), out && len ? ": " : "", out && len ? out : "");
		free(out);
		return -1;
	}
	memset(&t, 0, sizeof(t));
	if (scan_tree(dir, NULL, &t) < 0)
		return -1;
	if (t.n != 1 || !strstr(t.v[0].path, ".tgz")) {
		tree_free(&t);
		return error("pack: helm pull of chart '%s' version '%s' left no single .tgz in %s", name, version, dir);
	}
	file = aprintf("charts/%zu/%s", *ncharts, t.v[0].path);
	add(pk, file, path_join(dir, t.v[0].path), 0);
	tree_free(&t);
	buf_addf(&pk->index, "chart %s %s %s %s\n", file, repo, name, version);
	++*ncharts;
	return 0;
}

static int collect(struct packer *pk, struct ctx *c, const char *tmp)
{
	const char *const *chain;
	size_t nchain = manifest_chain(&chain), ngit = 0, ncharts = 0;

	if (collect_secrets(pk, c) < 0)
		return -1;
	for (size_t i = 0; i < nchain; i++)
		if (add_tree(pk, path_dir(chain[i]), aprintf("distro/%zu", i)) < 0)
			return -1;
	for (size_t i = 0; i < c->d->npackages && !interrupted(); i++)
		if (c->d->packages[i].src == SRC_GIT && add_git(pk, c, &c->d->packages[i], &ngit) < 0)
			return -1;
	/* a chart on every cluster it renders on: ${vars} may pick another repository or version */
	for (size_t i = 0; i < c->g->nsteps && !interrupted(); i++) {
		struct step *s = c->g->steps[i];
		struct package *p = s->pkg;
		struct vars v;
		const char *repo, *name, *version;
		if (s->kind != STEP_RENDER || p->src != SRC_CHART)
			continue;
		vars_init(&v, c->d, s->cluster, p, s->namespace);
		repo = expand(p->chart.repo, p->loc, &v);
		name = expand(p->chart.name, p->loc, &v);
		if (!p->chart.version)
			return error("pack: package '%s': chart '%s' has no pinned version (set chart.version)",
				     p->name, name ? name : "?");
		version = expand(p->chart.version, p->loc, &v);
		if (!repo || !name || !version)
			return -1;
		if (add_chart(pk, c, repo, name, version, &ncharts, tmp) < 0)
			return -1;
	}
	return 0;
}

static int write_header(struct archive *a, const char *name, size_t len, int mode)
{
	struct archive_entry *e = archive_entry_new();
	int ok;

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, mode);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, 0, 0);	/* the same inputs make the same archive */
	ok = archive_write_header(a, e) == ARCHIVE_OK;
	archive_entry_free(e);
	return ok ? 0 : error("pack: cannot write '%s' into the archive: %s", name, archive_error_string(a));
}

/* pass 1: each member's size and digest, read in pieces (no member is held in memory) */
static int measure(struct packer *pk, struct buf *idx)
{
	unsigned long long total = 0;

	if (pk->n > PACK_COUNT_MAX)
		return error("pack: %zu files: an archive holds at most %d", pk->n, PACK_COUNT_MAX);
	for (size_t i = 0; i < pk->n; i++) {
		struct member *m = &pk->v[i];
		struct stat st;
		struct hash h;
		int fd;
		if (interrupted())
			return -1;
		if (!field_ok(m->name))
			return error("pack: cannot pack '%s': its name has a space", m->src);
		if ((fd = open(m->src, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			return error("pack: cannot read %s:", m->src);
		}
		if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > PACK_MEMBER_MAX ||
		    (total += (unsigned long long)st.st_size) > PACK_TOTAL_MAX) {
			close(fd);
			return error("pack: %s: %s", m->src, !S_ISREG(st.st_mode) ? "not a regular file" :
				     aprintf("too large for an archive (at most %u MiB a file, %llu MiB in all)",
					     PACK_MEMBER_MAX >> 20, PACK_TOTAL_MAX >> 20));
		}
		m->size = (size_t)st.st_size;
		if (hash_fd(fd, &h) < 0)
			return error("pack: cannot read %s:", m->src);
		hash_hex(h, m->hex);
		buf_addf(idx, "file %s %zu %s\n", m->hex, m->size, m->name);
	}
	return 0;
}

/* pass 2: one member from its file, in pieces, checked against pass 1 */
static int copy_member(struct archive *a, const struct member *m)
{
	static char block[65536];
	struct hasher *h = hasher_new();
	size_t off = 0;
	char hex[33];
	int fd = open(m->src, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		hasher_end(h);
		return error("pack: cannot read %s:", m->src);
	}
	while (off <= m->size) {
		ssize_t r = read(fd, block, sizeof(block));
		if (r < 0 && errno == EINTR && !interrupted())
			continue;
		if (r < 0 || interrupted()) {
			close(fd);
			hasher_end(h);
			return r < 0 ? error("pack: cannot read %s:", m->src) : -1;
		}
		if (r == 0)
			break;
		if (off + (size_t)r > m->size)
			break;	/* it grew: the digest below says it changed */
		hasher_add(h, block, (size_t)r);
		if (archive_write_data(a, block, (size_t)r) != r) {
			close(fd);
			hasher_end(h);
			return error("pack: cannot write '%s' into the archive: %s", m->name, archive_error_string(a));
		}
		off += (size_t)r;
	}
	close(fd);
	hash_hex(hasher_end(h), hex);
	if (off != m->size || strcmp(hex, m->hex))
		return error("pack: %s changed while it was being packed; pack again", m->src);
	return 0;
}

/*
 * The archive goes to a private temporary file beside OUT (O_EXCL, so never
 * through a symlink or into another's file), renamed over OUT when whole.
 */
static int write_archive(struct packer *pk, const char *out)
{
	struct archive *a = archive_write_new();
	struct buf idx = BUF_INIT;
	size_t olen = strlen(out);
	char *tmp = xstrdup(aprintf("%s.tmp-XXXXXX", out));
	int fd = -1, ret = -1;

	buf_adds(&idx, PACK_MAGIC);
	if (measure(pk, &idx) < 0)
		goto out;
	buf_add(&idx, pk->index.s, pk->index.len);
	archive_write_set_format_pax_restricted(a);
	if ((olen > 3 && !strcmp(out + olen - 3, ".gz")) || (olen > 4 && !strcmp(out + olen - 4, ".tgz")))
		archive_write_add_filter_gzip(a);
	if ((fd = mkstemp(tmp)) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		error("pack: cannot create %s:", tmp);
		*tmp = 0;
		goto out;
	}
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		error("pack: cannot write %s: %s", tmp, archive_error_string(a));
		goto out;
	}
	if (write_header(a, PACK_INDEX, idx.len, 0644) < 0 ||
	    archive_write_data(a, idx.s, idx.len) != (la_ssize_t)idx.len) {
		error("pack: cannot write %s: %s", tmp, archive_error_string(a));
		goto out;
	}
	for (size_t i = 0; i < pk->n; i++)
		if (write_header(a, pk->v[i].name, pk->v[i].size, pk->v[i].exec ? 0755 : 0644) < 0 ||
		    (pk->v[i].size && copy_member(a, &pk->v[i]) < 0))
			goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		error("pack: cannot write %s: %s", tmp, archive_error_string(a));
		goto out;
	}
	/* mkostemp made it 0600: the archive gets the modes of a file the user writes */
	if (fchmod(fd, 0666 & ~(user_umask == (mode_t)-1 ? 022 : user_umask)) < 0 || fsync(fd) < 0) {
		error("pack: cannot write %s:", tmp);
		goto out;
	}
	if (rename(tmp, out) < 0) {
		error("pack: cannot rename %s to %s:", tmp, out);
		goto out;
	}
	ret = 0;
out:
	archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (ret < 0 && *tmp)
		unlink(tmp);
	free(tmp);
	buf_release(&idx);
	return ret;
}

int cmd_pack(struct ctx *c)
{
	struct packer pk = { .index = BUF_INIT };
	const char *out = c->outdir ? c->outdir : "idpmake-pack.tar";
	const char *tmp;
	int ret;

	if (c->ntargets) {
		fprintf(stderr, "idpmake: pack takes no targets: it packs the whole distro\n");
		return 2;
	}
	intr_install();
	if ((ret = ctx_load(c, 0)))
		return ret;
	if (pack_active()) {
		fprintf(stderr, "idpmake: %s is a bundle already: pack a distro.yaml\n", c->bundle);
		return 2;
	}
	/* git sources are fetched into the state, helm pulls into STATE/tmp: as up does, under the run lock */
	if (state_lock(c->st, c->wait) < 0)
		return 1;
	{
		char *dir = realpath(path_dir(out), NULL);
		pk.out = dir ? path_join(dir, path_base(out)) : NULL;
		free(dir);
	}
	tmp = path_join(c->statedir, aprintf("tmp/pack-%d", (int)getpid()));
	rmtree(tmp);
	ret = collect(&pk, c, tmp) < 0 || interrupted() || write_archive(&pk, out) < 0;
	rmtree(tmp);
	buf_release(&pk.index);
	if (interrupted()) {
		fprintf(stderr, "idpmake: pack interrupted: %s is not written\n", out);
		return intr_exit_status();
	}
	if (ret)
		return 1;
	fprintf(c->json ? stderr : stdout, "packed %zu files into %s%s\n", pk.n + 1, out,
		pk.nleft ? aprintf(" (%zu credential file%s left out: give %s on the offline side)", pk.nleft,
				   pk.nleft == 1 ? "" : "s", pk.nleft == 1 ? "it" : "them") : "");
	return 0;
}
