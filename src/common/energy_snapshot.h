/*
 * energy_snapshot.h - everything slurmd's energy sampler knows about its
 * node now, in one answer: the node's running total and power, the meter's
 * health, each metered GPU, and each job step's energy charged so far by
 * the same split that goes into sacct (attrib.h).
 *
 * Slurm-free.  slurmd fills it in its energy query server's thread (one
 * hook, under the sampler's and the split's short locks: one consistent
 * view), the wire carries it (energy_query_wire.h, version 5), and
 * slurm-energy-exporter(8) renders it as OpenMetrics text.  Bounded: at
 * most ENERGY_SNAPSHOT_STEPS_MAX steps and ENERGY_SNAPSHOT_GPUS_MAX GPUs;
 * a node with more steps says so (steps_truncated) instead of growing the
 * message.
 */
#ifndef SE_ENERGY_SNAPSHOT_H
#define SE_ENERGY_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#define ENERGY_SNAPSHOT_STEPS_MAX	1024
#define ENERGY_SNAPSHOT_GPUS_MAX	64

/* The sampler's state (sampler.h's sampler_state_t, as sent). */
#define ENERGY_SNAPSHOT_METER_STARTING	0	/* no reading yet */
#define ENERGY_SNAPSHOT_METER_OK	1	/* the last read succeeded */
#define ENERGY_SNAPSHOT_METER_FAILING	2	/* reads fail (gap-filled) */
#define ENERGY_SNAPSHOT_METER_NONE	3	/* no meter configured */

/* flags */
#define ENERGY_SNAPSHOT_TOTAL	0x1	/* total_* hold the node's total */
#define ENERGY_SNAPSHOT_SHARE	0x2	/* EnergyAttribution=share: steps[]
					 * is every step's share */
#define ENERGY_SNAPSHOT_MAX	0x4	/* max_power_mw is configured (set by
					 * slurm-energy-exporter's --max-watts:
					 * slurmd's plugins have plausibility
					 * bounds only, never served) */
#define ENERGY_SNAPSHOT_TRUNCATED 0x8	/* more steps than steps[] holds */
#define ENERGY_SNAPSHOT_NODE_STEPS 0x10	/* EnergyAttribution=node: steps[] is
					 * every step that asked the query
					 * socket, with the node counter's
					 * increase since its start
					 * (energy_query_steps.h) */

/* gpu flags */
#define ENERGY_SNAPSHOT_GPU_VALID	0x1	/* read: power, energy hold */

/* step flags */
#define ENERGY_SNAPSHOT_STEP_ENDED	0x1	/* ended (attrib.h's
						 * attrib_running_steps) */
#define ENERGY_SNAPSHOT_STEP_FINAL	0x2	/* ... and energy_mj is its
						 * final total (listed one
						 * sampler period more) */

typedef struct {
	uint32_t minor;		/* NVIDIA minor number (/dev/nvidia<minor>) */
	uint32_t flags;		/* ENERGY_SNAPSHOT_GPU_* */
	uint64_t power_mw;	/* at its newest reading */
	uint64_t energy_mj;	/* slurmd's total for it at its newest good
				 * reading (the GPU counter's scale, kept
				 * over restarts), times EnergyGPUFactor */
} energy_snapshot_gpu_t;

typedef struct {
	uint32_t job_id;
	uint32_t step_id;	/* cg_cpu.h's CG_STEP_* for named steps */
	uint32_t flags;		/* ENERGY_SNAPSHOT_STEP_* */
	uint32_t pad;
	uint64_t energy_mj;	/* charged so far (extern: the job's) */
} energy_snapshot_step_t;

typedef struct {
	uint32_t flags;		/* ENERGY_SNAPSHOT_* */
	uint32_t meter_state;	/* ENERGY_SNAPSHOT_METER_* */
	uint64_t generation;	/* the query server's (energy_query.h) */
	uint64_t total_id;	/* the total's continuity: another id, the
				 * total counts from zero again */
	uint64_t total_mj;	/* slurmd's node energy: what Slurm's
				 * energy RPC answers, carried over reloads */
	uint64_t total_start_wall_ns; /* when total_id's total was zero
				 * (wall clock, ns since the epoch), 0: ? */
	uint64_t power_mw;	/* at the newest sample */
	uint64_t max_power_mw;	/* with ENERGY_SNAPSHOT_MAX */
	uint64_t now_ns;	/* the server's monotonic clock at the answer */
	uint64_t last_sample_ns; /* newest sample (monotonic), 0: none */
	uint64_t period_ns;	/* the sampler's period ... */
	uint64_t deadline_ns;	/* ... and read deadline */
	uint32_t n_gpus;
	uint32_t n_steps;
	energy_snapshot_gpu_t gpus[ENERGY_SNAPSHOT_GPUS_MAX];
	energy_snapshot_step_t steps[ENERGY_SNAPSHOT_STEPS_MAX];
} energy_snapshot_t;

#endif
