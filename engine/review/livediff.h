/*
 * livediff.h - what a change will do, before it is done (issue 8 §1, §2):
 *
 *   diff --live [TARGET...]        the new render against what Argo CD reports live
 *   diff --from FILE               a diff saved with -o FILE, shown again offline
 *   diff CLUSTER_A/ CLUSTER_B/ [PACKAGE...]
 *                                  the renders of two clusters, package by package
 *
 * The document all three print (and -o saves) is JSON:
 *
 *   {"idpmake-diff": 1, "mode": "live", "commit": distro HEAD or null,
 *    "applications": [{"name", "step", "cluster", "package", "key", "output",
 *        "exists", "revision", "prune",
 *        "objects": [{"group", "kind", "namespace", "name",
 *                     "status": create|change|prune|same, "deleted" (prune),
 *                     "diff": [unified lines], "notes": [...]}]}],
 *    "create": N, "change": N, "prune": N}
 *
 *   {"idpmake-diff": 1, "mode": "clusters", "a": A, "b": B,
 *    "packages": [{"package", "only": A or B (when on one side),
 *        "objects": [{"file", "status": change|only-a|only-b, "diff", "notes"}]}],
 *    "differ": N}
 *
 * No Secret value is ever in it: data values are "(hidden)" on both sides.
 */
#ifndef IDPMAKE_LIVEDIFF_H
#define IDPMAKE_LIVEDIFF_H

struct ctx;

/* each returns the exit code: 0 (or, with --exit-code, 0 none / 1 differences), 2 on an error */
int livediff_live(struct ctx *c);
int livediff_from(struct ctx *c);
int livediff_clusters(struct ctx *c);
/* are the operands CLUSTER_A/ CLUSTER_B/ [PACKAGE...]? */
int livediff_is_clusters(const struct ctx *c);

#endif
