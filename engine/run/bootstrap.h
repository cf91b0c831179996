/* bootstrap.h - up in two phases when the platform it pushes to and syncs through is still to be made */
#ifndef IDPMAKE_BOOTSTRAP_H
#define IDPMAKE_BOOTSTRAP_H

#include <stdio.h>

#include "run/build.h"

struct ctx;

/*
 * The local steps of the graph (local[i] for g->steps[i]): CLUSTER:kind
 * and the steps of deploy: kubectl packages (render, hooks, apply) whose
 * in-steps are all local.  They need neither Argo CD nor the GitOps
 * remote, which may be what they make: in the cnoe distro the cluster,
 * Argo CD and Gitea.  NULL when there are none.
 */
char *bootstrap_local(const struct ctx *c);

/*
 * Is the cluster or the certificate to be made (a selected CLUSTER:kind or
 * tls step that plan says runs; the steps left as found)?  Then local is
 * narrowed to pass 1 (those steps, what comes after them, every step of a
 * cluster being made, and the local steps before these), which up runs
 * first (bootstrap_run), and only then logs in to Argo CD, reads
 * git.credentials and checks the rest; otherwise it runs one pass,
 * everything checked before anything runs.
 */
int bootstrap_pending(struct ctx *c, char *local);

/*
 * Run the selected local steps alone (build_run over them), into *sum;
 * afterwards the selection is what is left: the other selected steps, and
 * the local renders, done (the push takes their folders).
 * build_run's result.
 */
int bootstrap_run(struct ctx *c, const struct build_opts *o, struct summary *sum, const char *local);

/*
 * After a bootstrap that ended well and made the cluster or the
 * certificate (a first up): where the platform is (the distro's
 * urls, ${vars} expanded; else Argo CD's and the GitOps remote's) and how
 * to read its users and passwords (idpmake secrets), on f.
 */
void bootstrap_said(const struct ctx *c, FILE *f);

/* the run's counts: pass 2's (a) and pass 1's (b), each step counted once, into a */
void bootstrap_summary(struct summary *a, const struct summary *b);

/* the distro's urls: entry NAME, its ${var}s expanded; NULL when none, or NAME is a package it removed */
const char *platform_url(const struct distro *d, const char *name);

#endif
