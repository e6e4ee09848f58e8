/*
 * se_thread.h - the suite's own threads inside Slurm's daemons.
 *
 * Slurm-free.  slurmd hosts our sampler and query-server threads, and
 * slurmctld the ext_sensors readers and pacer: each is started the same
 * way, here.
 */
#ifndef SE_THREAD_H
#define SE_THREAD_H

#include <pthread.h>

/*
 * Start fn(arg) in *thread with every signal blocked (signals belong to
 * the daemon: its own threads handle them, and a handler must never run on
 * ours), named name for top -H, ps -L and perf (at most 15 characters; a
 * longer name is left off, the thread still starts).  The caller's signal
 * mask is as before on return.  Returns 0 or -errno.
 */
int se_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    const char *name);

#endif /* SE_THREAD_H */
