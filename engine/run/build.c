/*
 * build.c - the scheduler.
 *
 * The main thread owns the graph, the state and the terminal; workers only
 * run jobs (render, push, hook, sync) and hand them back.
 *
 *      WAITING --(all in-steps done)--> READY --decide--> DONE (up to date)
 *                                         |
 *                                         +--dirty--> RUNNING --> DONE
 *                                                        |
 *                                                        +-----> FAILED
 *      an in-step FAILED or NOT_RUN --> NOT_RUN (with the cause)
 *
 * Invariants:
 *   1. A step's key and outputs are recorded (state_step_ok) only after its
 *      job returned success, one transaction per step.
 *   2. A step is decided (plan_decide) only once all its in-steps are DONE,
 *      so its key sees their real outputs: early cutoff.
 *   3. After -k failures, or an interrupt, no new job starts; running jobs
 *      finish (interrupted ones are recorded as failures, never successes).
 *      An interrupt (intr.h) also reaches the running children, and the
 *      in-process renders stop at their next check.
 *   4. A success that the state fails to record is a failure: its
 *      dependents do not run on a result the next run would not know.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "render/bundle.h"
#include "render/capiclass.h"
#include "run/classplan.h"
#include "base/exec.h"
#include "git/gitops.h"
#include "run/hook.h"
#include "run/rollout.h"
#include "render/share.h"
#include "run/build.h"
#include "run/kindcluster.h"
#include "run/provision.h"
#include "run/capimgmt.h"
#include "run/capiguard.h"
#include "argo/argocd.h"
#include "argo/capiowner.h"
#include "run/tlscert.h"
#include "base/intr.h"
#include "argo/kubectl.h"
#include "run/plan.h"
#include "base/secret.h"
#include "base/util.h"

struct sync_ops build_sync;

struct job {
	struct step *s;
	struct job *next;
	/* push */
	struct gitops_change *changes;
	struct pushed *np;
	size_t nchanges;
	struct gitops_result gr;
	const char *commit;		/* hooks: the commit holding the package */
	/* results */
	int rc;
	struct hash output;
	const char *err;
	const char *note;		/* provision: the Cluster's uid; a hook: its kube context */
	const char *refused;		/* fails at once with this, running nothing */
	int synced;			/* a created cluster's Cluster: this state synced it before (capiowner.h) */
	int waits;			/* counted among the waits, not the -j jobs */
	double started;
};

#define WAITERS_MAX 64	/* threads for provisions beside -j's */

/* a step that only waits on a cluster Cluster API makes (its status through Argo CD): it takes no -j slot */
static int waits_only(const struct step *s)
{
	return s->kind == STEP_PROVISION || s->kind == STEP_READY;
}

/*
 * Put the next step to start on top of the ready stack; 0 when none may
 * start.  A waiting step while a waiter thread is free, wherever it is in
 * the stack; else, with a -j slot free, the registration of a cluster
 * Cluster API made (it opens every sync of its cluster: behind the other
 * clusters' syncs it would wait out their health), else the top.  The
 * others keep their order.
 */
static int bring_next(struct step **ready, size_t nready, int slot_free, int waiter_free)
{
	size_t at = nready;

	for (size_t i = nready; waiter_free && at == nready && i-- > 0;)
		if (waits_only(ready[i]))
			at = i;
	for (size_t i = nready; slot_free && at == nready && i-- > 0;)
		if (ready[i]->kind == STEP_REGISTER && ready[i]->cluster && ready[i]->cluster->create.capi)
			at = i;
	if (at == nready) {
		if (!slot_free)
			return 0;
		at = nready - 1;
	}
	if (at != nready - 1) {
		struct step *s = ready[at];
		memmove(ready + at, ready + at + 1, (nready - 1 - at) * sizeof(*ready));
		ready[nready - 1] = s;
	}
	return 1;
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct job *todo, *finished;
	int quit;
	struct planner *pl;
	const char *commit;		/* the run's pushed commit, for hooks and syncs */
	struct gitops_opts git;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, NULL, NULL, { 0 } };

const char *step_log_path(const char *statedir, const struct step *s)
{
	char *name = aprintf("%s.log", s->id);
	for (char *p = name; *p; p++)
		if (*p == '/' || *p == ':')
			*p = '_';
	return aprintf("%s/logs/%s", statedir, name);
}

/* unpack a bundle into a folder, for hooks (IDPMAKE_RENDERED) */
static const char *unpack(const char *statedir, const struct step *s, struct hash output)
{
	const char *dir = aprintf("%s/rendered/%s/%s", statedir, s->cluster->name, s->pkg->name);
	char real[4096];
	struct bundle b;

	if (hash_zero(output) || bundle_read(bundle_path(statedir, output), &b) < 0)
		return NULL;
	rmtree(dir);
	for (size_t i = 0; i < b.n; i++) {
		const char *p = aprintf("%s/%s", dir, b.v[i].name);
		if (mkdirs(path_dir(p)) < 0 || write_file_copy(p, b.v[i].data, b.v[i].len) < 0) {
			bundle_free(&b);
			return NULL;
		}
	}
	if (!b.n)
		mkdirs(dir);
	bundle_free(&b);
	/* hooks run in their distro's folder: give them an absolute path */
	return realpath(dir, real) ? astrdup(real) : dir;
}

static void run_job(struct job *j)
{
	struct step *s = j->s;
	struct planner *pl = q.pl;

	switch (s->kind) {
	case STEP_RENDER:
		j->rc = render_once(&pl->rc, s, &j->output, &j->err);
		break;
	case STEP_PUSH: {
		struct buf msg = BUF_INIT;
		buf_addf(&msg, "idpmake: update %zu package folder%s\n\n", j->nchanges, j->nchanges == 1 ? "" : "s");
		for (size_t i = 0; i < j->nchanges; i++)
			buf_addf(&msg, "%s %s\n", j->changes[i].bundle ? "update" : "remove", j->changes[i].path);
		buf_addf(&msg, "\nIdpmake-Run: %s\n", s->why ? s->why : "?");
		j->rc = gitops_push(&q.git, j->changes, j->nchanges, msg.s, &j->gr);
		if (j->rc < 0)
			j->err = "push failed (see above)";
		buf_release(&msg);
		break;
	}
	case STEP_PRE:
	case STEP_POST: {
		struct step *r = render_of(s);
		const char *dir = unpack(pl->statedir, s, r ? r->output : (struct hash){ 0, 0 });
		j->rc = hook_run(pl->g->d, s, pl->statedir, j->commit ? j->commit : q.commit, dir, &j->note, &j->err);
		break;
	}
	case STEP_WAVE:
		j->rc = wave_run(pl, s, q.commit, &build_sync, &j->err);
		break;
	case STEP_REGISTER:
		if (!build_sync.reg) {
			j->rc = -1;
			j->err = "this idpmake cannot register in Argo CD";
		} else {
			j->rc = build_sync.reg(build_sync.ctx, s, &j->err);
		}
		break;
	case STEP_CREATE:
		j->rc = kindcluster_run(pl, s, &j->output, &j->err);
		break;
	case STEP_PROVISION:
	case STEP_READY:
		j->rc = provision_run(pl, s, &build_sync, &j->output, &j->note, &j->err);
		break;
	case STEP_CAPICHECK:
		j->rc = capimgmt_run(pl, s, &j->note, &j->err);
		break;
	case STEP_TLS:
		j->rc = tlscert_run(pl, s, &j->output, &j->err);
		break;
	case STEP_SYNC:
		if (j->refused) {
			j->rc = -1;
			j->err = j->refused;
		} else if (s->pkg->deploy_kubectl) {
			/* deploy: kubectl (kubectl.c) */
			struct step *r = render_of(s);
			j->rc = kubectl_apply(s, unpack(pl->statedir, s, r ? r->output : (struct hash){ 0, 0 }), &j->err);
		} else if (!build_sync.sync) {
			j->rc = -1;
			j->err = "this idpmake cannot talk to Argo CD";
		} else if (s->pkg->capi_of && provision_owner(pl->g->d, s, j->synced, &j->note, &j->err) < 0) {
			j->rc = -1;	/* another's Cluster: never applied over (capiowner.h) */
		} else if (!s->pkg->capi_of && (j->err = capiguard_sync(pl->g->d, pl->statedir, s, render_of(s) ?
				render_of(s)->output : (struct hash){ 0, 0 }, capiowner_adopt(), &j->note))) {
			j->rc = -1;	/* nor through any other package (capiguard.h) */
		} else {
			j->rc = build_sync.sync(build_sync.ctx, s, q.commit, &j->err);
		}
		break;
	}
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&q.lock);
	for (;;) {
		struct job *j;
		while (!q.todo && !q.quit)
			pthread_cond_wait(&q.work, &q.lock);
		if (!q.todo && q.quit)
			break;
		j = q.todo;
		q.todo = j->next;
		pthread_mutex_unlock(&q.lock);
		run_job(j);
		secret_stack_wipe();	/* what the job's calls left on this stack: a push's password (secret.h) */
		pthread_mutex_lock(&q.lock);
		j->next = q.finished;
		q.finished = j;
		pthread_cond_signal(&q.done);
	}
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

/*
 * The commit that last changed the folder of a sync or hook step's package
 * (the state's record of the push: this run's, or an earlier one), or NULL.
 * A sync that did not run in this run (up to date) is judged by its wave's
 * gate against this commit, never the run's: a pinned Application stays at
 * the commit that last changed its folder (argocd.c's pushed_commit).
 */
static const char *folder_commit(struct planner *pl, const struct step *s)
{
	struct pushed p;

	if (s->kind != STEP_PRE && s->kind != STEP_POST && s->kind != STEP_SYNC)
		return NULL;
	return state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) ? p.commit : NULL;
}

/*
 * The steps after a failed or not-run s do not run.  A wave's gate is the
 * exception for its own clusters' steps: it stops waiting for them, and
 * judges the failures by its max-failed when it runs (rollout.c).
 */
static void not_run(struct step *s, const char *cause, struct summary *sum, struct step **ready, size_t *nready)
{
	for (size_t i = 0; i < s->nout; i++) {
		struct step *o = s->out[i];
		if (!o->selected || o->state == S_NOT_RUN || o->state == S_FAILED || o->state == S_DONE)
			continue;
		if (o->kind == STEP_WAVE && s->cluster && step_cluster(s)->wave == o->wave) {
			if (--o->pending == 0 && o->state == S_WAITING) {
				o->state = S_READY;
				ready[(*nready)++] = o;
			}
			continue;
		}
		o->state = S_NOT_RUN;
		o->error = cause;
		sum->not_run++;
		status_not_run(o, cause);
		rollout_finished(o, 1);
		not_run(o, cause, sum, ready, nready);
	}
}

/*
 * Clusters named only by `name` (fleet.md "Clusters"): when the run's
 * first Argo CD sync is about to start, every such cluster with a sync to
 * do is looked up, and the syncs of one Argo CD does not know fail here,
 * naming it, before anything is synced (its wave's gate judges them; the
 * other clusters go on).  A lookup that cannot tell leaves the cluster to
 * its own syncs, which ask again.
 */
static void names_preflight(struct planner *pl, struct summary *sum, struct step **ready, size_t *nready,
			    size_t *left, int *failures)
{
	struct graph *g = pl->g;

	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i], *r = render_of(s);
		const struct cluster *cl = s->cluster;
		const char *err = NULL;

		if (s->kind != STEP_SYNC || !s->selected || s->pkg->deploy_kubectl || !cl || !cl->argo_name ||
		    cl->server || cl->create.capi || (s->state != S_WAITING && s->state != S_READY))
			continue;
		if (!r || r->state == S_DONE || !r->dirty) {
			plan_decide(pl, s);	/* its render is known: is there a sync to do? */
			if (!s->dirty)
				continue;
		}
		s->log = step_log_path(pl->statedir, s);
		unlink(s->log);
		if (build_sync.lookup(build_sync.ctx, cl, s->log, &err) != 1)
			continue;
		s->state = S_FAILED;
		s->error = err;
		s->ms = 0;
		state_step_failed(pl->st, s->id, s->error, s->ms);
		rollout_finished(s, 1);
		if (!rollout_judged(s))
			(*failures)++;
		sum->failed++;
		(*left)--;
		status_failed(s, s->log);
		not_run(s, aprintf("%s failed", s->id), sum, ready, nready);
	}
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->state == S_NOT_RUN && g->steps[i]->pending >= 0) {
			g->steps[i]->pending = -1;
			(*left)--;
		}
}

/*
 * state.c invariant 3: the folders this push writes are marked unknown
 * before it, in one transaction, and get their record back with the push
 * (state_push_done).  A run that dies once the remote took the push, or
 * whose record then fails, leaves them unknown, so the next run pushes
 * them (the remote holding them already makes no commit), never taken as
 * holding an older render: its package changed back to that render would
 * never be pushed again (t5300's kill loop found it; t5302).  Removals
 * keep their record, so that the removal is tried again; a row keeps its
 * commit, which a folder that was already unknown keeps through the push
 * when the push left it as it was there (np[i].commit; record()).
 */
static void forget_pushing(struct planner *pl, struct pushed *np, size_t n)
{
	struct pushed p;

	for (size_t i = 0; i < n; i++)
		if (!hash_zero(np[i].output) && state_pushed(pl->st, np[i].path, &p) && hash_zero(p.output) && p.commit)
			np[i].commit = astrdup(p.commit);	/* unknown since an earlier push: its commit, to keep */
	if (state_pushed_unknown(pl->st, np, n) < 0)
		warn("the state cannot mark the folders this push writes as unknown: a run that dies after this push "
		     "may not push them again");
}

/*
 * A finished job's success into the state (invariant 1), and its count in
 * the summary: 0, or -1 when the state could not record it (invariant 4).
 */
static int record(struct planner *pl, struct step *s, struct job *j, struct summary *sum, const char **note)
{
	switch (s->kind) {
	case STEP_RENDER: {
		struct inputs in;
		s->output = j->output;
		plan_inputs(pl, s, &in);
		if (state_step_ok(pl->st, s->id, s->key, s->output, &in, NULL, s->ms) < 0)
			return -1;
		if (s->capi_class && !state_step(pl->st, aprintf("%s/%s%s", s->cluster->name, s->pkg->name,
								 CAPI_CLASS_PACKAGE_ROW)).have &&
		    state_step_ok(pl->st, aprintf("%s/%s%s", s->cluster->name, s->pkg->name, CAPI_CLASS_PACKAGE_ROW),
				  (struct hash){ 0, 0 }, (struct hash){ 0, 0 }, NULL, "yes", 0) < 0)
			return -1;
		if (s->shared_from)
			*note = aprintf("the same render as %s", s->shared_from);
		else
			sum->rendered++;
		if (hash_eq(s->output, s->old_output))
			*note = s->shared_from ? aprintf("%s, output unchanged", *note) : "output unchanged";
		return 0;
	}
	case STEP_PUSH:
		q.commit = astrdup(j->gr.commit);
		/* a folder unknown since an earlier push keeps that push's commit when this one left it as it was */
		for (size_t i = 0; i < j->nchanges; i++)
			if (j->np[i].commit && gitops_descends(&q.git, j->gr.commit, j->np[i].commit, j->changes[i].path) != 1)
				j->np[i].commit = NULL;
		/* two transactions: pushed folders, then the step (state.c, invariant 3) */
		if (state_push_done(pl->st, j->np, j->nchanges, j->gr.commit) < 0 ||
		    state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, NULL, j->gr.commit, s->ms) < 0)
			return -1;
		if (j->gr.made_commit) {
			sum->commit = q.commit;
			sum->commits = 1;
			*note = aprintf("%.7s (%zu folder%s)%s", j->gr.commit, j->nchanges, j->nchanges == 1 ? "" : "s",
					j->gr.retries ? " (rebuilt on the moved remote)" : "");
		} else {
			*note = aprintf("the remote already holds this content (%.7s)", j->gr.commit);
		}
		return 0;
	case STEP_SYNC:
		if (state_step_ok(pl->st, s->id, s->key, render_of(s) ? render_of(s)->output : s->key, NULL, q.commit,
				  s->ms) < 0)
			return -1;
		if (classplan_cluster_sync(pl, s, 1) < 0)	/* the class revision it names now (classplan.c) */
			return -1;
		{
			/* the summary names it: its Application, or where kubectl applied it */
			const char *app = s->pkg->deploy_kubectl ? NULL : argocd_app_name(pl->g->d, s);
			summary_synced(sum, app ? app : aprintf("%s/%s", s->cluster->name, s->pkg->name));
		}
		if (s->pkg->deploy_kubectl && j->err)
			*note = j->err;	/* what up --adopt took over (kubectl.h) */
		if (j->note)
			*note = j->note;	/* the Cluster up --adopt took over (capiowner.h, capiguard.h) */
		return 0;
	case STEP_WAVE:
		if (state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, NULL, q.commit, s->ms) < 0)
			return -1;
		*note = "gate passed";
		return 0;
	case STEP_REGISTER:
		return state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, NULL, s->recorded, s->ms) < 0 ? -1 : 0;
	case STEP_CREATE:
		/* the output is the cluster's incarnation; the kind cluster's name where a push keeps its commit,
		 * for up --prune --delete-clusters once the distro no longer has it (orphans.c) */
		s->output = j->output;
		if (state_step_ok(pl->st, s->id, s->key, s->output, NULL, s->cluster->create.kind, s->ms) < 0)
			return -1;
		*note = s->why && !strncmp(s->why, "taken on", 8) ? s->why : NULL;
		return 0;
	case STEP_PROVISION:
		/* the output is the cluster's incarnation (its Cluster's uid, kept where a push keeps its commit) */
		{
			/* what it was before, for the words (provision_said): read before the record changes */
			struct record before = state_step(pl->st, s->id);
			const char *was = astrdup(before.commit);
			s->output = j->output;
			if (state_step_ok(pl->st, s->id, s->key, s->output, NULL, j->note, s->ms) < 0)
				return -1;
			*note = j->note ? provision_said(s, j->note, was) : NULL;
		}
		return 0;
	case STEP_READY:
		if (state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, NULL, NULL, s->ms) < 0)
			return -1;
		*note = "Available";
		return 0;
	case STEP_CAPICHECK:
		if (state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, NULL, NULL, s->ms) < 0)
			return -1;
		*note = j->note;
		return 0;
	case STEP_TLS:
		s->output = j->output;
		if (state_step_ok(pl->st, s->id, s->key, s->output, NULL, NULL, s->ms) < 0)
			return -1;
		*note = s->why && !strncmp(s->why, "a certificate", 13) ? s->why : "kept";
		return 0;
	default: {
		/* a hook: its named inputs too, for explain (hookkey.h) */
		struct inputs in;
		plan_inputs(pl, s, &in);
		if (state_step_ok(pl->st, s->id, s->key, (struct hash){ 0, 0 }, &in, q.commit, s->ms) < 0)
			return -1;
		sum->hooks++;
		*note = j->note;	/* the kube context the hook got (hook.h) */
		return 0;
	}
	}
}

int build_run(struct planner *pl, const struct build_opts *o, struct summary *sum)
{
	struct graph *g = pl->g;
	struct step **ready = xcalloc(g->nsteps + 1, sizeof(*ready));
	struct step **held = xcalloc(g->nsteps + 1, sizeof(*held));	/* waiting for a slot of max-parallel */
	size_t nready = 0, nheld = 0, left = 0;
	pthread_t *threads;
	int nthreads = o->jobs > 0 ? o->jobs : 1, running = 0, failures = 0, total = 0, started = 0;
	int waits = 0, nwaiters = 0;	/* provisions waiting on a Cluster: threads of their own, not -j's */
	int looked = 0;	/* names_preflight ran */
	int gated = !o->gate, refused = 0;	/* o->gate was called; it said no */
	const struct distro *d = g->d;

	memset(sum, 0, sizeof(*sum));
	q.pl = pl;
	q.commit = NULL;
	q.git = (struct gitops_opts){ pl->statedir, d->git.remote ? d->git.remote : aprintf("%s/gitops.git", pl->statedir),
				      !d->git.remote, d->git.branch, d->git.author_name, d->git.author_email,
				      d->git.ca_file, status_verbose(), d->git.pin_cert };
	{
		/* the current commit, for hooks when nothing is pushed */
		struct pushed p;
		for (size_t i = 0; i < g->nsteps; i++)
			if (g->steps[i]->kind == STEP_RENDER && state_pushed(pl->st, pushed_key(pl, g->steps[i]->gitpath), &p)) {
				q.commit = p.commit;
				break;
			}
	}
	mkdirs(aprintf("%s/logs", pl->statedir));
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		s->state = S_WAITING;
		s->pending = 0;
		for (size_t k = 0; k < s->nin; k++)
			if (s->in[k]->selected)
				s->pending++;
		if (!s->pending)
			ready[nready++] = s;
		left++;
		if (s->kind == STEP_RENDER ? s->dirty : !(step_talks_to_argocd(s) && !pl->argocd_server))
			total++;
	}
	status_total(total);
	rollout_begin(g);
	intr_install();
	if (nthreads > JOBS_MAX)
		nthreads = JOBS_MAX;
	for (size_t i = 0; i < g->nsteps && nwaiters < WAITERS_MAX; i++)
		nwaiters += g->steps[i]->selected && waits_only(g->steps[i]);
	threads = xcalloc((size_t)(nthreads + nwaiters), sizeof(*threads));
	q.quit = 0;
	for (int i = 0; i < nthreads + nwaiters; i++) {
		int e = pthread_create(&threads[i], NULL, worker, NULL);
		if (e) {
			if (!started) {
				free(threads);
				free(ready);
				free(held);
				return error("cannot start a worker thread: %s", strerror(e)), 2;
			}
			warn("cannot start more than %d worker threads: %s", started, strerror(e));
			break;
		}
		started++;
	}
	if (started < nthreads + nwaiters)
		nwaiters = started > nthreads ? started - nthreads : 0;
	nthreads = started - nwaiters;

	while (left) {
		int stopping = build_interrupted || refused || (o->keep_going > 0 && failures >= o->keep_going);
		/* start what is ready */
		/* as many at once as there are workers: a failure stops what has not started (-k) */
		while (nready && !stopping && bring_next(ready, nready, running < nthreads, waits < nwaiters)) {
			struct step *s = ready[--nready];
			struct job *j;
			if (s->state == S_FAILED || s->state == S_NOT_RUN)
				continue;	/* failed by names_preflight while it waited */
			if (s->kind != STEP_RENDER) {
				/* its in-steps are done (the push too): the commit that last changed its folder */
				s->folder_commit = folder_commit(pl, s);
				plan_decide(pl, s);
			}
			if (s->dirty && !rollout_may_start(s) && (running || waits)) {
				/* its wave has max-parallel clusters busy: after one of them finishes */
				held[nheld++] = s;
				continue;
			}
			if (!s->dirty) {
				s->state = S_DONE;
				rollout_finished(s, 0);
				if (step_talks_to_argocd(s) && !pl->argocd_server) {
					sum->skipped++;
					status_skipped(s, s->why);
				} else {
					sum->up_to_date++;
					if (s->kind != STEP_RENDER)
						status_up_to_date(s);	/* counted in the total below: no longer */
				}
				left--;
				for (size_t k = 0; k < s->nout; k++)
					if (s->out[k]->selected && --s->out[k]->pending == 0 && s->out[k]->state == S_WAITING)
						ready[nready++] = s->out[k];
				continue;
			}
			if (!gated && (s->kind == STEP_PUSH || step_talks_to_argocd(s))) {
				gated = 1;
				if ((refused = o->gate(o->gate_arg) != 0)) {
					ready[nready++] = s;	/* not started: not run, below */
					break;
				}
			}
			if (s->kind == STEP_SYNC && !s->pkg->deploy_kubectl && !looked && build_sync.lookup) {
				looked = 1;
				names_preflight(pl, sum, ready, &nready, &left, &failures);
				if (o->keep_going > 0 && failures >= o->keep_going) {
					if (s->state != S_FAILED)
						ready[nready++] = s;	/* -k: stopped before it started */
					break;
				}
				if (s->state == S_FAILED)
					continue;
			}
			if (s->kind == STEP_SYNC && s->pkg->capi_of &&
			    !state_step(pl->st, aprintf("%s:provision", s->pkg->capi_of->name)).have)
				/* before its Cluster reaches Argo CD, the state knows it as a created cluster: a run
				 * killed now leaves what --prune must never take for a plain Application (capiprune.c) */
				state_step_failed(pl->st, aprintf("%s:provision", s->pkg->capi_of->name),
						  "its Cluster was being synced", 0);
			j = xcalloc(1, sizeof(*j));
			if (s->kind == STEP_SYNC && s->pkg->capi_of) {
				/* read here, not in the worker: the state is the main thread's */
				struct record r = state_step(pl->st, s->id);
				j->synced = r.have && !hash_zero(r.key);
			}
			if (s->kind == STEP_SYNC && classplan_cluster_sync(pl, s, 0) < 0)
				/* what it may leave live is kept by its class package only once recorded (classplan.c) */
				j->refused = "the state cannot record the class revision this Cluster will name: not synced";
			j->s = s;
			s->state = S_RUNNING;
			rollout_started(s);
			s->log = step_log_path(pl->statedir, s);
			unlink(s->log);
			/* hooks: the commit that holds this package (this run's push, or an earlier one) */
			j->commit = s->folder_commit;
			if (s->kind == STEP_PUSH) {
				plan_push_changes(pl, &j->changes, &j->nchanges, &j->np);
				forget_pushing(pl, j->np, j->nchanges);
				/* the trailer: the run's number in this state, and when it started */
				time_t t = (time_t)(pl->run_start / 1000000000LL);
				struct tm tm;
				char when[32] = "";
				if (gmtime_r(&t, &tm))
					strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
				s->why = aprintf("%lld %s", o->run, when);
			}
			j->started = now_s();
			/* a provision waits on a thread of its own while there is one; anything else on -j's */
			j->waits = waits_only(s) && waits < nwaiters;
			if (j->waits)
				waits++;
			else
				running++;
			status_start(s);
			pthread_mutex_lock(&q.lock);
			j->next = q.todo;
			q.todo = j;
			pthread_cond_signal(&q.work);
			pthread_mutex_unlock(&q.lock);
		}
		if (!running && !waits && nheld && !stopping) {
			/* only held steps are left (needs across clusters): let one of them start */
			while (nheld)
				ready[nready++] = held[--nheld];
			continue;
		}
		if (!running && !waits) {
			/* nothing runs and nothing can start: stopped, mark the rest */
			for (size_t i = 0; i < g->nsteps; i++) {
				struct step *s = g->steps[i];
				if (s->selected && (s->state == S_WAITING || s->state == S_READY)) {
					s->state = S_NOT_RUN;
					s->error = build_interrupted ? "interrupted" : refused ? "refused before the push (see above)"
								     : "stopped after failures (-k)";
					sum->not_run++;
					status_not_run(s, s->error);
				}
			}
			break;
		}
		/* wait for one job: first the line of the last one done, its total corrected (status.c) */
		status_flush();
		pthread_mutex_lock(&q.lock);
		while (!q.finished) {
			/* every second: the status line names what runs and what it waits for */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			if (pthread_cond_timedwait(&q.done, &q.lock, &ts) == ETIMEDOUT && !q.finished) {
				pthread_mutex_unlock(&q.lock);
				status_tick();
				pthread_mutex_lock(&q.lock);
			}
		}
		struct job *j = q.finished;
		q.finished = j->next;
		pthread_mutex_unlock(&q.lock);
		if (j->waits)
			waits--;
		else
			running--;
		left--;
		{
			struct step *s = j->s;
			const char *note = NULL;
			s->ms = (int)((now_s() - j->started) * 1000);
			if (j->rc == 0 && build_interrupted && s->kind != STEP_PUSH) {
				j->rc = -1;
				j->err = "interrupted";
			} else if (j->rc != 0 && build_interrupted) {
				j->err = aprintf("interrupted (%s)", j->err ? j->err : "failed");
			}
			if (j->rc == 0 && record(pl, s, j, sum, &note) < 0) {
				j->rc = -1;
				j->err = "the state could not record its success (see above)";
				if (s->kind == STEP_PUSH && j->gr.made_commit) {
					/* the remote holds it whatever the state says: the summary tells so */
					sum->commit = q.commit;
					sum->commits = 1;
					j->err = aprintf("the remote took commit %.7s, but the state could not record it"
							 " (see above); the next up finds it there and makes no new commit",
							 j->gr.commit);
				}
			}
			if (j->rc == 0) {
				s->state = S_DONE;
				status_done(s, note);
				for (size_t k = 0; k < s->nout; k++)
					if (s->out[k]->selected && --s->out[k]->pending == 0 && s->out[k]->state == S_WAITING)
						ready[nready++] = s->out[k];
				if (rollout_finished(s, 0))
					while (nheld)
						ready[nready++] = held[--nheld];
			} else {
				s->state = S_FAILED;
				s->error = j->err ? j->err : "failed";
				state_step_failed(pl->st, s->id, s->error, s->ms);
				/* a cluster's failure in a rollout is its wave gate's to judge (max-failed), not -k's */
				rollout_finished(s, 1);
				if (!rollout_judged(s))
					failures++;
				sum->failed++;
				status_failed(s, s->log);
				not_run(s, aprintf("%s failed", s->id), sum, ready, &nready);
				while (nheld)
					ready[nready++] = held[--nheld];
				for (size_t i = 0; i < g->nsteps; i++)
					if (g->steps[i]->state == S_NOT_RUN && g->steps[i]->pending >= 0) {
						g->steps[i]->pending = -1;
						left--;
					}
			}
			free(j);	/* changes and np are in the arena */
		}
	}
	status_end_run();
	pthread_mutex_lock(&q.lock);
	q.quit = 1;
	pthread_cond_broadcast(&q.work);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < nthreads + nwaiters; i++)	/* the waiters' threads too */
		pthread_join(threads[i], NULL);
	free(threads);
	free(ready);
	free(held);
	rollout_end();
	if (build_interrupted)
		return 1;
	return sum->failed || sum->not_run ? 1 : 0;
}
