/* context.c - the contexts file: load, save, choose, apply (context.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "distro/context.h"
#include "distro/repourl.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

static const struct context *active;
static const char *active_from;
static int gave_server, gave_remote, ignored_server;

const char *remote_secret_words(const char *remote)
{
	return remote_has_password(remote) == 2 ? "a context holds no token: the user name in its git remote looks like "
						  "one (a token's prefix such as ghp_ or glpat-, 32 characters or more, "
						  "or 20 hex digits or more)"
						: "a context holds no password";
}

const char *context_file(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && *xdg == '/')		/* the spec: a relative XDG_CONFIG_HOME is ignored */
		return aprintf("%s/idpmake/contexts.yaml", xdg);
	return aprintf("%s/.config/idpmake/contexts.yaml", home && *home ? home : ".");
}

static const char *field(const struct ynode *m, const char *key, int *bad)
{
	const struct ynode *n = yget(m, key);

	if (!n || yisnull(n))
		return NULL;
	if (n->type != Y_SCALAR) {
		loc_error(n->loc, "'%s' must be a string", key);
		(*bad)++;
		return NULL;
	}
	/* what is read here is printed (the "acting on" line, context list): no terminal escapes */
	for (size_t i = 0; i < n->slen; i++)
		if ((unsigned char)n->s[i] < ' ' || n->s[i] == 0x7f) {
			loc_error(n->loc, "'%s' has a control character in it", key);
			(*bad)++;
			return NULL;
		}
	return astrndup(n->s, n->slen);
}

static int flag(const struct ynode *m, const char *key, int *bad)
{
	const char *v = field(m, key, bad);

	if (!v || !strcmp(v, "false"))
		return 0;
	if (!strcmp(v, "true"))
		return 1;
	loc_error(yget(m, key)->loc, "'%s' is true or false", key);
	(*bad)++;
	return 0;
}

int contexts_load(struct contexts *cs)
{
	const char *file = context_file();
	struct ypool *pool;
	struct ynode **docs, *root, *list;
	struct stat st;
	size_t ndocs, len;
	char *text;
	int bad = 0;

	memset(cs, 0, sizeof(*cs));
	if (!(text = read_file(file, &len)))
		return errno == ENOENT ? 0 : error("cannot read %s:", file);
	if (!stat(file, &st) && (st.st_mode & 077))
		warn("%s can be read by others; it names token files: chmod 600 it", file);
	pool = ypool_new();
	if (yaml_parse(pool, file, text, len, &docs, &ndocs) < 0) {
		free(text);
		ypool_free(pool);
		return -1;
	}
	free(text);
	root = ndocs ? docs[0] : NULL;
	if (root && root->type != Y_MAP) {
		loc_error(root->loc, "a contexts file is a map with 'contexts' and 'current'");
		ypool_free(pool);
		return -1;
	}
	cs->current = root ? field(root, "current", &bad) : NULL;
	list = root ? yget(root, "contexts") : NULL;
	if (list && !yisnull(list) && list->type != Y_SEQ) {
		loc_error(list->loc, "'contexts' must be a list");
		bad++;
	} else if (list && list->type == Y_SEQ) {
		for (size_t i = 0; i < list->n; i++) {
			const struct ynode *m = list->v[i];
			struct context x = { 0 };
			if (m->type != Y_MAP) {
				loc_error(m->loc, "a context is a map with 'name'");
				bad++;
				continue;
			}
			x.name = field(m, "name", &bad);
			x.argocd_server = field(m, "argocd-server", &bad);
			x.git_remote = field(m, "git-remote", &bad);
			x.token_file = field(m, "token-file", &bad);
			x.token_env = field(m, "token-env", &bad);
			x.git_token_env = field(m, "git-token-env", &bad);
			x.ca_file = field(m, "ca-file", &bad);
			x.grpc_web_root_path = field(m, "grpc-web-root-path", &bad);
			x.plaintext = flag(m, "plaintext", &bad);
			x.insecure = flag(m, "insecure", &bad);
			if (remote_has_password(x.git_remote)) {
				loc_error(yget(m, "git-remote")->loc, "%s: take it out of git-remote, and name the "
					  "variable that holds it with git-token-env", remote_secret_words(x.git_remote));
				bad++;
			}
			if (yget(m, "token")) {
				loc_error(yget(m, "token")->loc, "a context holds no token: use token-file or token-env");
				bad++;
			}
			if (!x.name) {
				loc_error(m->loc, "a context needs a 'name'");
				bad++;
				continue;
			}
			cs->v = agrow(cs->v, cs->n, sizeof(*cs->v));
			cs->v[cs->n++] = x;
		}
	}
	ypool_free(pool);
	return bad ? -1 : 0;
}

static void add(struct ypool *p, struct ynode *map, const char *key, const char *val)
{
	struct loc l = { NULL, 0, 0 };

	if (val)
		yset(p, map, yscalar(p, key, YS_PLAIN, l), yscalar(p, val, YS_QUOTED, l));
}

int contexts_save(const struct contexts *cs)
{
	const char *file = context_file(), *tmp = aprintf("%s.tmp%ld", file, (long)getpid());
	struct loc l = { NULL, 0, 0 };
	struct ypool *p = ypool_new();
	struct ynode *root = ynew(p, Y_MAP, l), *list = ynew(p, Y_SEQ, l);
	struct buf out = BUF_INIT;
	int fd, r = 0;

	for (size_t i = 0; i < cs->n; i++) {
		struct ynode *m = ynew(p, Y_MAP, l);
		add(p, m, "name", cs->v[i].name);
		add(p, m, "argocd-server", cs->v[i].argocd_server);
		add(p, m, "git-remote", cs->v[i].git_remote);
		add(p, m, "token-file", cs->v[i].token_file);
		add(p, m, "token-env", cs->v[i].token_env);
		add(p, m, "git-token-env", cs->v[i].git_token_env);
		add(p, m, "ca-file", cs->v[i].ca_file);
		add(p, m, "grpc-web-root-path", cs->v[i].grpc_web_root_path);
		if (cs->v[i].plaintext)
			yset(p, m, yscalar(p, "plaintext", YS_PLAIN, l), yscalar(p, "true", YS_PLAIN, l));
		if (cs->v[i].insecure)
			yset(p, m, yscalar(p, "insecure", YS_PLAIN, l), yscalar(p, "true", YS_PLAIN, l));
		ypush(p, list, m);
	}
	yset(p, root, yscalar(p, "contexts", YS_PLAIN, l), list);
	if (cs->current)
		add(p, root, "current", cs->current);
	buf_adds(&out, "# idpmake contexts (idpmake context --help); no tokens here, only where they are\n");
	if (yaml_emit(root, &out) < 0) {
		ypool_free(p);
		buf_release(&out);
		return error("cannot write the contexts");
	}
	ypool_free(p);
	if (mkdirs(path_dir(file)) < 0) {
		buf_release(&out);
		return error("cannot create %s:", path_dir(file));
	}
	chmod(path_dir(file), 0700);
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		buf_release(&out);
		return error("cannot create %s:", tmp);
	}
	if (write(fd, out.s, out.len) != (ssize_t)out.len || fsync(fd) < 0)
		r = error("cannot write %s:", tmp);
	if (close(fd) < 0 && !r)
		r = error("cannot write %s:", tmp);
	if (!r && rename(tmp, file) < 0)
		r = error("cannot rename %s to %s:", tmp, file);
	if (r)
		unlink(tmp);
	buf_release(&out);
	return r;
}

struct context *context_find(const struct contexts *cs, const char *name)
{
	for (size_t i = 0; name && i < cs->n; i++)
		if (!strcmp(cs->v[i].name, name))
			return &cs->v[i];
	return NULL;
}

const char *context_missing(const struct contexts *cs, const char *name)
{
	const char **names = amalloc((cs->n + 1) * sizeof(*names)), *sug;

	for (size_t i = 0; i < cs->n; i++)
		names[i] = cs->v[i].name;
	sug = closest(name, names, cs->n);
	return sug ? aprintf("no context '%s'; did you mean '%s'?", name, sug) : aprintf("no context '%s'", name);
}

const struct context *context_select(const char *flag, const char **from, const char **err)
{
	const char *env = getenv("IDPMAKE_CONTEXT"), *name;
	struct contexts cs;

	*err = NULL;
	active = NULL;
	gave_server = gave_remote = 0;
	if (flag) {
		name = flag;
		*from = "--context";
	} else if (env && *env) {
		name = env;
		*from = "IDPMAKE_CONTEXT";
	} else {
		name = NULL;
		*from = "context use";
	}
	if (contexts_load(&cs) < 0) {
		*err = aprintf("cannot read the contexts in %s (see above)", context_file());
		return NULL;
	}
	if (!name)
		name = cs.current;
	if (!name)
		return NULL;
	if (!(active = context_find(&cs, name)))
		*err = aprintf("%s (%s): see 'idpmake context list'", context_missing(&cs, name), *from);
	active_from = *from;
	return active;
}

const struct context *context_active(void)
{
	return active;
}

int context_chosen(void)
{
	return active && strcmp(active_from, "context use");
}

const char *context_from(void)
{
	return active ? active_from : NULL;
}

int context_gave_server(void)
{
	return gave_server;
}

int context_ignored_server(void)
{
	return ignored_server;
}

int context_gave_remote(void)
{
	return gave_remote;
}

void context_apply(struct distro *d)
{
	const char *remote;

	gave_server = gave_remote = ignored_server = 0;
	if (!active)
		return;
	/* the remote the run pushes to: the distro's, or the one this context gives (below) */
	remote = active->git_remote && (context_chosen() || !d->git.remote) ? active->git_remote : d->git.remote;
	/* the default context fills in no Argo CD for a distro that names none and pushes to a repository on
	 * this machine, which no Argo CD could read (the quickstart in a shell with a context in use) */
	if (active->argocd_server && !context_chosen() && !d->argocd.server && !d->argocd.named &&
	    remote_is_local(remote)) {
		ignored_server = 1;
	} else if (active->argocd_server && (context_chosen() || !d->argocd.server)) {
		/* chosen for the run: over the distro; the default: only what the distro leaves out */
		d->argocd.server = active->argocd_server;
		/* the distro's token and TLS settings belong to its own server, not this one */
		d->argocd.token_file = active->token_file;
		d->argocd.ca_file = active->ca_file;
		d->argocd.insecure = active->insecure;
		/* nor its login (the admin password of its cluster) or the path its API is under, nor its git
		 * credentials (repository:register would send them to this server) */
		memset(&d->argocd.login, 0, sizeof(d->argocd.login));
		memset(&d->git.credentials, 0, sizeof(d->git.credentials));
		d->argocd.grpc_web_root_path = NULL;
		gave_server = 1;
	}
	if (active->git_remote && (context_chosen() || !d->git.remote)) {
		d->git.remote = active->git_remote;
		/* the distro's git credentials are its own remote's, and so is where Argo CD reads it */
		memset(&d->git.credentials, 0, sizeof(d->git.credentials));
		d->argocd.repo_url = NULL;
		gave_remote = 1;
	}
}
