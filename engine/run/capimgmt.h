/* capimgmt.h - MGMT:capi-check: what a management cluster has of Cluster API (capimgmt.c) */
#ifndef IDPMAKE_CAPIMGMT_H
#define IDPMAKE_CAPIMGMT_H

#include "render/planner.h"

/* plan_decide's contract for MGMT:capi-check: keyed on the cluster, its kube target and what its clusters want */
void capimgmt_decide(struct planner *pl, struct step *s, const struct record *rec);
/* read the cluster's Cluster API (kubectl) and judge it: 0 with *note (what was found, adopted), or -1 with *err */
int capimgmt_run(struct planner *pl, struct step *s, const char **note, const char **err);
/* does the distro install Cluster API's providers on m itself (a package capi-providers goes there)? */
int capimgmt_installs(const struct distro *d, const struct cluster *m);

#endif
