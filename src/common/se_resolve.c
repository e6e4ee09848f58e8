/*
 * se_resolve.c - a host name lookup bounded by a deadline (see se_resolve.h).
 *
 * Why a helper thread and not glibc's getaddrinfo_a(): a request that the
 * resolver is already working on cannot be cancelled (gai_cancel() says
 * EAI_NOTCANCELED), so its struct gaicb must outlive the caller anyway and
 * be freed from a completion callback; a thread of our own that frees its
 * own request is the same scheme with less glibc-specific machinery (and
 * no -lanl on older glibc).  The request is shared by the caller and the
 * helper and freed by whichever lets go last.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pthread_cond_clockwait */
#endif

#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "se_resolve.h"
#include "se_time.h"

/* ------------------------------------------------------- private types */

/* One lookup, shared by the caller and its helper thread. */
typedef struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;	/* signalled when done */
	unsigned refs;		/* the caller and the helper (lock) */
	bool done;		/* rc and addr are final (lock) */
	int rc;
	int socktype;
	char addr[SE_RESOLVE_ADDR_LEN];
	char host[];
} lookup_t;

/* --------------------------------------------------- private variables */

/* Lookups whose caller gave up and whose helper still runs. */
static atomic_uint pending;

/* -------------------------------------------------- private prototypes */

static int _lookup(const char *host, int socktype, int flags, char *addr,
		   size_t addr_len);
static int _gai_errno(int gai_rc);
static lookup_t *_lookup_new(const char *host, int socktype);
static int _start(lookup_t *l);
static void *_helper(void *arg);
static int _wait(lookup_t *l, uint64_t deadline_ns, char *addr,
		 size_t addr_len);
static void _lookup_free(lookup_t *l);

/* ---------------------------------------------------- public functions */

int se_resolve(const char *host, int socktype, uint64_t deadline_ns,
	       char *addr, size_t addr_len)
{
	lookup_t *l;
	int rc;

	if (!host || !*host || addr_len < SE_RESOLVE_ADDR_LEN)
		return -EINVAL;
	/* An address needs no resolver: no thread, no wait. */
	rc = _lookup(host, socktype, AI_NUMERICHOST, addr, addr_len);
	if (rc != -ENOENT)
		return rc;
	if (se_mono_ns() >= deadline_ns)
		return -ETIMEDOUT;
	if (atomic_load(&pending) >= SE_RESOLVE_MAX_PENDING)
		return -EBUSY;
	if (!(l = _lookup_new(host, socktype)))
		return -ENOMEM;
	if ((rc = _start(l))) {
		_lookup_free(l);
		return rc;
	}
	return _wait(l, deadline_ns, addr, addr_len);
}

unsigned se_resolve_pending(void)
{
	return atomic_load(&pending);
}

/* ------------------------------------------------------ private functions */

/* getaddrinfo() and the first (preferred) address as a numeric string. */
static int _lookup(const char *host, int socktype, int flags, char *addr,
		   size_t addr_len)
{
	/* No AI_ADDRCONFIG: it drops 127.0.0.1 on a node whose only
	 * address is the loopback, and getaddrinfo() already sorts the
	 * reachable family first (RFC 6724). */
	struct addrinfo hints = {
		.ai_flags = flags,
		.ai_family = AF_UNSPEC,
		.ai_socktype = socktype,
	};
	struct addrinfo *res = NULL;
	int rc;

	if ((rc = getaddrinfo(host, NULL, &hints, &res)))
		return _gai_errno(rc);
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, addr, addr_len, NULL,
			 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	return rc ? _gai_errno(rc) : 0;
}

static int _gai_errno(int gai_rc)
{
	switch (gai_rc) {
	case EAI_NONAME:
#ifdef EAI_NODATA
	case EAI_NODATA:
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
#endif
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	default:
		return -EIO;
	}
}

static lookup_t *_lookup_new(const char *host, int socktype)
{
	size_t len = strlen(host) + 1;
	lookup_t *l = calloc(1, sizeof(*l) + len);

	if (!l)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cv, NULL);
	l->refs = 2;
	l->socktype = socktype;
	memcpy(l->host, host, len);
	return l;
}

/* A detached helper with every signal blocked (they are the daemon's). */
static int _start(lookup_t *l)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;
	int rc;

	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&tid, &attr, _helper, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc ? -rc : 0;
}

/* Look up, publish, and free the request if the caller has gone. */
static void *_helper(void *arg)
{
	lookup_t *l = arg;
	char addr[SE_RESOLVE_ADDR_LEN] = "";
	int rc = _lookup(l->host, l->socktype, 0, addr, sizeof(addr));
	bool last;

	pthread_mutex_lock(&l->lock);
	l->rc = rc;
	memcpy(l->addr, addr, sizeof(addr));
	l->done = true;
	pthread_cond_signal(&l->cv);
	last = !--l->refs;
	pthread_mutex_unlock(&l->lock);
	if (last) {	/* abandoned at its deadline: no longer pending */
		atomic_fetch_sub(&pending, 1);
		_lookup_free(l);
	}
	return NULL;
}

/* Wait for the helper by the deadline, then let go of the request. */
static int _wait(lookup_t *l, uint64_t deadline_ns, char *addr,
		 size_t addr_len)
{
	struct timespec ts = {
		.tv_sec = deadline_ns / SE_NS_PER_SEC,
		.tv_nsec = deadline_ns % SE_NS_PER_SEC,
	};
	int rc = 0;
	bool last;

	pthread_mutex_lock(&l->lock);
	while (!l->done && rc != ETIMEDOUT)
		rc = pthread_cond_clockwait(&l->cv, &l->lock, CLOCK_MONOTONIC,
					    &ts);
	if (l->done) {
		rc = l->rc;
		if (!rc)
			snprintf(addr, addr_len, "%s", l->addr);
	} else {
		/* Counted before the helper can see itself last. */
		atomic_fetch_add(&pending, 1);
		rc = -ETIMEDOUT;
	}
	last = !--l->refs;
	pthread_mutex_unlock(&l->lock);
	if (last)
		_lookup_free(l);
	return rc;
}

static void _lookup_free(lookup_t *l)
{
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
