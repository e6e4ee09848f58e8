/*
 * energy_query_wire.h - the energy query's wire format, shared by its
 * server (energy_query_server.c) and its client (energy_query.c); private
 * to those two.
 *
 * Two fixed-size structs in host byte order (both ends are on the same
 * machine); magic, version and size guard against anything else talking
 * to the socket.  SOCK_SEQPACKET keeps each message whole, so a short or
 * long read is a bad request, not a partial one.
 *
 * Both ends need not be the same build: a step started before an upgrade
 * keeps running beside the new slurmd, and the other way round.  Each
 * version-4 struct is its version-3 struct followed by a tail, so version 3
 * is a truncation: the server reads either size and answers in the
 * version asked (the first bytes of its reply), and a client refused by an
 * old server (a version-3 refusal) asks again in 3.  Version 3 must stay
 * byte for byte as it is (the size asserts below).
 */
#ifndef SE_ENERGY_QUERY_WIRE_H
#define SE_ENERGY_QUERY_WIRE_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "energy_query.h"
#include "energy_snapshot.h"
#include "se_time.h"

#define ENERGY_QUERY_MAGIC_REQ	0x53455131u	/* "SEQ1" */
#define ENERGY_QUERY_MAGIC_REP	0x53455231u	/* "SER1" */
#define ENERGY_QUERY_VERSION	4	/* 2: a step's share (attribution);
				 * 3: the owner's total;
				 * 4: the step's GPUs and their part */
#define ENERGY_QUERY_VERSION_SNAPSHOT	5	/* the node's snapshot
					 * (energy_snapshot.h): a request of
					 * its own, not a step's question */
/* still served, and asked when refused */
#define ENERGY_QUERY_VERSION_OLD	3

/* reply flags */
#define ENERGY_QUERY_COMPLETE0	0x1
#define ENERGY_QUERY_COMPLETE1	0x2
#define ENERGY_QUERY_KICKED	0x4
#define ENERGY_QUERY_SHARE	0x8	/* share_* answer the step asked
				 * about */
#define ENERGY_QUERY_TOTAL	0x10	/* total_* hold the owner's total */

/* request flags */
#define ENERGY_QUERY_REQ_STEP	0x1	/* job_id/step_id name a step */
#define ENERGY_QUERY_REQ_BEGIN	0x2	/* ... that began at t0 */
#define ENERGY_QUERY_REQ_END	0x4	/* ... that ended at t1 */
/* what is known now: no reading for it (a server that predates the flag
 * kicks, which only costs a read) */
#define ENERGY_QUERY_REQ_NO_KICK	0x8
#define ENERGY_QUERY_REQ_GPUS	0x10	/* v4: the minor sets are the
				 * step's GPUs (maybe empty);
				 * without it, not said */
#define ENERGY_QUERY_REQ_HOLD	0x20	/* answer once final, within
				 * ENERGY_QUERY_SERVER_HOLD_MAX_NS (a server
				 * that predates the flag answers at once) */

/* reply gpu_flags (v4) */
/* the node's GPUs are metered: gpu_count */
#define ENERGY_QUERY_GPU_METERED	0x1
/* gpu_part_mj, gpu_e0/e1_mj answer the step */
#define ENERGY_QUERY_GPU_PART	0x2

/* The request of version 3, and the head of version 4's. */
typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;		/* the size of the version's struct */
	uint64_t t0_ns;
	uint64_t t1_ns;
	uint32_t flags;		/* ENERGY_QUERY_REQ_* */
	uint32_t job_id;
	uint32_t step_id;
	uint32_t ncpus;
} energy_query_wire_req3_t;

typedef struct {
	energy_query_wire_req3_t v3;
	/* with ENERGY_QUERY_REQ_GPUS */
	uint64_t step_minors[ENERGY_QUERY_MINOR_WORDS];
	uint64_t job_minors[ENERGY_QUERY_MINOR_WORDS];
} energy_query_wire_req_t;

/* The reply of version 3, and the head of version 4's. */
typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;		/* the size of the version's struct */
	int32_t status;		/* 0, -EACCES (peer refused), -EPROTO,
				 * -EINVAL (bad request) */
	uint32_t flags;		/* ENERGY_QUERY_COMPLETE0, _COMPLETE1,
				 * _KICKED, _SHARE, _TOTAL */
	int32_t rc0;
	int32_t rc1;
	uint64_t generation;
	uint64_t e0_mj;
	uint64_t e1_mj;
	uint64_t last_sample_ns;
	uint64_t period_ns;
	uint64_t deadline_ns;
	int32_t share_rc;	/* the share hook's result */
	uint32_t pad;
	uint64_t share_mj;
	uint64_t share_last_ns;
	uint64_t total_id;
	uint64_t total_mj;
	uint64_t total_power_mw;
	uint64_t total_sample_ns;
} energy_query_wire_rep3_t;

typedef struct {
	energy_query_wire_rep3_t v3;
	uint32_t gpu_flags;	/* ENERGY_QUERY_GPU_* */
	uint32_t gpu_count;
	uint64_t gpu_part_mj;
	uint64_t gpu_e0_mj;
	uint64_t gpu_e1_mj;
} energy_query_wire_rep_t;

/*
 * Version 5, the node's snapshot (energy_query_snapshot.c): the request is
 * version 3's head alone (version 5, size 40, nothing else read); the
 * reply this head and the snapshot cut after its n_steps steps, so that
 * its size follows the node's steps (at most 26 KB, within the head's
 * 16-bit size).  A server older than version 5 refuses the request, as
 * any unknown version, in its own newest layout (-EPROTO).
 */
typedef struct {
	uint32_t magic;
	uint16_t version;	/* ENERGY_QUERY_VERSION_SNAPSHOT */
	uint16_t size;		/* the whole message's */
	int32_t status;		/* 0, or the snapshot hook's -errno */
	uint32_t pad;
	energy_snapshot_t snap;
} energy_query_wire_rep5_t;

static inline size_t energy_query_rep5_size(uint32_t n_steps)
{
	return offsetof(energy_query_wire_rep5_t, snap.steps) +
	       (size_t) n_steps * sizeof(energy_snapshot_step_t);
}

/* Whether a request of n bytes asks for the snapshot. */
static inline bool energy_query_is_snapshot_req(
	const energy_query_wire_req3_t *req, ssize_t n)
{
	return req->magic == ENERGY_QUERY_MAGIC_REQ &&
	       req->version == ENERGY_QUERY_VERSION_SNAPSHOT &&
	       req->size == sizeof(*req) && n == (ssize_t) sizeof(*req);
}

_Static_assert(sizeof(energy_snapshot_t) == 26208, "snapshot layout changed: a new version");
_Static_assert(sizeof(energy_query_wire_rep5_t) <= UINT16_MAX,
	       "the snapshot reply must fit the head's size");

/* The sizes running steps and slurmds of older builds send and expect. */
_Static_assert(sizeof(energy_query_wire_req3_t) == 40, "v3 request changed");
_Static_assert(sizeof(energy_query_wire_rep3_t) == 128, "v3 reply changed");
_Static_assert(sizeof(energy_query_wire_req_t) == 104, "v4 request changed");
_Static_assert(sizeof(energy_query_wire_rep_t) == 160, "v4 reply changed");

static inline int energy_query_fill_addr(const char *path,
					 struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* Wait for events on fd until the monotonic deadline.  1 ready, 0 timed
 * out, -errno. */
static inline int energy_query_wait_fd(int fd, short events,
				       uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t now = se_mono_ns();
		int ms, rc;

		if (now >= deadline_ns)
			return 0;
		ms = (int) ((deadline_ns - now + SE_NS_PER_MS - 1) /
			    SE_NS_PER_MS);
		rc = poll(&p, 1, ms);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * The clients' two socket steps (energy_query.c): a non-blocking
 * connection to sa with the size bytes of req sent, its fd in *fdp (the
 * caller's to close), or -errno (-EAGAIN: the server's backlog is full;
 * -ETIMEDOUT: its socket buffer is); and the one reply on fd by the
 * monotonic deadline_ns into buf (cap bytes; *n its whole size, maybe
 * more than cap: MSG_TRUNC), 0 or -ETIMEDOUT, -ECONNRESET (closed
 * unanswered), -errno.
 */
int energy_query_dial(const struct sockaddr_un *sa, const void *req,
		      size_t size, int *fdp);
int energy_query_recv(int fd, void *buf, size_t cap, uint64_t deadline_ns,
		      ssize_t *n);

static inline size_t energy_query_req_size(unsigned version)
{
	return version == ENERGY_QUERY_VERSION_OLD ?
	       sizeof(energy_query_wire_req3_t) :
	       sizeof(energy_query_wire_req_t);
}

static inline size_t energy_query_rep_size(unsigned version)
{
	return version == ENERGY_QUERY_VERSION_OLD ?
	       sizeof(energy_query_wire_rep3_t) :
	       sizeof(energy_query_wire_rep_t);
}

/* The version of a message (a request, or a reply) of n bytes whose head
 * holds magic, version and size: ENERGY_QUERY_VERSION or
 * ENERGY_QUERY_VERSION_OLD when all three agree with each other and with
 * n, else 0. */
static inline unsigned energy_query_version_of(uint32_t magic,
					       uint16_t version, uint16_t size,
					       uint32_t want_magic, ssize_t n,
					       bool reply)
{
	unsigned v;

	if (magic != want_magic)
		return 0;
	if (version == ENERGY_QUERY_VERSION)
		v = ENERGY_QUERY_VERSION;
	else if (version == ENERGY_QUERY_VERSION_OLD)
		v = ENERGY_QUERY_VERSION_OLD;
	else
		return 0;
	if ((size_t) size != (reply ? energy_query_rep_size(v) :
				      energy_query_req_size(v)) ||
	    n != (ssize_t) size)
		return 0;
	return v;
}

#endif
