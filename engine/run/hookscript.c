/*
 * hookscript.c - the scripts a hook's or a wave check's command runs, found
 * in its `run` string (hookscript.h), and the hash of what a hook runs, for
 * the keys of hooks (plan.c) and of wave checks (rollout.c).
 */
#include <string.h>
#include <sys/stat.h>

#include "graph/graph.h"
#include "base/hash.h"
#include "run/hookscript.h"
#include "render/planner.h"
#include "base/util.h"

static int in_list(const char *w, const char *const *v)
{
	w = path_base(w);	/* /bin/sh as sh */
	for (; *v; v++)
		if (!strcmp(w, *v))
			return 1;
	return 0;
}

static int interpreter(const char *w)
{
	static const char *const v[] = { "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "perl", "ruby",
					 "node", ".", "source", NULL };
	return in_list(w, v);
}

/* a command that runs the command after its options (and their values) */
static int wrapper(const char *w)
{
	static const char *const v[] = { "exec", "env", "nice", "nohup", "command", "time", "timeout", "stdbuf",
					 "ionice", "setsid", "xargs", NULL };
	return in_list(w, v);
}

void hook_scripts(const char *run, const char *dir, void (*fn)(void *ctx, const char *word, const char *path), void *ctx)
{
	const char *p = run;
	int first = 1, script = 0, cd = 0;

	while (*p) {
		char word[4096];
		size_t n = 0;
		int expands = 0, redirect = 0;
		struct stat st;
		const char *path;

		for (; *p && strchr(" \t\n;&|<>()", *p); p++) {
			if (strchr("<>", *p))
				redirect = 1;
			else if (!strchr(" \t", *p))
				first = 1, script = 0, cd = 0;
		}
		for (; *p && !strchr(" \t\n;&|<>()", *p); p++) {
			if (*p == '\'' || *p == '"')
				continue;
			if (strchr("$`*?[~\\", *p) || n + 1 >= sizeof(word))
				expands = 1;
			else
				word[n++] = *p;
		}
		word[n] = 0;
		if (!n || redirect)
			continue;
		if (first && strcspn(word, "=/") && word[strcspn(word, "=/")] == '=')
			continue;	/* NAME=value before the command (PATH=.:$PATH too) */
		if (cd) {	/* cd DIR: the commands after it run there */
			cd = 0;
			if (word[0] != '-')
				dir = expands ? NULL : path_join(dir ? dir : "/", word);
			continue;
		}
		if (first && !expands && !strcmp(word, "cd")) {
			cd = 1, first = 0;
			continue;
		}
		if ((first || script) && !expands && (interpreter(word) || wrapper(word))) {
			script = 1, first = 0;	/* the script: the first word after it that is a file */
			continue;
		}
		if (!first && !script)
			continue;	/* an argument */
		if (script && word[0] == '-')
			continue;	/* an option */
		first = 0;
		if (expands || word[0] == '/' || !dir)
			continue;
		path = path_join(dir, word);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;	/* an option's value (timeout 60, nice -n 10), a command on PATH */
		script = 0;
		fn(ctx, word, path);
	}
}

struct script_hash {
	struct planner *pl;
	struct hasher *h;
};

/* a script the hook runs (hookscript.c): its content is in the key */
static void add_script(void *ctx, const char *word, const char *path)
{
	struct script_hash *sh = ctx;
	struct hash fh;

	if (planner_file_hash(sh->pl, path, &fh) < 0)
		return;
	hasher_adds(sh->h, "script");
	hasher_adds(sh->h, word);
	hasher_addh(sh->h, fh);
}

void plan_hook_hash(struct planner *pl, const struct hook *hk, struct hasher *h, int *err)
{
	hasher_adds(h, hk->run);
	hasher_adds(h, hk->dir);
	for (size_t i = 0; i < hk->inputs.n; i++) {
		struct hash fh;
		if (planner_file_hash(pl, hk->inputs.v[i], &fh) < 0)
			*err = 1;
		hasher_adds(h, hk->inputs.v[i]);
		hasher_addh(h, fh);
	}
	hook_scripts(hk->run, hk->dir, add_script, &(struct script_hash){ pl, h });
}
