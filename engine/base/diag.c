/* diag.c - diagnostics kept as data while capture is on (diag.h) */
#include <pthread.h>

#include "base/diag.h"
#include "base/util.h"

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

void diag_add(const char *severity, const char *file, int line, int col, const char *message)
{
	pthread_mutex_lock(&lock);
	if (nlist == cap)
		list = xrealloc(list, (cap = cap ? cap * 2 : 16) * sizeof(*list));
	list[nlist++] = (struct diag){ severity, file ? xstrdup(file) : NULL, line, col, xstrdup(message) };
	pthread_mutex_unlock(&lock);
}

const struct diag *diag_list(size_t *n)
{
	*n = nlist;
	return list;
}
