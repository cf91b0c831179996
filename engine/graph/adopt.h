/*
 * adopt.h - what up --adopt took over, by kind.
 *
 * --adopt is one flag for every owner check: Argo CD's objects
 * (run/owner.c), deploy: kubectl objects (argo/kubectl.c), kind clusters
 * (run/kindcluster.c), clusters Cluster API makes.  Each place says what
 * it takes over as it does (its own line, or its step's note) and notes it
 * here; at the end of the run up sums them up by kind, one line
 *
 *   idpmake: adopted (--adopt): 2 Applications (a, b), 1 cluster registration (x),
 *            3 kubectl objects (ConfigMap ns/a, ...), 1 kind cluster (dev)
 *
 * or, with --json, one event per object before the summary event:
 *   {"event":"adopted", "kind":"Application", "name":"a", "from":"distro 'qs'", "step":"in-cluster/a:sync"}
 */
#ifndef IDPMAKE_ADOPT_H
#define IDPMAKE_ADOPT_H

#include <stddef.h>

/*
 * Note one object taken over, from any thread.  kind: its word, singular,
 * as the summary names it ("Application", "ApplicationSet", "cluster
 * registration", "repository registration", "kubectl object", "kind
 * cluster", "Cluster API Cluster"; a new word is summed up after these);
 * name: the object ("ConfigMap ns/a" for a kubectl object); from: whose it
 * was (the owner check's words), or NULL; step: the step that took it, or
 * NULL.  Copied; the same kind and name twice is noted once.
 */
void adopt_note(const char *kind, const char *name, const char *from, const char *step);

/* how many were noted */
size_t adopt_count(void);

/*
 * The main thread, at the end of the run: print what was noted (nothing
 * when none): with json one "adopted" event per object on stdout, else
 * the one line, by kind in the order above, names sorted, at most a few
 * named per kind ("and N more").
 */
void adopt_summary(int json);

#endif
