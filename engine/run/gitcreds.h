/* gitcreds.h - git.credentials: the GitOps remote's user and password from a Secret (gitcreds.c) */
#ifndef IDPMAKE_GITCREDS_H
#define IDPMAKE_GITCREDS_H

struct ctx;

/*
 * For the commands that talk to the GitOps remote (up, promote, plan,
 * diff), with git.credentials set and no IDPMAKE_GIT_TOKEN given: read the
 * user and password from the Secret with kubectl into IDPMAKE_GIT_USERNAME
 * and IDPMAKE_GIT_TOKEN of this process (no child gets them: exec.c).  A
 * Secret that cannot be read: the warning to give (the caller gives it;
 * up tries again once its bootstrap made the cluster, bootstrap.h), and
 * the remote gets no credentials (it says so if it wants some); else NULL.
 */
const char *gitcreds_load(const struct ctx *c);

#endif
