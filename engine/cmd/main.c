/*
 * main.c - options and the command table (as git.c): each command is one
 * function in a cmd-*.c file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/exec.h"
#include "base/hash.h"
#include "distro/manifest.h"
#include "pack/pack.h"
#include "base/util.h"

static const struct command commands[] = {
	{ "up", cmd_up, "up [TARGET...]", "render, push, sync and run hooks for what changed (the default)" },
	{ "promote", cmd_promote, "promote CLUSTER [PACKAGE...]", "bring a cloned cluster (or some of its packages) to the current render" },
	{ "plan", cmd_plan, "plan [--exit-code] [-o FILE] [TARGET...]", "what up would run, and why; executes nothing (= up -n)" },
	{ "explain", cmd_explain, "explain STEP...", "why a step would run: which inputs changed, old and new hash" },
	{ "graph", cmd_graph, "graph [--format dot|json|mermaid] [TARGET...]", "the dependency graph" },
	{ "render", cmd_render, "render [-o DIR] [TARGET...]", "render only, to stdout or DIR; no push, no sync, no state change" },
	{ "diff", cmd_diff,
	  "diff [--exit-code] [TARGET...]\n"
	  "       idpmake [OPTIONS] diff --rev A[..B] [--no-rules] [--format markdown] [TARGET...]\n"
	  "       idpmake [OPTIONS] diff --live [--json] [--exit-code] [-o FILE] [TARGET...]\n"
	  "       idpmake [OPTIONS] diff --from FILE\n"
	  "       idpmake [OPTIONS] diff [-o FILE] CLUSTER_A/ CLUSTER_B/ [PACKAGE...]",
	  "rendered output against the GitOps repository, Argo CD's live state, another cluster or revision\n\n"
	  "A unified diff per object against the GitOps repository; --live: against what Argo CD reports live, each object create, change or prune\n"
	  "(Argo CD's rules: fields only live, status and ignoreDifferences do not count;\n"
	  "no Secret value is shown); -o FILE saves it with the commit and keys, --from FILE\n"
	  "shows it again offline; CLUSTER_A/ CLUSTER_B/: the two clusters' renders,\n"
	  "package by package, from the cache (rendering what is missing); --rev A..B: the renders of\n"
	  "two revisions of the distro's git repository (A: against the work tree), --format markdown\n"
	  "for a pull-request comment; --no-rules: run none of the rules a revision defines (a pull\n"
	  "request's commands), only idpmake's built-in renderers" },
	{ "validate", cmd_validate, "validate [--live] [TARGET...]",
	  "check the distro and everything it references; render nothing remotely\n\n"
	  "--live: also render every package and check each object's apiVersion and kind against what\n"
	  "its cluster serves (Argo CD's cluster info) or a CRD rendered by the package or one before it\n"
	  "in needs order; exit 1 naming each unknown kind, 2 when Argo CD cannot be asked" },
	{ "status", cmd_status, "status [TARGET...]", "per step: last result, key, output hash, commit, when, how long" },
	{ "log", cmd_log, "log", "past runs, newest first" },
	{ "forget", cmd_forget, "forget [--all | TARGET...]", "drop recorded state so the next up redoes those steps" },
	{ "init", cmd_init, "init [DIR]", "a new distro from a template that validates and runs as is" },
	{ "pack", cmd_pack, "pack [-o FILE]",
	  "one archive with the distro, what it extends, its git sources and Helm charts, for an offline up\n\n"
	  "The archive (tar; gzip when FILE ends in .gz or .tgz; default idpmake-pack.tar) holds the distro and\n"
	  "its extends chain, its git: sources at their resolved commits and its Helm charts at their pinned\n"
	  "versions (helm pull), each with its XXH3 digest.  'idpmake -f FILE up' or 'up --bundle FILE' runs\n"
	  "from it with no network: the charts are mirrored into the GitOps repository." },
	{ "distros", cmd_distros, "distros", "the distros extends can name: IDPMAKE_DISTRO_PATH, installed, built in" },
	{ "version", cmd_version, "version", "the version, and the versions of the libraries it was built with" },
	{ "context", cmd_context, "context add|set|unset|use|list|rm [NAME] [--argocd-server URL] [--git-remote URL] "
	  "[--token-file F|--token-env VAR] [--git-token-env VAR] [--ca-file F] [--grpc-web-root-path P] [--plaintext] "
	  "[--insecure]",
	  "named Argo CD and GitOps targets that fill in what a distro leaves out: add, set, unset, use, list, rm "
	  "(~/.config/idpmake/contexts.yaml)" },
	{ "completion", cmd_completion, "completion bash|zsh|fish", "the shell completion script, on stdout" },
	{ "__complete", cmd_complete, "__complete commands|options|targets|steps|packages|clusters|contexts", NULL },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

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
	fprintf(f, "\nTARGET is PACKAGE, CLUSTER/PACKAGE or CLUSTER/; none means everything.\n\n"
		   "options:\n"
		   "  -C DIR             change to DIR first\n"
		   "  -f FILE            the distro manifest (default distro.yaml), or an archive from pack\n"
		   "  -j N               steps run at once (default: processors + 2; at most 256)\n"
		   "  -k N               keep going until N steps failed (0: never stop; default 1)\n"
		   "  -n                 dry run: up -n is plan\n"
		   "  -l KEY=VALUE       select packages by label (repeatable; all must match)\n"
		   "  -v                 print commands and requests as they run, and the context in use\n"
		   "  --context NAME     the context for this run, over the distro's server and remote (IDPMAKE_CONTEXT);\n"
		   "                     otherwise 'context use' only fills in what the distro leaves out\n"
		   "  --kube-context NAME  deploy: kubectl: the kube context (default: the cluster's kube-context,\n"
		   "                     register.context, then the kubeconfig's current-context)\n"
		   "  --json             machine-readable output\n"
		   "  --color=WHEN       auto, always or never (NO_COLOR is honoured)\n"
		   "  --state DIR        the state folder (default .idpmake beside the distro; IDPMAKE_STATE)\n"
		   "  --wait             wait for another run's lock instead of failing\n"
		   "  --refresh          compare with the remotes first and redo what drifted\n"
		   "  --prune            delete Applications of packages removed from the distro\n"
		   "  --overwrite        up: replace changes made outside idpmake in the targets' folders\n"
		   "  --adopt            up: take over Applications, ApplicationSets, clusters and repositories another\n"
		   "                     distro (or not idpmake) made in Argo CD, instead of refusing\n"
		   "  --format FMT       graph: dot (default), json or mermaid; diff --rev: text or markdown\n"
		   "  -o DIR             render: write files under DIR; diff: save the diff in FILE; plan: save the plan;\n"
		   "                     pack: the archive (default idpmake-pack.tar)\n"
		   "  --live             diff: against what Argo CD reports live; validate: kinds against the clusters\n"
		   "  --from FILE        diff: show a diff saved with -o, offline\n"
		   "  --bundle FILE      run from an archive 'idpmake pack' wrote, with no network\n"
		   "  --plan FILE        up: run exactly the saved plan, or refuse (exit 2) if anything changed\n"
		   "  --rev A[..B]       diff: the renders of revision A against B (default: the work tree)\n"
		   "  --no-rules         diff --rev: run only built-in renderers, no rule a revision defines\n"
		   "  --exit-code        plan: exit 1 when there is work to do; diff: 1 when anything differs\n"
		   "  --all              forget: remove state.db itself (a damaged or newer state)\n"
		   "  -h, --help         this help; 'idpmake help COMMAND' for one command\n"
		   "  --version          the version\n\n"
		   "exit status: 0 success, 1 a step failed, 2 a usage or manifest error.\n"
		   "See idpmake(1) and idpmake-distro(5).\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int command_help(const char *name)
{
	const struct command *cmd = find_command(name);
	if (!cmd) {
		fprintf(stderr, "idpmake: no command '%s'; see 'idpmake --help'\n", name);
		return 2;
	}
	printf("usage: idpmake [OPTIONS] %s\n\n%s\n\nSee idpmake(1) for the options.\n", cmd->usage,
	       cmd->help ? cmd->help : "used by the completion scripts");
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
       O_KUBE_CONTEXT, O_LIVE, O_FROM, O_ALL, O_REV, O_PLAN, O_BUNDLE, O_NO_RULES, O_ADOPT };
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
	{ "format", required_argument, NULL, O_FORMAT },
	{ "exit-code", no_argument, NULL, O_EXITCODE },
	{ "context", required_argument, NULL, O_CONTEXT },
	{ "kube-context", required_argument, NULL, O_KUBE_CONTEXT },
	{ "all", no_argument, NULL, O_ALL },
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
static const char shortopts[] = "+C:f:j:k:nl:vho:";

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	const struct command *cmd = &commands[0];
	int opt, ret, help = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	/* the state, cache and logs are private (util.h); init and render -o use the user's umask */
	user_umask = umask(077);
	c.file = "distro.yaml";
	c.jobs = (int)(ncpu > 0 ? ncpu : 1) + 2;
	if (c.jobs > JOBS_MAX)
		c.jobs = JOBS_MAX;
	c.keep_going = 1;
	c.color = COLOR_AUTO;
	c.statedir = getenv("IDPMAKE_STATE");
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1 ||
	       (optind < argc && !c.command)) {
		if (opt == -1) {
			/* the command word; options may follow it */
			const char *word = argv[optind++];
			if (!strcmp(word, "help")) {
				if (optind < argc)
					return command_help(argv[optind]);
				usage(stdout);
				return 0;
			}
			if (!(cmd = find_command(word))) {
				fprintf(stderr, "idpmake: no command '%s'; see 'idpmake --help'\n", word);
				return 2;
			}
			c.command = cmd->name;
			continue;
		}
		switch (opt) {
		case 'C':
			if (chdir(optarg) < 0) {
				fprintf(stderr, "idpmake: cannot change to '%s': %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		case 'f':
			c.file = optarg;
			break;
		case 'j':
			if (parse_int(optarg, "-j", &c.jobs) < 0)
				return 2;
			if (c.jobs > JOBS_MAX) {
				fprintf(stderr, "idpmake: -j %d is too many: at most %d steps run at once\n", c.jobs, JOBS_MAX);
				return 2;
			}
			if (!c.jobs)
				c.jobs = 1;
			break;
		case 'k':
			if (parse_int(optarg, "-k", &c.keep_going) < 0)
				return 2;
			break;
		case 'n':
			c.dry_run = 1;
			break;
		case 'l':
			if (!strchr(optarg, '=')) {
				fprintf(stderr, "idpmake: -l takes KEY=VALUE, not '%s'\n", optarg);
				return 2;
			}
			c.labels.v = agrow(c.labels.v, c.labels.n, sizeof(*c.labels.v));
			c.labels.v[c.labels.n++] = optarg;
			break;
		case 'v':
			c.verbose++;
			break;
		case 'o':
			c.outdir = optarg;
			break;
		case 'h':
			help = 1;
			break;
		case O_JSON:
			c.json = 1;
			break;
		case O_COLOR:
			if (!strcmp(optarg, "auto"))
				c.color = COLOR_AUTO;
			else if (!strcmp(optarg, "always"))
				c.color = COLOR_ALWAYS;
			else if (!strcmp(optarg, "never"))
				c.color = COLOR_NEVER;
			else {
				fprintf(stderr, "idpmake: --color takes auto, always or never, not '%s'\n", optarg);
				return 2;
			}
			break;
		case O_STATE:
			c.statedir = optarg;
			break;
		case O_WAIT:
			c.wait = 1;
			break;
		case O_REFRESH:
			c.refresh = 1;
			break;
		case O_PRUNE:
			c.prune = 1;
			break;
		case O_OVERWRITE:
			c.overwrite = 1;
			break;
		case O_ADOPT:
			c.adopt = 1;
			break;
		case O_ALL:
			c.all = 1;
			break;
		case O_FORMAT:
			c.format = optarg;
			break;
		case O_EXITCODE:
			c.exit_code = 1;
			break;
		case O_LIVE:
			c.live = 1;
			break;
		case O_FROM:
			c.from = optarg;
			break;
		case O_REV:
			c.rev = optarg;
			break;
		case O_NO_RULES:
			c.no_rules = 1;
			break;
		case O_PLAN:
			c.plan_file = optarg;
			break;
		case O_BUNDLE:
			c.bundle = optarg;
			break;
		case O_CONTEXT:
			c.context = optarg;
			break;
		case O_KUBE_CONTEXT:
			if (!*optarg) {
				fprintf(stderr, "idpmake: --kube-context needs a kube context's name (leave the option out "
						"for the cluster's own, or the kubeconfig's current-context)\n");
				return 2;
			}
			c.kube_context = optarg;
			break;
		case O_VERSION:
			return cmd_version(&c);
		default:
			fprintf(stderr, "see 'idpmake --help'\n");
			return 2;
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
	c.targets = argv + optind;
	c.ntargets = (size_t)(argc - optind);
	c.commands = commands;
	c.ncommands = NCOMMANDS;
	c.options = longopts;
	c.shortopts = shortopts;
	/* context, completion and __complete read their own options */
	for (size_t i = 0; cmd->fn != cmd_context && cmd->fn != cmd_complete && cmd->fn != cmd_completion && i < c.ntargets; i++)
		if (c.targets[i][0] == '-') {
			fprintf(stderr, "idpmake: options go before the targets: '%s'\n", c.targets[i]);
			return 2;
		}
	if (c.all && cmd->fn != cmd_forget) {
		fprintf(stderr, "idpmake: --all is an option of forget, not of %s\n", cmd->name);
		return 2;
	}
	if (c.dry_run && cmd->fn == cmd_up)
		cmd = find_command("plan");
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
