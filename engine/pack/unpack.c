/*
 * unpack.c - read an archive `idpmake pack` wrote (format in pack.h) into
 * STATE/bundle/, and answer where its distros, git sources and charts are.
 *
 * The archive is hostile input.  Invariants:
 *   1. the first member is the index, at most INDEX_MAX bytes;
 *   2. every other member is a regular file (no symlink, hard link, device
 *      or folder), named in the index once, with a relative name of plain
 *      components (no "", ".", ".." or leading "/");
 *   3. its size is at most PACK_MEMBER_MAX, the archive's total at most
 *      PACK_TOTAL_MAX, their number at most PACK_COUNT_MAX (pack.h), and
 *      the bytes it unpacks at most EXPAND_MAX times the archive's own
 *      once they pass EXPAND_FLOOR (a gzip bomb stops early);
 *   4. its content has the index's XXH3;
 *   5. every file of the index is in the archive.
 * A member is streamed to the disk in pieces (never held in memory whole),
 * its digest computed as it goes: 1-3 are checked before its first byte is
 * written, 4 and 5 after, and any failure removes the whole unpacked tree
 * (unpacking runs only under the run lock, ctx.c).
 * libarchive writes the members with ARCHIVE_EXTRACT_SECURE_NODOTDOT and
 * _SECURE_SYMLINKS as a second line of defence, each member's checked name
 * joined to the bundle folder's real path (so not _SECURE_NOABSOLUTEPATHS:
 * that path is absolute).
 * A bundled chart's files are read into memory: at most CHART_MAX bytes and
 * CHART_COUNT_MAX members (a gzip bomb of empty files is refused).
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/names.h"
#include "pack/pack.h"
#include "base/statedir.h"
#include "base/util.h"

#define INDEX_MAX (16u << 20)
#define EXPAND_FLOOR (64ull << 20)
#define EXPAND_MAX 100
/* a bundled chart's files, read into memory: Helm's own bounds (a larger chart is no chart helm loads) */
#define CHART_MAX (100u << 20)
#define CHART_COUNT_MAX 20000

struct pfile {
	const char *name;
	char hex[33];
	size_t size;
	int seen;
};

struct pgit {
	const char *commit, *dir, *url, *ref, *path;
};

struct pchart {
	const char *file, *repo, *name, *version;
};

static struct {
	const char *root;	/* STATE/bundle/unpacked, once open */
	struct pfile *files;
	size_t nfiles;
	struct pgit *git;
	size_t ngit;
	struct pchart *charts;
	size_t ncharts;
} pk;

int pack_is_archive(const char *file)
{
	unsigned char b[512];
	FILE *f = fopen(file, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return 1;	/* gzip */
	return n == 512 && !memcmp(b + 257, "ustar", 5);
}

int pack_active(void)
{
	return pk.root != NULL;
}

const char *pack_distro(int depth)
{
	return pk.root ? aprintf("%s/distro/%d", pk.root, depth) : NULL;
}

static int cmp_pfile(const void *a, const void *b)
{
	return strcmp(((const struct pfile *)a)->name, ((const struct pfile *)b)->name);
}

static struct pfile *find_file(const char *name)
{
	struct pfile key = { .name = name };
	return pk.nfiles ? bsearch(&key, pk.files, pk.nfiles, sizeof(*pk.files), cmp_pfile) : NULL;
}

static int is_hex(const char *s, size_t n)
{
	if (strlen(s) != n)
		return 0;
	for (; *s; s++)
		if (!strchr("0123456789abcdef", *s))
			return 0;
	return 1;
}

/* the index's lines (pack.h); -1 after printing which line is wrong */
static int parse_index(const char *archive, char *text)
{
	char *save = NULL;
	size_t lineno = 1;

	if (strncmp(text, PACK_MAGIC, strlen(PACK_MAGIC)))
		return error("bundle %s: %s does not start with '%.14s'", archive, PACK_INDEX, PACK_MAGIC);
	for (char *line = strtok_r(text + strlen(PACK_MAGIC), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[7], *s2 = NULL;
		size_t n = 0;
		lineno++;
		/* up to 7 words: a 7th makes any line too long (it was dropped, and a git line with it accepted) */
		for (char *w = strtok_r(line, " ", &s2); w && n < 7; w = strtok_r(NULL, " ", &s2))
			f[n++] = astrdup(w);
		if (n == 4 && !strcmp(f[0], "file") && is_hex(f[1], 32) && !name_bad(f[3], NAME_PATH)) {
			char *end;
			unsigned long long size = strtoull(f[2], &end, 10);
			if (*end || pk.nfiles >= PACK_COUNT_MAX)
				goto bad;
			if (size > PACK_MEMBER_MAX)
				return error("bundle %s: %s:%zu: member '%s' is too large (%llu bytes; at most %u MiB a member)",
					     archive, PACK_INDEX, lineno, f[3], size, PACK_MEMBER_MAX >> 20);
			pk.files = agrow(pk.files, pk.nfiles, sizeof(*pk.files));
			pk.files[pk.nfiles] = (struct pfile){ .name = f[3], .size = (size_t)size };
			memcpy(pk.files[pk.nfiles++].hex, f[1], 33);
		} else if (n == 6 && !strcmp(f[0], "git") && is_hex(f[1], 40) && !name_bad(f[2], NAME_PATH)) {
			pk.git = agrow(pk.git, pk.ngit, sizeof(*pk.git));
			pk.git[pk.ngit++] = (struct pgit){ f[1], f[2], f[3], f[4], f[5] };
		} else if (n == 5 && !strcmp(f[0], "chart") && !name_bad(f[1], NAME_PATH)) {
			pk.charts = agrow(pk.charts, pk.ncharts, sizeof(*pk.charts));
			pk.charts[pk.ncharts++] = (struct pchart){ f[1], f[2], f[3], f[4] };
		} else {
			goto bad;
		}
		continue;
bad:
		return error("bundle %s: %s:%zu: not a valid index line", archive, PACK_INDEX, lineno);
	}
	if (pk.nfiles)	/* qsort of NULL, even of 0 elements, is undefined (an index of no file line) */
		qsort(pk.files, pk.nfiles, sizeof(*pk.files), cmp_pfile);
	for (size_t i = 1; i < pk.nfiles; i++)
		if (!strcmp(pk.files[i - 1].name, pk.files[i].name))
			return error("bundle %s: %s names member '%s' twice", archive, PACK_INDEX, pk.files[i].name);
	for (size_t i = 0; i < pk.ncharts; i++)
		if (!find_file(pk.charts[i].file))
			return error("bundle %s: chart '%s' is not a file of the bundle", archive, pk.charts[i].file);
	return 0;
}

/* the current member's data, `size` bytes (malloc'd, NUL-terminated); NULL when it is short or unreadable */
static char *read_all(struct archive *a, size_t size)
{
	char *data = xmalloc(size + 1);
	size_t off = 0;

	while (off < size) {
		la_ssize_t r = archive_read_data(a, data + off, size - off);
		if (r <= 0) {
			free(data);
			return NULL;
		}
		off += (size_t)r;
	}
	data[size] = 0;
	return data;
}

static char *read_member(struct archive *a, size_t size, const char *archive, const char *name)
{
	char *data = read_all(a, size);

	if (!data)
		error("bundle %s: member '%s': %s", archive, name,
		      archive_error_string(a) ? archive_error_string(a) : "truncated");
	return data;
}

/* the current member, SIZE bytes, into the open entry of w, in pieces; its XXH3 in hex; -1 after printing why */
static int stream_member(struct archive *a, struct archive *w, size_t size, unsigned long long *expanded,
			 unsigned long long archive_size, const char *archive, const char *name, char hex[33])
{
	static char block[65536];
	struct hasher *h = hasher_new();
	size_t off = 0;

	for (;;) {
		la_ssize_t r = archive_read_data(a, block, sizeof(block));
		if (r < 0) {
			hasher_end(h);
			return error("bundle %s: member '%s': %s", archive, name, archive_error_string(a));
		}
		if (r == 0)
			break;
		if ((off += (size_t)r) > size) {
			hasher_end(h);
			return error("bundle %s: member '%s' holds more than its %zu bytes", archive, name, size);
		}
		if ((*expanded += (unsigned long long)r) > EXPAND_FLOOR && *expanded / EXPAND_MAX > archive_size) {
			hasher_end(h);
			return error("bundle %s: it unpacks to more than %d times its own size (%llu bytes of %llu):"
				     " a compression bomb, not an idpmake pack", archive, EXPAND_MAX, *expanded,
				     archive_size);
		}
		hasher_add(h, block, (size_t)r);
		if (archive_write_data(w, block, (size_t)r) != r) {
			hasher_end(h);
			return error("bundle %s: cannot write member '%s': %s", archive, name, archive_error_string(w));
		}
	}
	hash_hex(hasher_end(h), hex);
	if (off != size)
		return error("bundle %s: member '%s': truncated (%zu of its %zu bytes)", archive, name, off, size);
	return 0;
}

static int extract(const char *archive, const char *root)
{
	struct archive *a = archive_read_new(), *w = archive_write_disk_new();
	struct archive_entry *e;
	unsigned long long total = 0, expanded = 0, archive_size;
	size_t count = 0;
	struct stat st;
	int r, ret = -1;

	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
					      ARCHIVE_EXTRACT_NO_OVERWRITE);
	if (access(archive, R_OK) < 0) {
		error("bundle %s: cannot read it:", archive);
		goto out;
	}
	if (stat(archive, &st) < 0 || !S_ISREG(st.st_mode)) {
		error("bundle %s: not a file", archive);
		goto out;
	}
	archive_size = (unsigned long long)st.st_size;
	if (archive_read_open_filename(a, archive, 65536) != ARCHIVE_OK) {
		error("bundle %s: %s", archive, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		la_int64_t size = archive_entry_size(e);
		struct pfile *pf;
		char *data, hex[33];
		const char *why;
		if (!name)
			name = "";
		name = astrdup(name);
		if (++count > PACK_COUNT_MAX + 1) {
			error("bundle %s: more than %d members", archive, PACK_COUNT_MAX);
			goto out;
		}
		if ((why = name_bad(name, NAME_PATH))) {
			/* shown escaped: a hostile name's escapes stay off the terminal */
			error("bundle %s: member '%s' %s (it would be written outside the bundle or printed)", archive,
			      name_shown(name), why);
			goto out;
		}
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) || archive_entry_symlink(e)) {
			error("bundle %s: member '%s' is not a regular file (a link, folder or device)", archive, name);
			goto out;
		}
		if (size < 0 || (unsigned long long)size > (count == 1 ? INDEX_MAX : PACK_MEMBER_MAX) ||
		    (total += (unsigned long long)size) > PACK_TOTAL_MAX) {
			error("bundle %s: member '%s' is too large (%lld bytes; at most %u MiB a member, %llu MiB in all)",
			      archive, name, (long long)size, (count == 1 ? INDEX_MAX : PACK_MEMBER_MAX) >> 20,
			      PACK_TOTAL_MAX >> 20);
			goto out;
		}
		if (count == 1) {
			if (strcmp(name, PACK_INDEX)) {
				error("bundle %s: the first member is '%s', not %s: not an idpmake pack", archive, name,
				      PACK_INDEX);
				goto out;
			}
			if (!(data = read_member(a, (size_t)size, archive, name)))
				goto out;
			if (memchr(data, 0, (size_t)size)) {
				free(data);
				error("bundle %s: %s holds a NUL byte", archive, PACK_INDEX);
				goto out;
			}
			r = parse_index(archive, astrdup(data));
			free(data);
			if (r < 0)
				goto out;
			continue;
		}
		if (!(pf = find_file(name)) || pf->seen) {
			error("bundle %s: member '%s' is %s", archive, name, pf ? "in the archive twice" : "not in the index");
			goto out;
		}
		pf->seen = 1;
		if ((size_t)size != pf->size) {
			error("bundle %s: member '%s' has %lld bytes, the index says %zu", archive, name, (long long)size,
			      pf->size);
			goto out;
		}
		archive_entry_set_pathname(e, path_join(root, name));
		archive_entry_set_perm(e, archive_entry_perm(e) & 0755);
		if (archive_write_header(w, e) != ARCHIVE_OK) {
			error("bundle %s: cannot write member '%s': %s", archive, name, archive_error_string(w));
			goto out;
		}
		if (stream_member(a, w, (size_t)size, &expanded, archive_size, archive, name, hex) < 0)
			goto out;
		if (archive_write_finish_entry(w) != ARCHIVE_OK) {
			error("bundle %s: cannot write member '%s': %s", archive, name, archive_error_string(w));
			goto out;
		}
		if (strcmp(hex, pf->hex)) {
			error("bundle %s: member '%s' does not match its digest (XXH3 %s, the index says %s)", archive, name,
			      hex, pf->hex);
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		error("bundle %s: %s", archive, archive_error_string(a));
		goto out;
	}
	if (!count) {
		error("bundle %s: an empty archive", archive);
		goto out;
	}
	for (size_t i = 0; i < pk.nfiles; i++)
		if (!pk.files[i].seen) {
			error("bundle %s: member '%s' of the index is missing", archive, pk.files[i].name);
			goto out;
		}
	ret = 0;
out:
	archive_read_free(a);
	archive_write_free(w);
	return ret;
}

int pack_open(const char *archive, const char *statedir, const char **distro)
{
	const char *root = path_join(statedir, "bundle/unpacked");
	char *real;
	int r;

	memset(&pk, 0, sizeof(pk));
	/* the state folder is checked by state_open; its bundle folder too, before anything in it is removed */
	if (state_dir_check(path_join(statedir, "bundle"), "the bundle folder") < 0 ||
	    state_dir_check(root, "the unpacked bundle") < 0)
		return -1;
	if (rmtree(root) < 0 && errno != ENOENT)
		return error("cannot remove %s:", root);
	if (mkdirs(root) < 0 || !(real = realpath(root, NULL)))
		return error("cannot create %s:", root);
	/* members are written under its real path: no '..' and no symlink for libarchive's checks to refuse */
	r = extract(archive, real);
	free(real);
	if (r < 0) {
		rmtree(root);
		memset(&pk, 0, sizeof(pk));
		return -1;
	}
	for (size_t i = 0; i < pk.ngit; i++)
		mkdirs(path_join(root, pk.git[i].dir));	/* a source folder with no file */
	pk.root = root;
	*distro = path_join(pack_distro(0), "distro.yaml");
	if (access(*distro, R_OK) < 0) {
		pk.root = NULL;
		return error("bundle %s: no distro/0/distro.yaml", archive);
	}
	return 0;
}

int pack_index_parse(const char *text, size_t len)
{
	int r;

	memset(&pk, 0, sizeof(pk));
	if (len > INDEX_MAX || memchr(text, 0, len))
		return -1;	/* as extract() refuses them */
	r = parse_index("fuzz", astrndup(text, len));
	pk.root = r == 0 ? "/fuzz" : NULL;
	return r;
}

void pack_index_forget(void)
{
	memset(&pk, 0, sizeof(pk));	/* its tables are arena memory */
}

int pack_git(const char *url, const char *ref, const char *path, char commit[41], const char **dir,
	     const char **err)
{
	if (!pk.root)
		return 0;
	for (size_t i = 0; i < pk.ngit; i++)
		if (!strcmp(pk.git[i].url, url) && !strcmp(pk.git[i].ref, ref) && !strcmp(pk.git[i].path, path)) {
			snprintf(commit, 41, "%s", pk.git[i].commit);
			*dir = path_join(pk.root, pk.git[i].dir);
			return 1;
		}
	*err = aprintf("git source %s (ref %s, path %s) is not in the bundle", url, ref, path);
	return -1;
}

const char *pack_chart(const char *repo, const char *name, const char *version, const char **err)
{
	for (size_t i = 0; pk.root && i < pk.ncharts; i++)
		if (!strcmp(pk.charts[i].repo, repo) && !strcmp(pk.charts[i].name, name) &&
		    !strcmp(pk.charts[i].version, version))
			return path_join(pk.root, pk.charts[i].file);
	*err = aprintf("chart '%s' version '%s' from %s is not in the bundle", name, version, repo);
	return NULL;
}

int pack_chart_files(const char *tgz, void (*fn)(void *arg, const char *name, const char *data, size_t len),
		     void *arg, const char **err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	unsigned long long total = 0;
	size_t count = 0;
	int r, ret = -1;

	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, tgz, 65536) != ARCHIVE_OK) {
		*err = aprintf("chart %s: %s", tgz, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *rest;
		la_int64_t size = archive_entry_size(e);
		char *data;
		if (++count > CHART_COUNT_MAX) {
			*err = aprintf("chart %s: more than %d members", tgz, CHART_COUNT_MAX);
			goto out;
		}
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;	/* helm package writes files only; folders are implied */
		if (!name || name_bad(name, NAME_PATH) || !(rest = strchr(name, '/'))) {
			*err = aprintf("chart %s: member '%s' has an unsafe name", tgz, name ? name_shown(name) : "");
			goto out;
		}
		if (size < 0 || (total += (unsigned long long)size) > CHART_MAX) {
			*err = aprintf("chart %s: member '%s' is too large (a chart holds at most %u MiB)", tgz, name,
				       CHART_MAX >> 20);
			goto out;
		}
		if (!(data = read_all(a, (size_t)size))) {
			*err = aprintf("chart %s: member '%s': %s", tgz, name,
				       archive_error_string(a) ? archive_error_string(a) : "truncated");
			goto out;
		}
		fn(arg, rest + 1, data, (size_t)size);
		free(data);
	}
	if (r != ARCHIVE_EOF) {
		*err = aprintf("chart %s: %s", tgz, archive_error_string(a));
		goto out;
	}
	ret = 0;
out:
	archive_read_free(a);
	return ret;
}
