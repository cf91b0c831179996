/* cmd-render.c - `render` (to stdout or -o DIR) and `diff` (against the GitOps repository) */
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/bundle.h"
#include "cmd/cmd.h"
#include "git/gitops.h"
#include "base/hash.h"
#include "review/diffout.h"
#include "review/helmdiff.h"
#include "review/livediff.h"
#include "render/render.h"
#include "review/rendered.h"
#include "review/revdiff.h"
#include "render/share.h"
#include "git/source.h"
#include "base/util.h"

int cmd_render(struct ctx *c)
{
	int r, failed = 0;

	if ((r = ctx_load(c, 1)))
		return r;
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		struct bundle b;
		/* what a target names: a render it needs (a Cluster's class) renders for it, unprinted */
		if (s->kind != STEP_RENDER || !s->selected || !s->targeted)
			continue;
		if (c->outdir)
			rmtree(aprintf("%s/%s", c->outdir, s->gitpath));	/* the folder is exactly the render */
		if (render_one(c, s, &b) < 0) {
			failed = 1;
			if (c->keep_going && failed >= c->keep_going)
				break;
			continue;
		}
		for (size_t k = 0; k < b.n; k++) {
			if (c->outdir) {
				const char *p = aprintf("%s/%s/%s", c->outdir, s->gitpath, b.v[k].name);
				if (mkdirs_user(path_dir(p)) < 0 || write_file_user(p, b.v[k].data, b.v[k].len) < 0) {
					error("cannot write %s:", p);
					free(b.v);
					return 1;
				}
			} else {
				printf("---\n# %s/%s\n", s->gitpath, b.v[k].name);
				fwrite(b.v[k].data, 1, b.v[k].len, stdout);
			}
		}
		if (c->outdir)
			fprintf(stderr, "%s: %zu files in %s/%s\n", s->id, b.n, c->outdir, s->gitpath);
		free(b.v);
	}
	return failed;
}

/* ---- diff ---- */

/*
 * One object's patch: printed, or (objs, diff --json) one object
 * {"file":..., "status":"create|change|delete", "diff":"<unified diff>"}, an
 * application.yaml whose chart Argo CD renders with its objects' patches too
 * ("objects":[{"file":..., "diff":...}]).  A file not read has no "diff".
 */
static int print_patch(json_t *objs, int color, const char *path, const char *status, const char *old, size_t oldlen,
		       const char *new, size_t newlen)
{
	const char *head, *patch;
	json_t *o = NULL, *sub = NULL;

	if (objs) {
		o = json_pack("{s:s, s:s}", "file", path, "status", status);
		json_array_append_new(objs, o);
		if (!old && !new)
			return 0;
	}
	if (diff_patch(path, old, oldlen, new, newlen, &head, &patch) < 0)
		return -1;
	if (o) {
		json_object_set_new(o, "diff", json_string(aprintf("%s%s", head, patch)));
	} else {
		diff_print(head, color);
		diff_print(patch, color);
	}
	/* a chart Argo CD renders: the objects it would render differently (helmdiff.h) */
	if (!strcmp(path_base(path), "application.yaml")) {
		struct helmdiff hd;
		if (!helmdiff(old, oldlen, new, newlen, &hd))
			return 0;
		if (hd.why) {
			warn("%s: the objects of %s are not shown: %s", term_safe(path), hd.what, hd.why);
			return 0;
		}
		if (o)
			json_object_set_new(o, "objects", sub = json_array());
		else
			printf("%s# %s: %s, rendered here by helm template as Argo CD would: %zu object%s differ%s%s\n",
			       color ? "\033[1m" : "", term_safe(path), hd.what, hd.n, hd.n == 1 ? "" : "s",
			       hd.n == 1 ? "s" : "", color ? "\033[m" : "");
		for (size_t i = 0; i < hd.n; i++) {
			const char *p = aprintf("%s/helm-template/%s", path_dir(path), hd.v[i].name);
			if (diff_patch(p, hd.v[i].old, hd.v[i].oldlen, hd.v[i].new, hd.v[i].newlen, &head, &patch) < 0)
				return -1;
			if (sub) {
				json_array_append_new(sub, json_pack("{s:s, s:s}", "file", p, "diff", aprintf("%s%s", head, patch)));
				continue;
			}
			diff_print(head, color);
			diff_print(patch, color);
		}
	}
	return 0;
}

/* does a target name a package of folder f itself (not only one that needs it)? */
static int folder_targeted(const struct folder *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->steps[i]->targeted)
			return 1;
	return 0;
}

int cmd_diff(struct ctx *c)
{
	struct gitops_opts go;
	struct folder *fo;
	size_t nf;
	int r, changed = 0, fetched = 0, color = diff_color(c);
	json_t *objs = NULL;	/* --json: the objects that differ */
	char tip[41] = "";

	if (c->no_rules && !c->rev) {
		fprintf(stderr, "idpmake: --no-rules goes with diff --rev (the renders of another revision)\n");
		return 2;
	}
	if (c->rev)
		return cmd_diff_rev(c);	/* revdiff.c: two revisions of the distro's repository */
	if (c->from)
		return livediff_from(c);
	if (c->live)
		return livediff_live(c);
	if (livediff_is_clusters(c))
		return livediff_clusters(c);
	if (c->outdir) {
		fprintf(stderr, "idpmake: diff -o FILE saves a diff --live or a diff of two clusters\n");
		return 2;
	}
	if ((r = ctx_load(c, 1)))
		return r;
	/*
	 * The fetch writes into STATE/repo, whose stale *.lock files `up`
	 * removes under the state lock: diff takes the same lock.
	 */
	if (mkdirs(c->statedir) < 0)
		return error("cannot create the state folder %s:", c->statedir), 1;
	if (state_lock(c->st, c->wait) < 0)
		return 1;
	git_libgit2_init();
	go = ctx_gitops(c);
	nf = share_folders(c->g, &fo);	/* a _shared folder is diffed once, not once per cluster */
	objs = c->json ? json_array() : NULL;
	for (size_t i = 0; i < nf; i++) {
		struct step *s = fo[i].steps[0];
		struct remote_files rf = { .folder = s->gitpath };
		struct bundle b;
		size_t a = 0, k = 0;
		if (!folder_targeted(&fo[i]))
			continue;	/* only needed by a target (a Cluster's class): as render, not shown */
		if (render_one(c, s, &b) < 0) {
			json_decref(objs);
			return 1;
		}
		if (gitops_read(&go, !fetched, s->gitpath, remote_files_collect, &rf, tip) < 0) {
			remote_files_free(&rf);
			free(b.v);
			json_decref(objs);
			return 1;
		}
		fetched = 1;
		/* merge the two sorted lists */
		while (a < rf.n || k < b.n) {
			int cmp = a >= rf.n ? 1 : k >= b.n ? -1 : strcmp(rf.name[a], b.v[k].name);
			const char *path;
			if (cmp < 0) {
				path = aprintf("%s/%s", s->gitpath, rf.name[a]);
				if (rf.data[a] || objs)	/* one not read was reported */
					print_patch(objs, color, path, "delete", rf.data[a], rf.len[a], NULL, 0);
				changed++;
				a++;
			} else if (cmp > 0) {
				path = aprintf("%s/%s", s->gitpath, b.v[k].name);
				print_patch(objs, color, path, "create", NULL, 0, b.v[k].data, b.v[k].len);
				changed++;
				k++;
			} else {
				if (remote_file_differs(&rf, a, b.v[k].data, b.v[k].len)) {
					path = aprintf("%s/%s", s->gitpath, b.v[k].name);
					if (rf.data[a] || objs)
						print_patch(objs, color, path, "change", rf.data[a], rf.len[a],
							    rf.data[a] ? b.v[k].data : NULL, b.v[k].len);
					changed++;
				}
				a++;
				k++;
			}
		}
		remote_files_free(&rf);
		free(b.v);
	}
	/* diff --json: {"version":1, "mode":"gitops", "commit":..., "differ":N, "objects":[print_patch's]} */
	if (objs)
		json_print(json_pack("{s:i, s:s, s:s?, s:i, s:o}", "version", 1, "mode", "gitops", "commit", *tip ? tip : NULL,
				     "differ", changed, "objects", objs), 1);
	fprintf(stderr, "idpmake: %d object%s differ%s from the GitOps repository\n", changed, changed == 1 ? "" : "s",
		changed == 1 ? "s" : "");
	/* who made the differences that are not idpmake's (the fetch above is fresh) */
	if (show_drift(c, !fetched, stderr, NULL) < 0)
		return 1;
	return c->exit_code && changed ? 1 : 0;
}
