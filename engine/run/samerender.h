/*
 * samerender.h - what would run if no render changed its output.
 *
 * A render that is to run may give the very output it gave last time (a
 * comment added, a file rewritten with the same objects): then nothing
 * after it runs.  Whatever up would ask Argo CD only for what such a render
 * may change (the pre-flight's GET /api/version and argocd.login, who owns
 * the Applications) it puts off until the renders ran, just before the
 * push or the first step that talks to Argo CD (preflight_late): a no-op
 * asks nothing.  Here the prediction that tells the two apart.
 */
#ifndef IDPMAKE_SAMERENDER_H
#define IDPMAKE_SAMERENDER_H

#include "render/planner.h"

struct samerender {
	struct step *saved;		/* every step as it was */
	int dry_run;			/* pl->dry_run as it was */
};

/*
 * From here to samerender_end, pl decides in dry run (no request) and each
 * selected render that is to run and has a recorded output stands for it:
 * not dirty, that output.  A render never rendered stays to run (its output
 * is new).  The steps decided meanwhile are what would run anyway.
 */
void samerender_begin(struct planner *pl, struct samerender *sr);
/* every step back as samerender_begin found it */
void samerender_end(struct planner *pl, struct samerender *sr);

#endif
