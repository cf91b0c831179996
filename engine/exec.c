/* exec.c - child processes through posix_spawn */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "util.h"

extern char **environ;

/* the running children, so a signal can stop them all */
static pid_t running[256];
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;

static void track(pid_t pid, int add)
{
	pthread_mutex_lock(&running_lock);
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (add ? running[i] == 0 : running[i] == pid) {
			running[i] = add ? pid : 0;
			break;
		}
	pthread_mutex_unlock(&running_lock);
}

void proc_kill_all(int sig)
{
	/* called from a signal handler: no locks, just a read of the table */
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (running[i] > 0)
			kill(-running[i], sig);
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

int proc_run(struct proc *p)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int outpipe[2] = { -1, -1 }, logfd = -1, r, wst;
	pid_t pid;
	const char *prog;
	double deadline = p->timeout > 0 ? now_s() + p->timeout : 0;
	size_t cap = p->out_cap ? p->out_cap : (size_t)1 << 30;

	p->status = -1;
	p->timed_out = 0;
	p->spawn_errno = 0;
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
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p->out ? outpipe[1] : logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setpgroup(&attr, 0);
	{
		sigset_t none, dfl;
		sigemptyset(&none);
		sigemptyset(&dfl);
		sigaddset(&dfl, SIGPIPE);
		sigaddset(&dfl, SIGINT);
		sigaddset(&dfl, SIGTERM);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &dfl);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	}
	if (p->cwd) {
		/* posix_spawn has no chdir before glibc 2.29's _np; spawn through sh when needed */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
		posix_spawn_file_actions_addchdir_np(&fa, p->cwd);
#endif
	}
	r = posix_spawn(&pid, prog, &fa, &attr, (char *const *)p->argv,
			p->env ? (char *const *)p->env : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (p->out)
		close(outpipe[1]);
	close(logfd);
	if (r) {
		p->spawn_errno = r;
		if (p->out)
			close(outpipe[0]);
		return -1;
	}
	track(pid, 1);
	if (p->out) {
		char buf[65536];
		for (;;) {
			struct pollfd pf = { outpipe[0], POLLIN, 0 };
			int ms = -1;
			ssize_t n;
			if (deadline) {
				double left = deadline - now_s();
				if (left <= 0) {
					p->timed_out = 1;
					kill(-pid, SIGKILL);
					break;
				}
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
		}
		close(outpipe[0]);
	}
	for (;;) {
		if (deadline && !p->timed_out) {
			r = waitpid(pid, &wst, WNOHANG);
			if (r == 0) {
				if (now_s() > deadline) {
					p->timed_out = 1;
					kill(-pid, SIGKILL);
					continue;
				}
				struct timespec ts = { 0, 20 * 1000000 };
				nanosleep(&ts, NULL);
				continue;
			}
		} else {
			r = waitpid(pid, &wst, 0);
		}
		if (r < 0 && errno == EINTR)
			continue;
		break;
	}
	track(pid, 0);
	if (p->status == -2)
		return -1;
	if (r < 0)
		return -1;
	p->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	return p->status == 0 && !p->timed_out ? 0 : -1;
}

const char *proc_failure(const struct proc *p)
{
	if (p->spawn_errno == ENOENT)
		return aprintf("'%s' not found on PATH", p->argv[0]);
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
