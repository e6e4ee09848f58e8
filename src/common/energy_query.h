/*
 * energy_query.h - the node's energy history, asked from another process.
 *
 * slurmd's sampler keeps a history of the node's energy (energy at any
 * monotonic instant, interpolated between samples), but Slurm's energy RPC
 * only answers "now".  A step (slurmstepd, same machine) wants the energy at
 * its own start and end instants, taken once a reading after each instant
 * exists.  This channel gives it that, free of Slurm:
 *
 *  server  (slurmd) one thread serving an AF_UNIX SOCK_SEQPACKET socket,
 *          mode 0600; peers whose SO_PEERCRED uid is neither 0 nor the
 *          server's euid are refused.  Each connection carries one
 *          fixed-size request and one fixed-size reply (magic, version),
 *          then is closed.  The thread never touches the meter: it answers
 *          from the sampler (under the sampler's short lock), and kicks the
 *          sampler when an instant asked has no later sample yet, so the
 *          reading after a step's boundary comes at once.  Every socket
 *          operation has a timeout: a client that connects and sends
 *          nothing holds the thread at most ENERGY_QUERY_SERVER_IO_TIMEOUT_NS.
 *          A question may ask to be held (ENERGY_QUERY_HOLD): its
 *          connection is kept, without blocking the thread, and answered
 *          the moment a reading makes the answer final, or as it stands
 *          after at most ENERGY_QUERY_SERVER_HOLD_MAX_NS (the sampler's period
 *          + deadline, if shorter).  A settling step asks this way: it
 *          learns its end's reading as it lands instead of asking again
 *          and again (each time a connection, and a pause on srun's
 *          path).  A server of an older build ignores the request and
 *          answers at once: the client asks again, as before holds.
 *  client  (slurmstepd) energy_query(): one call, bounded by its timeout.
 *
 * Instants are CLOCK_MONOTONIC ns: both processes run on the same machine
 * and share the clock (a time namespace would break this; the suite's test
 * cluster uses none, and Slurm does not create one).
 *
 * A reply carries the server's generation, a random number drawn when the
 * server starts: the sampler's energy counts from its own start, so energies
 * from two generations (slurmd restarted or reconfigured between a step's
 * start and end) must not be subtracted.
 *
 * Versions (energy_query_wire.h): version 4 adds the step's GPUs (NVIDIA minor
 * numbers) to a request and the GPU part to a reply.  Both ends speak 3
 * too, so that a step and slurmd of different builds keep working across
 * an upgrade: the server answers in the version it was asked in, and a
 * client refused by a version-3 server asks again in 3 (no GPU part), and
 * keeps asking in 3 at that socket for ENERGY_QUERY_OLD_SERVER_REMEMBER_NS.
 * The hold is a request flag, not a version: a server that predates it
 * answers at once, and the client asks again as it did before holds.
 * Version 5 is not a step's question but the node's snapshot
 * (energy_snapshot.h, energy_query_snapshot(): slurm-energy-exporter's
 * scrape), a request of its own beside 3 and 4, which stay as they are;
 * a server of version 4 refuses it.
 */
#ifndef SE_ENERGY_QUERY_H
#define SE_ENERGY_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_snapshot.h"
#include "sampler.h"
#include "se_time.h"

/* How long the server waits for one client's request or reply. */
#define ENERGY_QUERY_SERVER_IO_TIMEOUT_NS	(100 * SE_NS_PER_MS)

/* The longest a held question waits for its reading; a client asking
 * with ENERGY_QUERY_HOLD gives a timeout longer than this. */
#define ENERGY_QUERY_SERVER_HOLD_MAX_NS	(150 * SE_NS_PER_MS)

/* How long a client keeps asking a socket whose server refused version 4
 * in version 3, before it tries 4 again (slurmd upgraded meanwhile). */
#define ENERGY_QUERY_OLD_SERVER_REMEMBER_NS	(60 * SE_NS_PER_SEC)

/* A set of GPU minor numbers 0..ENERGY_QUERY_MINORS_MAX - 1, one bit each. */
#define ENERGY_QUERY_MINORS_MAX	256
#define ENERGY_QUERY_MINOR_WORDS	(ENERGY_QUERY_MINORS_MAX / 64)

typedef struct energy_query_server energy_query_server_t;

/*
 * The GPU part of an answer (version 4; all zero from a version-3 server).
 * The server's hooks fill it; metered says the node meters its GPUs at all,
 * part that the energies below are an answer for the step asked about.
 */
typedef struct {
	bool metered;		/* the server meters the node's GPUs ... */
	uint32_t count;		/* ... this many */
	bool part;		/* the fields below are an answer */
	uint64_t part_mj;	/* share mode: the step's charged GPU energy
				 * so far (the job's, for the extern step) */
	uint64_t e0_mj;		/* node mode: the step's GPUs' energy (times
				 * the factor) at t0, cumulative ... */
	uint64_t e1_mj;		/* ... and at t1 */
} energy_query_gpu_t;

/* One answer of the server. */
typedef struct {
	uint64_t generation;	/* the server's identity (see the top) */
	uint64_t e0_mj;		/* sampler energy at t0 (see complete0) */
	uint64_t e1_mj;		/* ... and at t1 */
	int rc0, rc1;		/* 0, or sampler_energy_at()'s -errno at
				 * t0 / t1: -ENODATA no sample yet, -ERANGE
				 * older than the history kept */
	bool complete0;		/* a sample at or after t0 exists: e0_mj is
				 * interpolated, final */
	bool complete1;		/* same for t1 */
	bool kicked;		/* the server kicked the sampler for this */
	uint64_t last_sample_ns; /* newest sample (monotonic), 0: none */
	uint64_t period_ns;	/* the sampler's period and read deadline: */
	uint64_t deadline_ns;	/* a kicked reading comes within their sum */
	/* energy_query_step() to a server with a share hook (attribution) */
	bool share;		/* the fields below are an answer */
	int share_rc;		/* the hook's: 0, -ENOENT unknown step */
	uint64_t share_mj;	/* the step's share so far */
	uint64_t share_last_ns;	/* end of the last interval split (monotonic):
				 * final for a step ended before it */
	/* a server with a total hook (slurmd: its node total) */
	bool total;		/* the fields below are an answer */
	uint64_t total_id;	/* the total's continuity: another id, the
				 * total counts again from zero */
	uint64_t total_mj;	/* the node total now */
	uint64_t total_power_mw; /* power at the newest sample */
	uint64_t total_sample_ns; /* newest sample (monotonic), 0: none */
	/* version 4 */
	unsigned version;	/* the version the server answered in */
	energy_query_gpu_t gpu;	/* all zero in a version-3 answer */
} energy_query_answer_t;

/* A step, as a query names it (attribution, attrib.h). */
typedef struct {
	uint32_t job_id, step_id;	/* Slurm's ids (cg_cpu.h's for named
					 * steps) */
	uint32_t ncpus;			/* its job's CPUs on the node, 0: ? */
	bool begin;			/* the step began at t0 */
	bool end;			/* the step ended at t1 */
	/*
	 * The GPUs the step may open (the device cgroup's rule): its own and
	 * its job's on this node, as sets of minor numbers (empty ones too).
	 * gpus_known false: the step did not say (a version-3 step, or its
	 * GRES could not be read), the sets are empty and mean nothing.
	 */
	bool gpus_known;
	uint64_t step_minors[ENERGY_QUERY_MINOR_WORDS];
	uint64_t job_minors[ENERGY_QUERY_MINOR_WORDS];
} energy_query_step_t;

/* Add minor to set: 0, or -ERANGE past ENERGY_QUERY_MINORS_MAX (set
 * unchanged). */
int energy_query_minors_add(uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			    unsigned minor);

/* Whether set holds minor (false past ENERGY_QUERY_MINORS_MAX). */
bool energy_query_minors_has(const uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			     unsigned minor);

/*
 * The server's hooks: how its owner (slurmd's glue) adds what the sampler
 * alone cannot answer.  All are called in the server thread, with the
 * hooks' arg, and must not block (the thread answers every step of the
 * node).  Any may be NULL: that part is not answered.
 *
 * share (EnergyAttribution=share): for each query naming a step, with the
 *	query's instants and the step's GPUs: fills the step's share, the
 *	end of the last interval split and (same snapshot) the step's GPU
 *	part; returns 0 or a negative errno (sent: -ENOENT unknown step).
 *	gpu arrives zeroed; it reaches the client only in a version-4
 *	answer.  A query whose share is not final yet (last_ns < t1) kicks
 *	the sampler.
 * gpus (GPUs in node mode, where no share hook runs): for each version-4
 *	query naming a step, after share if there is one (gpu holds what
 *	that one filled): fills the step's GPU part.  Its return is not
 *	sent: an error leaves gpu as it was.
 * kick (EnergyGPU=nvml): whenever a query kicks the sampler, so that other
 *	samplers read at that instant too.  The GPUs' counters must have a
 *	reading at the meter's kicked instant, or a step's boundary interval
 *	would split up to a GPU period of their energy by CPU time (or leave
 *	it unowned) instead of giving it to the step holding them.
 * total (slurmd in node mode): for every query, the owner's running total
 *	now, in its own units of continuity (slurmd's node energy, carried
 *	over reloads: what Slurm's energy RPC answers), the power and the
 *	instant of the newest sample; returns 0, or a negative errno
 *	(-EBUSY: not now; the client then asks Slurm).  It lets a step
 *	follow the node's total through this socket (microseconds) instead
 *	of an authenticated RPC to slurmd (a munge credential each way) at
 *	every accounting poll.  total_id is the total's continuity, sent
 *	with it: the same for as long as the total never restarts from zero.
 */
typedef int (*energy_query_share_fn)(void *arg, const energy_query_step_t *step,
				     uint64_t t0_ns, uint64_t t1_ns,
				     uint64_t *share_mj, uint64_t *last_ns,
				     energy_query_gpu_t *gpu);
typedef int (*energy_query_gpu_fn)(void *arg, const energy_query_step_t *step,
				   uint64_t t0_ns, uint64_t t1_ns,
				   energy_query_gpu_t *gpu);
typedef void (*energy_query_kick_fn)(void *arg);
typedef int (*energy_query_total_fn)(void *arg, uint64_t *total_mj,
				     uint64_t *power_mw, uint64_t *sample_ns);
/*
 * snapshot (slurmd): for a snapshot request (energy_query_snapshot), after
 * the server filled what the sampler knows (generation, now_ns,
 * last_sample_ns, power_mw, period_ns, deadline_ns, meter_state): adds the
 * owner's part (its total and continuity, the steps' shares, the GPUs, a
 * configured maximum power) in one consistent view.  Returns 0 or a
 * negative errno (sent; the client's scrape then fails).  Without it the
 * reply holds the sampler's part and, with a total hook, the total.
 */
typedef int (*energy_query_snapshot_fn)(void *arg, energy_snapshot_t *out);

typedef struct {
	energy_query_share_fn share;
	energy_query_gpu_fn gpus;
	energy_query_kick_fn kick;
	energy_query_total_fn total;
	energy_query_snapshot_fn snapshot;
	uint64_t total_id;	/* sent with total's answer */
	void *arg;		/* every hook's first argument */
	/* Without a share hook the server lists the steps that ask it in the
	 * snapshot (energy_query_steps.h), unless this says their total is
	 * not the meter's increase (a source that settles from its own
	 * history). */
	bool steps_unlisted;
} energy_query_hooks_t;

/*
 * The socket path of node `node` in spool_dir: "<spool_dir>/slurm-energy-
 * <node>.sock", into buf.  Returns 0, -EINVAL (empty argument), or
 * -ENAMETOOLONG when it does not fit buf or an AF_UNIX address (108 bytes
 * with its NUL): the path is then still written, cut, for the message.
 */
int energy_query_socket_path(const char *spool_dir, const char *node, char *buf,
			     size_t len);

/*
 * Serve sampler s at path (a stale socket there is replaced; any other kind
 * of file is not touched: -EEXIST).  period_ns and deadline_ns are those of
 * s, handed to clients as the longest useful wait.  hooks (NULL: none) are
 * copied, fixed for the server's life: a thread that answers never sees
 * them change.  s must outlive the server.  Returns the server, or NULL
 * with errno set and a message naming the path in err (ENAMETOOLONG for a
 * path too long for AF_UNIX).
 */
energy_query_server_t *energy_query_server_start(
	const char *path, sampler_t *s, uint64_t period_ns,
	uint64_t deadline_ns, const energy_query_hooks_t *hooks, char *err,
	size_t err_len);

/*
 * Stop the thread (within ENERGY_QUERY_SERVER_IO_TIMEOUT_NS: it never waits
 * longer on a client), close and unlink the socket.  srv may be NULL.
 */
void energy_query_server_stop(energy_query_server_t *srv);

/* A random 64-bit id, never 0 (a server's generation, a total's id). */
uint64_t energy_query_random_id(void);

/* Requests answered and refused (wrong peer, bad request) so far. */
void energy_query_server_counts(energy_query_server_t *srv,
				unsigned long *answered,
				unsigned long *refused);

/*
 * Ask the server at path for the node's energy at monotonic t0_ns and t1_ns
 * (t0_ns <= t1_ns; equal to ask one instant).  Never takes longer than
 * timeout_ns.  Returns 0 with *out filled, or a negative errno: -ENOENT /
 * -ECONNREFUSED no server there, -ETIMEDOUT no answer in time, -EACCES the
 * server refused us (our uid), -EPROTO a reply that is not one, -EINVAL bad
 * arguments, -ENAMETOOLONG path too long for AF_UNIX.
 */
int energy_query(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		 uint64_t timeout_ns, energy_query_answer_t *out);

/*
 * The same, asking only what is known now: the server kicks no reading for
 * an instant past its newest sample (the answer is then not complete for
 * it).  For a question whose answer is the total, not an instant's
 * energy (an energy profile sample, a poll after the step's end was
 * marked): a kicked read costs slurmd and the meter a transaction for
 * nothing.
 */
int energy_query_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		       uint64_t timeout_ns, energy_query_answer_t *out);

/* How energy_query_ask() asks (OR of these; 0: as energy_query()). */
#define ENERGY_QUERY_NO_KICK	0x1	/* what is known now, as
					 * energy_query_known() */
#define ENERGY_QUERY_HOLD	0x2	/* answer once final: the reading
					 * after an instant is in, a share
					 * split up to t1 (see the top) */

/* The query of them all, naming step (NULL: none). */
int energy_query_ask(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		     const energy_query_step_t *step, unsigned how,
		     uint64_t timeout_ns, energy_query_answer_t *out);

/*
 * A question sent and its answer not read yet (energy_query_send): a step
 * asks as its tasks start and end and reads the answer when it next needs
 * one, so that the round trip is not on the tasks' launch or exit path
 * (the server answers from the instant it reads the question, whenever
 * the answer is read).  fd -1: none.
 */
typedef struct {
	int fd;
	unsigned version;		/* the version asked in */
	uint64_t deadline_ns;		/* monotonic: the caller's timeout */
	char path[108];			/* for an old server's second ask */
	uint64_t t0_ns, t1_ns;
	unsigned how;
	bool named;			/* step below is the question's */
	energy_query_step_t step;
} energy_query_asking_t;

/*
 * energy_query_ask()'s question, sent without waiting for its answer
 * (connect and send do not block: a full backlog is -ETIMEDOUT at once).
 * 0 with *q holding the connection, or -errno (q->fd is -1 then).
 */
int energy_query_send(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		      const energy_query_step_t *step, unsigned how,
		      uint64_t timeout_ns, energy_query_asking_t *q);

/*
 * Its answer, waited for until the deadline the send's timeout set: what
 * energy_query_ask() would have returned (an old server is asked again in
 * its version, within the same deadline).  The connection is closed.
 */
int energy_query_collect(energy_query_asking_t *q, energy_query_answer_t *out);

/* Close a question whose answer no one will read (q->fd -1: nothing). */
void energy_query_drop(energy_query_asking_t *q);

/* The same as energy_query(), naming a step (NULL: as energy_query()) for
 * its share and its GPU part (its GPUs sent when step->gpus_known). */
int energy_query_step(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		      const energy_query_step_t *step, uint64_t timeout_ns,
		      energy_query_answer_t *out);

/* The same as energy_query_known(), naming a step (NULL: as
 * energy_query_known()): a node-mode step's profile sample of its GPU
 * part, which is no boundary. */
int energy_query_step_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
			    const energy_query_step_t *step,
			    uint64_t timeout_ns, energy_query_answer_t *out);

/*
 * The node's snapshot (energy_snapshot.h): what slurmd's sampler and
 * split know now, in one answer (slurm-energy-exporter's scrape; version
 * 5 of the wire, a request of its own).  Never takes longer than
 * timeout_ns.  Returns 0 with *out filled (steps past n_steps zero), or a
 * negative errno as energy_query(), and -EPROTONOSUPPORT when the server
 * predates the snapshot (it refused version 5).
 */
int energy_query_snapshot(const char *path, uint64_t timeout_ns,
			  energy_snapshot_t *out);

#endif
