/*
 * secret.h - a process that holds secrets (tokens, passwords, keys): no core
 * dump of it, and the secrets it puts in its own environment zeroed at exit.
 */
#ifndef IDPMAKE_SECRET_H
#define IDPMAKE_SECRET_H

/*
 * At start (main): no core file (RLIMIT_CORE 0, which children inherit) and
 * not dumpable (PR_SET_DUMPABLE 0: no core through a piped core_pattern
 * either, no ptrace by another process of the user).  Before any thread.
 */
void secret_no_dumps(void);

/*
 * setenv(name, value), for a secret the process's own code reads with
 * getenv (exec.c passes no such variable to a child): its copy in the
 * environment is zeroed and unset at exit (atexit), or by secret_env_wipe.
 */
int secret_setenv(const char *name, const char *value);
void secret_env_wipe(void);

/*
 * Zero SECRET_STACK_WIPE bytes of the calling thread's stack below its
 * caller's frame: what the calls it made left there (a password that
 * vsnprintf or libgit2 formatted).  A thread that handled a secret calls it
 * before it waits or returns; secret_stack_wipe_at_exit has the main
 * thread's zeroed at exit.
 */
#define SECRET_STACK_WIPE (256 * 1024)
void secret_stack_wipe(void);
void secret_stack_wipe_at_exit(void);

#endif
