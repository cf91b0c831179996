/*
 * extends.c - pass 1 of loading a distro (manifest.c): its YAML tree, with
 * the distros it extends loaded first and merged in, key by key (maps merge
 * recursively, lists and scalars replace, null removes a key).  A parent is
 * a path, a name on IDPMAKE_DISTRO_PATH, an installed distro or a built-in
 * one (unpacked into STATE/cache/distros/NAME so its paths are files), or,
 * running from an archive (pack.h), the next distro packed in it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "distro/conv.h"
#include "distro/embed.h"
#include "distro/extends.h"
#include "pack/pack.h"
#include "distro/removal.h"
#include "base/util.h"
#include "base/yaml.h"

static struct ypool *pool;	/* manifest.c's: the trees of every distro file */

/* merge `child` into `parent` (both maps): see the top of the file */
static struct ynode *merge(struct ynode *parent, struct ynode *child)
{
	struct ynode *m;

	if (!parent || parent->type != Y_MAP || child->type != Y_MAP)
		return child;
	m = ynew(pool, Y_MAP, parent->loc);
	for (size_t i = 0; i < parent->n; i++)
		yset(pool, m, parent->k[i], parent->v[i]);
	for (size_t i = 0; i < child->n; i++) {
		struct ynode *old = yget(m, child->k[i]->s);
		yset(pool, m, child->k[i], old ? merge(old, child->v[i]) : child->v[i]);
	}
	return m;
}

/* drop the keys whose value is null (after merging), recursively in maps of maps */
static void drop_nulls(struct ynode *m, int depth)
{
	size_t j = 0;

	if (m->type != Y_MAP || depth > 2)
		return;
	for (size_t i = 0; i < m->n; i++) {
		if (yisnull(m->v[i]) && depth > 0)
			continue;
		m->k[j] = m->k[i];
		m->v[j++] = m->v[i];
		drop_nulls(m->v[i], depth + 1);
	}
	m->n = j;
}

/* unpack a built-in distro into STATE/cache/distros/NAME so its paths are files */
static const char *unpack_builtin(const char *name, const char *statedir)
{
	char *prefix = aprintf("distros/%s/", name);
	const char *root = path_join(statedir, aprintf("cache/distros/%s", name));
	int found = 0;

	for (size_t i = 0; i < embedded_count; i++) {
		const struct embedded *e = &embedded_files[i];
		const char *dst;
		size_t len;
		char *old;
		if (strncmp(e->path, prefix, strlen(prefix)))
			continue;
		found = 1;
		dst = path_join(root, e->path + strlen(prefix));
		old = read_file(dst, &len);
		if (!old || len != e->len || memcmp(old, e->data, len)) {
			if (mkdirs(path_dir(dst)) < 0 || write_file_atomic(dst, e->data, e->len) < 0) {
				error("cannot unpack built-in distro '%s' to %s:", name, dst);
				free(old);
				return NULL;
			}
		}
		free(old);
	}
	return found ? root : NULL;
}

static const char *find_distro(const struct ynode *ext, const char *statedir)
{
	const char *dir = path_dir(ext->loc.file), *env, *p;
	struct stat st;

	if (strchr(ext->s, '/') || ext->s[0] == '.') {
		p = ext->s[0] == '/' ? ext->s : path_join(dir, ext->s);
		if (!stat(p, &st) && S_ISDIR(st.st_mode))
			p = path_join(p, "distro.yaml");
		return p;
	}
	if ((env = getenv("IDPMAKE_DISTRO_PATH"))) {
		char *copy = astrdup(env), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			p = aprintf("%s/%s/distro.yaml", d, ext->s);
			if (!access(p, R_OK))
				return p;
		}
	}
	p = aprintf("%s/share/idpmake/distros/%s/distro.yaml", IDPMAKE_PREFIX, ext->s);
	if (!access(p, R_OK))
		return p;
	if ((p = unpack_builtin(ext->s, statedir)))
		return path_join(p, "distro.yaml");
	return NULL;
}

static struct ynode *load_tree(const char *file, const char *statedir, int depth,
			       const char **chain, struct loc from)
{
	struct ynode **docs, *root, *ext, *ver;
	size_t ndocs, len;
	char *text;
	char real[PATH_MAX];

	if (!realpath(file, real) || !(text = read_file(file, &len))) {
		if (from.file)
			loc_error(from, "cannot read distro '%s': %s", file, strerror(errno));
		else
			error("cannot read '%s':", file);
		return NULL;
	}
	for (int i = 0; i < depth; i++)
		if (!strcmp(chain[i], real)) {
			loc_error(from, "'extends' cycle: %s is extended again", file);
			free(text);
			return NULL;
		}
	if (depth >= 16) {
		loc_error(from, "'extends' nested more than 16 deep");
		free(text);
		return NULL;
	}
	chain[depth] = astrdup(real);
	if (yaml_parse(pool, astrdup(file), text, len, &docs, &ndocs) < 0) {
		free(text);
		return NULL;
	}
	free(text);
	if (ndocs != 1 || docs[0]->type != Y_MAP) {
		struct loc l = { astrdup(file), ndocs ? docs[0]->loc.line : 1, 1 };
		loc_error(l, ndocs ? "a distro is one YAML map" : "empty distro manifest");
		return NULL;
	}
	root = docs[0];
	ver = yget(root, "idpmake");
	if (!ver) {
		loc_error(root->loc, "missing format version: add 'idpmake: 1' at the top");
		return NULL;
	}
	if (!ystr_eq(ver, "1")) {
		loc_error(ver->loc, "unsupported format version '%s' (this idpmake reads version 1)", ver->s ? ver->s : "?");
		return NULL;
	}
	ext = yget(root, "extends");
	if (ext && !yisnull(ext)) {
		const char *pfile;
		struct ynode *parent;
		if (!want(ext, Y_SCALAR, "'extends'"))
			return NULL;
		/* from a bundle (pack.h): the next distro of the chain, unpacked */
		pfile = pack_active() ? path_join(pack_distro(depth + 1), "distro.yaml") : find_distro(ext, statedir);
		if (!pfile) {
			loc_error(ext->loc, "no distro named '%s' (searched IDPMAKE_DISTRO_PATH, %s/share/idpmake/distros "
				  "and the built-in distros)", ext->s, IDPMAKE_PREFIX);
			return NULL;
		}
		if (!(parent = load_tree(pfile, statedir, depth + 1, chain, ext->loc)))
			return NULL;
		if (removals_check(parent, root) < 0)
			return NULL;
		root = merge(parent, root);
	} else if (removals_check(NULL, root) < 0) {
		return NULL;
	}
	return root;
}

struct ynode *extends_load(struct ypool *p, const char *file, const char *statedir, const char **chain)
{
	struct ynode *root;

	pool = p;
	if (!(root = load_tree(file, statedir, 0, chain, (struct loc){ 0 })))
		return NULL;
	drop_nulls(root, 0);
	return root;
}
