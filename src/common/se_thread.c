/*
 * se_thread.c - the suite's own threads inside Slurm's daemons (see
 * se_thread.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pthread_setname_np */
#endif

#include <pthread.h>
#include <signal.h>

#include "se_thread.h"

int se_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    const char *name)
{
	sigset_t all, old;
	int rc;

	/* a new thread inherits the mask in force when it is created */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(thread, NULL, fn, arg);
	if (!rc)
		(void) pthread_setname_np(*thread, name);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}
