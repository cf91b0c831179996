/*
 * secret.c - a process that holds secrets (secret.h).
 *
 * A core file holds the process's memory: the Argo CD token, a git
 * password, a cluster's key.  With core_pattern=core it is written into the
 * working folder (a distro's, whose files the package scan reads), so none
 * is made.  setenv copies "NAME=value" into memory of the C library's that
 * unsetenv neither frees nor clears (glibc keeps it for getenv pointers
 * handed out before): the value is zeroed in place first.  A stack keeps
 * what a callee left in its frames (glibc's vsnprintf formats what does not
 * fit, aprintf's measuring pass all of it, through a buffer on the stack;
 * libgit2 formats "user:password" so): secret_stack_wipe zeroes below.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "base/secret.h"
#include "base/util.h"

void secret_no_dumps(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur != 0) {
		rl.rlim_cur = 0;	/* the hard limit stays: a child may raise its own */
		setrlimit(RLIMIT_CORE, &rl);
	}
#if !defined(__SANITIZE_ADDRESS__)
	/* (LeakSanitizer's exit check ptraces the process from a task of its own: a sanitized build stays dumpable) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *names[8];
static size_t nnames;

void secret_env_wipe(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nnames; i++) {
		char *v = getenv(names[i]);
		if (v)
			memwipe(v, strlen(v));
		unsetenv(names[i]);
		free(names[i]);
	}
	nnames = 0;
	pthread_mutex_unlock(&lock);
}

int secret_setenv(const char *name, const char *value)
{
	static int registered;
	size_t i;
	char *old;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nnames && strcmp(names[i], name); i++)
		;
	if (i < nnames && (old = getenv(name)))
		memwipe(old, strlen(old));	/* the secret this one replaces */
	else if (i == nnames && nnames < sizeof(names) / sizeof(*names))
		names[nnames++] = xstrdup(name);
	if (!registered)
		registered = atexit(secret_env_wipe) == 0;
	pthread_mutex_unlock(&lock);
	return setenv(name, value, 1);
}

#define WIPE_CHUNK (16 * 1024)
#define WIPE_MARGIN (64 * 1024)	/* left untouched above the stack's end: signal frames, guard */

/* one chunk, then the next below it: not inlined, so that each frame is below its caller's */
__attribute__((noinline)) static void wipe_down(size_t chunks)
{
	char below[WIPE_CHUNK];

	explicit_bzero(below, sizeof(below));
	__asm__ __volatile__("" : : "r"(below) : "memory");
	if (chunks > 1)
		wipe_down(chunks - 1);
	__asm__ __volatile__("" : : "r"(below) : "memory");	/* no tail call: the chunks stack up */
}

/* how much of this thread's stack is left below here, less a margin (0 when unknown) */
static size_t stack_left(void)
{
	pthread_attr_t at;
	void *lo;
	size_t size;
	char here;

	if (pthread_getattr_np(pthread_self(), &at) != 0)
		return 0;
	if (pthread_attr_getstack(&at, &lo, &size) != 0) {
		pthread_attr_destroy(&at);
		return 0;
	}
	pthread_attr_destroy(&at);
	if ((uintptr_t)&here < (uintptr_t)lo + WIPE_MARGIN || (uintptr_t)&here >= (uintptr_t)lo + size)
		return 0;
	return (size_t)((uintptr_t)&here - (uintptr_t)lo) - WIPE_MARGIN;
}

void secret_stack_wipe(void)
{
	size_t n = stack_left();

	if (n > SECRET_STACK_WIPE)
		n = SECRET_STACK_WIPE;
	if (n >= WIPE_CHUNK)
		wipe_down(n / WIPE_CHUNK);	/* as much as the stack has: a small ulimit -s is no crash */
}

static void wipe_main_stack(void)
{
	secret_stack_wipe();
}

void secret_stack_wipe_at_exit(void)
{
	atexit(wipe_main_stack);
}
