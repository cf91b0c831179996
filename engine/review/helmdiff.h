/*
 * helmdiff.h - the objects of a chart that Argo CD renders.
 *
 * A helm package without `render: local` is one Application
 * (application.yaml) naming the chart, its version, its values and the
 * release; its diff alone shows only the values changing.  helmdiff renders
 * both sides here with `helm template`, with what Argo CD's repo server would
 * give it (release name, namespace, values, chart version, --include-crds),
 * and pairs the objects by file name (KIND.NAME.yaml, as a render names
 * them).  Both sides' Applications are hostile input (one is read back from
 * the GitOps repository): a field helm would take as an option, a chart that
 * is not a plain name, a repository that is not http(s) is refused, never
 * passed on.  Renders are kept for the run, so a chart shared by many
 * clusters is rendered once.
 */
#ifndef IDPMAKE_HELMDIFF_H
#define IDPMAKE_HELMDIFF_H

#include <stddef.h>

struct helmdiff_obj {
	const char *name;		/* KIND.NAME.yaml */
	const char *old, *new;		/* NULL: not on that side */
	size_t oldlen, newlen;
};

struct helmdiff {
	const char *what;	/* "chart NAME VERSION" (old -> new when they differ), for a header */
	const char *why;	/* the objects are not shown: why (no helm, helm failed, ...), or NULL */
	struct helmdiff_obj *v;	/* the objects that differ, sorted by name (arena) */
	size_t n;
};

/*
 * old, new: the two sides of an application.yaml (NULL: absent).  0 when
 * neither is a chart's Application, or both render the same (same chart,
 * version, values, release and namespace); 1 with hd filled: hd->why, or
 * hd->v the objects that differ (none, when the renders are equal).
 */
int helmdiff(const char *old, size_t oldlen, const char *new, size_t newlen, struct helmdiff *hd);

/*
 * What one side gives helm (fuzz-helmdiff): 1 with *argv the words of
 * `helm template` (NULL-ended, arena; the values file's --values=FILE is
 * added when it runs) and *values the values text; 0 not a chart's
 * Application; -1 not rendered here, *why says why.
 */
int helmdiff_command(const char *text, size_t len, const char ***argv, const char **values, const char **why);

#endif
