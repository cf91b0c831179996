/* capiclass.h - a ClusterClass's revisions, named by a hash of their content (capiclass.c) */
#ifndef IDPMAKE_CAPICLASS_H
#define IDPMAKE_CAPICLASS_H

#include "graph/graph.h"
#include "render/capicheck.h"

struct objects;
struct bundle;

/* the suffix of the state's row CLUSTER/PKG that says PKG renders as a class package there (build.c) */
#define CAPI_CLASS_PACKAGE_ROW ":class-package"
/* s->class_keep when what the synced Clusters name is not known: every earlier revision stays */
#define CAPI_KEEP_ALL "*"
/* the file of a class package's folder that names its current revision (8 hex digits and a newline) */
#define CAPI_REVISION_FILE "REVISION"

/*
 * s renders a class package on its management cluster (s->capi_class): its
 * ClusterClasses and the templates they name become this render's revision
 * (renamed NAME-<h8>, under <h8>/, CAPI_REVISION_FILE naming it), beside the
 * earlier revisions that s->class_keep names, copied from what its folder
 * held (s->class_from; readonly: a render nothing pushes, which renders
 * without them when that is not known).  0, or -1 with *err.
 */
int capi_class_revise(const char *statedir, int readonly, const struct step *s, struct objects *o, const char **err);
/* the class a Cluster render's output names (classRef.name, or v1beta1's class; arena), or NULL */
const char *capi_cluster_class(const char *statedir, struct hash output);

#endif
