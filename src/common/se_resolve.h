/*
 * se_resolve.h - a host name lookup bounded by a deadline.
 *
 * getaddrinfo() has no timeout: with a resolver that does not answer it
 * blocks for the resolver's own timeouts (5 s per server and attempt by
 * default, often tens of seconds), far past a meter's read deadline.
 * libmodbus and FreeIPMI call it inside their connect or open, so a backend
 * resolves the name itself with se_resolve() and hands the library the
 * numeric address (keeping the name for its logs).
 */
#ifndef SE_RESOLVE_H
#define SE_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

/* Room for any numeric address se_resolve() writes (IPv6, no brackets). */
#define SE_RESOLVE_ADDR_LEN	64

/* At most this many lookups abandoned at their deadline still running. */
#define SE_RESOLVE_MAX_PENDING	8

/*
 * Resolve host (a name, or an IPv4/IPv6 address) for sockets of socktype
 * (SOCK_STREAM, SOCK_DGRAM) by the monotonic deadline_ns, and write the
 * first address getaddrinfo() gives (its preferred one) as a numeric
 * string into addr (at least SE_RESOLVE_ADDR_LEN bytes).
 *
 * A numeric host is converted at once.  A name is looked up on a detached
 * helper thread: a lookup still running at the deadline is abandoned (it
 * frees itself when the resolver gives up), so the caller never waits past
 * deadline_ns and nothing leaks; while SE_RESOLVE_MAX_PENDING abandoned
 * lookups still run, a new one is refused with -EBUSY rather than stacking
 * threads behind a dead resolver.
 *
 * Returns 0; -ETIMEDOUT (no answer by the deadline); -ENOENT (no such
 * host, or no address of a usable family); -EAGAIN (the resolver failed
 * for now: try later); -EBUSY; -ENOMEM; -EINVAL (empty host, or
 * addr_len too short); -EIO (any other failure).
 */
int se_resolve(const char *host, int socktype, uint64_t deadline_ns,
	       char *addr, size_t addr_len);

/* The number of abandoned lookups still running (for tests). */
unsigned se_resolve_pending(void);

#endif
