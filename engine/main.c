/*
 * main.c - options and the command table (as git.c): each command is one
 * function in a cmd-*.c file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "exec.h"
#include "hash.h"
#include "manifest.h"
#include "util.h"

static const struct command {
	const char *name;
	int (*fn)(struct ctx *c);
	const char *usage;
	const char *help;
} commands[] = {
	{ "up", cmd_up, "up [TARGET...]", "render, push, sync and run hooks for what changed (the default)" },
	{ "plan", cmd_plan, "plan [--exit-code] [TARGET...]", "what up would run, and why; executes nothing (= up -n)" },
	{ "explain", cmd_explain, "explain STEP...", "why a step would run: which inputs changed, old and new hash" },
	{ "graph", cmd_graph, "graph [--format dot|json|mermaid] [TARGET...]", "the dependency graph" },
	{ "render", cmd_render, "render [-o DIR] [TARGET...]", "render only, to stdout or DIR; no push, no sync, no state change" },
	{ "diff", cmd_diff, "diff [TARGET...]", "rendered output against the GitOps repository, a unified diff per object" },
	{ "validate", cmd_validate, "validate", "check the distro and everything it references; render nothing remotely" },
	{ "status", cmd_status, "status [TARGET...]", "per step: last result, key, output hash, commit, when, how long" },
	{ "log", cmd_log, "log", "past runs, newest first" },
	{ "forget", cmd_forget, "forget [TARGET...]", "drop recorded state so the next up redoes those steps" },
	{ "init", cmd_init, "init [DIR]", "a new distro from a template that validates and runs as is" },
	{ "distros", cmd_distros, "distros", "the distros extends can name: IDPMAKE_DISTRO_PATH, installed, built in" },
	{ "version", cmd_version, "version", "the version, and the versions of the libraries it was built with" },
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
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nTARGET is PACKAGE, CLUSTER/PACKAGE or CLUSTER/; none means everything.\n\n"
		   "options:\n"
		   "  -C DIR             change to DIR first\n"
		   "  -f FILE            the distro manifest (default distro.yaml)\n"
		   "  -j N               steps run at once (default: processors + 2; at most 256)\n"
		   "  -k N               keep going until N steps failed (0: never stop; default 1)\n"
		   "  -n                 dry run: up -n is plan\n"
		   "  -l KEY=VALUE       select packages by label (repeatable; all must match)\n"
		   "  -v                 print commands and requests as they run\n"
		   "  --json             machine-readable output\n"
		   "  --color=WHEN       auto, always or never (NO_COLOR is honoured)\n"
		   "  --state DIR        the state folder (default .idpmake beside the distro; IDPMAKE_STATE)\n"
		   "  --wait             wait for another run's lock instead of failing\n"
		   "  --refresh          compare with the remotes first and redo what drifted\n"
		   "  --prune            delete Applications of packages removed from the distro\n"
		   "  --overwrite        up: replace changes made outside idpmake in the targets' folders\n"
		   "  --format FMT       graph: dot (default), json or mermaid\n"
		   "  -o DIR             render: write files under DIR\n"
		   "  --exit-code        plan: exit 1 when there is work to do\n"
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
	printf("usage: idpmake [OPTIONS] %s\n\n%s\n\nSee idpmake(1) for the options.\n", cmd->usage, cmd->help);
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

int main(int argc, char **argv)
{
	enum { O_JSON = 256, O_COLOR, O_STATE, O_WAIT, O_REFRESH, O_PRUNE, O_FORMAT, O_EXITCODE, O_VERSION, O_OVERWRITE };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "color", required_argument, NULL, O_COLOR },
		{ "colour", required_argument, NULL, O_COLOR },
		{ "state", required_argument, NULL, O_STATE },
		{ "wait", no_argument, NULL, O_WAIT },
		{ "refresh", no_argument, NULL, O_REFRESH },
		{ "prune", no_argument, NULL, O_PRUNE },
		{ "overwrite", no_argument, NULL, O_OVERWRITE },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "exit-code", no_argument, NULL, O_EXITCODE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct ctx c = { 0 };
	const struct command *cmd = &commands[0];
	int opt, ret, help = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	c.file = "distro.yaml";
	c.jobs = (int)(ncpu > 0 ? ncpu : 1) + 2;
	if (c.jobs > JOBS_MAX)
		c.jobs = JOBS_MAX;
	c.keep_going = 1;
	c.color = COLOR_AUTO;
	c.statedir = getenv("IDPMAKE_STATE");
	while ((opt = getopt_long(argc, argv, "+C:f:j:k:nl:vho:", longopts, NULL)) != -1 ||
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
		case O_FORMAT:
			c.format = optarg;
			break;
		case O_EXITCODE:
			c.exit_code = 1;
			break;
		case O_VERSION:
			return cmd_version(&c);
		default:
			fprintf(stderr, "see 'idpmake --help'\n");
			return 2;
		}
		if (c.command) {
			/* after the command word: let getopt permute the rest */
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
	for (size_t i = 0; i < c.ntargets; i++)
		if (c.targets[i][0] == '-') {
			fprintf(stderr, "idpmake: options go before the targets: '%s'\n", c.targets[i]);
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
