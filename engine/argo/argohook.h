/*
 * argohook.h - Argo CD hooks as gitops-engine sees them (argohook.c)
 */
#ifndef IDPMAKE_ARGOHOOK_H
#define IDPMAKE_ARGOHOOK_H
#include <jansson.h>

/* is the rendered object `o` an Argo CD hook (gitops-engine hook.IsHook)? */
int argocd_is_hook(const json_t *o);

#endif
