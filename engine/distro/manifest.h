/* manifest.h - read distro.yaml (and what it extends) into a struct distro */
#ifndef IDPMAKE_MANIFEST_H
#define IDPMAKE_MANIFEST_H

#include "distro/conv.h"
#include "distro/model.h"

/*
 * Load `file`, follow `extends`, check everything distro.md requires, and
 * return the distro; NULL after printing file:line:col errors (exit 2).
 * `statedir` is where built-in distros are unpacked when extended.
 */
struct distro *manifest_load(const char *file, const char *statedir);
/* the real paths of the distro files the last manifest_load read: the distro, what it extends, ... */
size_t manifest_chain(const char *const **files);
/* free the trees of every distro file loaded (their distros point into them) */
void manifest_unload(void);

/* the variables a package sees on a cluster: builtins, cluster, distro */
struct vars {
	const struct kvlist *layer[4];
	size_t n;
	struct kv builtin[3];		/* cluster, package, namespace */
	struct kvlist builtins;
};

/* what a render of p on c sees: for a created cluster's cluster-NAME, NAME's variables and ${cluster} */
void vars_init(struct vars *v, const struct distro *d, const struct cluster *c,
	       const struct package *p, const char *namespace);
/* where p goes on c (its folder, its Application's name): c's variables, always */
void vars_init_place(struct vars *v, const struct distro *d, const struct cluster *c,
		     const struct package *p, const char *namespace);
const char *vars_get(const struct vars *v, const char *name);
/* expand ${name}; NULL after a located error when a name is undefined */
const char *expand(const char *s, struct loc loc, const struct vars *v);
/*
 * The variables a render of p on c depends on (vars.c), by name and value:
 * those its fields and its rule use; with `all` (values files, which are
 * expanded whole), every variable and the cluster's name.  Equal on two
 * clusters: the same render (share.c) and, when linked, the same folder.
 */
struct hash vars_hash(const struct distro *d, const struct cluster *c, const struct package *p, const char *ns, int all);
/* the namespace of a package on a cluster (expanded), or NULL after an error */
const char *package_namespace(const struct distro *d, const struct cluster *c,
			      const struct package *p);

/* does the package go to the cluster (its profiles)? */


#endif
