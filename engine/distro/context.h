/*
 * context.h - named Argo CD and GitOps targets, kept per user
 * (`idpmake context`, issue 9 #6).
 *
 * $XDG_CONFIG_HOME/idpmake/contexts.yaml (default ~/.config/idpmake), mode
 * 0600, written through libyaml's emitter (yaml.c):
 *
 *     contexts:
 *     - argocd-server: argocd.prod.example.com
 *       ca-file: /etc/ssl/prod-ca.pem         # the argocd CLI's --server-crt
 *       git-remote: https://git.example.com/platform/gitops.git
 *       git-token-env: PROD_GIT_TOKEN         # the git token for git-remote
 *       grpc-web-root-path: argocd
 *       insecure: "false"
 *       name: prod
 *       plaintext: "false"
 *       token-env: PROD_ARGOCD_TOKEN          # or token-file: /path
 *     current: prod
 *
 * A token is never in the file: only the name of a file holding it, or of an
 * environment variable; nor is a password in git-remote.
 *
 * A context fills in, it never redirects (issue 19 #2):
 *   1. The context in use: --context NAME > IDPMAKE_CONTEXT > `current`
 *      (`context use`).
 *   2. Chosen for the run (--context or IDPMAKE_CONTEXT), its argocd-server
 *      and git-remote replace the distro's.  The default one (`context use`)
 *      only fills in what the distro leaves out (no argocd.server, no
 *      git.remote).
 *   3. A server and its credential come from the same place (targets.c):
 *      the context's token, TLS settings and git-token-env go only with the
 *      server and remote the context supplied.  ARGOCD_OPTS --server and
 *      ARGOCD_SERVER come last: they fill in what the distro and the
 *      context leave open, and naming another server than theirs they are
 *      refused (argoserver.c, issue 33 #1).
 */
#ifndef IDPMAKE_CONTEXT_H
#define IDPMAKE_CONTEXT_H

#include <stddef.h>

#include "distro/model.h"

struct context {
	const char *name;
	const char *argocd_server;	/* NULL: the distro's */
	const char *git_remote;		/* NULL: the distro's */
	const char *token_file;		/* at most one of these two */
	const char *token_env;
	const char *git_token_env;	/* the variable holding git_remote's token, or NULL */
	const char *ca_file;		/* the Argo CD server's CA, or NULL */
	const char *grpc_web_root_path;	/* the Argo CD API under this path, or NULL */
	int plaintext, insecure;	/* as the argocd CLI's --plaintext and --insecure */
};

struct contexts {
	struct context *v;
	size_t n;
	const char *current;		/* NULL: none */
};

/* the file's path (arena) */
const char *context_file(void);
/* read it (a missing file is no context): 0, or -1 after a located error */
int contexts_load(struct contexts *cs);
/* write it, 0600, atomically: 0, or -1 after an error */
int contexts_save(const struct contexts *cs);
struct context *context_find(const struct contexts *cs, const char *name);
/* "no context 'NAME'", with "did you mean" over cs's names (arena) */
const char *context_missing(const struct contexts *cs, const char *name);

/*
 * Choose the context (flag: --context or NULL) and remember it: NULL with
 * *err NULL when none is in use, NULL with *err when the named one does not
 * exist or the file is bad.  *from says where the choice came from.
 */
const struct context *context_select(const char *flag, const char **from, const char **err);
/* the context chosen by context_select, or NULL */
const struct context *context_active(void);
/* was it chosen for the run (--context, IDPMAKE_CONTEXT), not only the default? */
int context_chosen(void);
/* where it came from: "--context", "IDPMAKE_CONTEXT" or "context use" */
const char *context_from(void);
/*
 * Put the active context's settings into a loaded distro: over its own when
 * chosen for the run, else only where it has none.  Afterwards
 * context_gave_server() and context_gave_remote() say what it supplied.
 */
void context_apply(struct distro *d);
int context_gave_server(void);
/* the default context's argocd-server, left out: the distro names no Argo CD and pushes to this machine */
int context_ignored_server(void);
int context_gave_remote(void);
/* the words for what remote_has_password found */
const char *remote_secret_words(const char *remote);

#endif
