/*
 * gpu_cursor.h - a GPU's energy over the node meter's intervals.
 *
 * Slurm-free and NVML-free (design-gpu-nodes.md §2, "N GPUs over the same
 * interval").  The node meter's samples cut time into intervals (t0, t1];
 * for each, every GPU is either "in", with the energy its counter rose
 * since the last interval it was in, or "out" (failing, lost, stale, or its
 * samples span a gap or a counter reset): then its energy stays in the
 * node's and is split with the rest by CPU time.
 *
 * A cursor (c, tc) holds the GPU's cumulative energy already accounted and
 * its instant.  In an interval the GPU is read up to te = min(t1, its
 * newest sample), never extrapolated: what lies in (te, t1] falls into the
 * next interval, so the in-intervals' energies telescope to the counter's
 * energy over them, exactly.  After an out interval the cursor restarts
 * from the energy at t0 of the next good interval: what the sampler filled
 * in over an outage (a gap bridged at the last power, a reset bridged by
 * the power readings) is never charged as GPU energy.
 */
#ifndef SE_GPU_CURSOR_H
#define SE_GPU_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler.h"

typedef enum {
	GPU_IN = 0,		/* energy_mj is the GPU's over the interval */
	GPU_OUT_STARTING,	/* no sample at or before t0 yet: not a fault */
	GPU_OUT_FAILING,	/* its reads fail (two or more in a row) */
	GPU_OUT_LOST,		/* it cannot be opened, or fell off the bus */
	GPU_OUT_STALE,		/* its newest sample is too old (a hung read) */
	GPU_OUT_RESET,		/* its counter was reset in the interval */
	GPU_OUT_GAP,		/* its samples have a gap in the interval */
} gpu_why_t;

/* "read failing", "lost", ... for the log ("in" for GPU_IN). */
const char *gpu_why_str(gpu_why_t why);

/*
 * Where a cursor reads one GPU: a sampler (gpu_energy_interval) or, in
 * tests and benches, an energy accumulator fed by hand.  status gives the
 * state, the newest good sample (last_sample_ns), the first one
 * (first_sample_ns), consecutive_failures and last_error; energy_at and
 * flags_between are sampler_energy_at and sampler_flags_between.
 */
typedef struct {
	void (*status)(void *src, sampler_status_t *out);
	int (*energy_at)(void *src, uint64_t t_ns, uint64_t *energy_mj);
	uint32_t (*flags_between)(void *src, uint64_t t0_ns, uint64_t t1_ns);
} gpu_source_ops_t;

/* One GPU's cursor; zero it to start (the first interval sets its base). */
typedef struct {
	bool based;		/* (c_mj, tc_ns) is a point to go on from */
	uint64_t c_mj;		/* cumulative energy accounted so far */
	uint64_t tc_ns;		/* its instant */
	unsigned out_run;	/* fault intervals in a row so far */
} gpu_cursor_t;

typedef struct {
	gpu_why_t why;
	uint64_t energy_mj;	/* GPU_IN: the GPU's energy; else 0 */
	/*
	 * Out for a fault: the out intervals in a row, this one included
	 * (1: the first, say why once).  In: how many came just before it
	 * (> 0: say "reads again after N interval(s)").  GPU_OUT_STARTING
	 * is no fault and counts nothing.
	 */
	unsigned out_run;
} gpu_interval_t;

/*
 * The GPU's part of the meter's interval (t0_ns, t1_ns] (monotonic), read
 * through ops on src.  stale_ns: a newest sample older than t1_ns -
 * stale_ns is too old (the GPU's period plus its read deadline).  One
 * caller at a time per cursor; ops are called without any lock of ours.
 */
void gpu_cursor_interval(gpu_cursor_t *c, const gpu_source_ops_t *ops,
			 void *src, uint64_t t0_ns, uint64_t t1_ns,
			 uint64_t stale_ns, gpu_interval_t *out);

#endif
