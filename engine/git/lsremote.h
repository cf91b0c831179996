/*
 * lsremote.h - what a git revision of another repository names now, as
 * Argo CD's repo-server resolves it (git ls-remote), for remotesync.c's
 * proof of a source outside the GitOps repository.
 *
 * Only the refs are listed: nothing is fetched, no credential is sent (the
 * GitOps and source credentials stay with their own hosts; a repository
 * that asks for one is not resolved), and a remote's list is read once per
 * run.  The remote's answer is hostile input: a name is compared, never
 * used as a path.
 */
#ifndef IDPMAKE_LSREMOTE_H
#define IDPMAKE_LSREMOTE_H

/*
 * Does revision rev (a branch, a tag, a full ref name, HEAD or empty for
 * HEAD, or a 40-hex commit) of the repository at url name commit `commit`
 * (40 hex) now?  As Argo CD: the first ref, in the server's order, whose
 * name or short name (go-git's) is rev; a tag matches by its own id or the
 * commit it peels to.  A version range (Argo CD's highest matching tag:
 * an operator or an x wildcard, "1.x"), an unknown revision, a redirect to
 * another host, an unreachable or private repository,
 * a scheme other than https, http, ssh, git or file, a remote that does
 * not answer within IDPMAKE_LSREMOTE_TIMEOUT_MS (30 s): 0.
 */
int lsremote_names(const char *url, const char *rev, const char *commit);

#endif
