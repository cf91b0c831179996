/* gitcreds.h - git.credentials: the GitOps remote's user and password from a Secret (gitcreds.c) */
#ifndef IDPMAKE_GITCREDS_H
#define IDPMAKE_GITCREDS_H

struct ctx;

/*
 * For the commands that talk to the GitOps remote (up, promote, plan,
 * diff), with git.credentials set and no IDPMAKE_GIT_TOKEN given: the
 * Secret becomes the source of base/gitcred.h, read with kubectl when a
 * fetch, a push or repository:register first needs the credentials (not
 * here), kept in memory for the run; no child gets them (exec.c).  A
 * Secret that cannot be read then is a warning, and the remote gets no
 * credentials (it says so if it wants some).
 */
void gitcreds_source(const struct ctx *c);

#endif
