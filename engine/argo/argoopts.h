/* argoopts.h - ARGOCD_OPTS, as the argocd CLI reads it (argoopts.c) */
#ifndef IDPMAKE_ARGOOPTS_H
#define IDPMAKE_ARGOOPTS_H

#include <stddef.h>

struct opts {
	const char *server, *token, *root, *cacert;
	int plaintext, insecure, grpc_web;
	const char **headers;
	size_t nheaders;
};

/* ARGOCD_OPTS into o (--plaintext, --insecure, --server, --auth-token, --server-crt, ...): 0, or -1 with *err */
int argocd_parse_opts(struct opts *o, const char **err);

#endif
