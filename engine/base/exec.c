/*
 * exec.c - child processes through posix_spawn.
 *
 * A child gets /dev/null as stdin, its log (or a pipe) as stdout and
 * stderr, and no other descriptor: posix_spawn's closefrom action (glibc
 * 2.34) closes every descriptor above 2, or, where configure found no
 * closefrom or no chdir action, a fork()ed child does the same with
 * close_range before exec.  Either way the folder (cwd) is honoured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/exec.h"
#include "base/intr.h"
#include "base/util.h"

#if defined(HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP) && defined(HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP)
#define SPAWN_WITH_POSIX_SPAWN 1
#endif

extern char **environ;

_Static_assert(JOBS_MAX + 17 <= INTR_CHILDREN, "intr.c tracks every child that can run at once (exec.h)");

/* ---- the environment ---- */

static const char *const env_allow[] = {
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "TERM", "KUBECONFIG",
	"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "HELM_PLUGINS", "HELM_REGISTRY_CONFIG",
	"HELM_REPOSITORY_CACHE", "HELM_REPOSITORY_CONFIG",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
};

int proc_env_allowed(const char *name, size_t len)
{
	if (len > 3 && !strncmp(name, "LC_", 3))
		return 1;
	for (size_t i = 0; i < sizeof(env_allow) / sizeof(*env_allow); i++)
		if (strlen(env_allow[i]) == len && !strncmp(env_allow[i], name, len))
			return 1;
	return 0;
}

void proc_env_base(struct strvec *env)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && proc_env_allowed(*e, (size_t)(eq - *e)))
			strvec_push(env, *e);
	}
}

const char *which(const char *prog)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;

	if (strchr(prog, '/'))
		return access(prog, X_OK) ? NULL : astrdup(prog);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	copy = xstrdup(path);
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = aprintf("%s/%s", *d ? d : ".", prog);
		if (!access(p, X_OK)) {
			free(copy);
			return p;
		}
	}
	free(copy);
	return NULL;
}

/* ---- spawning ---- */

#ifdef SPAWN_WITH_POSIX_SPAWN
static int spawn(pid_t *pid, const char *prog, const struct proc *p, char *const *env, int outfd, int logfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	int r;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (p->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, p->cwd);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setpgroup(&attr, 0);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(pid, prog, &fa, &attr, (char *const *)p->argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return r;
}
#else
/* close every descriptor from `from` on but `keep`; async-signal-safe */
static void close_from(int from, int keep)
{
	struct rlimit rl;
	int max = 65536;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)from, (unsigned)keep - 1, 0) == 0 &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0) == 0)
		return;
#endif
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (int fd = from; fd < max; fd++)
		if (fd != keep)
			close(fd);
}

static int spawn(pid_t *pid, const char *prog, const struct proc *p, char *const *env, int outfd, int logfd)
{
	int ep[2], e = 0;
	ssize_t n;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return errno;
	if ((*pid = fork()) < 0) {
		e = errno;
		close(ep[0]);
		close(ep[1]);
		return e;
	}
	if (*pid == 0) {
		/* the child: only async-signal-safe calls until exec */
		sigset_t none;
		int nul;
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if ((nul = open("/dev/null", O_RDONLY)) < 0 || dup2(nul, 0) < 0 || dup2(outfd, 1) < 0 ||
		    dup2(logfd, 2) < 0 || (p->cwd && chdir(p->cwd) < 0))
			goto fail;
		close_from(3, ep[1]);
		execve(prog, (char *const *)p->argv, env);
fail:
		e = errno;
		n = write(ep[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	setpgid(*pid, *pid);	/* as posix_spawn's SETPGROUP: before anyone signals the group */
	close(ep[1]);
	while ((n = read(ep[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		return e;
	}
	return 0;
}
#endif

/* why a child could not start in the folder dir: an errno, or 0 when it can */
static int cwd_error(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, X_OK) < 0 ? errno : 0;
}

/*
 * wait for pid to exit, without reaping it (so its pid cannot be reused
 * while it is in the table): 1 exited, 0 still running (block = 0), -1
 */
static int exited(pid_t pid, int block)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) == 0)
			return si.si_pid == pid ? 1 : 0;
		if (errno != EINTR)
			return -1;
		if (!block)
			return 0;
	}
}

int proc_run(struct proc *p)
{
	struct strvec env = STRVEC_INIT;
	int outpipe[2] = { -1, -1 }, logfd = -1, r, wst = 0, slot, sent = 0;
	pid_t pid;
	const char *prog;
	double deadline = p->timeout > 0 ? now_s() + p->timeout : 0;
	size_t cap = p->out_cap ? p->out_cap : (size_t)1 << 30;

	p->status = -1;
	p->timed_out = 0;
	p->spawn_errno = 0;
	p->cwd_failed = 0;
	if (interrupted()) {
		p->spawn_errno = EINTR;
		return -1;
	}
	if (p->cwd && (r = cwd_error(p->cwd))) {
		/* a vanished folder is not "'/bin/sh' not found on PATH" */
		p->spawn_errno = r;
		p->cwd_failed = 1;
		return -1;
	}
	if (!(prog = which(p->argv[0]))) {
		p->spawn_errno = ENOENT;
		return -1;
	}
	if (p->log)
		logfd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	else
		logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (logfd < 0) {
		p->spawn_errno = errno;
		return -1;
	}
	if (p->out && pipe2(outpipe, O_CLOEXEC) < 0) {
		p->spawn_errno = errno;
		close(logfd);
		return -1;
	}
	if (!p->env)
		proc_env_base(&env);
	r = spawn(&pid, prog, p, p->env ? (char *const *)p->env : (char *const *)env.v,
		  p->out ? outpipe[1] : logfd, logfd);
	strvec_clear(&env);
	if (p->out)
		close(outpipe[1]);
	close(logfd);
	if (r) {
		p->spawn_errno = r;
		p->cwd_failed = p->cwd && cwd_error(p->cwd);	/* gone since the check above */
		if (p->out)
			close(outpipe[0]);
		return -1;
	}
	slot = intr_track(pid);
	/* a signal between the spawn and track() found no slot to signal */
	if (interrupted()) {
		kill(-pid, interrupted());
		sent = 1;
	}
	if (p->out) {
		char buf[65536];
		size_t dirty = 0;	/* how much of buf a read wrote: wiped after (a Secret's value may pass) */
		for (;;) {
			struct pollfd pf = { outpipe[0], POLLIN, 0 };
			int ms = 200;	/* so an interrupt is seen even if the handler missed this child */
			ssize_t n;
			if (interrupted() && !sent) {
				kill(-pid, interrupted());
				sent = 1;
			}
			if (deadline) {
				double left = deadline - now_s();
				if (left <= 0) {
					p->timed_out = 1;
					kill(-pid, SIGKILL);
					break;
				}
				if (left * 1000 < ms)
					ms = (int)(left * 1000) + 1;
			}
			r = poll(&pf, 1, ms);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				continue;	/* the deadline check above fires */
			n = read(outpipe[0], buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			if (p->out->len + (size_t)n > cap) {
				kill(-pid, SIGKILL);
				p->timed_out = 0;
				p->status = -2;
				break;
			}
			buf_add(p->out, buf, (size_t)n);
			if ((size_t)n > dirty)
				dirty = (size_t)n;
		}
		memwipe(buf, dirty);
		close(outpipe[0]);
	}
	for (;;) {
		if (slot >= 0 && !deadline) {
			r = exited(pid, 1);
			break;
		}
		/* a deadline, or no slot: poll, and signal the child ourselves */
		if ((r = exited(pid, 0)) != 0)
			break;
		if (interrupted() && !sent) {
			kill(-pid, interrupted());
			sent = 1;
		}
		if (deadline && !p->timed_out && now_s() > deadline) {
			p->timed_out = 1;
			kill(-pid, SIGKILL);
		}
		struct timespec ts = { 0, 20 * 1000000 };
		nanosleep(&ts, NULL);
	}
	if (slot >= 0)
		intr_untrack(slot);
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	if (p->status == -2)
		return -1;
	if (r < 0)
		return -1;
	p->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	return p->status == 0 && !p->timed_out ? 0 : -1;
}

const char *proc_command(const char *const *argv)
{
	struct buf b = BUF_INIT;
	const char *cmd;

	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		if (i)
			buf_addf(&b, " ");
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == strlen(a)) {
			buf_addf(&b, "%s", a);
			continue;
		}
		buf_addf(&b, "'");
		for (; *a; a++)
			buf_addf(&b, *a == '\'' ? "'\\''" : "%c", *a);
		buf_addf(&b, "'");
	}
	cmd = astrdup(b.s ? b.s : "");
	buf_release(&b);
	return cmd;
}

const char *proc_failure(const struct proc *p)
{
	if (p->cwd_failed)
		return aprintf("cannot run '%s' in the folder '%s': %s", p->argv[0], p->cwd, strerror(p->spawn_errno));
	if (p->spawn_errno == ENOENT)
		return aprintf("'%s' not found on PATH", p->argv[0]);
	if (p->spawn_errno == EINTR)
		return aprintf("'%s' not started: interrupted", p->argv[0]);
	if (p->spawn_errno)
		return aprintf("cannot run '%s': %s", p->argv[0], strerror(p->spawn_errno));
	if (p->timed_out)
		return aprintf("'%s' timed out", p->argv[0]);
	if (p->status == -2)
		return aprintf("'%s' wrote more output than the %zu-byte cap", p->argv[0], p->out_cap);
	if (p->status > 128)
		return aprintf("'%s' was killed by signal %d", p->argv[0], p->status - 128);
	return aprintf("'%s' exited with status %d", p->argv[0], p->status);
}

int proc_run_why(struct proc *p, const char **why)
{
	const char *tmp = getenv("TMPDIR");
	char *log = aprintf("%s/idpmake-child-XXXXXX", tmp && *tmp ? tmp : "/tmp"), *text = NULL;
	size_t len;
	int fd, rc;

	if ((fd = mkstemp(log)) >= 0) {
		close(fd);
		p->log = log;
	}
	rc = proc_run(p);
	if (fd >= 0) {
		text = read_file(log, &len);
		unlink(log);
		p->log = NULL;
	}
	if (rc < 0)
		*why = text && *text_last_line(text) ? text_last_line(text) : proc_failure(p);
	free(text);
	return rc;
}
