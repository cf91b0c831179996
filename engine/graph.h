/*
 * graph.h - the map of idpmake.
 *
 * A distro (distro.yaml; manifest.c over yaml.c; extends.c loads what it
 * extends, and the built-in distros of embed.h; removal.c checks a child's
 * `packages: {name: null}` against its parent; refs.c checks needs and
 * profiles; conv.c turns YAML nodes into typed fields
 * with located errors; vars.c expands ${name}; fleet.c reads clusters,
 * their labels, modes and registration, and rollout.waves) is read into a
 * `struct distro`: its clusters, packages, hooks and rules (rule.c).
 * graph.c turns it into a `struct graph` of steps, one node per thing that
 * can run:
 *
 *     CLUSTER/PKG:render -> push -> CLUSTER/PKG:pre:NAME ... -> CLUSTER/PKG:sync
 *                                   -> CLUSTER/PKG:post:NAME ...
 *
 * CLUSTER:register (a cluster with `register`) and repository:register
 * (the GitOps repository's credentials) come before every sync they serve.
 * With rollout.waves, a step wave:NAME per wave gates the next: every
 * package of the wave's clusters -> wave:NAME -> the first step of every
 * package of the next wave's clusters.
 *
 * plan.c computes every step's key (hash.c: XXH3 over file contents through
 * the stat cache; source.c: git sources; register.c: register steps;
 * rollout.c: wave gates; scan.c: the source folders, each package's once
 * however many clusters render it) and compares it with the key recorded
 * for the step's last success (state.c, SQLite).  planner.c, below plan.c
 * and the modules it calls: struct planner and the helpers they share
 * (render_of, plan_compare, pushed_key), so that none calls back into
 * plan.c.  build.c runs the dirty steps in dependency order on -j workers:
 *
 *     render   render.c: renderers from rule.c, run by exec.c (helm.c: the
 *              helm renderer; renderers.h what they share); objects.c:
 *              each object checked, emitted and set aside as it comes, then
 *              named and streamed into a bundle (bundle.h) in the state's
 *              cache, so memory follows the largest object, not the output;
 *              share.c: renders of equal keys (one package on many
 *              clusters) run once, the others take that output
 *     push     gitops.c: one commit of the changed folders; gitpack.c: its
 *              new objects, from the bundles an entry at a time, packed
 *              every 16 MiB and when the push needs them; gitremote.c: the
 *              clone, credentials, fetch and push (libgit2); gitdrift.c:
 *              changes made outside idpmake (plan, diff, --overwrite),
 *              reading a folder, whether a revision comes after a commit;
 *              orphans.c: folders, Applications and registered clusters gone from
 *              the distro (the push removes, --prune deletes, plan lists)
 *              remotekeys.c: the keys index .idpmake/keys in every commit,
 *              and an empty state rebuilt from it and Argo CD (no render,
 *              push or sync of what the remote proves done)
 *              lazycache.c: a render the clone holds, written to the
 *              cache only when read (the empty state writes no bundle)
 *              remotesync.c: an unrecorded sync proven done in Argo CD, per
 *              kind (Application, Argo-rendered helm, argocd-app file,
 *              ApplicationSet, fleet applicationset element); lsremote.c:
 *              what another repository's targetRevision names now
 *     sync     argocd.c: create or update the Application, sync, wait;
 *              argospec.c: the Application idpmake sends for a package;
 *              argoapi.c: settings, HTTP requests, error shapes (libcurl);
 *              argoappset.c: a package's Applications as one ApplicationSet
 *              (argocd.fleet: applicationset), a list element per cluster;
 *              kubectl.c: a `deploy: kubectl` package is applied with
 *              `kubectl apply --server-side`, before the push (bootstrap)
 *     register argoreg.c: clusters and the repository upserted in Argo CD,
 *              name-only clusters looked up, --prune's unregistering
 *     pre/post hook.c: /bin/sh -c with the package's environment
 *     wave     rollout.c: bake, the Applications checked again, the check;
 *              the run's max-parallel and max-failed bookkeeping
 *
 * url.c splits, masks and escapes every URL with libcurl's curl_url.
 * exec.c starts every child (allowlisted environment, descriptors 0-2 only);
 * intr.c turns SIGINT and SIGTERM into a flag the long loops check.
 * status.c prints progress.  main.c holds the command table, ctx.c loads
 * what a command needs (context.c lays the user's named Argo CD servers and
 * GitOps remotes, ~/.config/idpmake, over the distro's settings), cmd-*.c
 * hold the commands: cmd-distros.c the distros `extends` can name,
 * cmd-complete.c the shell completion scripts from main.c's tables.
 * Offline distros (pack.h): pack.c writes the distro, its extends chain,
 * its git sources and Helm charts into one tar (libarchive); unpack.c reads
 * one back, as hostile input, for `-f ARCHIVE up` / `--bundle`: source.c,
 * extends.c and helm.c then take their copies from it.
 * Review: livediff.c (diff --live: the render against Argo CD's
 * managed-resources, by Argo CD's rules, Secrets masked; -o/--from; diff
 * CLUSTER_A/ CLUSTER_B/) over objdiff.c (a field-level diff of two objects
 * as YAML lines); revdiff.c (diff --rev: two revisions of the distro's git
 * repository); savedplan.c (plan -o, up --plan); apicheck.c (validate
 * --live: every rendered kind against the cluster's API in Argo CD's
 * cluster info, or a CRD rendered before it in needs order).
 *
 * Everything that lives as long as the run is allocated from one arena
 * (util.h) and never freed individually.
 *
 * tests/fuzz/ holds libFuzzer targets over the parsers hostile input
 * reaches (the distro loader, Argo CD's answers through argocd_answer, the
 * bundle reader, rewrites through render_rewrite); yaml.c's limits keep a
 * document's cost within bounds.
 */
#ifndef IDPMAKE_GRAPH_H
#define IDPMAKE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "model.h"
#include "util.h"

struct tree;
struct share;

enum step_kind { STEP_RENDER, STEP_PUSH, STEP_PRE, STEP_SYNC, STEP_POST, STEP_WAVE, STEP_REGISTER };

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
	int unproven;			/* render: its folder's recorded output never read (plan.c): 1;
					 * read and equal 0, read and not 2 */
	struct step *same;		/* render: first dirty render of equal key (share.c), or NULL */
	struct share *share;		/* render: the group's state, on its first step */
	const char *drift;		/* --refresh: how Argo CD differs (the step runs), or NULL */
	enum reason reason;
	const char *why;		/* human reason, e.g. "values.yaml changed" */
	struct strlist changed;		/* inputs whose hash changed */

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
};

struct graph {
	struct distro *d;
	struct step **steps;		/* topologically sorted: in-steps first */
	size_t nsteps;
	struct step *push;		/* the one push step */
};

/* graph.c */
struct graph *graph_build(struct distro *d);		/* NULL on a cycle (printed) */
struct step *graph_find(struct graph *g, const char *id);
/* appnames.c: graph_build, once its sync steps exist: a located error for each Application name two of them share */
void appnames_check(const struct graph *g);
/* select.c: the targets and -l labels; -1 after naming one that matches nothing (with "did you mean") */
int graph_select(struct graph *g, char **targets, size_t ntargets, struct strlist *labels);
/* does the step talk to Argo CD (skipped without one)?  A deploy: kubectl sync does not */
int step_talks_to_argocd(const struct step *s);

#endif
