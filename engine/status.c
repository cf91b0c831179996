/*
 * status.c - progress output.
 *
 * On a terminal, one line rewritten in place, as ninja: "[3/12] render
 * in-cluster/backstage".  Elsewhere one line per finished step.  With --json
 * one object per line (cli.md).  Failures print the step's log.  Output is
 * only ever written from the scheduler's (main) thread.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"
#include "util.h"

static int json, tty, color, verbose, total, finished, dirty_line;

void status_init(int j, enum color_mode c, int v)
{
	json = j;
	verbose = v;
	tty = !j && isatty(1);
	color = c == COLOR_ALWAYS || (c == COLOR_AUTO && tty && !getenv("NO_COLOR"));
}

int status_verbose(void)
{
	return verbose;
}

const char *step_kind_name(enum step_kind k)
{
	static const char *const names[] = { "render", "push", "pre", "sync", "post", "wave", "register" };
	return names[k];
}

void status_total(int t)
{
	total = t;
	finished = 0;
}

static void event(const char *ev, const struct step *s, const char *reason, int ms)
{
	json_t *o = json_object();
	char *text;

	json_object_set_new(o, "event", json_string(ev));
	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "kind", json_string(step_kind_name(s->kind)));
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (ms >= 0)
		json_object_set_new(o, "ms", json_integer(ms));
	if (!strcmp(ev, "failed") && s->command)
		json_object_set_new(o, "command", json_string(s->command));
	text = json_dumps(o, JSON_COMPACT);
	puts(text);
	fflush(stdout);
	free(text);
	json_decref(o);
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
	if (dirty_line) {
		fputs("\r\x1b[K", stdout);
		fflush(stdout);
		dirty_line = 0;
	}
}

static const char *what(const struct step *s)
{
	return s->kind == STEP_PUSH ? "push" : s->id;
}

void status_start(const struct step *s)
{
	if (json) {
		event("start", s, NULL, -1);
		return;
	}
	if (tty) {
		printf("\r[%d/%d] %s %s\x1b[K", finished, total, step_kind_name(s->kind), what(s));
		fflush(stdout);
		dirty_line = 1;
	}
}

void status_done(const struct step *s, const char *note)
{
	finished++;
	if (json) {
		event("done", s, note, s->ms);
		return;
	}
	if (tty) {
		printf("\r[%d/%d] %s %s%s%s\x1b[K", finished, total, step_kind_name(s->kind), what(s),
		       note ? ": " : "", note ? note : "");
		if (note || s->kind == STEP_PUSH) {
			putchar('\n');
			dirty_line = 0;
		} else {
			dirty_line = 1;
		}
		fflush(stdout);
		return;
	}
	printf("[%d/%d] %s %s%s%s (%d ms)\n", finished, total, step_kind_name(s->kind), what(s),
	       note ? ": " : "", note ? note : "", s->ms);
	fflush(stdout);
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
	finished++;
	if (json) {
		event("failed", s, s->error, s->ms);
		return;
	}
	status_end_line();
	fflush(stdout);
	fprintf(stderr, "%sFAILED%s: %s: %s\n", color ? "\x1b[31;1m" : "", color ? "\x1b[0m" : "", s->id,
		s->error ? s->error : "failed");
	if (s->command)
		fprintf(stderr, "command: %s\n", s->command);
	print_log(log);
}

void status_skipped(const struct step *s, const char *why)
{
	if (json) {
		event("skipped", s, why, -1);
		return;
	}
	if (verbose) {
		status_end_line();
		printf("skipped %s: %s\n", s->id, why);
	}
}

void status_not_run(const struct step *s, const char *cause)
{
	if (json) {
		event("not-run", s, cause, -1);
		return;
	}
	status_end_line();
	fprintf(stderr, "not run: %s: %s\n", s->id, cause);
}

void status_info(const char *fmt, ...)
{
	va_list ap;

	if (json)
		return;
	status_end_line();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void status_summary(const struct summary *sum)
{
	if (json) {
		json_t *o = json_object();
		char *text;
		json_object_set_new(o, "event", json_string("summary"));
		json_object_set_new(o, "rendered", json_integer(sum->rendered));
		json_object_set_new(o, "pushed", sum->commit ? json_string(sum->commit) : json_null());
		json_object_set_new(o, "synced", json_integer(sum->synced));
		json_object_set_new(o, "hooks", json_integer(sum->hooks));
		json_object_set_new(o, "failed", json_integer(sum->failed));
		json_object_set_new(o, "not_run", json_integer(sum->not_run));
		json_object_set_new(o, "up_to_date", json_integer(sum->up_to_date));
		text = json_dumps(o, JSON_COMPACT);
		puts(text);
		free(text);
		json_decref(o);
		fflush(stdout);
		return;
	}
	status_end_line();
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
