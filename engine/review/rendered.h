/* rendered.h - a package rendered now, and the GitOps repository's copy of its folder (rendered.c) */
#ifndef IDPMAKE_RENDERED_H
#define IDPMAKE_RENDERED_H

#include <stddef.h>

struct bundle;
struct ctx;
struct step;

/* render one step into b (entries point into it; free b->v); prints the failure; 0 or -1 */
int render_one(struct ctx *c, struct step *s, struct bundle *b);
/*
 * Does s's render differ from its folder in the GitOps repository (fetched
 * once a run, under the state's lock, as diff does)?  1 yes, 0 no, -1 when
 * the repository could not be read (a message printed).
 */
int render_differs_from_gitops(struct ctx *c, struct step *s);

/* the files of a folder in the GitOps repository, as gitops_read gives them */
struct remote_files {
	const char **name;
	char **data;		/* NULL: over a cap, not read (gitops_read); len is then its size */
	size_t *len, n;
	const char *folder;	/* for the report of a file not read */
};

/* gitops_read's callback: adds a file to the struct remote_files ctx */
int remote_files_collect(void *ctx, const char *name, const char *data, size_t len);
void remote_files_free(struct remote_files *rf);
/* does the remote's file a differ from the render's data? (one not read does) */
int remote_file_differs(const struct remote_files *rf, size_t a, const char *data, size_t len);

#endif
