/*
 * gitcred.h - the GitOps remote's user and password, one place for all who
 * send or mask them: IDPMAKE_GIT_TOKEN and IDPMAKE_GIT_USERNAME as given,
 * else what a source (git.credentials: run/gitcreds.c) reads when a fetch,
 * a push or repository:register first needs it, after the steps that make
 * it, and keeps in this process's memory for the run: never in the
 * environment, wiped at exit.
 */
#ifndef IDPMAKE_GITCRED_H
#define IDPMAKE_GITCRED_H

/*
 * The reader of the source: 0 with *user and *pw (malloc'd; taken over and
 * wiped here), or -1 with *err.  `origin` names it in messages
 * (url_git_token_name).  Set once, before anything needs the credentials.
 */
typedef int gitcred_read_fn(char **user, char **pw, const char **err);
void gitcred_source(gitcred_read_fn *read, const char *origin);

/* is a password given, or a source to read it from?  Nothing is read */
int gitcred_given(void);
/* has a source been set (git.credentials, with no IDPMAKE_GIT_TOKEN)? */
int gitcred_has_source(void);

/*
 * The user and password to send (user NULL: none given; the caller's
 * default): 1, or 0 when none are given and there is no source, or -1
 * when the source cannot be read now (warned once a run unless `quiet`;
 * the next need reads it again: a later step may make it).  A source read
 * once is kept for the run.  Either pointer may be NULL.
 */
int gitcred_get(const char **user, const char **pw, int quiet);

/* the password held now (given, or read already), for masking; never reads: NULL when none */
const char *gitcred_held(void);

#endif
