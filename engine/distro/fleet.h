/* fleet.h - clusters as a fleet: labels, modes, registration, waves (fleet.md) */
#ifndef IDPMAKE_FLEET_H
#define IDPMAKE_FLEET_H

#include "distro/model.h"
#include "base/yaml.h"

/* a cluster of `clusters:` (located errors) */
void conv_cluster(struct cluster *c, const struct ynode *key, const struct ynode *n);
/* `rollout:`; then every cluster gets its wave, unmatched ones the wave `rest` */
void conv_rollout(struct distro *d, const struct ynode *n);
/* the clusters no wave of `rollout.waves` selects (in the `rest` wave), for plan's warning */
size_t fleet_unmatched(const struct distro *d);

/* do the labels KEY=VALUE (or KEY) all hold on the package or its cluster? */
int unit_labels_match(const struct cluster *c, const struct package *p, const struct strlist *labels);
/* does a cluster name match a target's cluster part, a name or a glob ('eu-*')? */
int cluster_name_match(const char *pattern, const char *name);

/* does p render alike on clusters a and b (same variables used, namespace; a renderer that names no cluster)? */
int fleet_renders_alike(const struct distro *d, const struct cluster *a, const struct cluster *b, const struct package *p);
/* [cluster * npackages + package]: the folder a linked cluster shares with its group (_shared/PACKAGE[-XXXXXXXX]), or NULL */
const char **fleet_linked_folders(const struct distro *d);

#endif
