/* cmd-status.c - `status`, `log` and `forget`: what the state remembers */
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "distro/fleet.h"
#include "run/build.h"
#include "base/util.h"

static const char *when(long long t)
{
	char buf[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !gmtime_r(&tt, &tm))
		return "-";
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return astrdup(buf);
}

static const char *hexs(struct hash h)
{
	char b[33];
	if (hash_zero(h))
		return NULL;
	hash_hex(h, b);
	return astrdup(b);
}

/*
 * Is step s one the targets name themselves (not one they need)?  CLUSTER/
 * names that cluster's steps, its register step among them; CLUSTER/PKG
 * that package's on it; PKG that package's everywhere.  Clusters and
 * packages as the targets write them: a package's group (an argocd-app
 * package's Applications), globs (fnmatch) as the selection takes.
 */
/* a target's package part as select.c's package_match takes it: a name, a group (argocd-app), globs over either */
static int pkg_named(const struct package *p, const char *pattern)
{
	if (!strpbrk(pattern, "*?["))
		return package_is(p, pattern);
	return !fnmatch(pattern, p->name, 0) || (p->group && !fnmatch(pattern, p->group, 0));
}

static int named(const struct step *s, char *const *targets, size_t n)
{
	for (size_t t = 0; t < n; t++) {
		const char *tg = targets[t], *slash = strchr(tg, '/');
		const char *cl = slash ? astrndup(tg, (size_t)(slash - tg)) : NULL;
		if (slash ? s->cluster && cluster_name_match(cl, s->cluster->name) &&
				    (!slash[1] || (s->pkg && pkg_named(s->pkg, slash + 1)))
			  : s->pkg && pkg_named(s->pkg, tg))
			return 1;
	}
	return 0;
}

int cmd_status(struct ctx *c)
{
	int r;
	json_t *steps = NULL;

	if ((r = ctx_load(c, 1)))
		return r;
	if (c->json)
		steps = json_array();
	else
		printf("%-6s  %-40s  %-12s  %-12s  %-9s  %-20s  %s\n", "result", "step", "key", "output", "commit", "at", "ms");
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		struct record rec = state_step(c->st, s->id);
		const char *result = !rec.have ? "never" : rec.ok ? "ok" : "failed";
		struct pushed p;
		/* with targets, theirs alone: not the steps of what they need (earlier waves' clusters...) */
		if (!s->selected || (c->ntargets && !named(s, c->targets, c->ntargets)))
			continue;
		/* a render: the commit that holds its output in its folder (a clone's: what it was taken from) */
		if (s->kind == STEP_RENDER && !rec.commit && rec.have &&
		    state_pushed(c->st, pushed_key(&c->pl, s->gitpath), &p) && hash_eq(p.output, rec.output))
			rec.commit = p.commit;
		if (c->json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(s->id));
			json_object_set_new(o, "kind", json_string(step_kind_name(s->kind)));
			json_object_set_new(o, "result", json_string(result));
			json_object_set_new(o, "key", hexs(rec.key) ? json_string(hexs(rec.key)) : json_null());
			json_object_set_new(o, "output", hexs(rec.output) ? json_string(hexs(rec.output)) : json_null());
			json_object_set_new(o, "commit", rec.commit ? json_string(rec.commit) : json_null());
			json_object_set_new(o, "at", rec.at ? json_string(when(rec.at)) : json_null());
			json_object_set_new(o, "ms", rec.have ? json_integer(rec.ms) : json_null());
			if (rec.have && !rec.ok && rec.error)
				json_object_set_new(o, "error", json_string(rec.error));
			json_array_append_new(steps, o);
		} else {
			printf("%-6s  %-40s  %-12.12s  %-12.12s  %-9.9s  %-20s  %s\n", result, s->id,
			       hexs(rec.key) ? hexs(rec.key) : "-", hexs(rec.output) ? hexs(rec.output) : "-",
			       rec.commit ? rec.commit : "-", when(rec.at), rec.have ? aprintf("%d", rec.ms) : "-");
			if (rec.have && !rec.ok && rec.error)
				printf("        error: %s\n", rec.error);
		}
	}
	if (c->json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "version", json_integer(1));
		json_object_set_new(doc, "steps", steps);
		json_print(doc, 1);
	}
	return 0;
}

/* log STEP...: what each step's command printed the last time it ran */
static int step_logs(struct ctx *c)
{
	char **ids = c->targets;
	size_t nids = c->ntargets, len;
	int r;

	c->ntargets = 0;
	if ((r = ctx_load(c, 1)))
		return r;
	for (size_t i = 0; i < nids; i++) {
		const struct step *s = graph_find(c->g, ids[i]);
		const char *log;
		char *text;
		if (!s)
			return fprintf(stderr, "idpmake: log: no step '%s' (the ids: idpmake __complete steps)\n", ids[i]), 2;
		log = step_log_path(c->statedir, s);
		if (!(text = read_file(log, &len))) {
			fprintf(stderr, "idpmake: log: %s has no log in %s/logs: it has not run (or printed nothing)\n",
				s->id, c->statedir);
			return 1;
		}
		if (nids > 1)
			printf("--- %s (%s)\n", s->id, log);
		fwrite(text, 1, len, stdout);
		if (len && text[len - 1] != '\n')
			putchar('\n');
		free(text);
	}
	return 0;
}

int cmd_log(struct ctx *c)
{
	struct run_row *runs;
	size_t n;
	int r;

	if (c->ntargets) {
		if (c->json) {
			fprintf(stderr, "idpmake: log STEP prints a step's output as it is; --json is for the runs\n");
			return 2;
		}
		return step_logs(c);
	}
	if ((r = ctx_load(c, 1)))
		return r;
	runs = state_runs(c->st, &n);
	for (size_t i = 0; i < n; i++) {
		if (c->json) {
			json_t *o = json_object();
			json_object_set_new(o, "run", json_integer(runs[i].id));
			json_object_set_new(o, "started", json_string(when(runs[i].started)));
			json_object_set_new(o, "finished", runs[i].finished ? json_string(when(runs[i].finished)) : json_null());
			json_object_set_new(o, "pid", json_integer(runs[i].pid));
			json_object_set_new(o, "command", json_string(runs[i].command ? runs[i].command : ""));
			json_object_set_new(o, "result", runs[i].result < 0 ? json_null() : json_integer(runs[i].result));
			json_object_set_new(o, "summary", runs[i].summary ? json_string(runs[i].summary) : json_null());
			json_object_set_new(o, "commit", runs[i].commit ? json_string(runs[i].commit) : json_null());
			json_print(o, 0);
			continue;
		}
		printf("run %lld  %s  %s  %s\n    %s\n", runs[i].id, when(runs[i].started), runs[i].command ? runs[i].command : "?",
		       runs[i].result < 0 ? (runs[i].finished ? "?" : "unfinished (interrupted or running)") :
		       runs[i].result == 0 ? "ok" : runs[i].result > 128 ? "interrupted" : "failed",
		       runs[i].summary ? runs[i].summary : "");
	}
	if (!n && !c->json)
		printf("no runs recorded in %s\n", c->statedir);
	return 0;
}

/*
 * forget --all removes state.db without reading the distro or the database:
 * the way out when the state is damaged or from a newer idpmake.  The next
 * up redoes every step; its push finds the remote already holding what was
 * pushed, and makes no commit for it.
 */
static int forget_all(struct ctx *c)
{
	int r;

	if (c->ntargets || c->labels.n) {
		fprintf(stderr, "idpmake: forget --all takes no targets or -l: it removes the whole state\n");
		return 2;
	}
	if (!c->statedir)
		c->statedir = path_join(path_dir(c->file), ".idpmake");
	if ((r = state_remove(c->statedir, c->wait)) < 0)
		return 1;
	if (r)
		printf("idpmake: removed %s/state.db; the next up redoes every step\n", c->statedir);
	else
		printf("idpmake: no state in %s; nothing to forget\n", c->statedir);
	return 0;
}

int cmd_forget(struct ctx *c)
{
	int r, n = 0;

	char **ids = NULL;
	size_t nids = 0, nt = 0;

	if (c->all)
		return forget_all(c);
	/* STEP ids (CLUSTER:register, c/web:sync, ...) name one step; the rest are targets */
	for (size_t t = 0; t < c->ntargets; t++) {
		if (strchr(c->targets[t], ':')) {
			ids = agrow(ids, nids, sizeof(*ids));
			ids[nids++] = c->targets[t];
		} else {
			c->targets[nt++] = c->targets[t];
		}
	}
	c->ntargets = nt;
	if ((r = ctx_load(c, 0)))
		return r;
	for (size_t i = 0; i < nids; i++)
		if (!graph_find(c->g, ids[i]))
			return fprintf(stderr, "idpmake: forget: no step '%s' (see idpmake graph --format json)\n", ids[i]), 2;
	if (state_lock(c->st, c->wait) < 0)
		return 1;
	for (size_t i = 0; i < nids; i++) {
		int m = state_forget(c->st, ids[i]);
		if (m < 0)
			return 1;
		n += m;
	}
	if (nids && !nt && !c->labels.n) {
		/* only steps were named */
	} else if (!c->ntargets && !c->labels.n) {
		n = state_forget(c->st, NULL);
	} else if (!c->ntargets) {
		/* -l: the labelled packages' steps, not what they need */
		for (size_t i = 0; i < c->g->nsteps; i++) {
			struct step *s = c->g->steps[i];
			int m;
			if (s->selected && s->pkg && unit_labels_match(s->cluster, s->pkg, &c->labels) && (m = state_forget(c->st, s->id)) > 0)
				n += m;
		}
	} else {
		for (size_t i = 0; i < c->g->nsteps; i++) {
			struct step *s = c->g->steps[i];
			int m;
			if (!s->selected || !s->pkg)
				continue;
			/* only the named packages, not what they need */
			if (named(s, c->targets, c->ntargets) && (m = state_forget(c->st, s->id)) > 0)
				n += m;
		}
	}
	if (n < 0)
		return 1;
	printf("idpmake: forgot %d step%s; the next up redoes them\n", n, n == 1 ? "" : "s");
	return 0;
}
