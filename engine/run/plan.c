/*
 * plan.c - what a step's key is, and whether the step runs.
 *
 * Keys (engine.md):
 *   render  H(rule definition, tool version, package spec, namespace,
 *             destination, folder, vars (if the package uses any),
 *             values files, the source tree's content hash)
 *   push    H(sorted (folder, output hash) pairs that differ from the repository)
 *   sync    H(render output hash, the Application idpmake sends, the server)
 *   hook    H(command, inputs' contents, the contents of the scripts the
 *             command names (plan_hook_hash), the variables it reads by
 *             name and value (hookkey.h, hookvars.h))
 *           + for `when: changed`, the key of the package's sync
 *
 * A step runs when its key differs from the key of its last success.
 * Renders are decided up front (their keys depend only on files); every
 * other step is decided when its in-steps have finished, because its key
 * depends on their outputs: this is what gives early cutoff, since a render
 * that produced the same output leaves its sync's key unchanged.
 *
 * The stat cache (hash.h): a source tree whose stat fingerprint matches the
 * recorded one, recorded when no file was racy, keeps its recorded content
 * hash; no file is opened.  A no-op run therefore reads distro.yaml, stats
 * the source trees, and reads state.db; nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "argo/argocd.h"
#include "base/buf.h"
#include "render/bundle.h"
#include "base/exec.h"
#include "run/hookkey.h"
#include "run/hookscript.h"
#include "run/keyinputs.h"
#include "argo/kubectl.h"
#include "distro/manifest.h"
#include "run/orphans.h"
#include "git/lazycache.h"
#include "run/kindcluster.h"
#include "run/provision.h"
#include "run/capimgmt.h"
#include "render/capicheck.h"
#include "run/classplan.h"
#include "run/plan.h"
#include "run/register.h"
#include "git/remotekeys.h"
#include "run/rollout.h"
#include "run/tlscert.h"
#include "render/scan.h"
#include "render/share.h"
#include "git/source.h"
#include "base/util.h"
#include "base/yaml.h"

/* the content hash of one file, through the stat cache (name "f:PATH") */
static const char *tool_version(struct planner *pl, struct rule *r, const char **err)
{
	static struct {
		struct rule *r;
		const char *v;
	} memo[64];
	const char *path, *v;
	struct stat st;
	struct hash sh;

	for (size_t i = 0; i < 64 && memo[i].r; i++)
		if (memo[i].r == r)
			return memo[i].v;
	if (!r->version.n)
		return "";
	if (!(path = which(r->version.v[0])) || stat(path, &st) < 0) {
		*err = aprintf("'%s' (the %s renderer) is not installed", r->version.v[0], r->name);
		return NULL;
	}
	{
		struct hasher *h = hasher_new();
		hasher_adds(h, path);
		hasher_add(h, &st.st_size, sizeof(st.st_size));
		hasher_add(h, &st.st_mtim, sizeof(st.st_mtim));
		hasher_add(h, &st.st_ino, sizeof(st.st_ino));
		for (size_t i = 0; i < r->version.n; i++)
			hasher_adds(h, r->version.v[i]);
		sh = hasher_end(h);
	}
	if (!(v = state_tool(pl->st, path, sh))) {
		if (!(v = rule_tool_version(r, err)))
			return NULL;
		state_tool_put(pl->st, path, sh, v);
	}
	for (size_t i = 0; i < 64; i++)
		if (!memo[i].r) {
			memo[i].r = r;
			memo[i].v = v;
			break;
		}
	return v;
}

static struct hash hs(const char *s)
{
	return hash_bytes(s ? s : "", s ? strlen(s) : 0);
}

/*
 * helm: the chart's name and version as a key input, named so that explain
 * and plan say which version changed: the pinned version of a repository
 * chart ("(latest)" when none is pinned), or the name and version in a
 * chart folder's Chart.yaml.  The name never holds a '/', which key_of
 * would take for a per-file entry.
 */
static const char *chart_version_input(const struct distro *d, const struct step *s)
{
	const struct package *p = s->pkg;
	const char *name = NULL, *version = NULL;

	if (p->src == SRC_CHART) {
		struct vars v;
		vars_init(&v, d, s->cluster, p, s->namespace);
		name = expand(p->chart.name, p->loc, &v);
		version = p->chart.version ? expand(p->chart.version, p->loc, &v) : "(latest)";
	} else if (p->path) {
		const char *file = path_join(p->path, "Chart.yaml");
		size_t len, n;
		char *text = read_file(file, &len);
		struct ypool *yp;
		struct ynode **docs;
		if (!text)
			return "chart (no Chart.yaml)";
		yp = ypool_new();
		if (yaml_parse(yp, file, text, len, &docs, &n) == 0 && n && docs[0]->type == Y_MAP) {
			const struct ynode *x;
			if ((x = yget(docs[0], "name")) && x->type == Y_SCALAR)
				name = astrdup(x->s);
			if ((x = yget(docs[0], "version")) && x->type == Y_SCALAR)
				version = astrdup(x->s);
		}
		ypool_free(yp);
		free(text);
	}
	{
		char *in = aprintf("chart %s version %s", name ? name : "(unnamed)", version ? version : "(none)");
		for (char *c = in; *c; c++)
			if (*c == '/')
				*c = '_';
		return in;
	}
}

/*
 * A class package's render on MGMT: the classes the Clusters synced there
 * name (the rows MGMT/cluster-NAME:class, build.c), sorted, deduplicated;
 * capiclass.c keeps their revisions.
 */
/* the components of a render's key; files: the tree's per-file hashes too */
static int render_components(struct planner *pl, struct step *s, struct inputs *in, int files)
{
	struct package *p = s->pkg;
	struct rule *r = p->rule;
	const struct distro *d = pl->g->d;
	const char *err = NULL, *tv;
	int uses_vars = strstr(p->spec, "${") || strstr(r->definition, "${") || p->values.n;

	inputs_add(in, "rule", hs(r->definition));
	if ((r->builtin != RENDER_HELM || p->render_local) && r->version.n) {
		/* a missing tool fails this render when it runs, with its own message, not the plan */
		if (!(tv = tool_version(pl, r, &err)))
			tv = aprintf("(unavailable: %s)", err);
		inputs_add(in, "tool version", hs(tv));
	}
	inputs_add(in, "package spec", hs(p->spec));
	if (r->builtin == RENDER_CAPI && capi_class_render(s))
		/* checked against its class's render (capicheck.c): another class, another check; the class
		 * render's key, known once it is decided (before this one: an in-step), where its output is not */
		inputs_add(in, "class", capi_class_render(s)->key);
	classplan_inputs(pl, s, in);	/* a class package's revisions (classplan.c) */
	inputs_add(in, "namespace", hs(s->namespace));
	if (r->builtin == RENDER_HELM || r->builtin == RENDER_ARGOCD_APP) {
		/* these render an Application: its folder, name and destination are output */
		struct hasher *h = hasher_new();
		inputs_add(in, "folder", hs(s->gitpath));
		hasher_adds(h, s->cluster->name);
		hasher_adds(h, s->cluster->server);
		hasher_adds(h, s->cluster->argo_name);
		hasher_adds(h, d->argocd.namespace);
		hasher_adds(h, d->argocd.project);
		hasher_adds(h, d->argocd.app_name);
		hasher_adds(h, d->git.branch);
		hasher_adds(h, pl->rc.remote_url);
		inputs_add(in, "destination", hasher_end(h));
	}
	if (uses_vars)
		inputs_add(in, "vars", vars_hash(d, s->cluster, p, s->namespace, p->values.n > 0));
	if (files)	/* for explain and the state: each variable, each field, with its value (keyinputs.h) */
		keyin_render(pl, in, s, uses_vars);
	if (r->builtin == RENDER_HELM && p->src == SRC_CHART)
		inputs_add(in, chart_version_input(d, s), hs("chart version"));
	for (size_t i = 0; i < p->values.n; i++) {
		struct hash h;
		if (planner_file_hash(pl, p->values.v[i], &h) < 0)
			return -1;
		inputs_add(in, aprintf("values %s", p->values.v[i]), h);
	}
	if (p->src == SRC_GIT) {
		/* the source at its resolved commit: the commit joins the key, the files are hashed as a path's */
		char commit[41];
		const char *dir, *err2;
		if (source_git(pl->st, pl->statedir, p, pl->refresh, pl->dry_run, commit, &dir, &err2) < 0)
			return error("%s: %s", s->id, err2);
		p->path = dir;
		inputs_add(in, "git commit", hs(commit));
	}
	if (r->builtin == RENDER_HELM && p->src != SRC_CHART && p->path)
		inputs_add(in, chart_version_input(d, s), hs("chart version"));
	if (p->path) {
		struct tree *t = s->tree;
		const char *name = tree_name(p);
		if (!t) {
			t = xcalloc(1, sizeof(*t));
			s->tree = t;
			if (scan_tree(p->path, &r->inputs, t) < 0)
				return -1;
		}
		if (!t->known) {
			struct hash fp, content;
			int racy;
			if (state_tree(pl->st, name, &fp, &racy, &content) && hash_eq(fp, t->fingerprint) && !racy) {
				t->content = content;
				t->known = 1;
			} else {
				struct tree_file *old;
				size_t nold;
				state_tree_files(pl->st, name, &old, &nold);
				if (hash_tree(t, old, nold, pl->run_start) < 0)
					return -1;
				if (!pl->dry_run)
					state_tree_put(pl->st, name, t);
				t->known = 2;
			}
		}
		inputs_add(in, "files", t->content);
		if (files) {
			if (t->known == 1) {
				/* hashes from the stat cache: the recorded per-file list */
				struct tree_file *old;
				size_t nold;
				state_tree_files(pl->st, name, &old, &nold);
				for (size_t i = 0; i < nold; i++)
					inputs_add(in, aprintf("%s/%s", p->path, old[i].path), old[i].h);
			} else {
				tree_inputs(t, p->path, in);
			}
		}
	}
	return 0;
}

static struct hash key_of(const struct inputs *in)
{
	/* per-file entries are for explain; "files" stands for them in the key */
	struct inputs k = { 0 };
	for (size_t i = 0; i < in->n; i++) {
		const char *n = in->v[i].name;
		if ((strchr(n, '/') && strncmp(n, "values ", 7)) || keyin_detail(n))
			continue;
		inputs_add(&k, n, in->v[i].h);
	}
	return inputs_hash(&k);
}

int plan_inputs(struct planner *pl, struct step *s, struct inputs *in)
{
	memset(in, 0, sizeof(*in));
	if (s->kind == STEP_RENDER)
		return render_components(pl, s, in, 1);
	if ((s->kind == STEP_PRE || s->kind == STEP_POST) && s->hook)
		hook_inputs(pl, s, in);
	return 0;
}

/*
 * Has this remote and branch received output `h` for s's folder?  When it
 * has, a run does not read the cached bundle (a no-op run reads no file's
 * content); when not, the push will, and the planner checks it first.
 */
static int pushed_as(struct planner *pl, const struct step *s, struct hash h)
{
	struct pushed p;
	return state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) && hash_eq(p.output, h);
}

/*
 * s's folder recorded as pushed with an output nobody read there: an empty
 * state rebuilt from the keys index took the index's word for it
 * (remotekeys.c), and recorded the render at the commit it recorded the
 * folder at (rec, the step's last success); or the cache never held that
 * output.  A render that comes out equal to it checks the folder before the
 * push leaves it (plan_push_changes).  The cache holding the output is no
 * proof for a reconstructed folder: another folder's render, or its check,
 * may have written it.
 */
static int output_unproven(struct planner *pl, struct seen_outputs *seen, const struct step *s,
			   const struct record *rec)
{
	struct pushed p;
	if (!state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) || hash_zero(p.output))
		return 0;
	if (rec->commit && p.commit && !strcmp(rec->commit, p.commit))
		return 1;
	return !bundle_present(pl, seen, p.output);
}

/*
 * A cloned cluster keeps the render it was built or last promoted with
 * (fleet.md "Linked and cloned"): a render of it that would run, and that
 * succeeded before, is held at that output (so nothing is pushed or synced
 * for it) and marked behind, unless this run promotes it.
 */
static void hold_clones(struct planner *pl)
{
	for (size_t i = 0; i < pl->g->nsteps; i++) {
		struct step *s = pl->g->steps[i];
		/* step_cluster: a created cluster's Cluster (capi.h) is held as its other renders are */
		if (s->kind != STEP_RENDER || !s->selected || !s->dirty || step_cluster(s)->mode != MODE_CLONED ||
		    pl->promote || hash_zero(s->old_output))
			continue;
		s->dirty = 0;
		s->behind = 1;
		s->output = s->old_output;
		s->reason = R_UP_TO_DATE;
		s->why = aprintf("cloned: behind the distro (idpmake promote %s)", step_cluster(s)->name);
		if (s->tree) {
			tree_free(s->tree);
			free(s->tree);
			s->tree = NULL;
		}
	}
}

int plan_renders(struct planner *pl)
{
	int ret = 0;
	struct seen_outputs seen;
	size_t cap = 16;

	while (cap < 2 * pl->g->nsteps)
		cap *= 2;
	seen.v = xcalloc(cap, sizeof(*seen.v));
	seen.mask = cap - 1;
	scan_all(pl);
	for (size_t i = 0; i < pl->g->nsteps; i++) {
		struct step *s = pl->g->steps[i];
		struct inputs in = { 0 };
		struct record rec;
		if (s->kind != STEP_RENDER || !s->selected)
			continue;
		if (render_components(pl, s, &in, 0) < 0) {
			ret = -1;
			continue;
		}
		s->key = key_of(&in);
		rec = state_step(pl->st, s->id);
		s->old_key = rec.key;
		s->old_output = rec.output;
		s->dirty = 1;
		if (!rec.have || hash_zero(rec.key)) {
			s->reason = R_NEVER;
			/* plan: up first reads what the GitOps repository proves done (remotekeys.h), plan does not */
			if (pl->dry_run && (pl->g->d->git.remote || access(aprintf("%s/gitops.git", pl->statedir), F_OK) == 0))
				s->why = "never rendered here, unless the GitOps repository's keys index proves its output";
		} else if (!hash_eq(rec.key, s->key)) {
			struct inputs full = { 0 };
			s->reason = R_KEY_CHANGED;
			if (render_components(pl, s, &full, 1) == 0)
				keyin_changed(pl, s, &full);
		} else if (!rec.ok) {
			s->reason = R_FAILED_BEFORE;
		} else if (!bundle_present(pl, &seen, rec.output) && !lazycache_held(pl, s, rec.output)) {
			s->reason = R_FORCED;
			s->why = "rendered output missing from the cache";
		} else if (!pushed_as(pl, s, rec.output) && bundle_check(pl->statedir, rec.output) < 0) {
			/* the push will read it: a truncated or corrupt file is rendered again, never pushed */
			s->reason = R_FORCED;
			s->why = "rendered output in the cache is corrupt";
		} else if (classplan_stale(pl, s, &rec)) {
			;	/* a class revision its folder drops (classplan.c): s->reason, s->why */
		} else {
			s->dirty = 0;
			s->reason = R_UP_TO_DATE;
			s->output = rec.output;
			if (s->tree) {
				/* not needed any more: free the scan */
				tree_free(s->tree);
				free(s->tree);
				s->tree = NULL;
			}
		}
		classplan_from(pl, s, &rec);
		if (s->dirty)
			s->unproven = output_unproven(pl, &seen, s, &rec);
		if (s->dirty && s->tree && s->tree->dropped) {
			/* it renders after all (its spec changed): it needs the file list back */
			struct hash content = s->tree->content;
			if (scan_tree(s->pkg->path, &s->pkg->rule->inputs, s->tree) < 0) {
				ret = -1;
				continue;
			}
			s->tree->content = content;
			s->tree->known = 1;
		}
	}
	/* an empty or lost state: what the GitOps repository proves done is not rendered again */
	if (!ret && pl->reconstruct && !pl->dry_run && remotekeys_renders(pl) < 0)
		warn("cannot read what the GitOps repository holds (%s): rendering", REMOTEKEYS_PATH);
	classplan_sources(pl);
	free(seen.v);
	hold_clones(pl);
	share_group(pl->g);
	return ret;
}

struct hash sync_key(struct planner *pl, struct step *sync, struct hash output)
{
	const struct distro *d = pl->g->d;
	struct package *p = sync->pkg;
	struct hasher *h = hasher_new();
	json_t *app;
	char buf[4096];
	size_t n;

	/* the Application idpmake sends (name, labels, source, destination, project, sync options) */
	if (!pl->repo_url)
		pl->repo_url = argocd_repo_url(d, pl->statedir);
	app = argocd_app_spec(d, sync, pl->repo_url);
	hasher_addh(h, output);
	/* its compact text with sorted keys and a NUL after it, as hasher_adds adds a string */
	if ((n = json_dumpb(app, buf, sizeof(buf), JSON_SORT_KEYS | JSON_COMPACT)) <= sizeof(buf)) {
		hasher_add(h, buf, n);	/* 0: it could not be written, no text */
	} else {
		char *text = json_dumps(app, JSON_SORT_KEYS | JSON_COMPACT);
		hasher_add(h, text ? text : "", text ? strlen(text) : 0);
		free(text);
	}
	hasher_add(h, "", 1);
	hasher_add(h, &p->sync.wait_healthy, sizeof(int));
	{
		int prune = step_prunes(sync);	/* the same bytes as the package's setting where it decides */
		hasher_add(h, &prune, sizeof(int));
	}
	hasher_adds(h, pl->argocd_server ? pl->argocd_server : "");
	json_decref(app);
	return hasher_end(h);
}

/*
 * What idpmake made that step s uses, an in-step of it: the step CLUSTER:kind
 * that makes its cluster (before each of its steps) or the step tls (before
 * each hook); the first of them after `from`, or NULL.
 */
static struct step *made_by(const struct step *s, const struct step *from)
{
	size_t i = 0;

	if (from)
		while (i < s->nin && s->in[i++] != from)
			;
	for (; s->kind != STEP_RENDER && i < s->nin; i++)
		if (s->in[i]->kind == STEP_CREATE || s->in[i]->kind == STEP_TLS || s->in[i]->kind == STEP_PROVISION)
			return s->in[i];
	return NULL;
}

/* key with the outputs of what made what s uses: a cluster made again is another cluster, a new certificate another one */
static struct hash made_mix(const struct step *s, struct hash key)
{
	struct hasher *h;
	const struct step *made;

	if (!made_by(s, NULL))
		return key;
	h = hasher_new();
	hasher_addh(h, key);
	for (made = made_by(s, NULL); made; made = made_by(s, made))
		hasher_addh(h, made->output);
	return hasher_end(h);
}

/*
 * A hook whose key changed: recorded with the key it had before hooks were
 * keyed on the variables they read (hookkey.h), and that one is unchanged,
 * it is up to date, and up records its new key (a `when: once` hook does
 * not run again because idpmake was upgraded); otherwise the inputs that
 * changed name the reason, when the state has them.
 */
static void hook_changed(struct planner *pl, struct step *s, const struct record *rec)
{
	struct inputs now;

	if (rec->ok && hash_eq(rec->key, made_mix(s, hook_legacy_key(pl, s)))) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = NULL;
		if (!pl->dry_run) {
			plan_inputs(pl, s, &now);
			if (state_step_ok(pl->st, s->id, s->key, rec->output, &now, rec->commit, rec->ms) < 0)
				warn("%s: cannot record its key", s->id);
		}
		return;
	}
	plan_inputs(pl, s, &now);
	keyin_changed(pl, s, &now);
}

void plan_decide(struct planner *pl, struct step *s)
{
	struct record rec = state_step(pl->st, s->id);
	struct step *r = render_of(s);
	int upstream = 0, err = 0;
	struct step *made;

	s->old_key = rec.key;
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i]->dirty && pl->dry_run && s->in[i]->state != S_DONE)
			upstream = 1;
	if (s->kind == STEP_PUSH) {
		struct gitops_change *c;
		size_t n;
		struct pushed *np;
		if (upstream) {
			s->dirty = 1;
			s->reason = R_UPSTREAM;
			s->why = "if a render's output changes";
			return;
		}
		plan_push_changes(pl, &c, &n, &np);
		s->dirty = n > 0;
		s->reason = n ? R_KEY_CHANGED : R_UP_TO_DATE;
		if (n) {
			struct hasher *h = hasher_new();
			s->changed.n = 0;
			for (size_t i = 0; i < n; i++) {
				hasher_adds(h, c[i].path);
				hasher_addh(h, np[i].output);
				s->changed.v = agrow(s->changed.v, s->changed.n, sizeof(*s->changed.v));
				s->changed.v[s->changed.n++] = aprintf("%s %s", c[i].path, c[i].bundle ? "changed" : "removed");
			}
			s->key = hasher_end(h);
		}
		return;
	}
	if (s->kind == STEP_WAVE) {
		wave_decide(pl, s, &rec, upstream);
		return;
	}
	if (s->kind == STEP_REGISTER) {
		register_decide(pl, s, &rec);
		return;
	}
	if (s->kind == STEP_CREATE) {
		kindcluster_decide(pl, s, &rec);
		return;
	}
	if (s->kind == STEP_PROVISION || s->kind == STEP_READY) {
		provision_decide(pl, s, &rec);
		return;
	}
	if (s->kind == STEP_CAPICHECK) {
		capimgmt_decide(pl, s, &rec);
		return;
	}
	if (s->kind == STEP_TLS) {
		tlscert_decide(pl, s, &rec);
		return;
	}
	if (s->kind == STEP_SYNC && !s->pkg->deploy_kubectl && !pl->argocd_server) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "skipped: no argocd configured";
		return;
	}
	for (made = made_by(s, NULL); made; made = made_by(s, made))
		if (provision_makes(made)) {
			/* plan: the cluster (or the certificate) is to be made, so what uses it runs */
			s->dirty = 1;
			s->reason = R_UPSTREAM;
			s->why = aprintf("once %s has made the %s", made->id,
					 made->kind == STEP_TLS ? "certificate" : "cluster");
			return;
		}
	if (r && r->dirty && pl->dry_run) {
		s->dirty = 1;
		s->reason = R_UPSTREAM;
		s->why = aprintf("if %s changes its output", r->id);
		return;
	}
	if (s->kind == STEP_SYNC && s->pkg->deploy_kubectl) {
		/* kubectl apply, no Argo CD needed (kubectl.c) */
		s->key = kubectl_key(s, r ? r->output : (struct hash){ 0, 0 });
	} else if (s->kind == STEP_SYNC) {
		/* the incarnation of its cluster in it before anything decides on it: a forced or proven sync
		 * records the key the next run computes */
		s->key = made_mix(s, sync_key(pl, s, r ? r->output : (struct hash){ 0, 0 }));
		if (s->drift) {
			s->dirty = 1;
			s->reason = R_FORCED;
			s->why = s->drift;
			return;
		}
		if (!pl->dry_run && remotekeys_sync(pl, s, &rec))
			return;	/* never recorded here, proven done in Argo CD */
	} else {
		struct step *sync = s;
		while (sync && sync->kind != STEP_SYNC) {
			struct step *next = NULL;
			for (size_t i = 0; i < sync->nout; i++)
				if (sync->out[i]->pkg == s->pkg && sync->out[i]->cluster == s->cluster)
					next = sync->out[i];
			if (!next)
				for (size_t i = 0; i < sync->nin; i++)
					if (sync->in[i]->kind == STEP_SYNC && sync->in[i]->pkg == s->pkg &&
					    sync->in[i]->cluster == s->cluster)
						next = sync->in[i];
			sync = next;
		}
		s->hook_sync = sync && sync->pkg->deploy_kubectl ? kubectl_key(sync, r ? r->output : (struct hash){ 0, 0 }) :
			       sync_key(pl, sync ? sync : s, r ? r->output : (struct hash){ 0, 0 });
		s->key = hook_key(pl, s, &err);
		if (err) {
			s->dirty = 1;
			s->reason = R_KEY_CHANGED;
			s->why = "an input is missing";
			return;
		}
		if (s->hook->when == WHEN_ALWAYS) {
			s->dirty = 1;
			s->reason = R_ALWAYS;
			return;
		}
	}
	if (s->kind != STEP_SYNC || s->pkg->deploy_kubectl)
		s->key = made_mix(s, s->key);	/* a sync's has it already */
	plan_compare(s, &rec, s->kind == STEP_SYNC ?
			 (r && !hash_eq(r->output, rec.output) ? "rendered output changed" :
			  s->pkg->deploy_kubectl ? "how it is applied changed" : "Application spec changed") :
			 s->hook->when == WHEN_ONCE ? "hook command or inputs changed" : "hook or package changed");
	if (s->hook && s->reason == R_KEY_CHANGED)
		hook_changed(pl, s, &rec);
}

/* the folders a push already changes, sorted: a linked folder is changed once */
struct folders {
	const char **v;
	size_t n;
};

/* is path in the set? If not, add it */
static int linked_seen(struct folders *f, const char *path)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(f->v[mid], path);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	memmove(f->v + lo + 1, f->v + lo, (f->n - lo) * sizeof(*f->v));
	f->v[lo] = path;
	f->n++;
	return 0;
}

int plan_push_changes(struct planner *pl, struct gitops_change **v, size_t *n, struct pushed **np)
{
	struct folders seen = { NULL, 0 };
	struct graph *g = pl->g;
	struct orphan_folder *gone;
	size_t ngone;

	*v = NULL;
	*np = NULL;
	*n = 0;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		struct pushed p;
		if (s->kind != STEP_RENDER || !s->selected || s->state == S_FAILED || s->state == S_NOT_RUN)
			continue;
		if (hash_zero(s->output))
			continue;	/* not rendered (dry run) */
		if (state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) && hash_eq(p.output, s->output)) {
			/* the index's word for the output, taken by an empty state: the folder must hold it */
			if (s->unproven == 1) {
				s->unproven = lazycache_holds(pl->statedir, p.commit, s->gitpath, p.output) ? 0 : 2;
				/* a false record is forgotten: a push that fails now is not taken as done later */
				if (s->unproven == 2 && state_pushed_forget(pl->st, pushed_key(pl, s->gitpath)) < 0)
					warn("%s: cannot forget what the keys index claimed for it", s->gitpath);
			}
			if (s->unproven != 2)
				continue;
		}
		if (linked_seen(&seen, s->gitpath))
			continue;	/* a linked folder: its clusters' renders are one (share.c) */
		*v = agrow(*v, *n, sizeof(**v));
		*np = agrow(*np, *n, sizeof(**np));
		(*v)[*n] = (struct gitops_change){ s->gitpath, bundle_path(pl->statedir, s->output), s->key, s->output };
		(*np)[(*n)++] = (struct pushed){ pushed_key(pl, s->gitpath), s->output, NULL };
	}
	free(seen.v);
	/* folders this remote and branch hold of packages no longer in the distro (orphans.c) */
	ngone = orphan_folders(pl, &gone);
	for (size_t i = 0; i < ngone; i++) {
		if (gone[i].kept)
			continue;	/* an Application still names it: kept until it is deleted (orphans.h) */
		*v = agrow(*v, *n, sizeof(**v));
		*np = agrow(*np, *n, sizeof(**np));
		(*v)[*n] = (struct gitops_change){ gone[i].folder, NULL, { 0, 0 }, { 0, 0 } };
		(*np)[(*n)++] = (struct pushed){ gone[i].key, { 0, 0 }, NULL };
	}
	return 0;
}

const char *changed_name(const char *entry)
{
	const char *sp = strrchr(entry, ' ');
	char *name = sp ? astrndup(entry, (size_t)(sp - entry)) : astrdup(entry);
	return !strncmp(name, "values ", 7) ? name + 7 : name;
}

const char *reason_text(const struct step *s)
{
	switch (s->reason) {
	case R_UP_TO_DATE:
		return s->why ? s->why : "up to date";
	case R_NEVER:
		return s->kind == STEP_RENDER ? s->why ? s->why : "never rendered" : "never run";
	case R_KEY_CHANGED:
		if (s->changed.n == 1)
			return s->changed.v[0];
		if (s->changed.n > 1)
			return aprintf("%s (and %zu more)", s->changed.v[0], s->changed.n - 1);
		return s->why ? s->why : "inputs changed";
	case R_FAILED_BEFORE:
		return "failed last time";
	case R_UPSTREAM:
		return s->why ? s->why : "an earlier step changed";
	case R_ALWAYS:
		return "when: always";
	case R_FORCED:
		return s->why ? s->why : "forced";
	}
	return "?";
}
