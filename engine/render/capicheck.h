/* capicheck.h - a created cluster's Cluster against the ClusterClass its class package renders (capicheck.c) */
#ifndef IDPMAKE_CAPICHECK_H
#define IDPMAKE_CAPICHECK_H

#include "base/yaml.h"
#include "graph/graph.h"

/*
 * s: the render MGMT/cluster-NAME; cls: its class package's render on MGMT
 * (capi_class_render), whose output is read: cls->rendered, else its cached
 * bundle (cls->output).  The Cluster's text, naming the class's current
 * revision (capiclass.h); or NULL with *err, after printing each mismatch
 * as file:line:col: error: at the distro's field.
 */
const char *capi_check_class(const char *statedir, const struct step *s, const struct step *cls, const char **err);
/*
 * create.spec: n, an object of s's render (MGMT/cluster-NAME, a copy of the
 * spec package), is checked and, when it is the Cluster NAME, given what
 * idpmake gives the Cluster it renders itself (labels cluster-name,
 * idpmake.io/cluster and idpmake.io/distro; sync wave 1; Prune=false).
 * 1: it is the Cluster; 0: another object; -1: refused (printed, located).
 */
int capi_spec_object(struct ypool *p, const struct step *s, struct ynode *n);
/* after a create.spec render: -1 with *err when it held no Cluster NAME (seen: capi_spec_object's 1s) */
int capi_spec_done(const struct step *s, int seen, const char **err);
/* the current revision a class render's bundle names in its REVISION file (capiclass.h; 8 hex digits, arena), or NULL */
struct bundle;
const char *capi_class_current(const struct bundle *b);
/* a revised class name (NAME-<h8>): its <h8> (arena), or NULL when it is not one */
const char *capi_class_revision_of(const char *name);
/* the class package's render step among s's in-steps, or NULL */
const struct step *capi_class_render(const struct step *s);

#endif
