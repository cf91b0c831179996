/*
 * owner.c - who owns what idpmake makes in Argo CD (owner.h).
 *
 * The check before a run (owner_check):
 *
 *   the selected steps that would create or update something in Argo CD
 *     sync of a package     its Application (and the package's ApplicationSet
 *                           under argocd.fleet or sync.fleet: applicationset;
 *                           an argocd-app package's file may be either)
 *     CLUSTER:register      the cluster, by server
 *        |
 *        v  none: no request at all
 *   one list per kind that has some (GET /api/v1/applications?appNamespace=NS,
 *   /api/v1/applicationsets, /api/v1/clusters); no selector, so that an object
 *   idpmake did not make is seen too; up --refresh's check of the clusters
 *   (register.c) asked first and shares the list of clusters
 *        |
 *        v
 *   each one Argo CD has: whose is it?
 *     label (cluster: annotation) idpmake.io/distro  == this distro's name  ours, when
 *       annotations idpmake.io/gitops-remote and     == where this distro pushes
 *       idpmake.io/gitops-path                          (or absent: made before they
 *                                                   were recorded; the next sync
 *                                                   adds them)
 *       either one differs                          a same-named distro's,
 *                                                   pushing elsewhere
 *     another name                                  another distro's
 *     absent (Application, ApplicationSet)          not made by idpmake
 *     absent (cluster)                              registered by hand: as before,
 *                                                   registered over
 *        |
 *        v
 *   collisions: all printed, exit 1, before any step runs (nothing pushed);
 *   --adopt: each said, and taken over.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argoapi.h"
#include "argocd.h"
#include "cmd.h"
#include "manifest.h"
#include "owner.h"
#include "plan.h"
#include "state.h"
#include "url.h"
#include "util.h"
#include "yaml.h"

/* ---- where a distro pushes ------------------------------------------------ */

const char OWNER_REMOTE[] = "idpmake.io/gitops-remote";
const char OWNER_PATH[] = "idpmake.io/gitops-path";

const char *owner_remote(const char *url)
{
	char *k = astrdup(url_strip(url, 0)), *p = strstr(k, "://"), *host, *end;
	size_t n;

	if (p) {
		for (char *q = k; q < p; q++)
			*q = (char)tolower((unsigned char)*q);
		host = p + 3;
		end = host + strcspn(host, "/");
		for (char *q = host; q < end; q++)
			*q = (char)tolower((unsigned char)*q);
		static const char *const dflt[][2] = { { "https", ":443" }, { "http", ":80" }, { "ssh", ":22" } };
		for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
			size_t sl = strlen(dflt[i][0]), pl = strlen(dflt[i][1]);
			if ((size_t)(p - k) == sl && !strncmp(k, dflt[i][0], sl) && (size_t)(end - host) > pl &&
			    !strncmp(end - pl, dflt[i][1], pl)) {
				memmove(end - pl, end, strlen(end) + 1);
				break;
			}
		}
	}
	n = strlen(k);
	while (n && k[n - 1] == '/')
		n--;
	if (n > 4 && !strncasecmp(k + n - 4, ".git", 4))
		n -= 4;
	while (n && k[n - 1] == '/')
		n--;
	k[n] = 0;
	return k;
}

static const char *home_path(const struct distro *d)
{
	return d->git.path ? d->git.path : "${cluster}/${package}";
}

json_t *owner_annotations(const struct distro *d, const char *repo_url)
{
	return json_pack("{s:s, s:s}", OWNER_REMOTE, owner_remote(repo_url), OWNER_PATH, home_path(d));
}

/*
 * Annotations `ann` of an object this distro's name marks: NULL when they
 * say it is this distro's (or say nothing: made before they were
 * recorded), else where its owner pushes, for a message (cleaned: Argo
 * CD's text)
 */
static const char *home_differs(const struct argocd *a, json_t *ann)
{
	json_t *r = json_object_get(ann, OWNER_REMOTE), *p = json_object_get(ann, OWNER_PATH);
	const char *remote = json_is_string(r) ? json_string_value(r) : NULL, *path = json_is_string(p) ? json_string_value(p) : NULL;

	if ((!remote || !strcmp(owner_remote(remote), owner_remote(a->repo_url))) && (!path || !strcmp(path, home_path(a->d))))
		return NULL;
	return aprintf("pushing to %s at path %s", remote ? clean(a, remote, strlen(remote)) : "?",
		       path ? clean(a, path, strlen(path)) : "?");
}

int owner_same_home(const struct argocd *a, json_t *annotations)
{
	return home_differs(a, annotations) == NULL;
}

/* ---- validate: one name, one step ---------------------------------------- */

struct named_step {
	const char *name;
	const struct step *s;
	size_t at;			/* its place in the graph: the first one is named first */
};

static int named_cmp(const void *a, const void *b)
{
	const struct named_step *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : (x->at > y->at) - (x->at < y->at);
}

void owner_check_names(const struct graph *g)
{
	const struct distro *d = g->d;
	struct named_step *v = xcalloc(g->nsteps + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		struct vars vs;
		const char *name;
		if (s->kind != STEP_SYNC || s->pkg->deploy_kubectl)
			continue;	/* deploy: kubectl makes no Application */
		vars_init(&vs, d, s->cluster, s->pkg, s->namespace);
		if (!(name = expand(d->argocd.app_name, d->argocd.app_name_loc.file ? d->argocd.app_name_loc : s->pkg->loc, &vs)))
			break;	/* said, located */
		v[n++] = (struct named_step){ name, s, i };
	}
	qsort(v, n, sizeof(*v), named_cmp);
	for (size_t i = 1; i < n; i++) {
		const struct step *a = v[i - 1].s, *b = v[i].s;
		if (strcmp(v[i - 1].name, v[i].name))
			continue;
		loc_error(d->argocd.app_name_loc.file ? d->argocd.app_name_loc : b->pkg->loc,
			  "argocd.app-name \"%s\" gives %s/%s and %s/%s the same Application name '%s': each would "
			  "overwrite the other's; make it tell them apart (set app-name, e.g. \"${cluster}--${package}\")",
			  d->argocd.app_name, a->cluster->name, a->pkg->name, b->cluster->name, b->pkg->name, v[i].name);
	}
	free(v);
}

/* ---- up: before anything runs --------------------------------------------- */

enum want_kind { W_APP, W_APPSET, W_CLUSTER, W_REPO, NKINDS };
static const char *const kind_word[] = { "Application", "ApplicationSet", "cluster", "repository" };
static const char *const kind_list[] = { "Applications", "ApplicationSets", "clusters", "repositories" };

struct want {
	enum want_kind kind;
	const char *name;		/* the object's name; a cluster's server */
	const struct step *s;
	int either;			/* an argocd-app package's whose file cannot be read now: it may be either kind */
};

/* s with each credential idpmake holds (the clusters' register.token-env, IDPMAKE_GIT_TOKEN) as "***":
 * a server's message may quote one; the Argo CD token is masked by clean() already */
static const char *masked(const struct distro *d, const char *s)
{
	for (size_t i = 0; s && i <= d->nclusters; i++) {
		const char *env = i < d->nclusters ? d->clusters[i].reg.token_env : "IDPMAKE_GIT_TOKEN";
		const char *secret = env ? getenv(env) : NULL, *hit;
		size_t n = secret ? strlen(secret) : 0, from = 0;
		/* on from after each "***": a secret that is, or holds, "***" cannot loop */
		while (n >= 3 && (hit = strstr(s + from, secret))) {
			from = (size_t)(hit - s) + 3;
			s = aprintf("%.*s***%s", (int)(hit - s), s, hit + n);
		}
	}
	return s;
}

/* the list Argo CD answers at `path`: its items (a new reference), or NULL with *err */
static json_t *list(struct argocd *a, const char *path, const char *what, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	json_t *items = NULL;

	if (call_open(&c, a, "", NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", NULL;
	if (status_verbose())
		fprintf(stderr, "idpmake: who owns them: GET %s\n", path);
	if (request(&c, "GET", path, NULL, &r, err) == 0) {
		if (r.status == 200 && json_is_object(r.json)) {
			items = json_object_get(r.json, "items");
			items = json_is_array(items) ? json_incref(items) : json_array();
		} else if (r.status == 200) {
			*err = aprintf("listing %s: Argo CD's answer is not a JSON object", what);
		} else {
			*err = api_error(&c, aprintf("listing %s", what), &r);
		}
	}
	if (!items)
		*err = masked(a->d, *err);
	resp_reset(&r);
	call_close(&c);
	return items;
}

/*
 * The run's list of each kind, asked once before anything runs: up
 * --refresh's check (register.c) and the ownership check share it;
 * owner_check drops it, so nothing reads it once steps change Argo CD.
 */
static struct {
	struct argocd *a;
	json_t *items[NKINDS];
} seen;

static void forget_seen(void)
{
	for (int k = 0; k < NKINDS; k++) {
		json_decref(seen.items[k]);
		seen.items[k] = NULL;
	}
	seen.a = NULL;
}

static json_t *list_once(struct argocd *a, int k, const char **err)
{
	if (seen.a != a)
		forget_seen();
	seen.a = a;
	if (!seen.items[k])
		seen.items[k] = list(a, k == W_APP ? aprintf("/api/v1/applications?appNamespace=%s", url_escape(a->d->argocd.namespace))
				     : aprintf("/api/v1/%s", k == W_APPSET ? "applicationsets" : k == W_CLUSTER ? "clusters" : "repositories"),
				     kind_list[k], err);
	return seen.items[k];
}

int owner_listed(struct argocd *a, int repos, const char ***out, const char **err)
{
	json_t *items = list_once(a, repos ? W_REPO : W_CLUSTER, err), *it;
	const char *field = repos ? "repo" : "server";
	size_t i;
	int n = 0;

	*out = NULL;
	if (!items)
		return -1;
	*out = amalloc((json_array_size(items) + 1) * sizeof(**out));
	json_array_foreach(items, i, it)
		if (json_is_string(json_object_get(it, field)))
			(*out)[n++] = astrdup(json_string_value(json_object_get(it, field)));
	return n;
}

static const char *owner_label(json_t *o, const char *where, const char *key)
{
	json_t *v = json_object_get(json_object_get(o, where), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* the step's sync would create or update its Application: decided now when its render is known */
static int will_sync(struct ctx *c, struct step *s)
{
	struct step *r = render_of(s);

	if (r && r->dirty)
		return 1;	/* rendered in this run: its Application is sent unless the output stays the same */
	plan_decide(&c->pl, s);
	return s->dirty;
}

/*
 * An argocd-app package's file: W_APP or W_APPSET as its kind says (what
 * its sync sends, argospec.c), or -1 when it cannot be read now: then
 * either kind may be the one.  Parsed quietly, as manifest.c read it.
 */
static int app_file_kind(const struct package *p)
{
	struct ypool *yp;
	struct ynode **docs, *kind;
	size_t nd, len;
	char *text = read_file(p->app_file, &len);
	int k = -1, before = loc_errors;

	if (!text)
		return -1;
	yp = ypool_new();
	loc_quiet++;
	if (yaml_parse(yp, p->app_file, text, len, &docs, &nd) == 0 && nd && docs[0]->type == Y_MAP &&
	    (kind = yget(docs[0], "kind")))
		k = ystr_eq(kind, "ApplicationSet") ? W_APPSET : ystr_eq(kind, "Application") ? W_APP : -1;
	loc_quiet--;
	loc_errors = before;
	ypool_free(yp);
	free(text);
	return k;
}

static size_t wants(struct ctx *c, struct want **v)
{
	struct graph *g = c->g;
	size_t n = 0;

	*v = amalloc((3 * g->nsteps + 1) * sizeof(**v));
	const char *tok = getenv("IDPMAKE_GIT_TOKEN");
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		if (s->kind == STEP_REGISTER && s->cluster && s->cluster->server) {
			plan_decide(&c->pl, s);
			if (s->dirty)
				(*v)[n++] = (struct want){ W_CLUSTER, s->cluster->server, s, 0 };
		}
		if (s->kind == STEP_REGISTER && !s->cluster && tok && *tok) {
			/* repository:register with a token: it would register over what Argo CD has */
			plan_decide(&c->pl, s);
			if (s->dirty)
				(*v)[n++] = (struct want){ W_REPO, argocd_repo_url(c->d, c->statedir), s, 0 };
		}
		if (s->kind != STEP_SYNC || s->pkg->deploy_kubectl || !will_sync(c, s))
			continue;
		const char *name = argocd_app_name(c->d, s);
		int helm = argocd_helm_app(s), cnoe = s->pkg->app_file != NULL;
		if (!name)
			continue;	/* said; its sync fails */
		if (cnoe) {
			/* the kind its file is: an unrelated object of the other kind with its name is no collision */
			int k = app_file_kind(s->pkg);
			if (k != W_APPSET)
				(*v)[n++] = (struct want){ W_APP, name, s, k < 0 };
			if (k != W_APP)
				(*v)[n++] = (struct want){ W_APPSET, name, s, k < 0 };
			continue;
		}
		(*v)[n++] = (struct want){ W_APP, name, s, 0 };
		if ((c->d->argocd.fleet_appset || s->pkg->sync.appset) && !helm && !s->cluster->argo_name)
			(*v)[n++] = (struct want){ W_APPSET, s->pkg->name, s, 0 };
	}
	return n;
}

/* the item of `items` named `name` (a cluster: by server), or NULL */
static json_t *find(json_t *items, enum want_kind k, const char *name)
{
	size_t i;
	json_t *it;

	json_array_foreach(items, i, it) {
		const char *have = k == W_CLUSTER ? jstr(it, "server") : k == W_REPO ? jstr(it, "repo") : jstr(it, "metadata.name");
		if (k == W_REPO ? !strcmp(owner_remote(have), owner_remote(name)) : !strcmp(have, name))
			return it;
	}
	return NULL;
}

/*
 * A repository in Argo CD has no labels or annotations (v1alpha1.Repository):
 * idpmake marks the one it registers by its `name`, "idpmake/DISTRO"
 * (owner_repo_name).  Another distro's name is another owner; no such name
 * is credentials someone gave Argo CD by hand (argocd repo add), unless the
 * state records that this distro's repository:register succeeded before:
 * an older idpmake, which sent no name, registered it.
 */
const char *owner_repo_name(const struct distro *d)
{
	return aprintf("idpmake/%s", d->name ? d->name : "");
}

static const char *repo_owner(const struct ctx *c, struct argocd *a, const struct want *w, json_t *it)
{
	const char *name = jstr(it, "name");
	struct record rec;

	if (!strncmp(name, "idpmake/", 8)) {
		if (!strcmp(name, owner_repo_name(c->d)))
			return NULL;
		return aprintf("distro '%s'", clean(a, name + 8, strlen(name + 8)));
	}
	rec = state_step(c->pl.st, w->s->id);
	if (rec.have && rec.ok)
		return NULL;	/* registered by this distro with an older idpmake: named on this registration */
	return "someone outside idpmake (its credentials were given by hand, e.g. argocd repo add: no idpmake/ name on it)";
}

/* whose is it: NULL when this distro's, else the words for its owner */
static const char *owner_of(const struct ctx *c, struct argocd *a, const struct want *w, json_t *it, int *same_name)
{
	const char *mine = c->d->name ? c->d->name : "";
	const char *who = w->kind == W_CLUSTER ? owner_label(it, "annotations", "idpmake.io/distro")
					       : owner_label(json_object_get(it, "metadata"), "labels", "idpmake.io/distro");

	const char *home;

	if (w->kind == W_REPO)
		return repo_owner(c, a, w, it);
	if (!who)
		return w->kind == W_CLUSTER ? NULL : "nobody: idpmake did not make it (no idpmake.io/distro label)";
	/* the same name pushing elsewhere (another remote, or another path of it) is another distro */
	if (!strcmp(who, mine)) {
		*same_name = 1;
		if (!(home = home_differs(a, w->kind == W_CLUSTER ? json_object_get(it, "annotations")
							      : json_object_get(json_object_get(it, "metadata"), "annotations"))))
			return NULL;
		return aprintf("distro '%s' %s", clean(a, who, strlen(who)), home);
	}
	/* Argo CD's text, hostile: an annotation may hold control characters and any length */
	return aprintf("distro '%s'", clean(a, who, strlen(who)));
}

int owner_check(struct ctx *c, struct argocd *a)
{
	struct want *v;
	size_t n = wants(c, &v);
	json_t *items[NKINDS] = { NULL };
	const char *err = NULL;
	int collisions = 0, apps = 0, clusters = 0, repos = 0, same = 0, ret = 0;

	if (!n) {
		forget_seen();
		return 0;	/* nothing to create or update: no request */
	}
	for (size_t i = 0; i < n && !ret; i++) {
		enum want_kind k = v[i].kind;
		if (!items[k] && !(items[k] = json_incref(list_once(a, (int)k, &err)))) {
			/* said as the step's failure would be: the first step that needed the answer */
			error("%s: %s (asking Argo CD who owns what this run would change); nothing was pushed", v[i].s->id, err);
			ret = -1;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_t *it = find(items[v[i].kind], v[i].kind, v[i].name);
		const char *who, *what;
		int same_name = 0;
		if (!it || !(who = owner_of(c, a, &v[i], it, &same_name)))
			continue;
		what = v[i].kind == W_CLUSTER ? aprintf("cluster '%s' (%s)", v[i].s->cluster->name, v[i].name)
		     : v[i].kind == W_REPO ? aprintf("repository %s", url_masked(v[i].name, "***"))
					      : aprintf("%s '%s'%s", kind_word[v[i].kind], v[i].name,
							v[i].either ? " (the package's file, unreadable now, may be either kind)" : "");
		if (c->adopt) {
			status_info("idpmake: %s: adopting %s, which belongs to %s (--adopt)", v[i].s->id, what, who);
			continue;
		}
		fprintf(stderr, "idpmake: %s: %s in Argo CD belongs to %s, not to distro '%s'%s\n", v[i].s->id, what, who,
			c->d->name ? c->d->name : "",
			!same_name ? "" : aprintf(" pushing to %s at path %s", owner_remote(a->repo_url), home_path(c->d)));
		collisions++;
		*(v[i].kind == W_CLUSTER ? &clusters : v[i].kind == W_REPO ? &repos : &apps) += 1;
		same += same_name;
	}
	if (collisions) {
		fprintf(stderr, "idpmake: up refused before the push: %d object%s in Argo CD %s not this distro's; "
			"nothing was pushed, synced or registered\n", collisions, collisions == 1 ? "" : "s",
			collisions == 1 ? "is" : "are");
		if (apps)
			fprintf(stderr, "hint: give this distro Application names of its own (argocd.app-name, e.g. "
				"\"%s-${cluster}-${package}\"), or take them over on purpose: idpmake up --adopt\n",
				c->d->name && *c->d->name ? c->d->name : "NAME");
		if (same)
			fprintf(stderr, "hint: a distro is its name with the GitOps remote and path it pushes to: another "
				"distro named '%s' pushes elsewhere; if this is it, moved on purpose, take its objects over "
				"once: idpmake up --adopt\n", c->d->name ? c->d->name : "");
		if (repos)
			fprintf(stderr, "hint: Argo CD holds credentials for the repository that idpmake did not give it for "
				"this distro: leave them (argocd: {repository: registered} in the distro, or run without "
				"IDPMAKE_GIT_TOKEN), or register over them on purpose: idpmake up --adopt\n");
		if (clusters)
			fprintf(stderr, "hint: a cluster is registered once in Argo CD: leave its registration to the distro "
				"that owns it (drop register: here), or take it over on purpose: idpmake up --adopt\n");
		ret = 1;
	}
out:
	for (int k = 0; k < NKINDS; k++)
		json_decref(items[k]);
	forget_seen();	/* from here on steps change Argo CD */
	return ret;
}

/* ---- up --prune ------------------------------------------------------------ */

long owner_apps(struct argocd *a, struct owned_app **v, const char **err)
{
	const struct distro *d = a->d;
	const char *sel = aprintf("idpmake.io/distro=%s", d->name ? d->name : "");
	json_t *items = list(a, aprintf("/api/v1/applications?appNamespace=%s&selector=%s", url_escape(d->argocd.namespace),
					url_escape(sel)), "this distro's Applications", err), *it;
	size_t i, n = 0;

	*v = NULL;
	if (!items)
		return -1;
	*v = amalloc((json_array_size(items) + 1) * sizeof(**v));
	json_array_foreach(items, i, it) {
		json_t *md = json_object_get(it, "metadata");
		const char *who = owner_label(md, "labels", "idpmake.io/distro"), *cl = owner_label(md, "labels", "idpmake.io/cluster"),
			   *pk = owner_label(md, "labels", "idpmake.io/package");
		if (!who || strcmp(who, d->name ? d->name : ""))
			continue;	/* a server that ignored the selector: the labels decide */
		if (home_differs(a, json_object_get(md, "annotations")))
			continue;	/* a same-named distro's, pushing elsewhere */
		(*v)[n++] = (struct owned_app){ astrdup(jstr(it, "metadata.name")), astrdup(cl ? cl : ""),
						astrdup(pk ? pk : "") };
	}
	json_decref(items);
	return (long)n;
}
