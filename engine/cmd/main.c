/*
 * main.c - options and the command table (as git.c): each command is one
 * function in a cmd-*.c file.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/exec.h"
#include "base/hash.h"
#include "base/secret.h"
#include "distro/manifest.h"
#include "pack/pack.h"
#include "base/util.h"

static const struct command commands[] = {
	{ "up", cmd_up, "up [TARGET...]\nup --overwrite TARGET...\nup --plan FILE\n-f ARCHIVE up | up --bundle ARCHIVE",
	  "render, push, sync and run hooks for what changed (the default)", CMD_JSON,
	  "idpmake                      # everything that changed\n"
	  "idpmake up prod-eu/ -j 4     # only cluster prod-eu, four steps at once\n"
	  "idpmake up --plan plan.json  # exactly a plan saved by 'plan -o'" },
	{ "promote", cmd_promote, "promote CLUSTER [PACKAGE...]",
	  "bring a cloned cluster (or some of its packages) to the current render", CMD_JSON,
	  "idpmake promote prod-eu           # all of prod-eu's packages\n"
	  "idpmake promote prod-eu keycloak  # only keycloak" },
	{ "plan", cmd_plan, "plan [--exit-code] [-o FILE] [TARGET...]", "what up would run, and why; executes nothing (= up -n)",
	  CMD_JSON,
	  "idpmake plan                 # what up would do\n"
	  "idpmake plan --exit-code     # exit 1 when there is work (CI); 3: up would refuse\n"
	  "idpmake plan -o plan.json    # save it for 'up --plan'" },
	{ "explain", cmd_explain, "explain [--json] STEP...", "why a step would run: the variable (old and new value), file or distro field that changed",
	  CMD_JSON,
	  "idpmake explain in-cluster/backstage:render\n"
	  "idpmake explain push\n"
	  "idpmake --json explain backstage" },
	{ "graph", cmd_graph, "graph [--format dot|json|mermaid] [--packages] [TARGET...]", "the dependency graph",
	  CMD_JSON,
	  "idpmake graph | dot -Tsvg > graph.svg\n"
	  "idpmake graph --format mermaid prod-eu/\n"
	  "idpmake graph --packages            # packages and their needs, clusters collapsed" },
	{ "render", cmd_render, "render [-o DIR] [TARGET...]", "render only, to stdout or DIR; no push, no sync, no state change",
	  0,
	  "idpmake render backstage     # to stdout\n"
	  "idpmake render -o out/       # every package, under out/" },
	{ "diff", cmd_diff,
	  "diff [--json] [--exit-code] [TARGET...]\n"
	  "diff --live [--json] [--exit-code] [-o FILE] [TARGET...]\n"
	  "diff --from FILE\n"
	  "diff [-o FILE] CLUSTER_A/ CLUSTER_B/ [PACKAGE...]\n"
	  "diff --rev A[..B] [--no-rules] [--format markdown] [TARGET...]",
	  "rendered output against the GitOps repository, Argo CD's live state, another cluster or revision\n\n"
	  "A unified diff per object against the GitOps repository (a chart Argo CD renders: its objects too, by helm template); --live: against what Argo CD reports live, each object create, change or prune\n"
	  "(Argo CD's rules: fields only live, status and ignoreDifferences do not count;\n"
	  "no Secret value is shown); -o FILE saves it with the commit and keys, --from FILE\n"
	  "shows it again offline; CLUSTER_A/ CLUSTER_B/: the two clusters' renders,\n"
	  "package by package, from the cache (rendering what is missing); --rev A..B: the renders of\n"
	  "two revisions of the distro's git repository (A: against the work tree), --format markdown\n"
	  "for a pull-request comment; --no-rules: run none of the rules a revision defines (a pull\n"
	  "request's commands), only idpmake's built-in renderers",
	  CMD_JSON,
	  "idpmake diff backstage                  # against the GitOps repository\n"
	  "idpmake diff --live --exit-code prod-eu/ # against what Argo CD has live\n"
	  "idpmake diff --rev origin/main --format markdown  # a pull request's effect" },
	{ "validate", cmd_validate, "validate [--live] [--json] [TARGET...]",
	  "check the distro and everything it references; render nothing remotely\n\n"
	  "--live: also render every package and check each object's apiVersion and kind against what\n"
	  "its cluster serves (Argo CD's cluster info) or a CRD rendered by the package or one before it\n"
	  "in needs order; exit 1 naming each unknown kind, 2 when Argo CD cannot be asked\n\n"
	  "--json: one document, each error and warning with its file, line, column, severity and message",
	  CMD_JSON,
	  "idpmake validate\n"
	  "idpmake validate --live prod-eu/\n"
	  "idpmake --json validate        # for CI: the diagnostics as data" },
	{ "status", cmd_status, "status [TARGET...]", "per step: last result, key, output hash, commit, when, how long",
	  CMD_JSON,
	  "idpmake status\n"
	  "idpmake --json status prod-eu/" },
	{ "log", cmd_log, "log [STEP...]",
	  "past runs, newest first; with STEP: that step's output from its last run\n\n"
	  "STEP is a step id (CLUSTER/PACKAGE:render, push, CLUSTER/PACKAGE:post:NAME, ...); its log\n"
	  "is what its command printed the last time it ran (a hook's stdout and stderr)",
	  CMD_JSON,
	  "idpmake log                             # the runs\n"
	  "idpmake log in-cluster/hello:post:announce  # what that hook printed" },
	{ "forget", cmd_forget, "forget [--all | TARGET...]", "drop recorded state so the next up redoes those steps", 0,
	  "idpmake forget backstage     # redo backstage's steps\n"
	  "idpmake forget --all         # remove a damaged state" },
	{ "init", cmd_init, "init [DIR]", "a new distro from a template that validates and runs as is", 0,
	  "idpmake init myplatform && idpmake -C myplatform plan" },
	{ "pack", cmd_pack, "pack [-o FILE]",
	  "one archive with the distro, what it extends, its git sources and Helm charts, for an offline up\n\n"
	  "The archive (tar; gzip when FILE ends in .gz or .tgz; default idpmake-pack.tar) holds the distro and\n"
	  "its extends chain, its git: sources at their resolved commits and its Helm charts at their pinned\n"
	  "versions (helm pull), each with its XXH3 digest.  'idpmake -f FILE up' or 'up --bundle FILE' runs\n"
	  "from it with no network: the charts are mirrored into the GitOps repository.",
	  CMD_JSON,
	  "idpmake pack -o platform.tgz\n"
	  "idpmake -f platform.tgz up   # elsewhere, offline" },
	{ "distros", cmd_distros, "distros", "the distros extends can name: IDPMAKE_DISTRO_PATH, installed, built in", CMD_JSON,
	  "idpmake distros\n"
	  "idpmake --json distros" },
	{ "secrets", cmd_secrets, "secrets [PACKAGE...]",
	  "the platform's users and passwords, read from the cluster Argo CD runs in (as idpbuilder get secrets)",
	  CMD_JSON,
	  "idpmake secrets              # Argo CD's admin, Gitea's, and every cnoe.io/cli-secret Secret\n"
	  "idpmake secrets keycloak     # one package's\n"
	  "idpmake secrets --json" },
	{ "version", cmd_version, "version [--json]", "the version, and the versions of the libraries it was built with", CMD_JSON,
	  "idpmake version\n"
	  "idpmake --json version" },
	{ "context", cmd_context,
	  "context add|set NAME [--argocd-server URL] [--git-remote URL] [--token-file F|--token-env VAR] "
	  "[--git-token-env VAR] [--ca-file F] [--grpc-web-root-path P] [--plaintext] [--insecure]\n"
	  "context unset NAME KEY...\n"
	  "context use|rm NAME\n"
	  "context list [--json]",
	  "named Argo CD and GitOps targets that fill in what a distro leaves out: add, set, unset, use, list, rm "
	  "(~/.config/idpmake/contexts.yaml)",
	  CMD_JSON | CMD_OWN_OPTS,
	  "idpmake context add dev --argocd-server https://argocd.dev --token-env DEV_TOKEN\n"
	  "idpmake context use dev\n"
	  "idpmake --context prod plan" },
	{ "completion", cmd_completion, "completion bash|zsh|fish", "the shell completion script, on stdout", CMD_OWN_OPTS,
	  "source <(idpmake completion bash)\n"
	  "idpmake completion fish > ~/.config/fish/completions/idpmake.fish" },
	{ "__complete", cmd_complete, "__complete commands|options|targets|steps|packages|clusters|contexts", NULL,
	  CMD_OWN_OPTS, NULL },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* every option of longopts and shortopts, once (t8401 checks that none is missing) */
static const struct option_help options_help[] = {
	{ "-C DIR", "change to DIR first", NULL },
	{ "-f FILE", "the distro manifest (default distro.yaml), or an archive from pack", NULL },
	{ "-j N", "steps run at once (default: processors + 2; at most 256)", "up promote" },
	{ "-k N", "keep going until N steps failed (0: never stop; default 1)", "up promote" },
	{ "-n", "dry run: up -n is plan", "up" },
	{ "-l KEY=VALUE", "select packages by label (repeatable; all must match)", NULL },
	{ "-v", "print commands and requests as they run, each step's output as it comes, and the context in use", NULL },
	{ "--context NAME", "the context for this run, over the distro's server and remote (IDPMAKE_CONTEXT);\n"
			    "otherwise 'context use' only fills in what the distro leaves out", NULL },
	{ "--kube-context NAME", "deploy: kubectl: the kube context (default: the cluster's kube-context,\n"
				 "register.context, then the kubeconfig's current-context)", "up promote plan diff validate" },
	{ "--json", "machine-readable output (up, promote, plan, explain, graph, diff, validate, status, log, pack,\n"
		    "distros, secrets, version, context)",
	  "up promote plan explain graph diff validate status log pack distros secrets version context" },
	{ "--color=WHEN, --colour=WHEN", "auto, always or never (NO_COLOR is honoured)", NULL },
	{ "--state DIR", "the state folder (default .idpmake beside the distro; IDPMAKE_STATE)", NULL },
	{ "--wait", "wait for another run's lock instead of failing", NULL },
	{ "--refresh", "compare with the remotes first and redo what drifted", "up promote plan" },
	{ "--prune", "delete Applications of packages removed from the distro, then their folders\n"
		       "(without it, both stay)", "up plan" },
	{ "--overwrite", "up: replace changes made outside idpmake in the targets' folders", "up" },
	{ "--adopt", "up: take over Applications, ApplicationSets, clusters and repositories another\n"
		     "distro (or not idpmake) made in Argo CD, objects another distro applied\n"
		     "with deploy: kubectl, a kind cluster of create.kind's name that this\n"
		     "state did not make, and the Cluster API Cluster of a created cluster\n"
		     "another distro made, instead of refusing; it ends with what it took\n"
		     "over, by kind", "up" },
	{ "--delete-clusters", "up --prune: delete the kind clusters idpmake made that the distro no longer\n"
			       "creates (without it, --prune refuses to)", "up" },
	{ "--format FMT", "graph: dot (default), json or mermaid; diff --rev: text or markdown", "graph diff" },
	{ "-o DIR", "render: write files under DIR; diff: save the diff in FILE; plan: save the plan;\n"
		    "pack: the archive (default idpmake-pack.tar)", "render diff plan pack" },
	{ "--live", "diff: against what Argo CD reports live; validate: kinds against the clusters", "diff validate" },
	{ "--from FILE", "diff: show a diff saved with -o, offline", "diff" },
	{ "--bundle FILE", "run from an archive 'idpmake pack' wrote, with no network", "up" },
	{ "--plan FILE", "up: run exactly the saved plan, or refuse (exit 2) if anything changed", "up" },
	{ "--rev A[..B]", "diff: the renders of revision A against B (default: the work tree)", "diff" },
	{ "--no-rules", "diff --rev: run only built-in renderers, no rule a revision defines", "diff" },
	{ "--exit-code", "plan: exit 1 when there is work to do; diff: 1 when anything differs", "plan diff" },
	{ "--all", "forget: remove state.db itself (a damaged or newer state)", "forget" },
	{ "--packages", "graph: one node per package, its clusters collapsed, and its needs", "graph" },
	{ "-h, --help", "this help; 'idpmake COMMAND --help' for one command", NULL },
	{ "--version", "the version", NULL },
	{ "--", "ends the options: what follows is a command or a target", NULL },
};

#define NOPTIONS (sizeof(options_help) / sizeof(options_help[0]))

static void print_option(FILE *f, const struct option_help *o)
{
	const char *h = o->help;
	int w = fprintf(f, "  %s", o->spelling);

	fprintf(f, "%*s", w < 21 ? 21 - w : 1, "");
	for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
		fprintf(f, "%.*s\n%21s", (int)(nl - h), h, "");
	fprintf(f, "%s\n", h);
}

/* does the space-separated list have word */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; p += strcspn(p, " "), p += *p == ' ') 
		if (strcspn(p, " ") == n && !strncmp(p, word, n))
			return 1;
	return 0;
}

static void print_synopsis(FILE *f, const struct command *cmd)
{
	const char *u = cmd->usage;

	for (int first = 1; *u; first = 0) {
		size_t n = strcspn(u, "\n");
		fprintf(f, "%s idpmake [OPTIONS] %.*s\n", first ? "usage:" : "      ", (int)n, u);
		u += n + (u[n] == '\n');
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: idpmake [OPTIONS] [COMMAND] [TARGET...]\n\n"
		   "idpmake is make for internal developer platforms: it renders a distro's\n"
		   "packages, commits them to the GitOps repository in one commit, syncs exactly\n"
		   "the Argo CD applications whose output changed, and runs their hooks.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].help)
			fprintf(f, "  %-10s %.*s\n", commands[i].name, (int)strcspn(commands[i].help, "\n"), commands[i].help);
	fprintf(f, "\nTARGET is PACKAGE, CLUSTER/PACKAGE or CLUSTER/; none means everything.\n"
		   "Options may come before or after the command and the targets; -- ends them.\n\n"
		   "options:\n");
	for (size_t i = 0; i < NOPTIONS; i++)
		print_option(f, &options_help[i]);
	fprintf(f, "\ntargets: the GitOps remote and the Argo CD server come from --context, then the distro, then the\n"
		   "default context, then the environment (ARGOCD_OPTS --server, ARGOCD_SERVER), which fills in and\n"
		   "never replaces: a distro naming argocd.server while ARGOCD_SERVER names another is refused.\n");
	fprintf(f, "\nexit status: 0 success, 1 a step failed, 2 a usage or manifest error.\n"
		   "'idpmake COMMAND --help' for one command; see idpmake(1) and idpmake-distro(5).\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* the visible command nearest to a typo, or NULL (closest(): the one rule) */
static const char *nearest_command(const char *word)
{
	const char *names[NCOMMANDS];
	size_t n = 0;

	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].help)
			names[n++] = commands[i].name;
	return closest(word, names, n);
}

static int no_command(const char *word)
{
	const char *near = nearest_command(word);

	if (near)
		fprintf(stderr, "idpmake: no command '%s'; did you mean '%s'? (see 'idpmake --help')\n", word, near);
	else
		fprintf(stderr, "idpmake: no command '%s'; see 'idpmake --help'\n", word);
	return 2;
}

/* idpmake CMD --help: the synopsis, what it does, its own options and examples */
static int command_help(const char *name)
{
	const struct command *cmd = find_command(name);
	int any = 0;

	if (!cmd)
		return no_command(name);
	print_synopsis(stdout, cmd);
	printf("\n%s\n", cmd->help ? cmd->help : "used by the completion scripts");
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options_help[i].commands && has_word(options_help[i].commands, cmd->name)) {
			if (!any++)
				printf("\noptions:\n");
			print_option(stdout, &options_help[i]);
		}
	if (cmd->examples) {
		const char *e = cmd->examples;
		printf("\nexamples:\n");
		while (*e) {
			size_t n = strcspn(e, "\n");
			printf("  %.*s\n", (int)n, e);
			e += n + (e[n] == '\n');
		}
	}
	printf("\nThe options of every command (-C, -f, -l, -v, --state, ...): 'idpmake --help'; see idpmake(1).\n");
	return 0;
}

static int parse_int(const char *s, const char *what, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v < 0 || v > 100000) {
		fprintf(stderr, "idpmake: %s must be a non-negative number, not '%s'\n", what, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

enum { O_JSON = 256, O_COLOR, O_STATE, O_WAIT, O_REFRESH, O_PRUNE, O_FORMAT, O_EXITCODE, O_VERSION, O_OVERWRITE, O_CONTEXT,
       O_KUBE_CONTEXT, O_LIVE, O_FROM, O_ALL, O_REV, O_PLAN, O_BUNDLE, O_NO_RULES, O_ADOPT, O_PACKAGES,
       O_DELETE_CLUSTERS };
static const struct option longopts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "color", required_argument, NULL, O_COLOR },
	{ "colour", required_argument, NULL, O_COLOR },
	{ "state", required_argument, NULL, O_STATE },
	{ "wait", no_argument, NULL, O_WAIT },
	{ "refresh", no_argument, NULL, O_REFRESH },
	{ "prune", no_argument, NULL, O_PRUNE },
	{ "overwrite", no_argument, NULL, O_OVERWRITE },
	{ "adopt", no_argument, NULL, O_ADOPT },
	{ "delete-clusters", no_argument, NULL, O_DELETE_CLUSTERS },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "exit-code", no_argument, NULL, O_EXITCODE },
	{ "context", required_argument, NULL, O_CONTEXT },
	{ "kube-context", required_argument, NULL, O_KUBE_CONTEXT },
	{ "all", no_argument, NULL, O_ALL },
	{ "packages", no_argument, NULL, O_PACKAGES },
	{ "live", no_argument, NULL, O_LIVE },
	{ "from", required_argument, NULL, O_FROM },
	{ "rev", required_argument, NULL, O_REV },
	{ "no-rules", no_argument, NULL, O_NO_RULES },
	{ "plan", required_argument, NULL, O_PLAN },
	{ "bundle", required_argument, NULL, O_BUNDLE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};
static const char shortopts[] = "+C:f:j:k:nl:vho:";	/* up to the command word */
static const char shortopts_after[] = "C:f:j:k:nl:vho:";	/* after it: permuted, as GNU's */

/* the manifest is not there: say how to get one, or to point at one */
static int no_distro(const char *file)
{
	char cwd[4096];

	fprintf(stderr, "idpmake: error: no %s in %s\n", file, getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	fprintf(stderr, "idpmake: hint: 'idpmake init' writes a new distro; -C DIR runs in the folder of one; "
			"-f FILE names its manifest\n");
	return 2;
}

/*
 * The option getopt_long refused (opterr is 0: it prints nothing), said as
 * glibc would, but an unknown --NAME gets "did you mean" over the long
 * options (closest(): the one rule).  argv[optind - 1] is the word it took.
 */
static int bad_option(char **argv, int ind, int opt, const char *shorts)
{
	const char *w = ind > 0 ? argv[ind - 1] : "", *eq, *names[sizeof(longopts) / sizeof(longopts[0])], *sug;
	size_t len, n = 0, hits = 0;

	if (strncmp(w, "--", 2) || (opt && opt < 256 && strncmp(w + 2, "help", 4))) {
		if (opt && strchr(shorts, opt) && opt != ':')
			fprintf(stderr, "idpmake: option requires an argument -- '%c'\n", opt);
		else
			fprintf(stderr, "idpmake: invalid option -- '%c'\n", opt ? opt : '?');
		fprintf(stderr, "see 'idpmake --help'\n");
		return 2;
	}
	eq = strchr(w + 2, '=');
	len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
	for (const struct option *o = longopts; o->name; o++) {
		names[n++] = o->name;
		hits += !strncmp(o->name, w + 2, len);
	}
	if (opt)
		fprintf(stderr, eq ? "idpmake: option '--%.*s' doesn't allow an argument\n" :
			"idpmake: option '--%.*s' requires an argument\n", (int)len, w + 2);
	else if (hits > 1)
		fprintf(stderr, "idpmake: option '--%.*s' is ambiguous\n", (int)len, w + 2);
	else if ((sug = closest(astrndup(w + 2, len), names, n)))
		fprintf(stderr, "idpmake: unknown option '--%.*s'; did you mean '--%s'?\n", (int)len, w + 2, sug);
	else
		fprintf(stderr, "idpmake: unknown option '--%.*s'\n", (int)len, w + 2);
	fprintf(stderr, "see 'idpmake --help'\n");
	return 2;
}

/* one option getopt_long returned: -1 to go on, else the exit status */
static int take_option(struct ctx *c, int opt, int *help)
{
	switch (opt) {
	case 'C':
		if (chdir(optarg) < 0) {
			fprintf(stderr, "idpmake: cannot change to '%s': %s\n", optarg, strerror(errno));
			return 2;
		}
		break;
	case 'f':
		c->file = optarg;
		break;
	case 'j':
		if (parse_int(optarg, "-j", &c->jobs) < 0)
			return 2;
		if (c->jobs > JOBS_MAX) {
			fprintf(stderr, "idpmake: -j %d is too many: at most %d steps run at once\n", c->jobs, JOBS_MAX);
			return 2;
		}
		if (!c->jobs)
			c->jobs = 1;
		break;
	case 'k':
		if (parse_int(optarg, "-k", &c->keep_going) < 0)
			return 2;
		break;
	case 'n':
		c->dry_run = 1;
		break;
	case 'l':
		if (!strchr(optarg, '=')) {
			fprintf(stderr, "idpmake: -l takes KEY=VALUE, not '%s'\n", optarg);
			return 2;
		}
		c->labels.v = agrow(c->labels.v, c->labels.n, sizeof(*c->labels.v));
		c->labels.v[c->labels.n++] = optarg;
		break;
	case 'v':
		c->verbose++;
		break;
	case 'o':
		c->outdir = optarg;
		break;
	case 'h':
		*help = 1;
		break;
	case O_JSON:
		c->json = 1;
		break;
	case O_COLOR:
		if (!strcmp(optarg, "auto"))
			c->color = COLOR_AUTO;
		else if (!strcmp(optarg, "always"))
			c->color = COLOR_ALWAYS;
		else if (!strcmp(optarg, "never"))
			c->color = COLOR_NEVER;
		else {
			fprintf(stderr, "idpmake: --color takes auto, always or never, not '%s'\n", optarg);
			return 2;
		}
		break;
	case O_STATE:
		c->statedir = optarg;
		break;
	case O_WAIT:
		c->wait = 1;
		break;
	case O_REFRESH:
		c->refresh = 1;
		break;
	case O_PRUNE:
		c->prune = 1;
		break;
	case O_OVERWRITE:
		c->overwrite = 1;
		break;
	case O_DELETE_CLUSTERS:
		c->delete_clusters = 1;
		break;
	case O_ADOPT:
		c->adopt = 1;
		break;
	case O_ALL:
		c->all = 1;
		break;
	case O_PACKAGES:
		c->packages = 1;
		break;
	case O_FORMAT:
		c->format = optarg;
		break;
	case O_EXITCODE:
		c->exit_code = 1;
		break;
	case O_LIVE:
		c->live = 1;
		break;
	case O_FROM:
		c->from = optarg;
		break;
	case O_REV:
		c->rev = optarg;
		break;
	case O_NO_RULES:
		c->no_rules = 1;
		break;
	case O_PLAN:
		c->plan_file = optarg;
		break;
	case O_BUNDLE:
		c->bundle = optarg;
		break;
	case O_CONTEXT:
		c->context = optarg;
		break;
	case O_KUBE_CONTEXT:
		if (!*optarg) {
			fprintf(stderr, "idpmake: --kube-context needs a kube context's name (leave the option out "
					"for the cluster's own, or the kubeconfig's current-context)\n");
			return 2;
		}
		c->kube_context = optarg;
		break;
	case O_VERSION:
		return cmd_version(c);
	default:
		return 2;	/* bad_option() said it */
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	const struct command *cmd = &commands[0];
	int opt, ret, help = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	/*
	 * A reader that closes our stdout (up --json | head -1) ends what is printed, never the run:
	 * a write there fails with EPIPE, unread, and the run goes on to record its real result
	 * (children get SIGPIPE back, exec.c).
	 */
	signal(SIGPIPE, SIG_IGN);
	secret_no_dumps();	/* no core file of a process that holds tokens and passwords (secret.h) */
	secret_stack_wipe_at_exit();	/* and its stack zeroed at exit, below exit's frame */
	/* the state, cache and logs are private (util.h); init and render -o use the user's umask */
	user_umask = umask(077);
	c.file = "distro.yaml";
	c.jobs = (int)(ncpu > 0 ? ncpu : 1) + 2;
	if (c.jobs > JOBS_MAX)
		c.jobs = JOBS_MAX;
	c.keep_going = 1;
	c.color = COLOR_AUTO;
	c.statedir = getenv("IDPMAKE_STATE");
	/* the options before the command word */
	opterr = 0;	/* bad_option() says it, with "did you mean" */
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
		if (opt == '?')
			return bad_option(argv, optind, optopt, shortopts);
		else if ((ret = take_option(&c, opt, &help)) >= 0)
			return ret;
	c.targets = argv + optind;
	c.ntargets = (size_t)(argc - optind);
	if (optind < argc) {
		/* the command word; options may follow it, between the targets too, up to -- */
		const char *word = argv[optind];
		char **sub = argv + optind;
		int subc = argc - optind;
		if (!strcmp(word, "help")) {
			if (optind + 1 < argc)
				return command_help(argv[optind + 1]);
			usage(stdout);
			return 0;
		}
		if (!(cmd = find_command(word)))
			return no_command(word);
		c.command = cmd->name;
		c.targets = sub + 1;
		c.ntargets = (size_t)(subc - 1);
		if (cmd->flags & CMD_OWN_OPTS) {
			/* they read their own options, but --help is everyone's */
			for (int i = 1; i < subc && strcmp(sub[i - 1], "--"); i++)
				if (!strcmp(sub[i], "--help") || !strcmp(sub[i], "-h"))
					return command_help(cmd->name);
		} else {
			optind = 0;	/* glibc: start again, on the words after the command */
			while ((opt = getopt_long(subc, sub, shortopts_after, longopts, NULL)) != -1)
				if (opt == '?')
					return bad_option(sub, optind, optopt, shortopts_after);
				else if ((ret = take_option(&c, opt, &help)) >= 0)
					return ret;
			c.targets = sub + optind;
			c.ntargets = (size_t)(subc - optind);
		}
	}
	if (help) {
		if (c.command)
			return command_help(c.command);
		usage(stdout);
		return 0;
	}
	if (!c.command)
		c.command = cmd->name;
	c.commands = commands;
	c.ncommands = NCOMMANDS;
	c.options = longopts;
	c.shortopts = shortopts;
	if (c.json && !(cmd->flags & CMD_JSON)) {
		fprintf(stderr, "idpmake: --json: %s has no machine-readable output; see 'idpmake %s --help'\n", cmd->name,
			cmd->name);
		return 2;
	}
	if (c.all && cmd->fn != cmd_forget) {
		fprintf(stderr, "idpmake: --all is an option of forget, not of %s\n", cmd->name);
		return 2;
	}
	if (c.dry_run && cmd->fn == cmd_up)
		cmd = find_command("plan");
	if (cmd->fn != cmd_init && cmd->fn != cmd_version && cmd->fn != cmd_distros && !(cmd->flags & CMD_OWN_OPTS) &&
	    !c.bundle && !c.from && !c.all && !(c.json && cmd->fn == cmd_validate) && access(c.file, F_OK) < 0 &&
	    errno == ENOENT)
		return no_distro(c.file);	/* validate --json says it in its document */
	status_init(c.json, c.color, c.verbose);
	ret = cmd->fn(&c);
	for (size_t i = 0; c.g && i < c.g->nsteps; i++)
		if (c.g->steps[i]->tree) {
			tree_free(c.g->steps[i]->tree);
			free(c.g->steps[i]->tree);
		}
	if (c.st)
		state_close(c.st);
	afree_all();
	return ret;
}
