/*
 * renderers.h - what render.c shares with the renderers in files of their
 * own (helm.c): the objects a render collects, and running a rule's command.
 */
#ifndef IDPMAKE_RENDERERS_H
#define IDPMAKE_RENDERERS_H

#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "base/hash.h"
#include "base/util.h"

struct render_ctx;
struct step;
struct ynode;

/*
 * A render's objects (objects.c): each checked, emitted and set aside as
 * add_obj gets it, so a render holds one object's tree at a time.
 */
struct obj {
	char *base, *ns, *name;	/* KIND.NAME.yaml, the namespace or "_", the file name (malloc'd) */
	struct loc loc;
	long long off;		/* the emitted bytes in the spill */
	size_t len;
};

struct objects {
	struct ypool *pool;		/* trees a renderer builds or edits (helm, argocd-app) */
	const struct step *s;
	struct obj *v;
	size_t n, cap;
	struct bundle_entry *extra;	/* files that are not objects (argocd-app folders) */
	size_t nextra;
	const char *single;		/* the name of the one object, instead of KIND.NAME.yaml */
	int errs;			/* objects refused (printed) */
	int capi_cluster;		/* create.spec: the created cluster's Cluster, seen how often (capicheck.h) */
	struct buf mem;			/* the spill: memory, then */
	int fd;				/* an unlinked file under TMPDIR */
	long long flen;
	int werr;			/* errno of a failed spill write */
};

void objects_init(struct objects *o, const struct step *s);
void objects_free(struct objects *o);
/* check, emit and set aside one object (a map); a bad one is printed and counted */
void add_obj(struct objects *o, struct ynode *n);
/* the emitted bytes of o->v[i], in memory or read into *tmp (malloc'd, reused); NULL with errno */
const char *objects_data(const struct objects *o, size_t i, char **tmp, size_t *cap);
/* take o->v[i] out of the render */
void objects_drop(struct objects *o, size_t i);
/* a file that is not an object, at name (a path in the package folder, checked when named) */
void objects_add_file(struct objects *o, const char *name, const char *data, size_t len);
/* name and sort them into b (render -o, validate); 0, or -1 with *err */
int objects_bundle(struct objects *o, struct bundle *b, const char **err);
/* name, sort and stream them into the cache as a bundle, *output its hash; 0, or -1 with *err */
int objects_write(struct objects *o, const char *statedir, struct hash *output, const char **err);

/* run argv (a rule's command), its stdout through the rewrites into o; 0, or -1 with *err */
/* runrule.c: parse YAML text (or, text NULL, the stream in) into objects, a document at a time */
int parse_objects(struct objects *o, const char *what, const char *text, size_t len, FILE *in,
		  const char **err);
int run_rule(const struct render_ctx *rc, struct step *s, const char *const *argv, struct objects *o,
	     const char **err);

/* a node made by a renderer: a quoted or plain scalar; m[k] = v */
struct ypool;
struct ynode *ynode_quoted(struct ypool *p, const char *s);
struct ynode *ynode_plain(struct ypool *p, const char *s);
void ynode_put(struct ypool *p, struct ynode *m, const char *k, struct ynode *v);

/* helm.c: a chart as an Application for Argo CD, or `helm template` with render: local */
int render_helm_app(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err);
int render_helm_local(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err);
/* a chart's values in a file of their own (0600, under TMPDIR) for helm's -f; the caller unlinks it; NULL with errno */
const char *helm_values_file(const struct buf *vb);

#endif
