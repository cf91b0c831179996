/*
 * hook.c - imperative steps around a package's sync.  The command runs
 * through /bin/sh -c in the folder of the distro that defined it; values
 * reach it only as environment variables (never spliced into the command
 * line): IDPMAKE_CLUSTER, IDPMAKE_PACKAGE, IDPMAKE_NAMESPACE, IDPMAKE_COMMIT,
 * IDPMAKE_RENDERED and IDPMAKE_VAR_<NAME> (upper case, '-' as '_').
 *
 * The rest of the hook's environment is exec.c's allowlist (PATH, HOME,
 * locale, ...): no credential reaches a hook unless its `env` names it, but
 * for the kubeconfig of its cluster's own context (hookkube.h): KUBECONFIG
 * names it, whatever context is current for the user.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/exec.h"
#include "argo/hookkube.h"
#include "distro/create.h"
#include "run/hook.h"
#include "run/tlscert.h"
#include "distro/manifest.h"
#include "graph/status.h"
#include "base/util.h"

const char *hook_var_env(const char *var)
{
	char *n = aprintf("IDPMAKE_VAR_%s", var);
	for (char *p = n + 12; *p; p++)
		*p = *p == '-' || *p == '.' ? '_' : (char)toupper((unsigned char)*p);
	return n;
}

int hook_run(const struct distro *d, struct step *s, const char *statedir, const char *commit,
	     const char *rendered, const char **note, const char **err)
{
	struct strvec env = STRVEC_INIT;
	struct vars v;
	struct hook_kube hk;
	int r;

	/* a hook runs in its distro's folder: the state's paths it gets are absolute */
	if (statedir[0] != '/') {
		char cwd[4096];
		if (!getcwd(cwd, sizeof(cwd))) {
			*err = aprintf("cannot tell the current folder: %s", strerror(errno));
			return -1;
		}
		statedir = path_join(cwd, statedir);
	}
	/* kubectl in the hook goes to its cluster's own context (hookkube.h), never to whatever is current */
	if (hook_kube_prepare(s->cluster, statedir, &hk, err) < 0)
		return -1;
	*note = hk.context ? aprintf("context %s (%s)", hk.context, hk.from) : NULL;
	proc_env_base(&env);
	if (hk.kubeconfig) {
		const char *kc = hk.kubeconfig;
		for (size_t i = 0; i < env.n; i++)
			if (!strncmp(env.v[i], "KUBECONFIG=", 11)) {
				free((char *)env.v[i]);
				env.v[i] = xstrdup(aprintf("KUBECONFIG=%s", kc));
				kc = NULL;
			}
		if (kc)
			strvec_pushf(&env, "KUBECONFIG=%s", kc);
	}
	strvec_pushf(&env, "IDPMAKE_CLUSTER=%s", s->cluster->name);
	strvec_pushf(&env, "IDPMAKE_PACKAGE=%s", s->pkg->name);
	strvec_pushf(&env, "IDPMAKE_NAMESPACE=%s", s->namespace);
	strvec_pushf(&env, "IDPMAKE_COMMIT=%s", commit ? commit : "");
	strvec_pushf(&env, "IDPMAKE_RENDERED=%s", rendered ? rendered : "");
	strvec_pushf(&env, "IDPMAKE_HOOK=%s", s->hook->name);
	if (d->tls.hosts.n) {
		/* the distro's certificate (tlscert.h): the paths the hook names in env, never the key's text */
		static const char *const tv[][2] = { { "IDPMAKE_TLS_CERT", "tls.crt" }, { "IDPMAKE_TLS_KEY", "tls.key" },
						     { "IDPMAKE_TLS_CA", "ca.crt" } };
		for (size_t i = 0; i < s->hook->env.n; i++)
			for (size_t k = 0; k < 3; k++)
				if (!strcmp(s->hook->env.v[i], tv[k][0]))
					strvec_pushf(&env, "%s=%s", tv[k][0], tlscert_file(statedir, tv[k][1]));
	}
	vars_init(&v, d, s->cluster, s->pkg, s->namespace);
	/* each variable once, with the value that wins (cluster over distro) */
	for (size_t l = 1; l < v.n; l++)
		for (size_t i = 0; i < v.layer[l]->n; i++) {
			const char *key = v.layer[l]->v[i].key;
			int seen = 0;
			for (size_t m = 1; m < l; m++)
				for (size_t j = 0; j < v.layer[m]->n; j++)
					if (!strcmp(v.layer[m]->v[j].key, key))
						seen = 1;
			if (!seen)
				strvec_pushf(&env, "%s=%s", hook_var_env(key), vars_get(&v, key));
		}
	/* what the hook asked for by name (env: [ARGOCD_AUTH_TOKEN]), unless set above */
	for (size_t i = 0; i < s->hook->env.n; i++) {
		const char *name = s->hook->env.v[i], *val = getenv(name);
		size_t len = strlen(name);
		int have = 0;
		for (size_t j = 0; j < env.n && !have; j++)
			have = !strncmp(env.v[j], name, len) && env.v[j][len] == '=';
		if (val && !have)
			strvec_pushf(&env, "%s=%s", name, val);
	}
	r = hook_spawn(s, &env, "hook", err);
	hook_kube_done(&hk);	/* a created cluster's credential: gone once the hook has ended */
	strvec_clear(&env);
	return r;
}

int hook_spawn(struct step *s, const struct strvec *env, const char *what, const char **err)
{
	const char *argv[] = { "/bin/sh", "-c", s->hook->run, NULL };
	struct proc p = { 0 };
	int r;

	p.argv = argv;
	s->command = s->hook->run;
	if (status_verbose())
		fprintf(stderr, "idpmake: %s: %s\n", s->id, s->command);
	p.cwd = s->hook->dir;
	p.env = (const char *const *)env->v;
	p.log = s->log;
	p.timeout = s->hook->timeout;
	r = proc_run(&p);
	if (r < 0)
		*err = p.timed_out ? aprintf("%s timed out after %d s", what, s->hook->timeout) :
		       p.spawn_errno ? proc_failure(&p) : aprintf("%s exited with status %d", what, p.status);
	return r;
}
