/*
 * graph.h - the step graph of a distro: one node per thing that can run
 * (render, push, pre/post hooks, sync, register, wave), its edges and its
 * topological order (graph.c), selection (select.c).  The distro it is
 * built from is model.h; the map of the program is engine/README.md.
 */
#ifndef IDPMAKE_GRAPH_H
#define IDPMAKE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "distro/model.h"
#include "base/util.h"

struct tree;
struct share;
struct bundle;

enum step_kind { STEP_RENDER, STEP_PUSH, STEP_PRE, STEP_SYNC, STEP_POST, STEP_WAVE, STEP_REGISTER,
		 STEP_CREATE,	/* CLUSTER:kind, a cluster idpmake makes (create.h), before its steps */
		 STEP_TLS,	/* tls, the distro's certificate (create.h), before every hook */
		 STEP_PROVISION,	/* CLUSTER:provision, a cluster Cluster API makes (capi.h): its Cluster's status */
		 STEP_CAPICHECK,	/* MGMT:capi-check, what its management cluster has of Cluster API */
		 STEP_READY };	/* CLUSTER:ready, ready: available: the Cluster Available, after its cni */

/* why a step runs, or that it does not */
enum reason {
	R_UP_TO_DATE,		/* key equals the last success's key */
	R_NEVER,		/* no success recorded */
	R_KEY_CHANGED,		/* inputs changed (see changed[]) */
	R_FAILED_BEFORE,	/* last attempt failed */
	R_UPSTREAM,		/* an input step's output changed this run */
	R_ALWAYS,		/* hook with when: always */
	R_FORCED,		/* forget, --refresh drift */
};

enum step_state { S_IDLE, S_WAITING, S_READY, S_RUNNING, S_DONE, S_FAILED, S_NOT_RUN };

struct step {
	const char *id;			/* CLUSTER/PKG:KIND[:HOOK], or "push" */
	enum step_kind kind;
	struct cluster *cluster;	/* NULL for push */
	struct package *pkg;		/* NULL for push */
	struct hook *hook;		/* pre/post only; wave: its check, or NULL */
	struct wave *wave;		/* wave only: the wave whose gate this is */
					/* register: cluster set for CLUSTER:register, NULL for the repository */
	struct step *render;		/* the package's render step (itself for a render) */
	const char *gitpath;		/* render/sync: the package's folder in the repo */
	const char *namespace;		/* expanded namespace */

	struct step **in;		/* steps that run before this one */
	size_t nin;
	struct step **out;		/* steps that run after this one */
	size_t nout;

	int selected;			/* reached from the command-line targets */
	int index;			/* position in graph.steps (topological) */

	/* decided by plan.c */
	struct tree *tree;		/* render: the scanned source folder, or NULL */
	struct hash key;		/* this run's key (render: input key) */
	struct hash old_key;		/* key of the last success, or zero */
	struct hash output;		/* render: hash of the rendered objects */
	struct hash old_output;		/* render: output recorded with old_key */
	int dirty;			/* will run */
	int behind;			/* render of a cloned cluster held at its last render (fleet.md) */
	int capi_class;			/* render of a class package on its management cluster (capiclass.h) */
	const char *class_keep;		/* ... the classes its synced Clusters name, space-separated (classplan.c) */
	struct hash class_from;		/* ... the output that holds its earlier revisions (classplan.c), */
	int class_from_known;		/* ... when known (zero: an empty folder) */
	const struct bundle *rendered;	/* render: its bundle, rendered in memory by a command that writes no
					 * cache (render, diff: review/rendered.c), for the renders that read it */
	int targeted;			/* a target (or a -l label) names its package itself, not only what
					 * needs it: what render and diff show (select.c) */
	int unproven;			/* render: its folder's recorded output never read (plan.c): 1;
					 * read and equal 0, read and not 2 */
	struct step *same;		/* render: first dirty render of equal key (share.c), or NULL */
	struct share *share;		/* render: the group's state, on its first step */
	const char *drift;		/* --refresh: how Argo CD differs (the step runs), or NULL */
	enum reason reason;
	const char *why;		/* human reason, e.g. "values.yaml changed" */
	struct strlist changed;		/* inputs whose hash changed */
	struct hash hook_sync;		/* hook: the key of its package's sync its key holds (hookkey.h) */

	/* run by build.c */
	enum step_state state;
	int pending;			/* in-steps not finished yet */
	int ms;				/* how long it took */
	const char *error;		/* what failed, for the summary and the log */
	const char *log;		/* log file of this run, or NULL */
	const char *command;		/* the command it ran (render rule, hook), for -v
					   and its failure; NULL when it ran none */
	const char *shared_from;	/* render: the step whose equal render it took, or NULL */
	const char *folder_commit;	/* sync: the commit that holds its folder's content (state), or NULL */
	const char *recorded;		/* register of a created cluster: its kubeconfig Secret's resourceVersion,
					 * kept in the state beside the key (--refresh tells a rotation), or NULL */
};

struct graph {
	struct distro *d;
	struct step **steps;		/* topologically sorted: in-steps first */
	size_t nsteps;
	struct step *push;		/* the one push step */
	struct step *tls;		/* the tls step, or NULL */
};

/* graph.c */
struct graph *graph_build(struct distro *d);		/* NULL on a cycle (printed) */
struct step *graph_find(struct graph *g, const char *id);
/* does sync step s prune: its package's sync.prune, or a class package's (render/capiclass.c: its revisions go) */
int step_prunes(const struct step *s);
/* appnames.c: graph_build, once its sync steps exist: a located error for each Application name two of them share */
void appnames_check(const struct graph *g);
/* select.c: the targets and -l labels; -1 after naming one that matches nothing (with "did you mean") */
int graph_select(struct graph *g, char **targets, size_t ntargets, struct strlist *labels);
/*
 * The cluster a step works for: its own, but for a created cluster's
 * Cluster package on the management cluster (capi.h), which is that created
 * cluster's (its wave, max-parallel and max-failed)
 */
struct cluster *step_cluster(const struct step *s);
/* does the step talk to Argo CD (skipped without one)?  A deploy: kubectl sync does not */
int step_talks_to_argocd(const struct step *s);

#endif
