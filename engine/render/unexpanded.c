/*
 * unexpanded.c - ${name} that nothing expands in a manifests package's
 * files (unexpanded.h): a trap for someone who expects templating.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "distro/model.h"
#include "render/unexpanded.h"

#define SHOWN 5	/* warnings per package; then a count */

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static int in(const struct kvlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, name))
			return 1;
	return 0;
}

/* a variable of the distro's or of one of its clusters' */
static int has_var(const struct distro *d, const char *name)
{
	if (in(&d->vars, name))
		return 1;
	for (size_t i = 0; i < d->nclusters; i++)
		if (in(&d->clusters[i].vars, name))
			return 1;
	return 0;
}

int unexpanded_warn(const struct step *s, const struct distro *d)
{
	int found = 0;

	static const struct package **seen;	/* a package on many clusters: its files once */
	static size_t nseen;

	if (s->kind != STEP_RENDER || !s->pkg || s->pkg->nrewrite || !s->tree)
		return 0;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i] == s->pkg)
			return 0;
	seen = agrow(seen, nseen, sizeof(*seen));
	seen[nseen++] = s->pkg;
	for (size_t i = 0; i < s->tree->n; i++) {
		const char *path = path_join(s->tree->dir, s->tree->v[i].path);
		size_t len;
		int fd = open_regular(path);	/* a FIFO swapped in since the scan is not waited on */
		char *text = fd < 0 ? NULL : read_fd(fd, &len);
		int line = 1;
		const char *bol;

		if (!text)
			continue;
		bol = text;
		for (const char *p = text; p < text + len; p++) {
			const char *q;
			if (*p == '\n') {
				line++;
				bol = p + 1;
				continue;
			}
			if (p[0] != '$' || p + 2 >= text + len || p[1] != '{' || !ident_start(p[2]))
				continue;
			for (q = p + 3; q < text + len && ident(*q); q++)
				;
			if (q >= text + len || *q != '}')
				continue;
			if (found++ < SHOWN) {
				const char *name = astrndup(p + 2, (size_t)(q - p - 2));
				const char *sn = term_safe(name);
				/* the way out: a rewrite rule for a variable there is; none is, said so */
				loc_warn((struct loc){ term_safe(path), line, (int)(p - bol) + 1 },
					 "${%s} is left as it is: a %s package's files are not templated%s", sn, s->pkg->rule->name,
					has_var(d, name)
						? aprintf(" (the distro has a variable '%s'); give the package rewrite: "
							  "[{match: '\\$\\{%s\\}', replace: '${%s}'}] (idpmake-distro(5), "
							  "rewrite)", sn, sn, sn)
						: aprintf(", and no variable '%s' is defined (vars: in distro.yaml or a "
							  "cluster)", sn));
			}
			p = q;
		}
		free(text);
	}
	if (found > SHOWN)
		warn("%s: %d more ${...} left as they are", s->id, found - SHOWN);
	return found;
}
