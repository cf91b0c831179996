/* cmd-graph.c - `graph`: the dependency graph as dot, json or mermaid */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "run/rollout.h"
#include "base/util.h"

static const char *dot_quote(const char *s)
{
	struct buf b = BUF_INIT;
	const char *r;

	buf_addc(&b, '"');
	for (; *s; s++) {
		if (*s == '"')
			buf_addc(&b, '\\');
		buf_addc(&b, *s);
	}
	buf_addc(&b, '"');
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

/* mermaid node ids: letters, digits and '_' only */
static const char *mermaid_id(const struct step *s)
{
	return aprintf("s%d", s->index);
}

/* the package a need names ("PKG" or "CLUSTER/PKG"), or NULL */
static const struct package *needed(const struct distro *d, const char *need)
{
	const char *slash = strchr(need, '/'), *name = slash ? slash + 1 : need;

	for (size_t i = 0; i < d->npackages; i++)
		if (!strcmp(d->packages[i].name, name))
			return &d->packages[i];
	return NULL;
}

/*
 * graph --packages: one node per selected package (the clusters it goes
 * to, collapsed), an edge from each package it needs.  With five clusters
 * the steps' picture is a tangle; this is the distro's shape.
 */
static int graph_packages(struct ctx *c, const char *fmt)
{
	const struct distro *d = c->d;
	size_t np = d->npackages;
	int *nclusters = amalloc((np ? np : 1) * sizeof(*nclusters));
	json_t *nodes = NULL, *edges = NULL;

	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		if (s->selected && s->kind == STEP_RENDER && s->pkg)
			nclusters[s->pkg - d->packages]++;
	}
	if (!strcmp(fmt, "json")) {
		nodes = json_array();
		edges = json_array();
	} else if (!strcmp(fmt, "dot")) {
		printf("digraph %s {\n\trankdir=LR;\n\tnode [fontname=\"Helvetica\", fontsize=10, shape=box];\n",
		       dot_quote(d->name));
	} else {
		printf("flowchart LR\n");
	}
	for (size_t i = 0; i < np; i++) {
		const struct package *p = &d->packages[i];
		const char *label = aprintf("%s (%d cluster%s)", p->name, nclusters[i], nclusters[i] == 1 ? "" : "s");
		if (!nclusters[i])
			continue;
		if (nodes) {
			json_t *n = json_object();
			json_object_set_new(n, "id", json_string(p->name));
			json_object_set_new(n, "kind", json_string("package"));
			json_object_set_new(n, "clusters", json_integer(nclusters[i]));
			json_array_append_new(nodes, n);
		} else if (!strcmp(fmt, "dot")) {
			printf("\t%s [label=%s];\n", dot_quote(p->name), dot_quote(label));
		} else {
			printf("  p%zu[\"%s\"]\n", i, label);
		}
	}
	for (size_t i = 0; i < np; i++) {
		const struct package *p = &d->packages[i];
		if (!nclusters[i])
			continue;
		for (size_t k = 0; k < p->needs.n; k++) {
			const struct package *q = needed(d, p->needs.v[k]);
			int dup = 0;
			if (!q || !nclusters[q - d->packages])
				continue;
			for (size_t j = 0; j < k; j++)	/* one edge for a need named on two clusters */
				dup |= needed(d, p->needs.v[j]) == q;
			if (dup)
				continue;
			if (edges) {
				json_t *e = json_object();
				json_object_set_new(e, "from", json_string(q->name));
				json_object_set_new(e, "to", json_string(p->name));
				json_array_append_new(edges, e);
			} else if (!strcmp(fmt, "dot")) {
				printf("\t%s -> %s;\n", dot_quote(q->name), dot_quote(p->name));
			} else {
				printf("  p%td --> p%zu\n", q - d->packages, i);
			}
		}
	}
	if (nodes) {
		json_t *doc = json_object();
		json_object_set_new(doc, "version", json_integer(1));
		json_object_set_new(doc, "distro", json_string(d->name));
		json_object_set_new(doc, "nodes", nodes);
		json_object_set_new(doc, "edges", edges);
		json_print(doc, 1);
	} else if (!strcmp(fmt, "dot")) {
		printf("}\n");
	}
	return 0;
}

int cmd_graph(struct ctx *c)
{
	const char *fmt = c->format ? c->format : "dot";
	struct graph *g;
	int r;

	if (strcmp(fmt, "dot") && strcmp(fmt, "json") && strcmp(fmt, "mermaid")) {
		fprintf(stderr, "idpmake: --format takes dot, json or mermaid, not '%s'\n", fmt);
		return 2;
	}
	if (c->json)
		fmt = "json";
	if ((r = ctx_load(c, 1)))
		return r;
	if (c->packages)
		return graph_packages(c, fmt);
	g = c->g;
	if (!strcmp(fmt, "json")) {
		json_t *doc = json_object(), *nodes = json_array(), *edges = json_array();
		for (size_t i = 0; i < g->nsteps; i++) {
			struct step *s = g->steps[i];
			json_t *n;
			if (!s->selected)
				continue;
			n = json_object();
			json_object_set_new(n, "id", json_string(s->id));
			json_object_set_new(n, "kind", json_string(step_kind_name(s->kind)));
			if (s->cluster)
				json_object_set_new(n, "cluster", json_string(s->cluster->name));
			if (s->pkg)
				json_object_set_new(n, "package", json_string(s->pkg->name));
			if (s->wave) {
				json_t *cl = json_array();
				for (size_t k = 0; k < c->d->nclusters; k++)
					if (c->d->clusters[k].wave == s->wave)
						json_array_append_new(cl, json_string(c->d->clusters[k].name));
				json_object_set_new(n, "wave", json_string(s->wave->name));
				json_object_set_new(n, "clusters", cl);
			}
			if (s->hook && !s->wave) {
				json_object_set_new(n, "hook", json_string(s->hook->name));
				json_object_set_new(n, "when", json_string(s->hook->when == WHEN_ONCE ? "once" :
									   s->hook->when == WHEN_ALWAYS ? "always" : "changed"));
			}
			json_array_append_new(nodes, n);
			for (size_t k = 0; k < s->nout; k++) {
				json_t *e;
				if (!s->out[k]->selected)
					continue;
				e = json_object();
				json_object_set_new(e, "from", json_string(s->id));
				json_object_set_new(e, "to", json_string(s->out[k]->id));
				json_array_append_new(edges, e);
			}
		}
		json_object_set_new(doc, "version", json_integer(1));
		json_object_set_new(doc, "distro", json_string(c->d->name));
		json_object_set_new(doc, "nodes", nodes);
		json_object_set_new(doc, "edges", edges);
		json_print(doc, 1);
		return 0;
	}
	if (!strcmp(fmt, "dot")) {
		static const char *const shapes[] = { "box", "cylinder", "cds", "ellipse", "cds", "hexagon", "component", "house", "note", "house", "octagon", "house" };
		printf("digraph %s {\n\trankdir=LR;\n\tnode [fontname=\"Helvetica\", fontsize=10];\n", dot_quote(c->d->name));
		for (size_t ci = 0; ci < c->d->nclusters; ci++) {
			const struct cluster *cl = &c->d->clusters[ci];
			printf("\tsubgraph %s {\n\t\tlabel=%s;\n", dot_quote(aprintf("cluster_%s", cl->name)), dot_quote(cl->name));
			for (size_t i = 0; i < g->nsteps; i++) {
				struct step *s = g->steps[i];
				if (s->selected && s->cluster == cl && !s->pkg)	/* CLUSTER:register, CLUSTER:kind */
					printf("\t\t%s [shape=%s, label=\"%s\"];\n", dot_quote(s->id), shapes[s->kind],
					       s->kind == STEP_CREATE ? "kind" : s->kind == STEP_PROVISION ? "provision" :
					       s->kind == STEP_CAPICHECK ? "capi-check" : s->kind == STEP_READY ? "ready" : "register");
				else if (s->selected && s->cluster == cl)
					printf("\t\t%s [shape=%s, label=%s];\n", dot_quote(s->id), shapes[s->kind],
					       dot_quote(aprintf("%s\\n%s", s->pkg->name, s->hook ?
								 aprintf("%s:%s", step_kind_name(s->kind), s->hook->name) :
								 step_kind_name(s->kind))));
			}
			printf("\t}\n");
		}
		if (g->push->selected)
			printf("\t\"push\" [shape=%s, label=\"push\\n(one commit)\"];\n", shapes[STEP_PUSH]);
		if (g->tls && g->tls->selected)
			printf("\t\"tls\" [shape=%s, label=\"tls\\n(certificate)\"];\n", shapes[STEP_TLS]);
		for (size_t i = 0; i < g->nsteps; i++)
			if (g->steps[i]->selected && g->steps[i]->kind == STEP_REGISTER && !g->steps[i]->cluster)
				printf("\t%s [shape=%s, label=\"register\\nrepository\"];\n", dot_quote(g->steps[i]->id),
				       shapes[STEP_REGISTER]);
		for (size_t i = 0; i < g->nsteps; i++)
			if (g->steps[i]->selected && g->steps[i]->wave)
				printf("\t%s [shape=%s, label=%s];\n", dot_quote(g->steps[i]->id), shapes[STEP_WAVE],
				       dot_quote(aprintf("wave %s\\n%s", g->steps[i]->wave->name,
							 wave_clusters(c->d, g->steps[i]->wave, ", "))));
		for (size_t i = 0; i < g->nsteps; i++) {
			struct step *s = g->steps[i];
			if (!s->selected)
				continue;
			for (size_t k = 0; k < s->nout; k++)
				if (s->out[k]->selected)
					printf("\t%s -> %s;\n", dot_quote(s->id), dot_quote(s->out[k]->id));
		}
		printf("}\n");
		return 0;
	}
	printf("flowchart LR\n");
	for (size_t ci = 0; ci < c->d->nclusters; ci++) {
		const struct cluster *cl = &c->d->clusters[ci];
		printf("  subgraph %s [\"%s\"]\n", aprintf("c%zu", ci), cl->name);
		for (size_t i = 0; i < g->nsteps; i++) {
			struct step *s = g->steps[i];
			if (s->selected && s->cluster == cl && !s->pkg)	/* CLUSTER:register */
				printf("    %s[[\"register\"]]\n", mermaid_id(s));
			else if (s->selected && s->cluster == cl)
				printf("    %s[\"%s %s\"]\n", mermaid_id(s), s->pkg->name,
				       s->hook ? aprintf("%s:%s", step_kind_name(s->kind), s->hook->name) : step_kind_name(s->kind));
		}
		printf("  end\n");
	}
	if (g->push->selected)
		printf("  %s[(\"push\")]\n", mermaid_id(g->push));
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected && g->steps[i]->kind == STEP_REGISTER && !g->steps[i]->cluster)
			printf("  %s[[\"register repository\"]]\n", mermaid_id(g->steps[i]));
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected && g->steps[i]->wave)
			printf("  %s{{\"wave %s\"}}\n", mermaid_id(g->steps[i]), g->steps[i]->wave->name);
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		for (size_t k = 0; k < s->nout; k++)
			if (s->out[k]->selected)
				printf("  %s --> %s\n", mermaid_id(s), mermaid_id(s->out[k]));
	}
	return 0;
}
