/* capiprune.h - clusters made through Cluster API that the distro no longer has (capiprune.c) */
#ifndef IDPMAKE_CAPIPRUNE_H
#define IDPMAKE_CAPIPRUNE_H

#include "run/ctx.h"
#include "run/orphans.h"

struct argocd;

/*
 * up: say what stays (no --prune); refuse plain --prune (1, named); with
 * --prune --delete-clusters delete each, resumably, a recorded step at a
 * time: its Applications (the last synced first), its registration (when
 * idpmake made it), its Cluster (alone, waiting until it is gone), then
 * the Application that held it.  0, or 1 when one failed or was refused.
 */
int capi_prune(struct ctx *c, struct argocd *a);

#endif
