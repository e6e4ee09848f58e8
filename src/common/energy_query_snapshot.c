/*
 * energy_query_snapshot.c - the node's snapshot (energy_snapshot.h) asked
 * through the energy query socket: the client of the wire's version 5
 * (energy_query_wire.h; the server's side is in energy_query_server.c).
 *
 * One connection, one request, one reply of at most
 * ENERGY_QUERY_SNAPSHOT_REPLY_MAX bytes, bounded by the caller's timeout.
 * A server older than version 5 refuses the request in its own layout
 * (-EPROTO, version 3 or 4): that is told as -EPROTONOSUPPORT, so that the
 * exporter can say "upgrade the plugin" instead of "bad reply".
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query.h"
#include "energy_query_wire.h"
#include "se_time.h"

/* A connection to path with the snapshot request sent: 0 and its fd, or
 * -errno. */
static int _ask(const char *path, int *fdp)
{
	energy_query_wire_req3_t req = {
		.magic = ENERGY_QUERY_MAGIC_REQ,
		.version = ENERGY_QUERY_VERSION_SNAPSHOT,
		.size = sizeof(req),
	};
	struct sockaddr_un sa;
	int rc;

	if ((rc = energy_query_fill_addr(path, &sa)))
		return rc;
	rc = energy_query_dial(&sa, &req, sizeof(req), fdp);
	/* a full backlog: the scrape's time is up as much as a late reply */
	return rc == -EAGAIN ? -ETIMEDOUT : rc;
}

/* The reply's verdict: 0 (a whole snapshot), the server's status, or
 * -EPROTONOSUPPORT / -EPROTO. */
static int _check(const energy_query_wire_rep5_t *rep, ssize_t n)
{
	const energy_snapshot_t *s = &rep->snap;

	if (n < (ssize_t) offsetof(energy_query_wire_rep5_t, snap) ||
	    rep->magic != ENERGY_QUERY_MAGIC_REP)
		return -EPROTO;
	if (rep->version != ENERGY_QUERY_VERSION_SNAPSHOT)
		/* an older server's refusal, in its own layout */
		return rep->status == -EPROTO ? -EPROTONOSUPPORT :
		       (rep->status ? rep->status : -EPROTO);
	if (rep->size != n)
		return -EPROTO;
	if (rep->status)
		return rep->status;
	if (n < (ssize_t) offsetof(energy_query_wire_rep5_t, snap.steps) ||
	    s->n_gpus > ENERGY_SNAPSHOT_GPUS_MAX ||
	    s->n_steps > ENERGY_SNAPSHOT_STEPS_MAX ||
	    (size_t) n != energy_query_rep5_size(s->n_steps))
		return -EPROTO;
	return 0;
}

int energy_query_snapshot(const char *path, uint64_t timeout_ns,
			  energy_snapshot_t *out)
{
	uint64_t deadline = se_mono_ns() + timeout_ns;
	energy_query_wire_rep5_t *rep;
	ssize_t n;
	int fd = -1, rc;

	if (!path || !out)
		return -EINVAL;
	if ((rc = _ask(path, &fd)))
		return rc;
	if (!(rep = calloc(1, sizeof(*rep)))) {
		close(fd);
		return -ENOMEM;
	}
	rc = energy_query_recv(fd, rep, sizeof(*rep), deadline, &n);
	if (!rc)
		rc = n > (ssize_t) sizeof(*rep) ? -EPROTO : _check(rep, n);
	if (!rc) {
		/* the steps past n_steps were not sent: left zero */
		memset(out, 0, sizeof(*out));
		memcpy(out, &rep->snap, n - offsetof(energy_query_wire_rep5_t,
						     snap));
	}
	free(rep);
	close(fd);
	return rc;
}
