/* capiguard.h - no sync applies over a Cluster API Cluster another distro created (capiguard.c) */
#ifndef IDPMAKE_CAPIGUARD_H
#define IDPMAKE_CAPIGUARD_H

#include "graph/graph.h"

/*
 * s, a sync of a package other than a created cluster's own, whose render
 * is `output`: why it must not run (arena), or NULL; *note says what it
 * adopted (adopt: up --adopt) or could not tell.  Reads the render's
 * bundle and, for each Cluster API Cluster in it, asks its cluster
 * (kubectl).  Any thread.
 */
const char *capiguard_sync(const struct distro *d, const char *statedir, const struct step *s, struct hash output,
			   int adopt, const char **note);

#endif
