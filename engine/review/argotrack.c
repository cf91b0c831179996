/*
 * argotrack.c - Argo CD's resource-tracking marks on a live object
 * (argotrack.h; issue 34 item 4).
 *
 * argocd-cm application.resourceTrackingMethod says how Argo CD marks what
 * it applies (argo-cd util/argo/resource_tracking.go, SetAppInstance):
 *
 *   annotation        (3.x default) argocd.argoproj.io/tracking-id
 *                     APP:GROUP/KIND:NS/NAME, with argocd.argoproj.io/
 *                     installation-id when an installation ID is set;
 *   label             (2.x default) the label app.kubernetes.io/instance
 *                     set to the Application's instance name, untruncated;
 *   annotation+label  both, the label truncated (TruncateLabel: 63
 *                     characters, no trailing special character).
 *
 * The instance name is NAME, or NAMESPACE_NAME for an Application outside
 * Argo CD's own namespace (pkg/apis/application/v1alpha1/types.go
 * InstanceName).  Argo CD sets the marks on its target too, so they never
 * differ for it; our target is the render, which has none.  The method
 * is not in the API's answers, so every method's marks are removed.  The
 * label is the one mark a user may render too (Helm charts do): it goes
 * only when the render does not set it and its live value is one Argo CD
 * would set for this Application.  A rendered label is compared as is,
 * whatever Argo CD made of it (as its own Normalize, which removes the
 * live label only when the config lacks it).
 */
#include <ctype.h>
#include <string.h>

#include "base/util.h"
#include "review/argotrack.h"

#define INSTANCE_LABEL "app.kubernetes.io/instance"

/* TruncateLabel: the first 63 characters, then no trailing non-alphanumeric */
static const char *truncated(const char *v)
{
	size_t n = strlen(v);

	if (n <= 63)
		return v;
	n = 63;
	while (n && !isalnum((unsigned char)v[n - 1]))
		n--;
	return astrndup(v, n);
}

/* is `v` a value Argo CD sets for this Application, whichever its own namespace? */
static int is_instance_value(const char *v, json_t *app)
{
	json_t *md = json_object_get(app, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *cand[2];

	if (!name || !*name)
		return 0;
	cand[0] = name;
	cand[1] = ns && *ns ? aprintf("%s_%s", ns, name) : name;
	for (int i = 0; i < 2; i++)
		if (!strcmp(v, cand[i]) || !strcmp(v, truncated(cand[i])))
			return 1;
	return 0;
}

int argotrack_rendered_label(json_t *v)
{
	return json_object_get(json_object_get(json_object_get(v, "metadata"), "labels"), INSTANCE_LABEL) != NULL;
}

void argotrack_strip(json_t *o, json_t *app, int rendered_label)
{
	json_t *md = json_object_get(o, "metadata"), *labels = json_object_get(md, "labels");
	json_t *ann = json_object_get(md, "annotations");
	json_t *v = json_object_get(labels, INSTANCE_LABEL);

	json_object_del(ann, "argocd.argoproj.io/tracking-id");
	json_object_del(ann, "argocd.argoproj.io/installation-id");
	if (rendered_label || !json_is_string(v) || !is_instance_value(json_string_value(v), app))
		return;
	json_object_del(labels, INSTANCE_LABEL);
	if (!json_object_size(labels))
		json_object_del(md, "labels");
}
