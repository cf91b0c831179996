/*
 * repourl.h - where Argo CD reads the GitOps repository (issue 33 #3).
 *
 * idpmake pushes to git.remote; Argo CD reads the repository from
 * argocd.repo-url, by default git.remote without its credentials.  The two
 * differ where the pusher and Argo CD see the server apart: idpbuilder's
 * Gitea is pushed to through its ingress and read by Argo CD at its
 * in-cluster service URL.
 *
 * A local repository (a path, relative or not, a file:// URL, or no
 * git.remote nor a context's: the state's own .idpmake/gitops.git) is on
 * this machine, where Argo CD cannot read it: with argocd.server it is an
 * error (at load; for the state's own, once the context is applied) unless
 * argocd.repo-url says where Argo CD reads it (a file:// URL is accepted
 * there: a repo-server sharing the filesystem, as in Argo CD's own e2e
 * tests).  A distro naming neither argocd.server nor argocd.repo-url that
 * pushes there is push-only whatever ARGOCD_SERVER says (argoserver.c).
 */
#ifndef IDPMAKE_REPOURL_H
#define IDPMAKE_REPOURL_H

#include "distro/model.h"
#include "base/yaml.h"

/* argocd.repo-url (n NULL: absent) into d->argocd.repo_url, with located errors */
void repo_url_conv(struct distro *d, const struct ynode *n);
/* after git and argocd are read: a local git.remote with argocd.server and no repo-url is an error */
void repo_url_check(const struct distro *d);
/*
 * After a context filled in (ctx_load): no git.remote at all, argocd.server
 * and no repo-url: the located error (arena), or NULL.
 */
const char *repo_url_state_repo(const struct distro *d);
/* is this remote (NULL: the state's own) a repository on this machine? */
int remote_is_local(const char *remote);

/* a git remote with a password in it: 1; with a user name that looks like a token: 2 (contexts refuse both) */
int remote_has_password(const char *remote);

#endif
