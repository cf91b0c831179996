/*
 * gitcred.c - the GitOps remote's credentials (gitcred.h): the source is
 * read on the first need, under a lock (pushes and fetches run on the
 * build's threads), and what it gave stays until exit, when it is wiped.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/gitcred.h"
#include "base/url.h"
#include "base/util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gitcred_read_fn *reader;
static char *held_user, *held_pw;	/* the source's, once read */
static int warned;

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static void wipe(void)
{
	if (held_user)
		memwipe(held_user, strlen(held_user));
	if (held_pw)
		memwipe(held_pw, strlen(held_pw));
	free(held_user);
	free(held_pw);
	held_user = held_pw = NULL;
}

void gitcred_source(gitcred_read_fn *read, const char *origin)
{
	pthread_mutex_lock(&lock);
	if (!reader && read)
		atexit(wipe);
	reader = read;
	pthread_mutex_unlock(&lock);
	url_git_token_from(origin);
}

int gitcred_has_source(void)
{
	return reader && !env("IDPMAKE_GIT_TOKEN");
}

int gitcred_given(void)
{
	return env("IDPMAKE_GIT_TOKEN") || reader;
}

int gitcred_get(const char **user, const char **pw, int quiet)
{
	const char *err = NULL;
	char *u = NULL, *p = NULL;
	int ret;

	if (env("IDPMAKE_GIT_TOKEN") || !reader) {	/* the user's own token wins over a source */
		if (user)
			*user = env("IDPMAKE_GIT_USERNAME");
		if (pw)
			*pw = env("IDPMAKE_GIT_TOKEN");
		return env("IDPMAKE_GIT_TOKEN") ? 1 : 0;
	}
	pthread_mutex_lock(&lock);
	if (!held_pw) {
		if (reader(&u, &p, &err) == 0 && p && *p) {
			held_user = u, held_pw = p;
			if (held_user && !*held_user) {
				free(held_user);
				held_user = NULL;
			}
		} else {
			if (u)
				memwipe(u, strlen(u));
			if (p)
				memwipe(p, strlen(p));
			free(u);
			free(p);
			if (!quiet && !warned++)
				warn("%s: the GitOps remote gets no credentials from it", err ? err : "an empty password");
		}
	}
	ret = held_pw ? 1 : -1;
	if (user)
		*user = held_user;
	if (pw)
		*pw = held_pw;
	pthread_mutex_unlock(&lock);
	return ret;
}

const char *gitcred_held(void)
{
	const char *p;

	if (env("IDPMAKE_GIT_TOKEN") || !reader)
		return env("IDPMAKE_GIT_TOKEN");
	pthread_mutex_lock(&lock);
	p = held_pw;
	pthread_mutex_unlock(&lock);
	return p;
}
