/*
 * t-graph.c - graph.c over distros loaded from a scratch folder: the steps
 * and their ids, the edges (render -> push -> pre... -> sync -> post...;
 * needs from X's last step to the dependent's first step after push), the
 * topological order, graph_select by targets and labels (everything the
 * selected packages need, transitively, and nothing else), two clusters
 * with profiles, cross-cluster needs, and cycles.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "distro/manifest.h"
#include "graph/graph.h"
#include "base/util.h"
#include "scratch.h"
#include "test.h"

static const char *err;		/* what the last capture printed */

static int printed(const char *s)
{
	if (strstr(err, s))
		return 1;
	fprintf(stderr, "  expected \"%s\" in:\n%s", s, err);
	return 0;
}

/* write NAME/distro.yaml (and the package folders a..z it names) and load it */
static struct distro *distro(const char *name, const char *yaml)
{
	struct distro *d;

	for (char c = 'a'; c <= 'z'; c++)
		if (mkdirs(path_join(tmp, aprintf("%s/p/%c", name, c))) < 0)
			perror("mkdirs");
	put(aprintf("%s/hooks/h.sh", name), "#!/bin/sh\n");
	put(aprintf("%s/distro.yaml", name), yaml);
	loc_errors = 0;
	capture_start();
	d = manifest_load(path_join(tmp, aprintf("%s/distro.yaml", name)), statedir);
	err = capture_end();
	if (!d)
		fprintf(stderr, "  %s does not load:\n%s", name, err);
	return d;
}

static struct graph *build(struct distro *d)
{
	struct graph *g;

	loc_errors = 0;
	capture_start();
	g = graph_build(d);
	err = capture_end();
	return g;
}

/* the ids of a step's in-steps (or out-steps), sorted, space-separated */
static int idcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *ids(struct step **v, size_t n)
{
	const char **s = xmalloc((n ? n : 1) * sizeof(*s));
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < n; i++)
		s[i] = v[i]->id;
	qsort(s, n, sizeof(*s), idcmp);
	for (size_t i = 0; i < n; i++)
		buf_addf(&b, "%s%s", i ? " " : "", s[i]);
	r = astrdup(b.s);
	buf_release(&b);
	free(s);
	return r;
}

static const char *ins(struct graph *g, const char *id)
{
	struct step *s = graph_find(g, id);
	return s ? ids(s->in, s->nin) : "(no such step)";
}

static const char *outs(struct graph *g, const char *id)
{
	struct step *s = graph_find(g, id);
	return s ? ids(s->out, s->nout) : "(no such step)";
}

/* every step id of the graph, sorted */
static const char *all_ids(struct graph *g)
{
	return ids(g->steps, g->nsteps);
}

static const char *selected(struct graph *g)
{
	struct step **v = xmalloc((g->nsteps + 1) * sizeof(*v));
	size_t n = 0;
	const char *r;

	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected)
			v[n++] = g->steps[i];
	r = ids(v, n);
	free(v);
	return r;
}

static void unselect(struct graph *g)
{
	for (size_t i = 0; i < g->nsteps; i++)
		g->steps[i]->selected = 0;
}

/* steps[] is topological, index is the position, in and out agree */
static void check_order(struct graph *g)
{
	int bad = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (s->index != (int)i)
			bad++;
		for (size_t k = 0; k < s->nin; k++) {
			struct step *in = s->in[k];
			int back = 0;
			if (in->index >= s->index) {
				fprintf(stderr, "  %s (%d) runs before its in-step %s (%d)\n", s->id, s->index,
					in->id, in->index);
				bad++;
			}
			for (size_t j = 0; j < in->nout; j++)
				if (in->out[j] == s)
					back = 1;
			if (!back)
				bad++;
		}
		for (size_t k = 0; k < s->nout; k++)
			if (s->out[k]->index <= s->index)
				bad++;
		for (size_t j = 0; j < g->nsteps; j++)
			if (j != i && !strcmp(g->steps[j]->id, s->id))
				bad++;		/* ids are unique */
	}
	CHECK(bad == 0);
}

/* ---- one cluster ---- */

static const char one_cluster[] =
	"idpmake: 1\n"
	"name: one\n"
	"vars: {domain: one.example}\n"
	"packages:\n"
	"  a: {type: manifests, path: p/a, labels: {tier: core}}\n"
	"  b:\n"
	"    type: manifests\n"
	"    path: p/b\n"
	"    needs: [a]\n"
	"    namespace: \"b-${cluster}\"\n"
	"    labels: {tier: core, team: x}\n"
	"    hooks:\n"
	"      pre:\n"
	"        - {name: p1, run: 'true'}\n"
	"        - {name: p2, run: 'true'}\n"
	"      post:\n"
	"        - {name: q1, run: 'true'}\n"
	"  c:\n"
	"    type: manifests\n"
	"    path: p/c\n"
	"    needs: [b]\n"
	"    labels: {tier: apps}\n"
	"    hooks: {post: [{name: q1, run: 'true'}, {name: q2, run: 'true'}]}\n"
	"  z: {type: manifests, path: p/z, labels: {tier: apps, team: x}}\n";

static void test_steps_and_edges(void)
{
	struct distro *d = distro("one", one_cluster);
	struct graph *g;
	struct step *s;

	CHECK(d != NULL);
	if (!d)
		return;
	g = build(d);
	CHECK(g != NULL);
	CHECK_STR(err, "");
	if (!g)
		return;
	CHECK(g->d == d);
	CHECK(g->nsteps == 14);
	CHECK_STR(all_ids(g),
		  "in-cluster/a:render in-cluster/a:sync "
		  "in-cluster/b:post:q1 in-cluster/b:pre:p1 in-cluster/b:pre:p2 in-cluster/b:render in-cluster/b:sync "
		  "in-cluster/c:post:q1 in-cluster/c:post:q2 in-cluster/c:render in-cluster/c:sync "
		  "in-cluster/z:render in-cluster/z:sync "
		  "push");
	check_order(g);

	/* the push step */
	CHECK(g->push && g->push == graph_find(g, "push"));
	CHECK(g->push->kind == STEP_PUSH && !g->push->cluster && !g->push->pkg && !g->push->hook);
	CHECK_STR(ins(g, "push"), "in-cluster/a:render in-cluster/b:render in-cluster/c:render in-cluster/z:render");
	CHECK_STR(outs(g, "push"), "in-cluster/a:sync in-cluster/b:pre:p1 in-cluster/c:sync in-cluster/z:sync");

	/* renders depend on nothing */
	CHECK_STR(ins(g, "in-cluster/a:render"), "");
	CHECK_STR(outs(g, "in-cluster/b:render"), "push");
	/* the chain of b: push -> pre:p1 -> pre:p2 -> sync -> post:q1; a's sync before p1 */
	CHECK_STR(ins(g, "in-cluster/b:pre:p1"), "in-cluster/a:sync push");
	CHECK_STR(ins(g, "in-cluster/b:pre:p2"), "in-cluster/b:pre:p1");
	CHECK_STR(ins(g, "in-cluster/b:sync"), "in-cluster/b:pre:p2");
	CHECK_STR(ins(g, "in-cluster/b:post:q1"), "in-cluster/b:sync");
	/* c needs b: b's last step (its post hook) before c's first after push (its sync) */
	CHECK_STR(ins(g, "in-cluster/c:sync"), "in-cluster/b:post:q1 push");
	CHECK_STR(ins(g, "in-cluster/c:post:q1"), "in-cluster/c:sync");
	CHECK_STR(ins(g, "in-cluster/c:post:q2"), "in-cluster/c:post:q1");
	CHECK_STR(outs(g, "in-cluster/c:post:q2"), "");
	CHECK_STR(outs(g, "in-cluster/a:sync"), "in-cluster/b:pre:p1");
	CHECK_STR(outs(g, "in-cluster/b:post:q1"), "in-cluster/c:sync");
	CHECK_STR(ins(g, "in-cluster/z:sync"), "push");
	CHECK_STR(outs(g, "in-cluster/z:sync"), "");

	/* what each step knows */
	s = graph_find(g, "in-cluster/b:pre:p2");
	CHECK(s && s->kind == STEP_PRE && s->pkg == find_package(d, "b") && s->cluster == &d->clusters[0]);
	CHECK(s && s->hook == &find_package(d, "b")->pre[1]);
	CHECK_STR(s ? s->namespace : NULL, "b-in-cluster");
	CHECK_STR(s ? s->gitpath : NULL, "in-cluster/b");
	s = graph_find(g, "in-cluster/b:post:q1");
	CHECK(s && s->kind == STEP_POST && s->hook == &find_package(d, "b")->post[0]);
	s = graph_find(g, "in-cluster/b:render");
	CHECK(s && s->kind == STEP_RENDER && !s->hook);
	CHECK_STR(s ? s->namespace : NULL, "b-in-cluster");
	CHECK_STR(s ? s->gitpath : NULL, "in-cluster/b");
	s = graph_find(g, "in-cluster/a:sync");
	CHECK(s && s->kind == STEP_SYNC && !s->hook);
	CHECK_STR(s ? s->namespace : NULL, "a");
	CHECK_STR(s ? s->gitpath : NULL, "in-cluster/a");
	CHECK(graph_find(g, "in-cluster/a:pre:p1") == NULL);
	CHECK(graph_find(g, "a") == NULL);
	/* every step of a package knows the package's render */
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *x = g->steps[i];
		if (!x->pkg) {
			CHECK(x->render == NULL);
			continue;
		}
		CHECK(x->render && x->render->kind == STEP_RENDER && x->render->pkg == x->pkg &&
		      x->render->cluster == x->cluster);
		if (x->kind == STEP_RENDER)
			CHECK(x->render == x);
	}
	/* nothing is selected or planned yet */
	for (size_t i = 0; i < g->nsteps; i++)
		CHECK(!g->steps[i]->selected && !g->steps[i]->dirty && g->steps[i]->state == S_IDLE);
}

static void test_select(void)
{
	struct distro *d = distro("sel", one_cluster);
	struct graph *g;
	struct strlist labels = { 0 };
	const char *lv[2];
	char *t[2];
	const char *nothing_but_c;

	if (!d || !(g = build(d))) {
		CHECK(!"sel loads and builds");
		return;
	}

	/* no targets: everything */
	CHECK(graph_select(g, NULL, 0, NULL) == 0);
	CHECK_STR(selected(g), all_ids(g));
	unselect(g);
	CHECK(graph_select(g, NULL, 0, &labels) == 0);
	CHECK_STR(selected(g), all_ids(g));
	unselect(g);

	/* c: c and what it needs, transitively (b, then a); z is not needed */
	t[0] = "c";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	nothing_but_c = "in-cluster/a:render in-cluster/a:sync "
			"in-cluster/b:post:q1 in-cluster/b:pre:p1 in-cluster/b:pre:p2 in-cluster/b:render in-cluster/b:sync "
			"in-cluster/c:post:q1 in-cluster/c:post:q2 in-cluster/c:render in-cluster/c:sync push";
	CHECK_STR(selected(g), nothing_but_c);
	CHECK(!graph_find(g, "in-cluster/z:sync")->selected);
	CHECK(!graph_find(g, "in-cluster/z:render")->selected);
	unselect(g);

	/* CLUSTER/PACKAGE is the same here */
	t[0] = "in-cluster/c";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), nothing_but_c);
	unselect(g);

	/* a needs nothing */
	t[0] = "a";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "in-cluster/a:render in-cluster/a:sync push");
	unselect(g);

	/* two targets */
	t[0] = "a";
	t[1] = "z";
	CHECK(graph_select(g, t, 2, NULL) == 0);
	CHECK_STR(selected(g), "in-cluster/a:render in-cluster/a:sync in-cluster/z:render in-cluster/z:sync push");
	unselect(g);

	/* CLUSTER/: every package there */
	t[0] = "in-cluster/";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), all_ids(g));
	unselect(g);

	/* labels: -l tier=core selects a and b (b needs only a) */
	lv[0] = "tier=core";
	labels.v = lv;
	labels.n = 1;
	CHECK(graph_select(g, NULL, 0, &labels) == 0);
	CHECK_STR(selected(g), "in-cluster/a:render in-cluster/a:sync "
		  "in-cluster/b:post:q1 in-cluster/b:pre:p1 in-cluster/b:pre:p2 in-cluster/b:render in-cluster/b:sync push");
	unselect(g);
	/* -l tier=apps: c and z, and c needs b and a */
	lv[0] = "tier=apps";
	CHECK(graph_select(g, NULL, 0, &labels) == 0);
	CHECK_STR(selected(g), all_ids(g));
	unselect(g);
	/* two labels: both must match; a key alone matches any value */
	lv[0] = "tier=apps";
	lv[1] = "team";
	labels.n = 2;
	CHECK(graph_select(g, NULL, 0, &labels) == 0);
	CHECK_STR(selected(g), "in-cluster/z:render in-cluster/z:sync push");
	unselect(g);
	/* targets and labels together: the targets that have the labels */
	lv[0] = "team=x";
	labels.n = 1;
	t[0] = "in-cluster/";
	CHECK(graph_select(g, t, 1, &labels) == 0);
	CHECK_STR(selected(g), "in-cluster/a:render in-cluster/a:sync "
		  "in-cluster/b:post:q1 in-cluster/b:pre:p1 in-cluster/b:pre:p2 in-cluster/b:render in-cluster/b:sync "
		  "in-cluster/z:render in-cluster/z:sync push");
	unselect(g);

	/* unknown targets */
	t[0] = "nope";
	capture_start();
	CHECK(graph_select(g, t, 1, NULL) == -1);
	err = capture_end();
	CHECK(printed("unknown target 'nope'"));
	t[0] = "nowhere/a";
	capture_start();
	CHECK(graph_select(g, t, 1, NULL) == -1);
	err = capture_end();
	CHECK(printed("unknown target 'nowhere/a'") && printed("no cluster named 'nowhere'"));
	t[0] = "c";
	lv[0] = "tier=core";
	capture_start();
	CHECK(graph_select(g, t, 1, &labels) == -1);
	err = capture_end();
	CHECK(printed("unknown target 'c'"));
	unselect(g);
}

/* ---- two clusters, profiles, needs across clusters ---- */

static const char two_clusters[] =
	"idpmake: 1\n"
	"name: two\n"
	"git: {path: \"gitops/${cluster}/${namespace}/${package}\"}\n"
	"clusters:\n"
	"  hub: {server: https://hub.example, profiles: [core]}\n"
	"  edge: {name: edge-argo, profiles: [apps, shared]}\n"
	"profiles:\n"
	"  core: [d, a, c, s]\n"
	"  apps: [w]\n"
	"  shared: [s]\n"
	"packages:\n"
	"  d: {type: manifests, path: p/d}\n"
	"  a: {type: manifests, path: p/a, needs: [d], hooks: {post: [{name: check, run: 'true'}]}}\n"
	"  c: {type: manifests, path: p/c}\n"
	"  s: {type: manifests, path: p/s, namespace: \"s-${cluster}\"}\n"
	"  w:\n"
	"    type: manifests\n"
	"    path: p/w\n"
	"    namespace: \"${cluster}-web\"\n"
	"    needs: [hub/a, s]\n"
	"    hooks: {pre: [{name: warm, run: 'true', inputs: [hooks/h.sh]}]}\n";

static void test_two_clusters(void)
{
	struct distro *d = distro("two", two_clusters);
	struct graph *g;
	struct step *s;
	char *t[1];

	CHECK(d != NULL);
	if (!d || !(g = build(d))) {
		CHECK(!"two builds");
		return;
	}
	CHECK_STR(err, "");
	CHECK_STR(all_ids(g),
		  "edge/s:render edge/s:sync "
		  "edge/w:pre:warm edge/w:render edge/w:sync "
		  "hub/a:post:check hub/a:render hub/a:sync "
		  "hub/c:render hub/c:sync hub/d:render hub/d:sync "
		  "hub/s:render hub/s:sync push");
	check_order(g);
	/* one push for both clusters */
	CHECK_STR(ins(g, "push"), "edge/s:render edge/w:render hub/a:render hub/c:render hub/d:render hub/s:render");
	/* hub/a needs d on its own cluster */
	CHECK_STR(ins(g, "hub/a:sync"), "hub/d:sync push");
	/* edge/w needs hub/a (its last step: the post hook) and s on edge */
	CHECK_STR(ins(g, "edge/w:pre:warm"), "edge/s:sync hub/a:post:check push");
	CHECK_STR(ins(g, "edge/w:sync"), "edge/w:pre:warm");
	CHECK_STR(outs(g, "hub/s:sync"), "");

	s = graph_find(g, "edge/w:sync");
	CHECK(s && s->cluster == find_cluster(d, "edge"));
	CHECK_STR(s ? s->namespace : NULL, "edge-web");
	CHECK_STR(s ? s->gitpath : NULL, "gitops/edge/edge-web/w");
	CHECK_STR(graph_find(g, "hub/s:render") ? graph_find(g, "hub/s:render")->gitpath : NULL, "gitops/hub/s-hub/s");
	CHECK_STR(graph_find(g, "edge/s:sync") ? graph_find(g, "edge/s:sync")->namespace : NULL, "s-edge");

	/* edge/w: w, s on edge, a and d on hub; not c, not hub/s */
	t[0] = "edge/w";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "edge/s:render edge/s:sync edge/w:pre:warm edge/w:render edge/w:sync "
		  "hub/a:post:check hub/a:render hub/a:sync hub/d:render hub/d:sync push");
	unselect(g);
	/* s: on both clusters */
	t[0] = "s";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "edge/s:render edge/s:sync hub/s:render hub/s:sync push");
	unselect(g);
	/* hub/s: on hub only */
	t[0] = "hub/s";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "hub/s:render hub/s:sync push");
	unselect(g);
	/* edge/: everything on edge, and what it needs on hub */
	t[0] = "edge/";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "edge/s:render edge/s:sync edge/w:pre:warm edge/w:render edge/w:sync "
		  "hub/a:post:check hub/a:render hub/a:sync hub/d:render hub/d:sync push");
	unselect(g);
	/* a package that does not go to the cluster named */
	t[0] = "edge/a";
	capture_start();
	CHECK(graph_select(g, t, 1, NULL) == -1);
	err = capture_end();
	CHECK(printed("unknown target 'edge/a'"));
}

/* needs naming a package that does not go to the cluster: a located error */
static void test_needs_not_on_cluster(void)
{
	static const char yaml[] =
		"idpmake: 1\n"
		"name: miss\n"
		"clusters:\n"
		"  hub: {profiles: [core]}\n"
		"  edge: {profiles: [apps]}\n"
		"profiles: {core: [a], apps: [w]}\n"
		"packages:\n"
		"  a: {type: manifests, path: p/a}\n"
		"  w: {type: manifests, path: p/w, needs: [a]}\n";
	struct distro *d = distro("miss", yaml);

	if (!d) {
		/* refusing it at load time is as good */
		CHECK(loc_errors == 1 && printed("miss/distro.yaml:9:") && printed("'a'"));
		return;
	}
	CHECK(build(d) == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed(aprintf("%s:9:43: error: ", path_join(tmp, "miss/distro.yaml"))));
	CHECK(printed("needs 'a', which does not go to cluster 'edge'"));
	loc_errors = 0;
}

/*
 * A cycle through clusters that the manifest cannot see (made here by
 * adding a need after loading): graph_build refuses it and prints the
 * cycle, "a -> b -> a" (engine.md).
 */
static void test_cycle(void)
{
	static const char yaml[] =
		"idpmake: 1\n"
		"name: cyc\n"
		"clusters:\n"
		"  hub: {profiles: [core]}\n"
		"  edge: {profiles: [apps]}\n"
		"profiles: {core: [a], apps: [b]}\n"
		"packages:\n"
		"  a: {type: manifests, path: p/a, needs: [edge/b]}\n"
		"  b: {type: manifests, path: p/b}\n";
	struct distro *d = distro("cyc", yaml);
	struct package *b;

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(build(d) != NULL);
	b = find_package(d, "b");
	b->needs.v = amalloc(sizeof(*b->needs.v));
	b->needs.loc = amalloc(sizeof(*b->needs.loc));
	b->needs.v[0] = "hub/a";
	b->needs.loc[0] = b->loc;
	b->needs.n = 1;
	CHECK(build(d) == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed("dependency cycle"));
	CHECK(strstr(err, "hub/a -> edge/b -> hub/a") || strstr(err, "edge/b -> hub/a -> edge/b"));
	if (!strstr(err, "hub/a -> edge/b -> hub/a") && !strstr(err, "edge/b -> hub/a -> edge/b"))
		fprintf(stderr, "  the cycle printed: %s", err);
	loc_errors = 0;
}

/* many packages in a chain, written in reverse: still in order */
static void test_long_chain(void)
{
	struct buf b = BUF_INIT;
	struct distro *d;
	struct graph *g;
	char *t[1] = { "a" };

	buf_adds(&b, "idpmake: 1\nname: chain\npackages:\n");
	for (char c = 'a'; c <= 'y'; c++)
		buf_addf(&b, "  %c: {type: manifests, path: p/%c, needs: [%c], hooks: {pre: [{name: h, run: x}]}}\n",
			 c, c, c + 1);
	buf_adds(&b, "  z: {type: manifests, path: p/z}\n");
	d = distro("chain", b.s);
	buf_release(&b);
	if (!d || !(g = build(d))) {
		CHECK(!"chain builds");
		return;
	}
	CHECK(g->nsteps == 1 + 26 * 2 + 25);
	check_order(g);
	CHECK(graph_find(g, "in-cluster/z:sync")->index < graph_find(g, "in-cluster/y:pre:h")->index);
	CHECK(graph_find(g, "in-cluster/b:sync")->index < graph_find(g, "in-cluster/a:pre:h")->index);
	/* a needs everything */
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), all_ids(g));
	unselect(g);
	/* z needs nothing */
	t[0] = "z";
	CHECK(graph_select(g, t, 1, NULL) == 0);
	CHECK_STR(selected(g), "in-cluster/z:render in-cluster/z:sync push");
}

static void setup(void)
{
	scratch_setup("t-graph");
}

TEST_MAIN_SHUFFLE(setup, scratch_end,
	  test_steps_and_edges, test_select, test_two_clusters, test_needs_not_on_cluster, test_cycle, test_long_chain)
