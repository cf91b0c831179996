/*
 * renderers.h - what render.c shares with the renderers in files of their
 * own (helm.c): the objects a render collects, and running a rule's command.
 */
#ifndef IDPMAKE_RENDERERS_H
#define IDPMAKE_RENDERERS_H

#include <stddef.h>

#include "bundle.h"

struct render_ctx;
struct step;
struct ynode;

struct objects {
	struct ypool *pool;
	struct ynode **v;
	size_t n;
	struct bundle_entry *extra;	/* files that are not objects (argocd-app folders) */
	size_t nextra;
	const char *single;		/* the name of the one object, instead of KIND.NAME.yaml */
};

/* one rendered object (a map) into o */
void add_obj(struct objects *o, struct ynode *n);
/* run argv (a rule's command), its stdout through the rewrites into o; 0, or -1 with *err */
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

#endif
