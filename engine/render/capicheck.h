/* capicheck.h - a created cluster's Cluster against the ClusterClass its class package renders (capicheck.c) */
#ifndef IDPMAKE_CAPICHECK_H
#define IDPMAKE_CAPICHECK_H

#include "graph/graph.h"

/*
 * s: the render MGMT/cluster-NAME; class_output: the output of its class
 * package's render on MGMT.  0; or -1 with *err, after printing each
 * mismatch as file:line:col: error: at the distro's field.
 */
int capi_check_class(const char *statedir, const struct step *s, struct hash class_output, const char **err);
/* the class package's render step among s's in-steps, or NULL */
const struct step *capi_class_render(const struct step *s);

#endif
