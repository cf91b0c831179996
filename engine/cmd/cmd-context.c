/*
 * cmd-context.c - `idpmake context add|set|unset|use|list|rm` (context.h):
 * named Argo CD servers and GitOps remotes, with where their token is.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "distro/context.h"
#include "distro/repourl.h"
#include "base/url.h"
#include "base/util.h"

static int usage_error(const char *fmt, const char *arg)
{
	fputs("idpmake: context: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: idpmake context add NAME [--argocd-server URL] [--git-remote URL] [--token-file F | --token-env VAR]\n"
	      "                           [--git-token-env VAR] [--ca-file F] [--grpc-web-root-path P] [--plaintext] [--insecure]\n"
	      "       idpmake context set NAME OPTION...      (as add, changing only what is given)\n"
	      "       idpmake context unset NAME KEY...       (argocd-server, git-remote, token-file, token-env, git-token-env,\n"
	      "                                                ca-file, grpc-web-root-path, plaintext, insecure)\n"
	      "       idpmake context use NAME | context list [--json] | context rm NAME\n",
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

/* a file named now, so a relative path is taken from here, not from wherever idpmake runs later */
static const char *abs_file(const char *f, const char *what, int *bad)
{
	char real[4096];

	if (!f || f[0] == '/')
		return f;
	if (!realpath(f, real)) {
		fprintf(stderr, "idpmake: context: cannot find the %s %s\n", what, f);
		(*bad)++;
		return f;
	}
	return astrdup(real);
}

/* the options of add and set into *x: 0, or 2 after a usage error */
static int parse_options(struct context *x, char **args, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const char *v;
		int missing = 0;
		if ((v = opt_value(args, n, &i, "--argocd-server", &missing)))
			x->argocd_server = v;
		else if ((v = opt_value(args, n, &i, "--git-remote", &missing)))
			x->git_remote = v;
		else if ((v = opt_value(args, n, &i, "--token-file", &missing)))
			x->token_file = v, x->token_env = NULL;
		else if ((v = opt_value(args, n, &i, "--token-env", &missing)))
			x->token_env = v, x->token_file = NULL;
		else if ((v = opt_value(args, n, &i, "--git-token-env", &missing)))
			x->git_token_env = v;
		else if ((v = opt_value(args, n, &i, "--ca-file", &missing)))
			x->ca_file = v;
		else if ((v = opt_value(args, n, &i, "--grpc-web-root-path", &missing)))
			x->grpc_web_root_path = v;
		else if (!strcmp(args[i], "--plaintext"))
			x->plaintext = 1;
		else if (!strcmp(args[i], "--insecure"))
			x->insecure = 1;
		else if (!strcmp(args[i], "--token") || !strncmp(args[i], "--token=", 8))
			return usage_error("%s: a context never holds a token; use --token-file F or --token-env VAR",
					   "--token");
		else
			return usage_error(missing ? "%s needs a value" : "unknown argument '%s'", args[i]);
		if (missing)
			return usage_error("%s needs a value", args[i]);
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(args[i], "--token-file") || !strncmp(args[i], "--token-file=", 13))
			for (size_t k = 0; k < n; k++)
				if (!strcmp(args[k], "--token-env") || !strncmp(args[k], "--token-env=", 12))
					return usage_error("%s: --token-file or --token-env, not both", x->name);
	if (x->token_env && !*x->token_env)
		return usage_error("%s: --token-env takes a variable's name", x->name);
	if (x->git_token_env && !*x->git_token_env)
		return usage_error("%s: --git-token-env takes a variable's name", x->name);
	if (remote_has_password(x->git_remote))
		return usage_error("%s", aprintf("%s: %s: take it out of --git-remote, and name the variable that holds "
						 "it with --git-token-env VAR", x->name, remote_secret_words(x->git_remote)));
	x->token_file = abs_file(x->token_file, "token file", &bad);
	x->ca_file = abs_file(x->ca_file, "CA file", &bad);
	if (bad)
		return 2;
	if (x->git_remote && x->git_remote[0] != '/' && !strstr(x->git_remote, "://") && !strchr(x->git_remote, '@')) {
		char real[4096];
		if (realpath(x->git_remote, real))
			x->git_remote = astrdup(real);
	}
	return 0;
}

/* what a context must be, after add or set or unset (unset: said in its words): 0, or 2 after a usage error */
static int check(const struct context *x, int unset)
{
	if (unset && (x->token_file || x->token_env || x->ca_file || x->grpc_web_root_path || x->plaintext ||
		      x->insecure) && !x->argocd_server)
		return usage_error("%s", aprintf("%s: without argocd-server, its token and TLS settings go with no server: "
						 "unset them too (idpmake context unset %s argocd-server token-file "
						 "token-env ca-file grpc-web-root-path plaintext insecure), or rm the "
						 "context", x->name, x->name));
	if (unset && x->git_token_env && !x->git_remote)
		return usage_error("%s", aprintf("%s: without git-remote, git-token-env goes with no remote: unset it "
						 "too (idpmake context unset %s git-remote git-token-env)", x->name,
						 x->name));
	if (!x->argocd_server && !x->git_remote)
		return usage_error("%s: give --argocd-server or --git-remote (or both)", x->name);
	if (x->argocd_server && url_userinfo(x->argocd_server))
		return usage_error("--argocd-server %s: a user name or password in the server is not taken; a context "
				   "names the token with --token-file F or --token-env VAR", url_userinfo(x->argocd_server));
	if ((x->token_file || x->token_env || x->ca_file || x->grpc_web_root_path || x->plaintext || x->insecure) &&
	    !x->argocd_server)
		return usage_error("%s: the token and TLS settings go with --argocd-server, which is not given: a "
				   "server and its credential come from the same place", x->name);
	if (x->git_token_env && !x->git_remote)
		return usage_error("%s: --git-token-env goes with --git-remote, which is not given", x->name);
	return 0;
}

/* add NAME (a new or replaced context) or set NAME (an existing one, changed) */
static int context_add(struct ctx *c, char **args, size_t n, int set)
{
	struct contexts cs;
	struct context x = { 0 }, *old;
	int r;

	if (n < 1 || args[0][0] == '-')
		return usage_error(set ? "set needs a NAME%s" : "add needs a NAME%s", "");
	if (!valid_name(args[0]))
		return usage_error("'%s' is not a context name (letters, digits, '-', '_', '.')", args[0]);
	if (contexts_load(&cs) < 0)
		return 2;
	old = context_find(&cs, args[0]);
	if (set && !old) {
		fprintf(stderr, "idpmake: %s; see 'idpmake context list'\n", context_missing(&cs, args[0]));
		return 2;
	}
	if (set)
		x = *old;
	x.name = args[0];
	if ((r = parse_options(&x, args + 1, n - 1)) || (r = check(&x, 0)))
		return r;
	if (old) {
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
		printf("idpmake: context '%s' %s%s\n", x.name, set ? "changed" : old ? "replaced" : "added",
		       !strcmp(cs.current, x.name) ? ", and in use" : "; 'idpmake context use' it");
	return 0;
}

/* unset NAME KEY... */
static int context_unset(char **args, size_t n)
{
	struct contexts cs;
	struct context *x;
	int r;

	if (n < 2)
		return usage_error("unset takes a NAME and the KEYs to take out%s", "");
	if (contexts_load(&cs) < 0)
		return 2;
	if (!(x = context_find(&cs, args[0]))) {
		fprintf(stderr, "idpmake: %s; see 'idpmake context list'\n", context_missing(&cs, args[0]));
		return 2;
	}
	for (size_t i = 1; i < n; i++) {
		const char *k = args[i] + (args[i][0] == '-' && args[i][1] == '-' ? 2 : 0);
		if (!strcmp(k, "argocd-server"))
			x->argocd_server = NULL;
		else if (!strcmp(k, "git-remote"))
			x->git_remote = NULL;
		else if (!strcmp(k, "token-file"))
			x->token_file = NULL;
		else if (!strcmp(k, "token-env"))
			x->token_env = NULL;
		else if (!strcmp(k, "git-token-env"))
			x->git_token_env = NULL;
		else if (!strcmp(k, "ca-file"))
			x->ca_file = NULL;
		else if (!strcmp(k, "grpc-web-root-path"))
			x->grpc_web_root_path = NULL;
		else if (!strcmp(k, "plaintext"))
			x->plaintext = 0;
		else if (!strcmp(k, "insecure"))
			x->insecure = 0;
		else
			return usage_error("unset: no key '%s'", args[i]);
	}
	if ((r = check(x, 1)))
		return r;
	if (contexts_save(&cs) < 0)
		return 1;
	printf("idpmake: context '%s' changed\n", x->name);
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
		fprintf(stderr, "idpmake: %s; see 'idpmake context list'\n", context_missing(&cs, args[0]));
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
			if (x->git_token_env)
				json_object_set_new(o, "git-token-env", json_string(x->git_token_env));
			if (x->ca_file)
				json_object_set_new(o, "ca-file", json_string(x->ca_file));
			if (x->grpc_web_root_path)
				json_object_set_new(o, "grpc-web-root-path", json_string(x->grpc_web_root_path));
			json_object_set_new(o, "plaintext", json_boolean(x->plaintext));
			json_object_set_new(o, "insecure", json_boolean(x->insecure));
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
		if (x->git_token_env)
			printf("    git-token-env  $%s\n", x->git_token_env);
		if (x->ca_file)
			printf("    ca-file        %s\n", x->ca_file);
		if (x->grpc_web_root_path)
			printf("    grpc-web-root-path  %s\n", x->grpc_web_root_path);
		if (x->plaintext || x->insecure)
			printf("    %s%s\n", x->plaintext ? "plaintext " : "", x->insecure ? "insecure" : "");
	}
	printf("(a context fills in what a distro leaves out; --context NAME or IDPMAKE_CONTEXT puts it over the distro)\n");
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
		return context_add(c, args, n, 0);
	if (!strcmp(sub, "set"))
		return context_add(c, args, n, 1);
	if (!strcmp(sub, "unset"))
		return context_unset(args, n);
	if (!strcmp(sub, "use"))
		return context_use_rm(args, n, 0);
	if (!strcmp(sub, "rm"))
		return context_use_rm(args, n, 1);
	if (!strcmp(sub, "list") || !strcmp(sub, "ls")) {
		if (n == 1 && !strcmp(args[0], "--json"))
			c->json = 1;	/* context reads its own options: --json after list too */
		else if (n)
			return usage_error("list takes no arguments but --json%s", "");
		return context_list(c);
	}
	return usage_error("no subcommand '%s'", sub);
}
