/*
 * t-build.c - the scheduler (build.c) over real distros in a scratch folder,
 * with a fake sync in the build_sync seam: needs order (a chain, a diamond,
 * needs across clusters, a post hook on the way), a second run that syncs
 * nothing, an edit that syncs exactly the package edited, a failed sync (its
 * dependents not run, an independent branch run with -k 0 and not started
 * with -k 1, the next run retrying exactly what failed or was not reached),
 * -j 1 against -j 4, and a success the state refuses to record (a trigger
 * in state.db): the step fails and its dependents do not run; and the
 * gate (build_opts.gate, up's checks put off until the renders ran): called
 * once, after the renders and before the push, its refusal stopping the run
 * there, and never called by a run with nothing to push or sync.
 *
 * Each `up` runs in a forked child, as cmd_up does (ctx_load, plan_renders,
 * build_run; the push goes to the default bare repository in the state),
 * because the engine keeps process-wide state (the arena, loc_errors,
 * build_sync, plan.c's memo).  The child writes what happened to a result
 * file: the fake's "start ID" / "end ID" lines in the order they happened,
 * then build_run's result, the summary, every step's final state and the
 * cause of each failed or not-run step; the parent checks it.  A child's stdout and stderr go to NAME/log.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "run/build.h"
#include "cmd/cmd.h"
#include "run/plan.h"
#include "base/util.h"
#include "test.h"

static char *tmp;		/* scratch folder, removed at the end when all passed */
static const char *norecord;	/* the state refuses to record this step's success */
static int gate_says = -1;	/* build_opts.gate answers this (-1: no gate) */


/*
 * hub: base -> left, right -> top (a diamond), lone -> lone2 (independent);
 * edge: web needs hub/top.  base has a post hook, which runs before left
 * and right.
 */
static const char distro_yaml[] =
	"idpmake: 1\n"
	"name: bt\n"
	"argocd: {server: 'https://argocd.t-build.invalid', repo-url: 'file:///t-build/gitops.git'}\n"
	"clusters:\n"
	"  hub: {server: 'https://kubernetes.default.svc', profiles: [core]}\n"
	"  edge: {server: 'https://edge.t-build.invalid:6443', profiles: [apps]}\n"
	"profiles:\n"
	"  core: [base, left, right, top, lone, lone2]\n"
	"  apps: [web]\n"
	"packages:\n"
	"  base: {type: manifests, path: p/base, hooks: {post: [{name: mark, run: 'touch base.done'}]}}\n"
	"  left: {type: manifests, path: p/left, needs: [base]}\n"
	"  right: {type: manifests, path: p/right, needs: [base]}\n"
	"  top: {type: manifests, path: p/top, needs: [left, right]}\n"
	"  lone: {type: manifests, path: p/lone}\n"
	"  lone2: {type: manifests, path: p/lone2, needs: [lone]}\n"
	"  web: {type: manifests, path: p/web, needs: ['hub/top']}\n";

static const char *const pkgs[] = { "base", "left", "right", "top", "lone", "lone2", "web" };

#define ALL_SYNCS "edge/web:sync hub/base:sync hub/left:sync hub/lone2:sync hub/lone:sync hub/right:sync hub/top:sync"

/* {A, B}: A's sync ends before B's starts (the rest follows transitively) */
static const char *const needs[][2] = {
	{ "hub/base:sync", "hub/left:sync" }, { "hub/base:sync", "hub/right:sync" },
	{ "hub/left:sync", "hub/top:sync" },  { "hub/right:sync", "hub/top:sync" },
	{ "hub/top:sync", "edge/web:sync" },  { "hub/lone:sync", "hub/lone2:sync" },
};

static void put(const char *path, const char *content)
{
	if (mkdirs(path_dir(path)) < 0 || write_file_atomic(path, content, strlen(content)) < 0) {
		perror(path);
		exit(2);
	}
}

/* a distro in tmp/NAME: distro.yaml and one ConfigMap per package */
static void mkdistro(const char *name)
{
	put(path_join(tmp, aprintf("%s/distro.yaml", name)), distro_yaml);
	for (size_t i = 0; i < sizeof(pkgs) / sizeof(*pkgs); i++)
		put(path_join(tmp, aprintf("%s/p/%s/cm.yaml", name, pkgs[i])),
		    aprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {v: '1'}\n", pkgs[i]));
}

/* ---- the fake sync, called from the scheduler's worker threads ---- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t failed_cond;
	FILE *out;		/* the result file */
	const char *fail;	/* this step id fails */
	const char *hold;	/* this step id waits until the scheduler has recorded `fail`'s failure */
	int sleep_ms;		/* every sync takes this long */
	int failed;		/* `fail` has returned */
	int bad;		/* in-steps not done at a start, missing marker, no commit */
	const char *marker;	/* the file base's post hook touches */
	struct graph *g;	/* the child's graph, where `hold` looks `fail` up */
} fk = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, 0, 0, 0, NULL, NULL };

/* build_opts.gate: says when it is called, and what was done by then (the renders, the push) */
static int gate(void *arg)
{
	const struct graph *g = arg;
	int renders = 0, pushed = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		renders += g->steps[i]->kind == STEP_RENDER && g->steps[i]->state == S_DONE;
		pushed += g->steps[i]->kind == STEP_PUSH && g->steps[i]->state != S_WAITING;
	}
	fprintf(fk.out, "gate %d %d\n", renders, pushed);
	return gate_says;
}

/* selected steps before s (transitively) that are not done */
static int unfinished(const struct step *s)
{
	int n = 0;
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i]->selected)
			n += (s->in[i]->state != S_DONE) + unfinished(s->in[i]);
	return n;
}

static int fake_sync(void *ctx, struct step *s, const char *commit, const char **err)
{
	int n = unfinished(s), r = 0;

	(void)ctx;
	if (n)
		fprintf(stderr, "t-build: %s started with %d unfinished steps before it\n", s->id, n);
	if (!commit || strlen(commit) != 40)
		n++;
	if (strcmp(s->pkg->name, "base") && strncmp(s->pkg->name, "lone", 4) && access(fk.marker, F_OK))
		n++;	/* base's post hook has not run */
	pthread_mutex_lock(&fk.lock);
	fk.bad += n;
	fprintf(fk.out, "start %s\n", s->id);
	pthread_mutex_unlock(&fk.lock);

	if (fk.hold && !strcmp(s->id, fk.hold)) {
		/*
		 * Not a time window: wait (at most 10 s) until the scheduler has
		 * taken in `fail`'s failure (its state is S_FAILED, set by the main
		 * loop, which counts the failure before it takes in this step's end),
		 * so what becomes ready after this step is decided knowing it.
		 */
		const struct step *f = fk.fail ? graph_find(fk.g, fk.fail) : NULL;
		for (int i = 0; f && i < 10000 && __atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != S_FAILED; i++)
			usleep(1000);
		if (f && __atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != S_FAILED) {
			fprintf(stderr, "t-build: %s held 10 s and %s never failed\n", s->id, fk.fail);
			pthread_mutex_lock(&fk.lock);
			fk.bad++;
			pthread_mutex_unlock(&fk.lock);
		}
	}
	if (fk.sleep_ms)
		usleep((useconds_t)fk.sleep_ms * 1000);

	pthread_mutex_lock(&fk.lock);
	fprintf(fk.out, "end %s\n", s->id);
	if (fk.fail && !strcmp(s->id, fk.fail)) {
		*err = "fake failure";
		r = -1;
		fk.failed = 1;
		pthread_cond_broadcast(&fk.failed_cond);
	}
	pthread_mutex_unlock(&fk.lock);
	return r;
}

/* ---- one `up` in a child process ---- */

/* the child: cmd_up with the fake in place of argocd_open; its exit status */
static int child(const char *dir, const char *result, int jobs, int keep_going)
{
	struct ctx c = { 0 };
	struct build_opts o;
	struct summary sum;
	long long run;
	int r;

	c.file = path_join(dir, "distro.yaml");
	c.statedir = path_join(dir, "state");
	c.jobs = jobs;
	c.keep_going = keep_going;
	c.color = COLOR_NEVER;
	c.command = "up";
	status_init(0, COLOR_NEVER, 0);
	if (!(fk.out = fopen(result, "w")))
		return 3;
	setvbuf(fk.out, NULL, _IOLBF, 0);
	fk.marker = path_join(dir, "base.done");
	if (ctx_load(&c, 0))
		return 4;
	fk.g = c.g;
	if (!c.pl.argocd_server)
		return 5;
	build_sync = (struct sync_ops){ .sync = fake_sync, .ctx = &fk };
	if (state_lock(c.st, 0) < 0)
		return 6;
	if (norecord) {
		/* a second connection puts a trigger in: state_step_ok(norecord) fails */
		sqlite3 *db;
		const char *sql = aprintf("CREATE TRIGGER norecord BEFORE INSERT ON step WHEN NEW.id = '%s' AND NEW.ok = 1 "
					  "BEGIN SELECT RAISE(ABORT, 't-build refuses to record this step'); END;",
					  norecord);
		if (sqlite3_open(path_join(c.statedir, "state.db"), &db) != SQLITE_OK ||
		    sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return 8;
		sqlite3_close(db);
	}
	run = state_run_begin(c.st, "up");
	o = (struct build_opts){ c.jobs, c.keep_going, "up", run, gate_says >= 0 ? gate : NULL, c.g };
	if (plan_renders(&c.pl) < 0)
		return 7;
	r = build_run(&c.pl, &o, &sum);
	status_summary(&sum);
	if (norecord) {
		sqlite3 *db;
		if (sqlite3_open(path_join(c.statedir, "state.db"), &db) != SQLITE_OK ||
		    sqlite3_exec(db, "DROP TRIGGER norecord", NULL, NULL, NULL) != SQLITE_OK)
			return 9;
		sqlite3_close(db);
	}
	state_run_end(c.st, run, r, "t-build", sum.commit);
	fprintf(fk.out, "rc %d\nsum %d %d %d %d %d %d\ncommit %d\nbad %d\n", r, sum.rendered, sum.synced,
		sum.hooks, sum.failed, sum.not_run, sum.up_to_date, sum.commit != NULL, fk.bad);
	for (size_t i = 0; i < c.g->nsteps; i++) {
		struct step *s = c.g->steps[i];
		fprintf(fk.out, "state %s %d\n", s->id, (int)s->state);
		if (s->state == S_FAILED || s->state == S_NOT_RUN)
			fprintf(fk.out, "error %s %s\n", s->id, s->error ? s->error : "(none)");
	}
	fclose(fk.out);
	/* what main.c releases after a command */
	for (size_t i = 0; i < c.g->nsteps; i++)
		if (c.g->steps[i]->tree) {
			tree_free(c.g->steps[i]->tree);
			free(c.g->steps[i]->tree);
		}
	state_close(c.st);
	afree_all();
	return 0;
}

struct run {
	int status;		/* the child's exit status: 0 */
	int rc;			/* build_run's */
	int rendered, synced, hooks, failed, not_run, up_to_date, commit, bad;
	const char *text;	/* the result file, after a "\n" */
};

/* run `up` on tmp/NAME */
static struct run up(const char *name, int jobs, int keep_going, const char *fail, const char *hold, int sleep_ms)
{
	const char *dir = path_join(tmp, name), *result = path_join(dir, "result");
	struct run r = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, "" };
	size_t len;
	char *text;
	const char *p;
	int st;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		if (!freopen(path_join(dir, "log"), "a", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(2);
		fk.fail = fail;
		fk.hold = hold;
		fk.sleep_ms = sleep_ms;
		exit(child(dir, result, jobs, keep_going));
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (r.status)
		fprintf(stderr, "  the child for %s exited %d; see %s/log\n", name, r.status, dir);
	if (!(text = read_file(result, &len)))
		return r;
	r.text = aprintf("\n%s", text);
	free(text);
	if ((p = strstr(r.text, "\nrc ")))
		sscanf(p, "\nrc %d\nsum %d %d %d %d %d %d\ncommit %d\nbad %d", &r.rc, &r.rendered, &r.synced,
		       &r.hooks, &r.failed, &r.not_run, &r.up_to_date, &r.commit, &r.bad);
	return r;
}

/* where the line "WHAT ID" is in the result, or -1 */
static long at(const struct run *r, const char *what, const char *id)
{
	const char *p = strstr(r->text, aprintf("\n%s %s\n", what, id));
	return p ? p - r->text : -1;
}

static int state_of(const struct run *r, const char *id)
{
	const char *p = strstr(r->text, aprintf("\nstate %s ", id));
	return p ? atoi(p + strlen(id) + 8) : -1;
}

static int idcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the ids the fake was called for, sorted, space-separated */
static const char *started(const struct run *r)
{
	const char *v[64];
	size_t n = 0;
	struct buf b = BUF_INIT;
	const char *s;

	for (const char *p = r->text; (p = strstr(p, "\nstart ")) && n < 64; p++)
		v[n++] = astrndup(p + 7, strcspn(p + 7, "\n"));
	qsort(v, n, sizeof(*v), idcmp);
	for (size_t i = 0; i < n; i++)
		buf_addf(&b, "%s%s", i ? " " : "", v[i]);
	s = astrdup(b.s);
	buf_release(&b);
	return s;
}

/* every sync started at most once, ended, and after what it needs ended (when that ran too) */
static void check_order(const struct run *r)
{
	int bad = 0;

	for (const char *p = r->text; (p = strstr(p, "\nstart ")); p++) {
		const char *id = astrndup(p + 7, strcspn(p + 7, "\n"));
		if (strstr(p + 1, aprintf("\nstart %s\n", id)) || at(r, "end", id) < 0)
			bad++;
	}
	for (size_t i = 0; i < sizeof(needs) / sizeof(*needs); i++) {
		long first = at(r, "start", needs[i][0]), end = at(r, "end", needs[i][0]);
		long then = at(r, "start", needs[i][1]);
		if (then >= 0 && first >= 0 && !(end >= 0 && end < then)) {
			fprintf(stderr, "  %s started before %s ended\n", needs[i][1], needs[i][0]);
			bad++;
		}
	}
	CHECK(bad == 0);
	CHECK(r->bad == 0);
}

/* the final states of the syncs of base left right top lone lone2 web: D done, F failed, N not run */
static const char *sync_states(const struct run *r)
{
	char *v = astrdup("???????");

	for (size_t i = 0; i < 7; i++) {
		int st = state_of(r, aprintf("%s/%s:sync", i == 6 ? "edge" : "hub", pkgs[i]));
		v[i] = st == S_DONE ? 'D' : st == S_FAILED ? 'F' : st == S_NOT_RUN ? 'N' : '?';
	}
	return v;
}

/* ---- the scenarios ---- */

/* a first run in needs order, a no-op run, an edit to one package */
static void test_order_noop_edit(void)
{
	struct run r;

	mkdistro("a");
	r = up("a", 4, 1, NULL, NULL, 20);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), ALL_SYNCS);
	check_order(&r);
	CHECK(r.rendered == 7 && r.synced == 7 && r.hooks == 1 && r.failed == 0 && r.not_run == 0);
	CHECK(r.commit == 1);
	CHECK(state_of(&r, "hub/base:post:mark") == S_DONE && state_of(&r, "push") == S_DONE);
	CHECK_STR(sync_states(&r), "DDDDDDD");

	/* a fresh process on the same state: keys unchanged, no sync */
	r = up("a", 4, 1, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), "");
	CHECK(r.rendered == 0 && r.synced == 0 && r.hooks == 0 && r.commit == 0 && r.bad == 0);

	/* left edited: its render, the push and its sync; not top's nor web's */
	put(path_join(tmp, "a/p/left/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: left}\ndata: {v: '2'}\n");
	r = up("a", 4, 1, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), "hub/left:sync");
	CHECK(r.rendered == 1 && r.synced == 1 && r.hooks == 0 && r.commit == 1 && r.bad == 0);
}

/* -j 1 and -j 4 on two copies: the same syncs, states and counts */
static void test_jobs(void)
{
	struct run one, four;

	mkdistro("j1");
	mkdistro("j4");
	one = up("j1", 1, 1, NULL, NULL, 5);
	four = up("j4", 4, 1, NULL, NULL, 5);
	CHECK(one.status == 0 && one.rc == 0 && four.status == 0 && four.rc == 0);
	check_order(&one);
	check_order(&four);
	CHECK_STR(started(&one), started(&four));
	CHECK_STR(sync_states(&one), sync_states(&four));
	CHECK(one.rendered == four.rendered && one.synced == four.synced && one.hooks == four.hooks &&
	      one.up_to_date == four.up_to_date && one.commit == four.commit);
}

/*
 * -k 0: left fails; top and web are not run; right, lone and lone2 run
 * (lone holds until left has failed, so lone2 starts after the failure).
 * The same at -j 1 (without the hold, which would take the only worker).
 * Then a run without the failure retries exactly left, top and web.
 */
static void test_fail_keep_going_0(void)
{
	struct run r, one;

	mkdistro("k0");
	mkdistro("k0j1");
	r = up("k0", 4, 0, "hub/left:sync", "hub/lone:sync", 5);
	CHECK(r.status == 0 && r.rc == 1);
	check_order(&r);
	CHECK_STR(started(&r), "hub/base:sync hub/left:sync hub/lone2:sync hub/lone:sync hub/right:sync");
	CHECK(at(&r, "end", "hub/left:sync") >= 0 && at(&r, "end", "hub/left:sync") < at(&r, "start", "hub/lone2:sync"));
	CHECK_STR(sync_states(&r), "DFDNDDN");
	CHECK(at(&r, "error", "hub/left:sync fake failure") >= 0);
	CHECK(at(&r, "error", "hub/top:sync hub/left:sync failed") >= 0);
	CHECK(at(&r, "error", "edge/web:sync hub/left:sync failed") >= 0);
	CHECK(r.failed == 1 && r.not_run == 2 && r.synced == 4 && r.hooks == 1);

	one = up("k0j1", 1, 0, "hub/left:sync", NULL, 0);
	CHECK(one.status == 0 && one.rc == 1);
	check_order(&one);
	CHECK_STR(started(&one), started(&r));
	CHECK_STR(sync_states(&one), sync_states(&r));
	CHECK(one.failed == r.failed && one.not_run == r.not_run && one.synced == r.synced && one.hooks == r.hooks);

	r = up("k0", 4, 0, NULL, NULL, 5);
	CHECK(r.status == 0 && r.rc == 0);
	check_order(&r);
	CHECK_STR(started(&r), "edge/web:sync hub/left:sync hub/top:sync");
	CHECK(r.rendered == 0 && r.synced == 3 && r.hooks == 0 && r.failed == 0 && r.not_run == 0);
	CHECK_STR(sync_states(&r), "DDDDDDD");
}

/*
 * -k 1: after left fails no new step starts: right (started with left)
 * and lone (running) finish, lone2 (ready only after the failure) is not
 * run.  The next run retries left, top, web and lone2.
 */
static void test_fail_keep_going_1(void)
{
	struct run r;

	mkdistro("k1");
	r = up("k1", 4, 1, "hub/left:sync", "hub/lone:sync", 5);
	CHECK(r.status == 0 && r.rc == 1);
	check_order(&r);
	CHECK_STR(started(&r), "hub/base:sync hub/left:sync hub/lone:sync hub/right:sync");
	CHECK_STR(sync_states(&r), "DFDNDNN");
	CHECK(at(&r, "error", "hub/top:sync hub/left:sync failed") >= 0);
	CHECK(at(&r, "error", "hub/lone2:sync stopped after failures (-k)") >= 0);
	CHECK(r.failed == 1 && r.not_run == 3 && r.synced == 3);

	r = up("k1", 4, 1, NULL, NULL, 5);
	CHECK(r.status == 0 && r.rc == 0);
	check_order(&r);
	CHECK_STR(started(&r), "edge/web:sync hub/left:sync hub/lone2:sync hub/top:sync");
	CHECK(r.rendered == 0 && r.synced == 4 && r.failed == 0 && r.not_run == 0);
}

/*
 * The state fails to record base's sync: it fails, its dependents are not
 * run, the independent branch is (-k 0); the next run redoes base's sync
 * and what it held back.  Then the same for the push: no sync runs on a
 * push the state does not know.
 */
static void test_record_fails(void)
{
	struct run r;

	mkdistro("rec");
	norecord = "hub/base:sync";
	r = up("rec", 4, 0, NULL, NULL, 0);
	norecord = NULL;
	CHECK(r.status == 0 && r.rc == 1);
	check_order(&r);
	CHECK_STR(sync_states(&r), "FNNNDDN");
	CHECK(at(&r, "error", "hub/base:sync the state could not record its success (see above)") >= 0);
	CHECK(r.failed == 1 && r.synced == 2);
	r = up("rec", 4, 0, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), "edge/web:sync hub/base:sync hub/left:sync hub/right:sync hub/top:sync");

	mkdistro("recp");
	norecord = "push";
	r = up("recp", 4, 0, NULL, NULL, 0);
	norecord = NULL;
	CHECK(r.status == 0 && r.rc == 1);
	CHECK_STR(started(&r), "");
	CHECK(state_of(&r, "push") == S_FAILED);
	CHECK_STR(sync_states(&r), "NNNNNNN");
	r = up("recp", 4, 0, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), ALL_SYNCS);
}

/*
 * build_opts.gate: called once, when the renders are done and before the
 * push starts; refusing stops the run there (nothing pushed or synced, the
 * rest not run); a run with nothing to push or sync never calls it.
 */
static void test_gate(void)
{
	struct run r;

	mkdistro("gate");
	gate_says = 1;
	r = up("gate", 4, 0, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 1);
	CHECK(at(&r, "gate", "7 0") >= 0);	/* every render done, the push not started */
	CHECK(strstr(r.text, "\ngate ") == strstr(r.text, "\ngate 7 0\n") && !strstr(strstr(r.text, "\ngate ") + 1, "\ngate "));
	CHECK_STR(started(&r), "");
	CHECK(state_of(&r, "push") == S_NOT_RUN && r.commit == 0);
	CHECK_STR(sync_states(&r), "NNNNNNN");
	CHECK(at(&r, "error", "push refused before the push (see above)") >= 0);
	gate_says = 0;
	r = up("gate", 4, 0, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0);
	CHECK_STR(started(&r), ALL_SYNCS);
	r = up("gate", 4, 0, NULL, NULL, 0);
	CHECK(r.status == 0 && r.rc == 0 && r.commit == 0);
	CHECK(!strstr(r.text, "\ngate "));	/* nothing to push or sync: never asked */
	gate_says = -1;
}

static void setup(void)
{
	const char *dir = getenv("TMPDIR");
	char *tmpl = aprintf("%s/t-build.XXXXXX", dir && *dir ? dir : "/tmp");

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(2);
	}
	tmp = xstrdup(tmpl);
	/* the distro names the server; nothing from the environment */
	unsetenv("ARGOCD_SERVER");
	unsetenv("ARGOCD_OPTS");
	unsetenv("IDPMAKE_STATE");
}

static void test_end(void)
{
	if (t_failed)
		fprintf(stderr, "  kept %s\n", tmp);
	else
		rmtree(tmp);
	free(tmp);
	afree_all();
}

TEST_MAIN_SHUFFLE(setup, test_end,
	  test_order_noop_edit, test_jobs, test_fail_keep_going_0, test_fail_keep_going_1, test_record_fails, test_gate)
