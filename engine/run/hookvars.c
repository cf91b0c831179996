/* hookvars.c - the distro variables a hook's key holds (hookvars.h) */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "distro/manifest.h"
#include "render/planner.h"
#include "run/hook.h"
#include "run/hookscript.h"
#include "run/hookvars.h"
#include "base/util.h"

#define PREFIX "IDPMAKE_VAR_"

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* a command that prints the whole environment: `env`, `printenv`, `export -p`, `declare -p`, `set` alone */
static int dumps_env(const char *text)
{
	static const char *const cmds[] = { "env", "printenv", "export -p", "declare -p", "declare -x", "set" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(*cmds); i++) {
		size_t n = strlen(cmds[i]);
		for (const char *q = strstr(text, cmds[i]); q; q = strstr(q + 1, cmds[i])) {
			const char *e = q + n;
			if (q > text && !strchr(" \t\n;&|(`$", q[-1]))
				continue;
			while (*e == ' ' || *e == '\t')
				e++;
			if (!*e || strchr("\n;&|)>`", *e))
				return 1;
		}
	}
	return 0;
}

/*
 * What text names, as words: "E:NAME" for IDPMAKE_VAR_NAME, "V:name" for
 * ${name}, "*" for a name idpmake cannot see: IDPMAKE_ or a part of
 * IDPMAKE_VAR_ with no name after it (`grep ^IDPMAKE_`, `${!IDPMAKE_VAR_@}`,
 * `IDPMAKE_VAR_$x`), or a command that prints the whole environment.
 */
static void scan(const char *text, struct buf *out)
{
	size_t plen = strlen(PREFIX);

	if (dumps_env(text))
		buf_adds(out, " *");
	for (const char *q = strstr(text, "IDPMAKE_"); q; q = strstr(q + 1, "IDPMAKE_")) {
		const char *e = q + plen;
		if (q > text && name_char(q[-1]))
			continue;	/* XIDPMAKE_: another name */
		if (strncmp(q, PREFIX, plen)) {
			/* IDPMAKE_CLUSTER and the like are not variables; IDPMAKE_, IDPMAKE_V... cut short may be */
			size_t k = 8;
			while (k < plen && q[k] == PREFIX[k])
				k++;
			if (!name_char(q[k]))
				buf_adds(out, " *");
			continue;
		}
		while (name_char(*e))
			e++;
		if (e == q + plen)
			buf_adds(out, " *");
		else
			buf_addf(out, " E:%.*s", (int)(e - q - plen), q + plen);
	}
	for (const char *q = strstr(text, "${"); q; q = strstr(q + 2, "${")) {
		const char *e = q + 2;
		while (name_char(*e) || *e == '-' || *e == '.')
			e++;
		if (*e == '}' && e > q + 2)
			buf_addf(out, " V:%.*s", (int)(e - q - 2), q + 2);
	}
}

#define HOOKVARS_MAX (1 << 20)	/* a file larger is not read: every variable is in the hook's key */

/* what a file names (scan), through the state's cache by its content hash */
static const char *scan_file(struct planner *pl, const char *path)
{
	const char *cache = aprintf("hookvars:%s", path), *r;
	struct hash h;
	struct buf b = BUF_INIT;
	struct stat st;
	size_t len;
	char *text;

	if (access(path, F_OK) < 0 || planner_file_hash(pl, path, &h) < 0)
		return "";	/* missing: plan_hook_hash says so, and the step runs */
	if ((r = state_tool(pl->st, cache, h)))
		return r;
	if (stat(path, &st) < 0 || st.st_size > HOOKVARS_MAX || !(text = read_file(path, &len))) {
		r = " *";	/* unreadable here, or too big to read whole: every variable, as before */
		state_tool_put(pl->st, cache, h, r);
		return r;
	}
	buf_addc(&b, '.');
	if (memchr(text, 0, len))
		buf_adds(&b, " *");	/* a NUL: a binary, or text the scan would stop at; every variable */
	else
		scan(text, &b);
	free(text);
	r = astrdup(b.s);
	buf_release(&b);
	state_tool_put(pl->st, cache, h, r);
	return r;
}

struct scripts {
	struct planner *pl;
	struct buf *b;
};

static void add_script(void *ctx, const char *word, const char *path)
{
	struct scripts *sc = ctx;
	(void)word;
	buf_addf(sc->b, " %s ", scan_file(sc->pl, path));
}

static void add_name(const char ***v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], name))
			return;
	*v = agrow(*v, *n, sizeof(**v));
	(*v)[(*n)++] = name;
}

/* the variable of v whose IDPMAKE_VAR_ spelling is PREFIX token, or NULL */
static const char *by_env(const struct vars *v, const char *token)
{
	const char *want = aprintf(PREFIX "%s", token);

	for (size_t l = 1; l < v->n; l++)
		for (size_t i = 0; i < v->layer[l]->n; i++)
			if (!strcmp(hook_var_env(v->layer[l]->v[i].key), want))
				return v->layer[l]->v[i].key;
	return NULL;
}

int hook_vars(struct planner *pl, const struct hook *hk, const struct vars *v, const char ***names, size_t *n)
{
	struct buf b = BUF_INIT;
	int all = 0;

	*names = NULL;
	*n = 0;
	scan(hk->run, &b);
	for (size_t i = 0; i < hk->env.n; i++)
		scan(hk->env.v[i], &b);
	hook_scripts(hk->run, hk->dir, add_script, &(struct scripts){ pl, &b });
	for (size_t i = 0; i < hk->inputs.n; i++)
		buf_addf(&b, " %s ", scan_file(pl, hk->inputs.v[i]));
	for (size_t i = 0; i < hk->vars.n; i++)
		add_name(names, n, hk->vars.v[i]);
	char *save = NULL;
	for (char *w = b.s ? strtok_r(b.s, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
		const char *var;
		if (!strcmp(w, "."))
			continue;	/* a file's mark (scan_file) */
		if (!strcmp(w, "*"))
			all = 1;
		else if (w[0] == 'V' && w[1] == ':' && vars_get(v, w + 2))
			add_name(names, n, astrdup(w + 2));
		else if (w[0] == 'E' && w[1] == ':' && (var = by_env(v, w + 2)))
			add_name(names, n, var);
	}
	buf_release(&b);
	return all && !hk->has_vars;
}
