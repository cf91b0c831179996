/*
 * fuzz-plan.c - libFuzzer target: the saved-plan parser (savedplan.c),
 * which reads the file `up --plan FILE` is given: a CI artifact, hostile
 * text anyone with access to it may have edited.
 *
 * The input is the plan file's bytes.  savedplan_parse must accept it or
 * refuse it with a reason, never crash or leak; what it accepts has the
 * types savedplan.c then reads without checking them again (the fields are
 * walked here as differs() walks them), and accepted, written out and read
 * again, it is accepted again.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "review/savedplan.h"
#include "base/util.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static void need(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why, *k;
	json_t *doc = savedplan_parse((const char *)data, size, &why), *again, *v, *m;
	char *text;
	size_t i;

	if (!doc) {
		need(why && *why);
		arelease(base);
		return 0;
	}
	need(json_string_value(json_object_get(doc, "idpmake")) != NULL);
	need(json_string_value(json_object_get(json_object_get(doc, "distro"), "hash")) != NULL);
	json_array_foreach(json_object_get(doc, "targets"), i, v) need(json_string_value(v) != NULL);
	json_array_foreach(json_object_get(doc, "labels"), i, v) need(json_string_value(v) != NULL);
	json_object_foreach(json_object_get(json_object_get(doc, "vars"), "distro"), k, v) need(json_is_string(v));
	json_object_foreach(json_object_get(json_object_get(doc, "vars"), "clusters"), k, v)
		json_object_foreach(v, k, m) need(json_is_string(m));
	json_array_foreach(json_object_get(doc, "steps"), i, v) {
		need(json_string_value(json_object_get(v, "id")) && json_string_value(json_object_get(v, "kind")) &&
		     json_string_value(json_object_get(v, "key")) && json_is_boolean(json_object_get(v, "run")));
		json_object_foreach(json_object_get(v, "inputs"), k, m) need(json_is_string(m));
	}
	text = json_dumps(doc, JSON_COMPACT);
	need(text != NULL);
	again = savedplan_parse(text, strlen(text), &why);
	need(again && json_equal(doc, again));
	json_decref(again);
	free(text);
	json_decref(doc);
	arelease(base);
	return 0;
}
