/* share.h - renders shared between clusters: equal keys render once a run (fleet.md) */
#ifndef IDPMAKE_SHARE_H
#define IDPMAKE_SHARE_H

#include "graph/graph.h"
#include "render/render.h"

/*
 * Group the selected, dirty render steps by key: each step's `same` is
 * the first step of its group (NULL when it is alone).  Called by
 * plan_renders once the keys are known.
 */
void share_group(struct graph *g);
/* how many steps a group head stands for (1 when it is alone) */
size_t share_count(const struct step *head);
/*
 * Render s, or take the output of the step of its group that rendered:
 * the first step of a group to arrive renders, the others wait for it and
 * get its output, with `shared_from` set to its id.  render_step's
 * contract otherwise.
 */
int render_once(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err);

/*
 * The GitOps folders of the selected render steps, each once: a linked
 * fleet's `_shared/PACKAGE` folder is one folder however many clusters it
 * serves.  Folders in the order of their first step; each folder's steps in
 * graph order (steps[0] names it: its target CLUSTER/PACKAGE).  Run-lifetime
 * memory (the arena).
 */
struct folder {
	const char *gitpath;
	struct step **steps;
	size_t n;
};
size_t share_folders(const struct graph *g, struct folder **out);
/*
 * " (for canary, eu-1, us-1 and 2 more clusters)" when a folder serves more
 * than one cluster, else "" (arena).
 */
const char *share_clusters_text(const char *const *names, size_t n);
const char *share_folder_clusters(const struct folder *f);

#endif
