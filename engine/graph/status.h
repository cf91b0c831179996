/* status.h - what a run prints: a ninja-style status line, events, the summary */
#ifndef IDPMAKE_STATUS_H
#define IDPMAKE_STATUS_H

#include "graph/graph.h"

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

#define SUMMARY_NAMES 10	/* the synced Applications the summary names; the rest are counted */

struct summary {
	int rendered, synced, hooks, failed, not_run, up_to_date, skipped;
	const char *commit;		/* pushed commit, or NULL */
	int commits;
	const char *names[SUMMARY_NAMES];	/* the first `synced` ones: their Applications, in sync order */
};

void status_init(int json, enum color_mode color, int verbose);
int status_verbose(void);
int status_stopped(void);			/* steps an interrupt stopped (counted in failed too) */
void status_total(int total);			/* steps that will run */
/* a step counted in the total found up to date when its turn came: the total is corrected */
void status_up_to_date(const struct step *s);
/* a sync's Application (or CLUSTER/PACKAGE of a kubectl deploy) into the summary, and its count */
void summary_synced(struct summary *sum, const char *name);
void status_start(const struct step *s);
/* its line waits until the next output or status_flush, the total then corrected (status.c) */
void status_done(const struct step *s, const char *note);
void status_flush(void);			/* print a finished step's line now */
void status_end_run(void);			/* the scheduler is done: the last line stays */
void status_failed(const struct step *s, const char *log);
void status_skipped(const struct step *s, const char *why);
void status_not_run(const struct step *s, const char *cause);
void status_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void status_summary(const struct summary *sum);
/*
 * What a running step waits for ("Progressing"), from any thread: shown as
 * "waiting for CLUSTER/PACKAGE: Progressing (42 s)" on the status line, or
 * as a plain line now and then when output is not a terminal.
 */
void status_progress(const struct step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the main thread, every second or so while steps run: redraw the line, print what waits */
void status_tick(void);
void status_end_line(void);			/* finish an overprinted line */
const char *step_kind_name(enum step_kind k);
/* print a JSON document on stdout (pretty: indented) and release it */
struct json_t;
void json_print(struct json_t *doc, int pretty);

#endif
