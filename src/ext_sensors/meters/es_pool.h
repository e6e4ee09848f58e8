/*
 * es_pool.h - out-of-band sensors for slurmctld, without Slurm: a pool of
 * readers that every node's sensors are read by, paced by its own thread.
 *
 * Upstream's ext_sensors/rrd read every node's RRD file serially inside
 * ext_sensors_p_update_component_data(), which slurmctld calls from its
 * background thread (_slurmctld_background, src/slurmctld/controller.c)
 * under the node and job write locks -- and, in 22.05, only when
 * is_ping_done(): with AcctGatherNodeFreq=1 the node-energy agent is in
 * flight at nearly every check and the call never comes.  So nothing here
 * depends on that call:
 *
 *   - the pacer thread (es_pool_start_pacer) runs a round every period
 *     (ExtSensorsFreq) on its own clock: it queues one read per component
 *     that has none outstanding, waits a bounded time for them, adopts the
 *     finished ones and calls the glue's hook (which publishes the values
 *     into Slurm's node table under the lock it takes itself);
 *   - ReadThreads reader threads do the RRD reads in parallel; a component's
 *     first read, which brings its whole EnergyHistory, arrives as a series
 *     the reader already built; a read queued more than one period ago is
 *     dropped unstarted (read again next round); a file that hangs holds one
 *     reader, never the pacer for more than its bounded wait, never a caller;
 *   - es_pool_adopt() only folds finished reads into the per-component state
 *     (a pointer swap, then O(rows) memory work): that is all a controller
 *     call does, and es_pool_energy_between() adopts first, so a step's end
 *     sees every read finished by then, however rarely slurmctld called.
 *
 * es_pool_round() (adopt + queue, no pacer) is kept for callers that drive
 * the rounds themselves (the unit tests, the benchmark without a pacer).
 * Failures (missing, unreadable, corrupt, stale files) are logged when a
 * component's state changes, through a rate limiter, and the component is
 * skipped.
 *
 * Times are wall-clock ns (RRD rows are wall-clock seconds) unless named
 * mono.  All calls are thread-safe; none blocks on I/O.
 */
#ifndef SE_ES_POOL_H
#define SE_ES_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es_cadence_watch.h"	/* test_es_pool.c includes this one */
#include "es_conf.h"
#include "es_step_starts.h"

typedef enum {
	ES_KIND_NODE = 0,
	ES_KIND_SWITCH,
	ES_KIND_DOOR,
	ES_KIND_COUNT,
} es_kind_t;

typedef struct {
	bool has_energy;
	uint64_t energy_mj;	/* cumulative since the plugin started */
	uint64_t energy_t_ns;	/* instant of the newest power sample */
	bool has_power;		/* newest sample no older than MaxAge */
	double watts;
	bool has_temp;		/* newest temperature no older than MaxAge */
	double temp_c;
} es_values_t;

typedef struct {
	unsigned queued;	/* reads queued by the last round */
	unsigned in_flight;	/* reads still outstanding from before */
	unsigned ok, failed, late; /* results taken by the last round */
} es_round_stats_t;

typedef struct es_pool es_pool_t;

/* Copy the configuration and start the reader threads.  NULL + err. */
es_pool_t *es_pool_create(const es_conf_t *conf, char *err, size_t err_len);

/*
 * Stop the readers: waits up to grace_ns for reads in progress; a reader
 * stuck in a read is left behind (and the core memory with it, logged).
 */
void es_pool_destroy(es_pool_t *c, uint64_t grace_ns);

/*
 * Set the components of a kind (node names in Slurm's node table order, so
 * that index i is node i).  Unchanged names keep their state; reads in
 * flight for a replaced set are discarded.  0 or -ENOMEM / -EINVAL (bad
 * path template for a name, message in err).
 */
int es_pool_set_components(es_pool_t *c, es_kind_t kind,
			   const char *const *names, size_t n,
			   char *err, size_t err_len);

/* One round, as described above; round_ns is the time between rounds. */
void es_pool_round(es_pool_t *c, uint64_t now_ns, uint64_t round_ns,
		   es_round_stats_t *stats);

/*
 * Fold the reads finished since the last adoption into the components'
 * state; queue nothing.  Counts what it took in stats->ok/failed/late
 * (stats may be NULL).  Returns the number of reads taken.
 */
unsigned es_pool_adopt(es_pool_t *c, uint64_t now_ns,
		       es_round_stats_t *stats);

/*
 * Called by the pacer after each round, with no core lock held.  Returns
 * the time until the next round (0: one period; a component set changed
 * by the hook wants an early round).
 */
typedef uint64_t (*es_pacer_hook_t)(void *arg);

/*
 * Start the pacer thread: a round every period_ns on the monotonic clock
 * (queue reads, wait for them up to min(period/2, 2 s), adopt), then
 * hook(arg) if hook is not NULL.  The first round runs at once.
 * 0, -EALREADY, or a negative errno of pthread_create.
 */
int es_pool_start_pacer(es_pool_t *c, uint64_t period_ns,
			es_pacer_hook_t hook, void *arg);

/* Run the next pacer round now (e.g. a new component set was given). */
void es_pool_kick(es_pool_t *c);

/* The stats of the pacer's last round and how many rounds it ran. */
void es_pool_pacer_stats(es_pool_t *c, es_round_stats_t *last,
			 uint64_t *rounds);

/* Values of component idx of kind, as of the last adoption; -ENOENT. */
int es_pool_values(es_pool_t *c, es_kind_t kind, size_t idx, uint64_t now_ns,
		   es_values_t *out);

size_t es_pool_count(es_pool_t *c, es_kind_t kind);
const char *es_pool_name(es_pool_t *c, es_kind_t kind, size_t idx);

/*
 * Energy of nodes[0..n) between t0_ns and t1_ns (step start and end): the
 * sum of each node's series energy, interpolated at both ends, extrapolated
 * at the newest power up to MaxAge past it.  Adopts finished reads first.
 * Returns 0, -ENODATA (a node has no series), or -ERANGE (t0 older than
 * EnergyHistory); the first node at fault is named in err.
 */
int es_pool_energy_between(es_pool_t *c, const size_t *nodes, size_t n,
			   uint64_t t0_ns, uint64_t t1_ns, uint64_t *energy_mj,
			   char *err, size_t err_len);

/*
 * The step start instants of the core's registry (es_step_starts.h, which
 * says why): es_step_starts_begin() / es_step_starts_get(), with entries
 * kept EnergyHistory.
 */
int es_pool_step_begin(es_pool_t *c, const es_step_key_t *k, uint64_t t_ns);
uint64_t es_pool_step_start(es_pool_t *c, const es_step_key_t *k,
			    uint64_t coarse_ns, bool forget);

#endif
