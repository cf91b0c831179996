/*
 * context.h - named Argo CD and GitOps targets, kept per user
 * (`idpmake context`, issue 9 #6).
 *
 * $XDG_CONFIG_HOME/idpmake/contexts.yaml (default ~/.config/idpmake), mode
 * 0600, written through libyaml's emitter (yaml.c):
 *
 *     contexts:
 *     - argocd-server: argocd.prod.example.com
 *       git-remote: https://git.example.com/platform/gitops.git
 *       name: prod
 *       token-env: PROD_ARGOCD_TOKEN        # or token-file: /path
 *     current: prod
 *
 * A token is never in the file: only the name of a file holding it, or of an
 * environment variable.
 *
 * What wins (highest first): flags (ARGOCD_OPTS --server, --auth-token),
 * environment variables (ARGOCD_SERVER, ARGOCD_AUTH_TOKEN), the context,
 * the distro.  The context in use: --context NAME > IDPMAKE_CONTEXT >
 * `current` in the file.
 */
#ifndef IDPMAKE_CONTEXT_H
#define IDPMAKE_CONTEXT_H

#include <stddef.h>

#include "graph.h"

struct context {
	const char *name;
	const char *argocd_server;	/* NULL: the distro's */
	const char *git_remote;		/* NULL: the distro's */
	const char *token_file;		/* at most one of these two */
	const char *token_env;
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

/*
 * Choose the context (flag: --context or NULL) and remember it: NULL with
 * *err NULL when none is in use, NULL with *err when the named one does not
 * exist or the file is bad.  *from says where the choice came from.
 */
const struct context *context_select(const char *flag, const char **from, const char **err);
/* the context chosen by context_select, or NULL */
const struct context *context_active(void);
/* put the active context's settings into a loaded distro (over its own) */
void context_apply(struct distro *d);

#endif
