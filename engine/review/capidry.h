/* capidry.h - validate --live: created clusters' Clusters and classes dry-run on their management cluster (capidry.c) */
#ifndef IDPMAKE_CAPIDRY_H
#define IDPMAKE_CAPIDRY_H

struct ctx;

/* server-side dry-run every selected Cluster render and class render: 0, or 1 after printing what was refused */
int capidry_run(struct ctx *c);

#endif
