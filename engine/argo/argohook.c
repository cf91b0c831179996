/*
 * Argo CD's hooks (gitops-engine pkg/sync/hook): objects a sync runs, which
 * Argo CD neither compares nor lists among an Application's managed
 * resources.
 */
#include <string.h>

#include "argo/argohook.h"

/*
 * A hook (gitops-engine hook.IsHook): annotated argocd.argoproj.io/hook,
 * unless its only valid type is Skip, or else helm.sh/hook other than
 * crd-install.  The types are the annotation's comma-separated values,
 * white space trimmed and duplicates dropped (GetAnnotationCSVs): "Skip,
 * Skip" is Skip only.  A sync runs hooks; Argo CD neither compares them nor
 * lists them as managed resources, so diff --live leaves them out.
 */
int argocd_is_hook(const json_t *o)
{
	static const char *const types[] = { "PreSync", "Sync", "PostSync", "SyncFail", "Skip" };
	json_t *an = json_object_get(json_object_get(o, "metadata"), "annotations");
	json_t *h = json_object_get(an, "argocd.argoproj.io/hook"), *hh = json_object_get(an, "helm.sh/hook");

	if (h) {
		const char *p = json_is_string(h) ? json_string_value(h) : "";
		unsigned seen = 0;
		while (*p) {
			size_t len = strcspn(p, ","), b = 0, e = len;
			while (b < e && strchr(" \t\n\v\f\r", p[b]))
				b++;
			while (e > b && strchr(" \t\n\v\f\r", p[e - 1]))
				e--;
			for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
				if (strlen(types[i]) == e - b && !strncmp(p + b, types[i], e - b))
					seen |= 1u << i;
			p += len + (p[len] == ',');
		}
		return seen != 1u << 4;	/* not Skip alone */
	}
	return hh && !(json_is_string(hh) && !strcmp(json_string_value(hh), "crd-install"));
}
