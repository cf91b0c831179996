/* tlscert.h - the step `tls`: the distro's CA and certificate (tls.hosts, create.h), made by idpmake */
#ifndef IDPMAKE_TLSCERT_H
#define IDPMAKE_TLSCERT_H

#include "render/planner.h"

/* STATE/tls/NAME: ca.crt, ca.key, tls.crt, tls.key (keys 0600, the folder 0700) */
const char *tlscert_file(const char *statedir, const char *name);

/*
 * Decide the step tls (plan_decide's contract): its key is the names,
 * expanded; up to date when a success with that key is recorded and the
 * four files are there.
 */
void tlscert_decide(struct planner *pl, struct step *s, const struct record *rec);

/*
 * Run it (libcrypto, base/certmake.h): a CA when there is none (kept across
 * runs: made once, so an interrupted bootstrap never makes a second), and
 * a certificate for the names signed by it when the names changed or it
 * is missing.  *output hashes the two certificates.  0, or -1 with *err.
 */
int tlscert_run(struct planner *pl, struct step *s, struct hash *output, const char **err);

/*
 * With tls set, the CA is what idpmake's own clients trust where the
 * distro gives no ca-file (git.ca-file, argocd.ca-file unless insecure),
 * once the file exists.  1 when this call set one, else 0.
 */
int tlscert_trust(struct distro *d, const char *statedir);

#endif
