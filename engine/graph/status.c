/*
 * status.c - progress output.
 *
 * On a terminal, one line rewritten in place, as ninja: "[3/12] render
 * in-cluster/backstage"; the line of a step that did something (a push, a
 * sync, a cluster made, a hook that printed) stays, the others are written
 * over.  Elsewhere one line per finished step.  With --json one object per
 * line (cli.md).  Failures print the step's log.  Output is only ever written
 * from the scheduler's (main) thread.
 *
 * The counter is "[finished/total]" and ends at [N/N], as ninja's: a step
 * counted at the start that turns out up to date when its turn comes (early
 * cutoff, as ninja's restat) leaves the total (status_up_to_date).
 *
 * The running steps: status_start adds a step, status_done and
 * status_failed remove it.  A worker may publish what its step waits for
 * (status_progress, "Progressing"), under `plock`; the main thread, woken
 * every second by the scheduler (status_tick), redraws the line on a
 * terminal, "[3/12] waiting for prod-eu/backstage: Progressing (42 s), sync
 * prod-eu/keycloak", or, elsewhere, prints a plain "waiting for ..." line
 * every STATUS_PLAIN_EVERY seconds of a wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/intr.h"
#include "graph/status.h"
#include "base/util.h"

static int json, tty, color, verbose, total, finished, dirty_line;
static int ndone, intr_stopped, intr_not_run;	/* for the one line an interrupt ends with */
static pthread_mutex_t olock = PTHREAD_MUTEX_INITIALIZER;	/* the terminal's status line */

#define STATUS_PLAIN_EVERY 10	/* seconds between the plain "waiting for" lines of one wait */

/* the running steps, oldest first; `note` and `since` are written by workers too */
static struct running {
	const struct step *s;
	double started;		/* now_s() at status_start */
	char note[160];		/* what it waits for, "" when nothing was published */
	double since;		/* when it began to wait (its first note) */
	double printed;		/* plain output: the last "waiting for" line */
	size_t shown;		/* -v: how much of its log was printed as it came */
} *run;
static size_t nrun;
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;

static void print_done(void);
static FILE *tee;	/* IDPMAKE_EVENTS */

void status_init(int j, enum color_mode c, int v)
{
	const char *ev = getenv("IDPMAKE_EVENTS");
	int fd;

	if (ev && *ev && !tee) {
		if ((fd = open(ev, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
			warn("IDPMAKE_EVENTS: cannot open '%s': %s; no events are written to it", ev, strerror(errno));
		else if (!(tee = fdopen(fd, "a")))
			close(fd);
	}
	json = j;
	verbose = v;
	tty = !j && isatty(1);
	color = c == COLOR_ALWAYS || (c == COLOR_AUTO && tty && !getenv("NO_COLOR"));
	if (tty)
		diag_hook = status_end_line;	/* a warning or an error starts a line of its own */
}

int status_verbose(void)
{
	return verbose;
}

int status_stopped(void)
{
	return intr_stopped;
}

const char *step_kind_name(enum step_kind k)
{
	static const char *const names[] = { "render", "push", "pre", "sync", "post", "wave", "register", "kind", "tls", "provision", "capi-check", "ready" };
	return names[k];
}

void status_total(int t)
{
	total = t;
	finished = 0;
}

void status_up_to_date(const struct step *s)
{
	(void)s;
	if (total > finished)
		total--;	/* as ninja after a restat: PlanHasTotalEdges(command_edge_count()) */
}

/*
 * --json's events on stdout, and (IDPMAKE_EVENTS=FILE) the same lines
 * appended to FILE whatever the output: a CI job's record of what ran,
 * beside the lines a person reads
 */
/* one event, a line on stdout (--json) and in IDPMAKE_EVENTS's file; o is released */
static void emit(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);

	if (json && text) {
		puts(text);
		fflush(stdout);
	}
	if (tee && text) {
		fprintf(tee, "%s\n", text);
		fflush(tee);
	}
	free(text);
	json_decref(o);
}

static void event(const char *ev, const struct step *s, const char *reason, int ms)
{
	json_t *o;

	if (!json && !tee)
		return;
	o = json_object();

	json_object_set_new(o, "event", json_string(ev));
	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "kind", json_string(step_kind_name(s->kind)));
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (ms >= 0)
		json_object_set_new(o, "ms", json_integer(ms));
	if (!strcmp(ev, "failed") && s->command)
		json_object_set_new(o, "command", json_string(s->command));
	emit(o);
}

void json_print(json_t *doc, int pretty)
{
	char *text = json_dumps(doc, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	if (text)
		puts(text);
	fflush(stdout);
	free(text);
	json_decref(doc);
}

void status_end_line(void)
{
	pthread_mutex_lock(&olock);
	if (dirty_line) {
		fputs("\r\x1b[K", stdout);
		fflush(stdout);
		dirty_line = 0;
	}
	pthread_mutex_unlock(&olock);
}

/*
 * A hook's log is what its command printed, and a render's that ran a
 * command (a rule file's, kustomize, helm) its stderr (its stdout is the
 * objects): shown as ninja shows a command's output.
 */
static int shows_output(const struct step *s)
{
	return (s->kind == STEP_PRE || s->kind == STEP_POST || (s->kind == STEP_RENDER && s->command)) && s->log;
}

/*
 * Print the step's log from byte `from` on (at most its last 8 KiB), to
 * stdout; `whole`: up to its end, else only whole lines.  What it printed.
 */
static size_t print_output(const struct step *s, size_t from, int whole)
{
	size_t len, n, start;
	char *text;

	if (!(text = read_file(s->log, &len)))
		return 0;
	n = len;
	if (!whole)
		while (n > from && text[n - 1] != '\n')
			n--;
	if (n > from) {
		start = n - from > 8192 ? n - 8192 : from;
		status_end_line();
		if (start > from)
			printf("... (%zu bytes of %s's output left out)\n", start - from, s->id);
		/* a hook's output may come from a distro it extends: no control sequences reach the terminal */
		for (size_t i = start; i < n; i++) {
			unsigned char ch = (unsigned char)text[i];
			putchar(ch < 0x20 && ch != '\n' && ch != '\t' ? '?' : ch == 0x7f ? '?' : ch);
		}
		if (text[n - 1] != '\n')
			putchar('\n');
		fflush(stdout);
	} else {
		n = from;
	}
	free(text);
	return n;
}

/* "KIND ID" of a step's line, added to b; the push's id is its kind: "push" */
static void add_what(struct buf *b, const struct step *s)
{
	if (s->kind == STEP_PUSH)
		buf_adds(b, "push");
	else
		buf_addf(b, "%s %s", step_kind_name(s->kind), s->id);
}

static const char *what(const struct step *s)
{
	struct buf b = BUF_INIT;
	const char *w;

	add_what(&b, s);
	w = astrdup(b.s);
	buf_release(&b);
	return w;
}

/*
 * On a terminal, does the step's line stay?  Yes when the step changed
 * something outside the state (a push, a sync, a cluster made or
 * registered, a certificate made): what a person looks for once the run
 * is over.  A render, a gate, a hook that printed nothing are written over.
 */
static int line_stays(const struct step *s, const char *note)
{
	switch (s->kind) {
	case STEP_PUSH:
	case STEP_SYNC:
	case STEP_REGISTER:
	case STEP_CREATE:
	case STEP_PROVISION:
		return 1;
	case STEP_TLS:
		return note && strcmp(note, "kept");
	case STEP_CAPICHECK:
		return note != NULL;
	default:
		return 0;
	}
}

/* CLUSTER/PACKAGE for a package's step, else its id */
static const char *unit_name(const struct step *s)
{
	return s->cluster && s->pkg ? aprintf("%s/%s", s->cluster->name, s->pkg->name) : s->id;
}

static void run_add(const struct step *s)
{
	pthread_mutex_lock(&plock);
	run = agrow(run, nrun, sizeof(*run));
	run[nrun++] = (struct running){ s, now_s(), "", 0, 0, 0 };
	pthread_mutex_unlock(&plock);
}

static void run_remove(const struct step *s)
{
	pthread_mutex_lock(&plock);
	for (size_t i = 0; i < nrun; i++)
		if (run[i].s == s) {
			memmove(&run[i], &run[i + 1], (nrun - i - 1) * sizeof(*run));
			nrun--;
			break;
		}
	pthread_mutex_unlock(&plock);
}

void status_progress(const struct step *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&plock);
	for (size_t i = 0; i < nrun; i++)
		if (run[i].s == s) {
			if (!run[i].note[0])
				run[i].since = now_s();
			va_start(ap, fmt);
			vsnprintf(run[i].note, sizeof(run[i].note), fmt, ap);
			va_end(ap);
			break;
		}
	pthread_mutex_unlock(&plock);
}

static int columns(void)
{
	struct winsize w;

	return ioctl(1, TIOCGWINSZ, &w) == 0 && w.ws_col > 20 ? w.ws_col : 80;
}

/*
 * The terminal's line: "[done/total] " and the running steps, those that
 * wait first, cut to the terminal's width.  Main thread; takes plock.
 */
static void redraw(void)
{
	struct buf line = BUF_INIT;
	double now = now_s();
	size_t shown = 0, width = (size_t)columns() - 1;

	buf_addf(&line, "[%d/%d] ", finished, total);
	pthread_mutex_lock(&plock);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nrun; i++) {
			const struct running *r = &run[i];
			int secs = (int)(now - (r->note[0] ? r->since : r->started));
			if ((pass == 0) != (r->note[0] != 0))
				continue;
			if (shown++)
				buf_adds(&line, ", ");
			if (r->note[0])
				buf_addf(&line, "waiting for %s: %s (%d s)", unit_name(r->s), r->note, secs);
			else
				add_what(&line, r->s);
			if (!r->note[0] && secs >= 2)
				buf_addf(&line, " (%d s)", secs);
		}
	pthread_mutex_unlock(&plock);
	if (line.len > width) {
		line.len = width > 3 ? width - 3 : 0;
		line.s[line.len] = 0;
		buf_adds(&line, "...");
	}
	pthread_mutex_lock(&olock);
	printf("\r%s\x1b[K", line.s);
	fflush(stdout);
	dirty_line = 1;
	pthread_mutex_unlock(&olock);
	buf_release(&line);
}

void status_tick(void)
{
	double now = now_s();
	print_done();

	if (json)
		return;
	/* -v: the hooks' output as it comes, whole lines (the main thread alone writes `shown`) */
	for (size_t i = 0; verbose && i < nrun; i++)
		if (shows_output(run[i].s))
			run[i].shown = print_output(run[i].s, run[i].shown, 0);
	if (tty) {
		if (nrun)
			redraw();
		return;
	}
	pthread_mutex_lock(&plock);
	for (size_t i = 0; i < nrun; i++) {
		struct running *r = &run[i];
		if (r->note[0] && now - r->since >= STATUS_PLAIN_EVERY && now - r->printed >= STATUS_PLAIN_EVERY) {
			printf("waiting for %s: %s (%d s)\n", unit_name(r->s), r->note, (int)(now - r->since));
			r->printed = now;
		}
	}
	pthread_mutex_unlock(&plock);
	fflush(stdout);
}

void status_start(const struct step *s)
{
	print_done();
	run_add(s);
	event("start", s, NULL, -1);
	if (json)
		return;
	if (tty)
		redraw();
}

/* what of the step's output -v printed already */
static size_t shown_of(const struct step *s)
{
	size_t n = 0;

	pthread_mutex_lock(&plock);
	for (size_t i = 0; i < nrun; i++)
		if (run[i].s == s)
			n = run[i].shown;
	pthread_mutex_unlock(&plock);
	return n;
}

/*
 * A finished step's line waits until the scheduler has looked at what it
 * unblocked: a step found up to date then leaves the total first, so that
 * the last line of a run reads [N/N] (status_up_to_date).  Printed by the
 * next output of this file, or status_flush.
 */
static struct {
	const struct step *s;
	const char *note;
	size_t shown;	/* what of its output -v printed already */
	int output;	/* it has output to print */
	int n;		/* its number: [n/total] */
} pending;

static void print_done(void)
{
	const struct step *s = pending.s;
	const char *note = pending.note;

	if (!s)
		return;
	pending.s = NULL;
	if (tty) {
		printf("\r[%d/%d] %s%s%s\x1b[K", pending.n, total, what(s), note ? ": " : "", note ? note : "");
		if (pending.output) {
			/* as ninja: the command's output under its line, which stays */
			putchar('\n');
			dirty_line = 0;
			print_output(s, pending.shown, 1);
		} else if (line_stays(s, note)) {
			putchar('\n');
			dirty_line = 0;
		} else {
			dirty_line = 1;
		}
		if (nrun)
			redraw();	/* what still runs */
		fflush(stdout);
		return;
	}
	printf("[%d/%d] %s%s%s (%d ms)\n", pending.n, total, what(s), note ? ": " : "", note ? note : "", s->ms);
	fflush(stdout);
	if (pending.output)
		print_output(s, pending.shown, 1);
}

void status_flush(void)
{
	print_done();
}

void status_end_run(void)
{
	print_done();
	pthread_mutex_lock(&olock);
	if (dirty_line) {
		/* as ninja: the last line, [N/N], is left on the screen */
		putchar('\n');
		fflush(stdout);
		dirty_line = 0;
	}
	pthread_mutex_unlock(&olock);
}

void status_done(const struct step *s, const char *note)
{
	size_t shown = shows_output(s) ? shown_of(s) : 0;
	struct stat st;
	int output = !json && shows_output(s) && stat(s->log, &st) == 0 && (size_t)st.st_size > shown;

	print_done();
	finished++;
	ndone++;
	run_remove(s);
	event("done", s, note, s->ms);
	if (json)
		return;
	pending.s = s;
	pending.note = note;
	pending.shown = shown;
	pending.output = output;
	pending.n = finished;
}

/* an interrupt's casualty: said once, in the summary's line, not step by step */
static int by_interrupt(const char *why)
{
	return intr_signal && why && !strncmp(why, "interrupted", 11);
}

static void print_log(const char *log)
{
	size_t len;
	char *text;

	if (!log || !(text = read_file(log, &len)) )
		return;
	if (len) {
		/* the tail is what explains a failure: at most the last 8 KiB */
		const char *start = len > 8192 ? text + len - 8192 : text;
		fprintf(stderr, "--- %s%s\n%s%s--- end of log\n", log, len > 8192 ? " (last 8 KiB)" : "", start,
			text[len - 1] == '\n' ? "" : "\n");
	}
	free(text);
}

void status_failed(const struct step *s, const char *log)
{
	print_done();
	finished++;
	run_remove(s);
	event("failed", s, s->error, s->ms);
	if (json)
		return;
	if (by_interrupt(s->error)) {
		intr_stopped++;
		if (tty && nrun)
			redraw();
		return;
	}
	status_end_line();
	fflush(stdout);
	fprintf(stderr, "%sFAILED%s: %s: %s\n", color ? "\x1b[31;1m" : "", color ? "\x1b[0m" : "", s->id,
		s->error ? s->error : "failed");
	if (s->command)
		fprintf(stderr, "command: %s\n", s->command);
	print_log(log);
	if (tty && nrun)
		redraw();	/* the line again, below the failure */
}

void status_skipped(const struct step *s, const char *why)
{
	print_done();
	event("skipped", s, why, -1);
	if (json)
		return;
	if (verbose) {
		status_end_line();
		printf("skipped %s: %s\n", s->id, why);
	}
}

void status_not_run(const struct step *s, const char *cause)
{
	print_done();
	event("not-run", s, cause, -1);
	if (json)
		return;
	if (intr_signal) {
		/* after Ctrl-C: counted in the summary's line */
		intr_not_run++;
		return;
	}
	status_end_line();
	fprintf(stderr, "not run: %s: %s\n", s->id, cause);
}

void status_info(const char *fmt, ...)
{
	va_list ap;

	print_done();
	if (json)
		return;
	status_end_line();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void summary_synced(struct summary *sum, const char *name)
{
	if (sum->synced < SUMMARY_NAMES)
		sum->names[sum->synced] = name;
	sum->synced++;
}

/* the line above the summary's: "synced: a, b, ... and 5 more" (stdout) */
static void print_synced(const struct summary *sum)
{
	int n = sum->synced < SUMMARY_NAMES ? sum->synced : SUMMARY_NAMES;

	if (!sum->synced)
		return;
	fputs("synced:", stdout);
	for (int i = 0; i < n; i++)
		printf("%s %s", i ? "," : "", sum->names[i] ? sum->names[i] : "?");
	if (sum->synced > n)
		printf(" and %d more", sum->synced - n);
	putchar('\n');
}

void status_summary(const struct summary *sum)
{
	print_done();
	if (json || tee) {
		json_t *o = json_object();
		json_object_set_new(o, "event", json_string("summary"));
		json_object_set_new(o, "rendered", json_integer(sum->rendered));
		json_object_set_new(o, "pushed", sum->commit ? json_string(sum->commit) : json_null());
		json_object_set_new(o, "synced", json_integer(sum->synced));
		json_object_set_new(o, "hooks", json_integer(sum->hooks));
		json_object_set_new(o, "failed", json_integer(sum->failed));
		json_object_set_new(o, "not_run", json_integer(sum->not_run));
		json_object_set_new(o, "up_to_date", json_integer(sum->up_to_date));
		emit(o);
		if (json)
			return;
	}
	status_end_line();
	print_synced(sum);
	fflush(stdout);
	if (intr_signal) {
		/* Ctrl-C: one line, what finished and how to go on */
		fprintf(stderr, "idpmake: interrupted: %d step%s finished and recorded (%d rendered, %s, %d synced, %d hook%s)",
			ndone, ndone == 1 ? "" : "s", sum->rendered,
			sum->commit ? aprintf("commit %.7s pushed", sum->commit) : "nothing pushed", sum->synced,
			sum->hooks, sum->hooks == 1 ? "" : "s");
		if (intr_stopped)
			fprintf(stderr, ", %d stopped", intr_stopped);
		if (sum->failed > intr_stopped)
			fprintf(stderr, ", %d failed", sum->failed - intr_stopped);
		if (sum->not_run)
			fprintf(stderr, ", %d not run", sum->not_run);
		fprintf(stderr, "; 'idpmake up' goes on from there\n");
		return;
	}
	printf("idpmake: %d rendered, ", sum->rendered);
	if (sum->commit)
		printf("1 commit pushed (%.7s), ", sum->commit);
	else
		printf("nothing pushed, ");
	printf("%d synced, %d hook%s", sum->synced, sum->hooks, sum->hooks == 1 ? "" : "s");
	if (sum->failed)
		printf(", %s%d failed%s", color ? "\x1b[31;1m" : "", sum->failed, color ? "\x1b[0m" : "");
	if (sum->not_run)
		printf(", %d not run", sum->not_run);
	printf(", %d up to date\n", sum->up_to_date);
	fflush(stdout);
}
