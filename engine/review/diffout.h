/*
 * diffout.h - how every diff is shown (diff, diff --rev, diff --live, and
 * the objects of a chart Argo CD renders): libgit2's unified patch of two
 * texts with a Secret's values masked, and one colour scheme, git diff's:
 * meta lines bold, hunk headers cyan, removed lines red, added green.
 */
#ifndef IDPMAKE_DIFFOUT_H
#define IDPMAKE_DIFFOUT_H

#include <stddef.h>

struct ctx;

/* colour on stdout? --color=always, or auto on a terminal without NO_COLOR */
int diff_color(const struct ctx *c);
/* the escape that starts a diff line's colour, or "" */
const char *diff_line_color(const char *line);
/* print text (lines of a patch), each line in its colour when color is set */
void diff_print(const char *text, int color);
/*
 * The unified diff of old and new (either NULL: created or deleted) named
 * path, a Secret's values masked (objdiff.h), control characters escaped:
 * *head the "diff --git" lines, *patch from the "---" line on ("" when the
 * texts are equal); arena.  0, or -1 printed.
 */
int diff_patch(const char *path, const char *old, size_t oldlen, const char *new, size_t newlen, const char **head,
	       const char **patch);

#endif
