/* render.h - run a package's renderer and normalise its output into a bundle */
#ifndef IDPMAKE_RENDER_H
#define IDPMAKE_RENDER_H

#include "base/buf.h"
#include "render/bundle.h"
#include "graph/graph.h"

struct render_ctx {
	struct distro *d;
	const char *statedir;
	const char *remote_url;		/* the GitOps repository as Argo CD sees it */
	int verbose;
	int readonly;			/* nothing rendered is pushed (plan, validate, diff): a class render that
					   cannot tell what its folder holds renders without its earlier revisions */
};

/*
 * Render step s (a render step): run its rule, apply the rewrites, split
 * the output into objects, normalise each (keys sorted, one YAML style) and
 * name it KIND.NAME.yaml (NAMESPACE.KIND.NAME.yaml when two collide).
 * Writes the bundle to the cache and sets *output to its hash.  On failure
 * returns -1 with the cause in *err (arena) and details in s->log.
 * Safe to call from worker threads.
 */
int render_step(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err);

/* render into memory only (for `render` and `diff`): entries point into b */
int render_to_bundle(const struct render_ctx *rc, struct step *s, struct bundle *b, const char **err);

/*
 * The package's rewrites, ${var} expanded in each replacement, applied to
 * text (malloc'd, taken); the new text (malloc'd, *len set) or NULL with
 * *err.  What render_step does to a renderer's output before parsing it.
 */
char *render_rewrite(const struct package *p, const struct step *s, const struct distro *d,
		     char *text, size_t *len, const char **err);

/* the tool version line(s) a rule's `version` prints, for keys */
const char *rule_tool_version(const struct rule *r, const char **err);

#endif
