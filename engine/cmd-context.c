/*
 * cmd-context.c - `idpmake context add|use|list|rm` (context.h): named
 * Argo CD servers and GitOps remotes, with where their token is.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "context.h"
#include "url.h"
#include "util.h"

static int usage_error(const char *fmt, const char *arg)
{
	fputs("idpmake: context: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: idpmake context add NAME --argocd-server URL --git-remote URL [--token-file F | --token-env VAR]\n"
	      "       idpmake context use NAME | context list | context rm NAME\n",
	      stderr);
	return 2;
}

static int valid_name(const char *s)
{
	if (!*s || strlen(s) > 63)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* --opt VALUE or --opt=VALUE at args[*i]: the value, or NULL when args[*i] is not --opt */
static const char *opt_value(char **args, size_t n, size_t *i, const char *opt, int *missing)
{
	size_t len = strlen(opt);

	if (strncmp(args[*i], opt, len))
		return NULL;
	if (args[*i][len] == '=')
		return args[*i] + len + 1;
	if (args[*i][len])
		return NULL;
	if (*i + 1 >= n) {
		*missing = 1;
		return NULL;
	}
	return args[++*i];
}

static int context_add(struct ctx *c, char **args, size_t n)
{
	struct contexts cs;
	struct context x = { 0 }, *old;

	if (n < 1 || args[0][0] == '-')
		return usage_error("add needs a NAME%s", "");
	x.name = args[0];
	if (!valid_name(x.name))
		return usage_error("'%s' is not a context name (letters, digits, '-', '_', '.')", x.name);
	for (size_t i = 1; i < n; i++) {
		const char *v;
		int missing = 0;
		if ((v = opt_value(args, n, &i, "--argocd-server", &missing)))
			x.argocd_server = v;
		else if ((v = opt_value(args, n, &i, "--git-remote", &missing)))
			x.git_remote = v;
		else if ((v = opt_value(args, n, &i, "--token-file", &missing)))
			x.token_file = v;
		else if ((v = opt_value(args, n, &i, "--token-env", &missing)))
			x.token_env = v;
		else if (!strcmp(args[i], "--token") || !strncmp(args[i], "--token=", 8))
			return usage_error("%s: a context never holds a token; use --token-file F or --token-env VAR",
					   "--token");
		else
			return usage_error(missing ? "%s needs a value" : "unknown argument '%s'", args[i]);
		if (missing)
			return usage_error("%s needs a value", args[i]);
	}
	if (!x.argocd_server && !x.git_remote)
		return usage_error("add %s: give --argocd-server or --git-remote (or both)", x.name);
	if (x.argocd_server && url_userinfo(x.argocd_server))
		return usage_error("--argocd-server %s: a user name or password in the server is not taken; a context "
				   "names the token with --token-file F or --token-env VAR", url_userinfo(x.argocd_server));
	if (x.token_file && x.token_env)
		return usage_error("%s: --token-file or --token-env, not both", x.name);
	if (x.token_env && !*x.token_env)
		return usage_error("%s: --token-env takes a variable's name", x.name);
	/* relative paths are taken from here, not from wherever idpmake runs later */
	if (x.token_file && x.token_file[0] != '/') {
		char real[4096];
		if (!realpath(x.token_file, real)) {
			fprintf(stderr, "idpmake: context: cannot find the token file %s\n", x.token_file);
			return 2;
		}
		x.token_file = astrdup(real);
	}
	if (x.git_remote && x.git_remote[0] != '/' && !strstr(x.git_remote, "://") && !strchr(x.git_remote, '@')) {
		char real[4096];
		if (realpath(x.git_remote, real))
			x.git_remote = astrdup(real);
	}
	if (contexts_load(&cs) < 0)
		return 2;
	if ((old = context_find(&cs, x.name))) {
		*old = x;
	} else {
		cs.v = agrow(cs.v, cs.n, sizeof(*cs.v));
		cs.v[cs.n++] = x;
	}
	if (!cs.current)
		cs.current = x.name;
	if (contexts_save(&cs) < 0)
		return 1;
	if (!c->json)
		printf("idpmake: context '%s' %s%s\n", x.name, old ? "replaced" : "added",
		       !strcmp(cs.current, x.name) ? ", and in use" : "; 'idpmake context use' it");
	return 0;
}

static int context_use_rm(char **args, size_t n, int rm)
{
	struct contexts cs;
	struct context *x;

	if (n != 1)
		return usage_error("%s takes one NAME", rm ? "rm" : "use");
	if (contexts_load(&cs) < 0)
		return 2;
	if (!(x = context_find(&cs, args[0]))) {
		fprintf(stderr, "idpmake: no context '%s'; see 'idpmake context list'\n", args[0]);
		return 2;
	}
	if (rm) {
		if (cs.current && !strcmp(cs.current, x->name))
			cs.current = NULL;
		memmove(x, x + 1, (size_t)(cs.v + cs.n - (x + 1)) * sizeof(*x));
		cs.n--;
	} else {
		cs.current = x->name;
	}
	if (contexts_save(&cs) < 0)
		return 1;
	printf("idpmake: %s context '%s'\n", rm ? "removed" : "using", args[0]);
	return 0;
}

static int context_list(struct ctx *c)
{
	struct contexts cs;
	const char *from, *err;
	const struct context *act;

	if (contexts_load(&cs) < 0)
		return 2;
	act = context_select(c->context, &from, &err);
	if (c->json) {
		json_t *a = json_array();
		for (size_t i = 0; i < cs.n; i++) {
			const struct context *x = &cs.v[i];
			json_t *o = json_pack("{s:s, s:b}", "name", x->name, "current", act && !strcmp(act->name, x->name));
			if (x->argocd_server)
				json_object_set_new(o, "argocd-server", json_string(x->argocd_server));
			if (x->git_remote)
				json_object_set_new(o, "git-remote", json_string(x->git_remote));
			if (x->token_file)
				json_object_set_new(o, "token-file", json_string(x->token_file));
			if (x->token_env)
				json_object_set_new(o, "token-env", json_string(x->token_env));
			json_array_append_new(a, o);
		}
		json_print(a, 1);
		return 0;
	}
	if (!cs.n) {
		printf("no contexts (%s); add one with 'idpmake context add NAME --argocd-server URL --git-remote URL'\n",
		       context_file());
		return 0;
	}
	for (size_t i = 0; i < cs.n; i++) {
		const struct context *x = &cs.v[i];
		printf("%s %s\n", act && !strcmp(act->name, x->name) ? "*" : " ", x->name);
		printf("    argocd-server  %s\n", x->argocd_server ? x->argocd_server : "(the distro's)");
		printf("    git-remote     %s\n", x->git_remote ? x->git_remote : "(the distro's)");
		if (x->token_file)
			printf("    token-file     %s\n", x->token_file);
		else if (x->token_env)
			printf("    token-env      $%s\n", x->token_env);
	}
	if (err)
		fprintf(stderr, "idpmake: %s\n", err);
	return 0;
}

int cmd_context(struct ctx *c)
{
	const char *sub = c->ntargets ? c->targets[0] : "list";
	char **args = c->ntargets ? c->targets + 1 : NULL;
	size_t n = c->ntargets ? c->ntargets - 1 : 0;

	if (!strcmp(sub, "add"))
		return context_add(c, args, n);
	if (!strcmp(sub, "use"))
		return context_use_rm(args, n, 0);
	if (!strcmp(sub, "rm"))
		return context_use_rm(args, n, 1);
	if (!strcmp(sub, "list") || !strcmp(sub, "ls")) {
		if (n)
			return usage_error("list takes no arguments%s", "");
		return context_list(c);
	}
	return usage_error("no subcommand '%s'", sub);
}
