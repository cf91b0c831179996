/*
 * argotrack.h - the marks Argo CD's resource tracking leaves on a live
 * object, so that diff --live does not count them (issue 34 item 4).
 */
#ifndef IDPMAKE_ARGOTRACK_H
#define IDPMAKE_ARGOTRACK_H

#include <jansson.h>

/*
 * From live object o (or its last-applied configuration): the tracking
 * annotations, and the label app.kubernetes.io/instance when its value is
 * the one Argo CD sets for Application `app` (the GET answer) and the
 * render does not set that label itself (rendered_label 0).
 */
void argotrack_strip(json_t *o, json_t *app, int rendered_label);

/* 1 when rendered object v sets the label app.kubernetes.io/instance */
int argotrack_rendered_label(json_t *v);

#endif
