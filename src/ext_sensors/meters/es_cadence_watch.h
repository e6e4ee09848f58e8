/*
 * es_cadence_watch.h - the cadence of slurmctld's update calls to
 * ext_sensors/meters, to say once in the log that they are starved
 * (no Slurm).
 *
 * In 22.05 slurmctld calls ext_sensors_p_update_component_data() only when
 * is_ping_done() (see es_pool.h): the plugin does not depend on that call,
 * but an admin should know it is not coming.  Pure arithmetic on a struct
 * the caller owns; not locked: the glue uses it under slurmctld's node
 * write lock.
 */
#ifndef SE_ES_CADENCE_WATCH_H
#define SE_ES_CADENCE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#define ES_STARVED_FACTOR	3			/* x period */
#define ES_STARVED_MIN_NS	(30 * 1000000000ULL)	/* and at least */

typedef struct {
	uint64_t period_ns;	/* ExtSensorsFreq */
	uint64_t last_ns;	/* last call, or when the clock was armed */
	bool armed;		/* calls are due from last_ns on */
	bool warned;
	unsigned calls;
} es_cadence_t;

void es_cadence_init(es_cadence_t *cd, uint64_t period_ns);

/* Calls are due from now on (slurmctld has its node table); idempotent. */
void es_cadence_arm(es_cadence_t *cd, uint64_t now_ns);

/* A call came at now_ns (arms the clock too); returns the gap since the
 * previous call or the arming, 0 for the first call when never armed. */
uint64_t es_cadence_call(es_cadence_t *cd, uint64_t now_ns);

/*
 * True exactly once: the first time the gap since the last call (or the
 * arming) exceeds max(ES_STARVED_FACTOR x period, ES_STARVED_MIN_NS);
 * *gap_ns is that gap.  Never before arming, never for period 0.
 */
bool es_cadence_starved(es_cadence_t *cd, uint64_t now_ns, uint64_t *gap_ns);

#endif
