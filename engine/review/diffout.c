/* diffout.c - one patch maker and one colour scheme for every diff (diffout.h) */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "review/diffout.h"
#include "review/objdiff.h"
#include "run/ctx.h"

int diff_color(const struct ctx *c)
{
	const char *nc = getenv("NO_COLOR");

	if (c->color == COLOR_NEVER)
		return 0;
	return c->color == COLOR_ALWAYS || (isatty(STDOUT_FILENO) && !(nc && *nc));
}

const char *diff_line_color(const char *l)
{
	if (!strncmp(l, "--- ", 4) || !strncmp(l, "+++ ", 4) || !strncmp(l, "diff --git ", 11) ||
	    !strncmp(l, "index ", 6) || !strncmp(l, "new file mode", 13) || !strncmp(l, "deleted file mode", 17))
		return "\033[1m";
	return *l == '@' ? "\033[36m" : *l == '-' ? "\033[31m" : *l == '+' ? "\033[32m" : "";
}

void diff_print(const char *text, int color)
{
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n'), *col;
		int len = e ? (int)(e - l) : (int)strlen(l);
		col = color ? diff_line_color(l) : "";
		printf("%s%.*s%s\n", col, len, l, *col ? "\033[m" : "");
		l += len + (e != NULL);
	}
}

int diff_patch(const char *path, const char *old, size_t oldlen, const char *new, size_t newlen, const char **head,
	       const char **patch)
{
	git_patch *p = NULL;
	git_buf out = { 0 };
	git_diff_options opts;

	*head = *patch = "";
	objdiff_mask_pair(path, &old, &oldlen, &new, &newlen);	/* a Secret's values: hidden */
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (git_patch_from_buffers(&p, old, oldlen, old ? path : NULL, new, newlen, new ? path : NULL, &opts) < 0) {
		const git_error *e = git_error_last();
		return error("diff of %s: %s", term_safe(path), e && e->message ? e->message : "failed");
	}
	if (git_patch_to_buf(&out, p) == 0 && out.ptr) {
		/* libgit2 quotes a path with control characters ("\033"); the content is escaped here */
		const char *minus = strstr(out.ptr, "\n--- ");
		*patch = term_safe_text(minus ? astrdup(minus + 1) : astrdup(out.ptr));
		*head = minus ? term_safe_text(astrndup(out.ptr, (size_t)(minus + 1 - out.ptr))) : "";
	}
	git_buf_dispose(&out);
	git_patch_free(p);
	return 0;
}
