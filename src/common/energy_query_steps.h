/*
 * energy_query_steps.h - node mode's running steps, as the energy query
 * server hears of them, for the node's snapshot (energy_snapshot.h).
 *
 * In EnergyAttribution=node (Slurm's default) slurmd keeps no split: a
 * step's energy is the node counter's increase over the step, which the
 * step itself computes from the query socket (E(t1) - E(t0), the live
 * settle: energy_query.h).  Every question a step asks names it and its
 * start t0 (ENERGY_QUERY_REQ_STEP | REQ_BEGIN), and its end question says
 * REQ_END with t1: enough for the server to list the node's running steps
 * with the same total, E(now) - E(t0) while it runs and E(t1) - E(t0),
 * the settle's, once the reading after t1 is in.  Both from the one
 * sampler, at its samples (never extrapolated past the newest: a total
 * the next reading lowers would read as a counter reset).
 *
 * Slurm-free; used by the server thread only (no lock).  Bounded at
 * ENERGY_SNAPSHOT_STEPS_MAX steps: past it the step heard longest ago
 * makes room.  A step whose end question never comes (its slurmstepd
 * killed) is forgotten ENERGY_QUERY_STEPS_IDLE_NS after its last question.
 */
#ifndef SE_ENERGY_QUERY_STEPS_H
#define SE_ENERGY_QUERY_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include "energy_query.h"
#include "energy_snapshot.h"

/* A step not heard from for this long is forgotten (each poll of a step,
 * JobAcctGatherFrequency, asks: 30 s by default). */
#define ENERGY_QUERY_STEPS_IDLE_NS	(600ULL * 1000000000ULL)

typedef struct energy_query_steps energy_query_steps_t;

/* The meter's energy at t_ns (sampler_energy_at's contract). */
typedef int (*energy_query_steps_at_fn)(void *arg, uint64_t t_ns,
					 uint64_t *energy_mj);

energy_query_steps_t *energy_query_steps_new(void);
void energy_query_steps_free(energy_query_steps_t *t);

/*
 * A step's question (t0, t1 as asked) heard at now_ns.  The step's start
 * is t0 of its REQ_BEGIN questions; its end t1 of its REQ_END one.
 * e0/have_e0: the meter's energy at t0 if it is final already (a sample
 * at or after t0), so that a step longer than the history still has it.
 */
void energy_query_steps_heard(energy_query_steps_t *t,
			      const energy_query_step_t *step, uint64_t t0_ns,
			      uint64_t t1_ns, uint64_t now_ns,
			      energy_query_steps_at_fn at, void *arg,
			      uint64_t last_sample_ns);

/*
 * The steps into out->steps (n_steps, ENERGY_SNAPSHOT_NODE_STEPS): each
 * E(min(newest sample, end)) - E(t0), plus the GPU part from gpus (NULL:
 * none) for a step that said its GPUs.  An ended step is listed with its
 * final total (STEP_ENDED | STEP_FINAL) for linger_ns more, then
 * forgotten; a step whose E(t0) is lost (older than the history kept) or
 * whose GPU part is not known yet is left out of this snapshot.
 */
void energy_query_steps_snapshot(energy_query_steps_t *t, uint64_t now_ns,
				 uint64_t last_sample_ns, uint64_t linger_ns,
				 energy_query_steps_at_fn at, void *arg,
				 energy_query_gpu_fn gpus, void *gpus_arg,
				 energy_snapshot_t *out);

/* Steps held (tests). */
unsigned energy_query_steps_count(const energy_query_steps_t *t);

#endif
