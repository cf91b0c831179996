/* diag.c - diagnostics kept as data while capture is on (diag.h) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

static int capturing;
static struct diag *list;	/* malloc'd, not the arena: arelease() must not drop them */
static size_t nlist, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void diag_capture(int on)
{
	__atomic_store_n(&capturing, on, __ATOMIC_RELAXED);
}

int diag_capturing(void)
{
	return __atomic_load_n(&capturing, __ATOMIC_RELAXED);
}

/* util.c's error() and warn() call into here: this file calls nothing of util.c's (no cycle) */
static void *must(void *p)
{
	if (!p) {
		fputs("idpmake: out of memory\n", stderr);
		abort();
	}
	return p;
}

void diag_add(const char *severity, const char *file, int line, int col, const char *message)
{
	pthread_mutex_lock(&lock);
	if (nlist == cap)
		list = must(realloc(list, (cap = cap ? cap * 2 : 16) * sizeof(*list)));
	list[nlist++] = (struct diag){ severity, file ? must(strdup(file)) : NULL, line, col, must(strdup(message)) };
	pthread_mutex_unlock(&lock);
}

const struct diag *diag_list(size_t *n)
{
	*n = nlist;
	return list;
}
