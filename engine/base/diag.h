/*
 * diag.h - diagnostics kept as data: while capture is on (validate --json),
 * loc_error, loc_warn, error and warn add one entry here instead of printing
 * "file:line:col: error: msg" on stderr, for the command to print as JSON.
 * Any thread may add; fatal() always prints.
 */
#ifndef IDPMAKE_DIAG_H
#define IDPMAKE_DIAG_H

#include <stddef.h>

struct diag {
	const char *severity;	/* "error" or "warning" */
	const char *file;	/* NULL: not about a file */
	int line, col;		/* 0: no position */
	const char *message;	/* without the "file:line:col: error: " prefix */
};

void diag_capture(int on);
int diag_capturing(void);
void diag_add(const char *severity, const char *file, int line, int col, const char *message);
/* what was captured, in order; *n entries */
const struct diag *diag_list(size_t *n);

#endif
