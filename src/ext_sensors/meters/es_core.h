/*
 * es_core.h - out-of-band sensors for slurmctld, without Slurm.
 *
 * slurmctld calls ext_sensors_p_update_component_data() from its background
 * thread (_slurmctld_background, src/slurmctld/controller.c) every
 * ExtSensorsFreq seconds while holding the node and job write locks.
 * Upstream read every node's RRD file there, serially: at 10,000 nodes the
 * controller stood still for the whole round.  Here that call is
 * es_core_round(), which never touches a file:
 *
 *   1. it takes the results the reader threads posted since the last round
 *      (a pointer swap under a short mutex) and folds them into per-component
 *      state (an energy accumulator per node and switch, the newest
 *      temperature); a component's first read, which brings its whole
 *      EnergyHistory, arrives as a series the reader already built, and is
 *      only adopted;
 *   2. it queues one read per component that has no read outstanding, and
 *      returns.  A pool of ReadThreads threads does the RRD reads in
 *      parallel; a read queued more than one round ago is dropped unstarted
 *      (its component is read in the next round), and a file that hangs
 *      holds one thread, never the controller.
 *
 * So the values Slurm shows are at most one round plus the RRD step old, and
 * the controller's cost per round is O(components) memory work.  Failures
 * (missing, unreadable, corrupt, stale files) are logged when a component's
 * state changes, through a rate limiter, and the component is skipped.
 *
 * Times are wall-clock ns (RRD rows are wall-clock seconds).  All calls are
 * thread-safe; none blocks on I/O.
 */
#ifndef SE_ES_CORE_H
#define SE_ES_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es_conf.h"

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

typedef struct es_core es_core_t;

/* Copy the configuration and start the reader threads.  NULL + err. */
es_core_t *es_core_create(const es_conf_t *conf, char *err, size_t err_len);

/*
 * Stop the readers: waits up to grace_ns for reads in progress; a reader
 * stuck in a read is left behind (and the core memory with it, logged).
 */
void es_core_destroy(es_core_t *c, uint64_t grace_ns);

/*
 * Set the components of a kind (node names in Slurm's node table order, so
 * that index i is node i).  Unchanged names keep their state; reads in
 * flight for a replaced set are discarded.  0 or -ENOMEM / -EINVAL (bad
 * path template for a name, message in err).
 */
int es_core_set_components(es_core_t *c, es_kind_t kind,
			   const char *const *names, size_t n,
			   char *err, size_t err_len);

/* One round, as described above; round_ns is the time between rounds. */
void es_core_round(es_core_t *c, uint64_t now_ns, uint64_t round_ns,
		   es_round_stats_t *stats);

/* Values of component idx of kind, as of the last round; -ENOENT. */
int es_core_values(es_core_t *c, es_kind_t kind, size_t idx, uint64_t now_ns,
		   es_values_t *out);

size_t es_core_count(es_core_t *c, es_kind_t kind);
const char *es_core_name(es_core_t *c, es_kind_t kind, size_t idx);

/*
 * Energy of nodes[0..n) between t0_ns and t1_ns (step start and end): the
 * sum of each node's series energy, interpolated at both ends, extrapolated
 * at the newest power up to MaxAge past it.  Returns 0, -ENODATA (a node
 * has no series), or -ERANGE (t0 older than EnergyHistory); the first node
 * at fault is named in err.
 */
int es_core_energy_between(es_core_t *c, const size_t *nodes, size_t n,
			   uint64_t t0_ns, uint64_t t1_ns, uint64_t *energy_mj,
			   char *err, size_t err_len);

#endif
