/*
 * es_step_starts.h - the instants steps started, for ext_sensors/meters
 * (no Slurm).
 *
 * slurmctld's step start_time is a whole second taken just before
 * ext_sensors_p_get_stepstartdata(); a step's window from it is up to 1 s
 * too wide (1.7 % of a 60 s step).  The glue remembers the instant of that
 * call here and takes it back at the step's end.  The core owns one
 * registry (es_pool_step_begin() / es_pool_step_start() in es_pool.h); it
 * reads no component and no RRD file.  Thread-safe (its own lock).
 */
#ifndef SE_ES_STEP_STARTS_H
#define SE_ES_STEP_STARTS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
	uint32_t job_id, step_id, het_comp;
} es_step_key_t;

typedef struct es_step_starts es_step_starts_t;

/* An empty registry whose entries are dropped keep_ns after their start
 * (steps that never completed).  NULL when out of memory. */
es_step_starts_t *es_step_starts_create(uint64_t keep_ns);

/* Free the registry; NULL is ignored. */
void es_step_starts_destroy(es_step_starts_t *s);

/* Remember that step k started at t_ns (a second begin for k moves it);
 * entries older than keep_ns are dropped meanwhile.  0 or -ENOMEM. */
int es_step_starts_begin(es_step_starts_t *s, const es_step_key_t *k,
			 uint64_t t_ns);

/*
 * The start of step k: the instant remembered, if it lies within
 * [coarse_ns, coarse_ns + 2 s) (coarse_ns is start_time in ns: a stale
 * entry of a reused id, or none after a slurmctld restart, gives coarse_ns).
 * forget: drop the entry (the step's last node completed).
 */
uint64_t es_step_starts_get(es_step_starts_t *s, const es_step_key_t *k,
			    uint64_t coarse_ns, bool forget);

#endif
