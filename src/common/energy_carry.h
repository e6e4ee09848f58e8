/*
 * energy_carry.h - the arithmetic that keeps a node's energy total whole
 * across a reload or a restart of slurmd.
 *
 * Slurm-free and pure: no state, no clock, no I/O; every instant is an
 * argument (tests/unit/test_energy_carry.c).  The Slurm glue
 * (src/acct_gather_energy/common/) holds the state and calls these.
 *
 *  slurmd     "scontrol reconfigure" reloads the plugin (22.05: fini, load,
 *             conf_set in the same process).  The old sampler's last total
 *             is carried out (energy_carry_window_ns, energy_carry_power_mw);
 *             until the new sampler's first sample it is held
 *             (energy_carry_pending_mj), then the new sampler's count joins
 *             it (energy_carry_join, energy_carry_total_mj).  Without a
 *             carry (slurmd started) the count before the sampler's start
 *             is no energy of this slurmd's.
 *  slurmstepd a step follows the node total slurmd answers; a slurmd that
 *             restarted counts from zero again: the step bridges the gap
 *             (energy_carry_step_j) and, in share mode, keeps the shares of
 *             the slurmd before (energy_carry_share).
 *
 * Units: energy in mJ (slurmd's total as a step sees it in J, as Slurm's
 * acct_gather_energy_t carries it), power in mW (the step's in W), instants
 * in monotonic ns.
 */
#ifndef SE_ENERGY_CARRY_H
#define SE_ENERGY_CARRY_H

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------ slurmd */

/*
 * The node's energy as the old sampler left it: its history at its last
 * sample (energy_mj at t_ns), the average power of its last seconds (to
 * bridge the reload's gap with), and the highest total already answered
 * (a floor: extrapolations may have gone past the history, and the node
 * total never goes back).
 */
typedef struct {
	bool valid;
	uint64_t energy_mj;
	uint64_t power_mw;
	uint64_t t_ns;
	uint64_t reported_mj;
} energy_carry_t;

/* What the new sampler's first sample makes of a carry. */
typedef struct {
	uint64_t base_mj;	/* the node energy its count adds to */
	bool skip;		/* its count up to skip_ns is not the node's */
	uint64_t skip_ns;
} energy_carry_join_t;

/*
 * The first sample of a sampler started at start_ns stands for instant
 * first_ns, which may lie before the start (a reading stands for an instant
 * before it was made: a DCMI rolling average for the middle of its window).
 *  - No carry (slurmd started): base 0; when first_ns < start_ns, the count
 *    up to start_ns is skipped (the steps bridged the restart up to it).
 *  - A carry (E at t_c, power P): first_ns >= t_c, the gap is filled at P:
 *    base E + P x (first_ns - t_c); first_ns < t_c, base E and the count up
 *    to t_c is skipped (the old sampler counted it).
 * So no interval is counted twice or not at all.  carry may be NULL.
 */
energy_carry_join_t energy_carry_join(const energy_carry_t *carry,
				      uint64_t first_ns, uint64_t start_ns);

/*
 * The node's total from the sampler's count: base_mj + count_mj - skip_mj,
 * never below base_mj (a count below what was skipped adds nothing).
 */
uint64_t energy_carry_total_mj(uint64_t base_mj, uint64_t skip_mj,
			       uint64_t count_mj);

/*
 * The node's total at now_ns while a carry waits for the new sampler's
 * first sample: E extrapolated at P for at most hold_ns (one missed sample:
 * period + deadline), then held.  Never below E.
 */
uint64_t energy_carry_pending_mj(const energy_carry_t *carry,
				 uint64_t now_ns, uint64_t hold_ns);

/*
 * The start of the window whose average power a carry takes, for a sampler
 * whose last sample is last_ns and first first_ns: two periods, at least
 * 2 s, not before the first sample.
 */
uint64_t energy_carry_window_ns(uint64_t last_ns, uint64_t first_ns,
				uint64_t period_ns);

/*
 * Average power from (t0_ns, e0_mj) to (t1_ns, e1_mj); fallback_mw (the
 * meter's last power) when the window is empty or counted nothing.
 */
uint64_t energy_carry_power_mw(uint64_t t0_ns, uint64_t e0_mj,
			       uint64_t t1_ns, uint64_t e1_mj,
			       uint64_t fallback_mw);

/* ------------------------------------------------------------ slurmstepd */

/* A step's view of slurmd's node total, as of its last answer. */
typedef struct {
	bool have_base;		/* one answer seen */
	uint64_t start_ns;	/* the step's start */
	uint64_t last_ns;	/* when the last answer came */
	uint64_t last_node_j;	/* its node total */
	uint32_t last_watts;	/* its power */
	int64_t started_s;	/* slurmd's start time in the answers
				 * (24.11+; 0: not said) */
} energy_carry_step_t;

/* One answer of slurmd. */
typedef struct {
	uint64_t t_ns;		/* when it came */
	uint64_t node_j;	/* the node total */
	uint32_t watts;		/* the node's power */
	int64_t started_s;	/* slurmd's start time (0: not said) */
	bool restarted;		/* it says so otherwise (another total id) */
} energy_carry_answer_t;

typedef enum {
	ENERGY_CARRY_FIRST,	/* the first answer: the time since the step's
				 * start at the power now */
	ENERGY_CARRY_ADVANCE,	/* what the node counted since the last one */
	ENERGY_CARRY_BACKWARDS,	/* the total went back (slurmd restarted):
				 * the interval bridged */
	ENERGY_CARRY_RESTARTED,	/* slurmd says it started again (another
				 * start time or total id): bridged */
} energy_carry_how_t;

/*
 * What answer a adds to the step's energy after view v (for
 * ENERGY_CARRY_FIRST: the step's energy so far), in J; *how says which.
 * A bridge is the larger of what the new slurmd counted (a lower bound)
 * and the interval filled linearly between the powers of the last answer
 * before and of this one: a restart never loses what was counted.
 */
uint64_t energy_carry_step_j(const energy_carry_step_t *v,
			     const energy_carry_answer_t *a,
			     energy_carry_how_t *how);

/* A step's share of the node's energy (EnergyAttribution=share). */
typedef struct {
	bool have;		/* one share answer seen */
	uint64_t generation;	/* slurmd's server generation in it */
	uint64_t last_mj;	/* slurmd's total in it */
	uint64_t base_mj;	/* the shares of slurmds before a restart */
	uint64_t share_mj;	/* base + last, never decreasing */
} energy_carry_share_t;

/*
 * The share after slurmd answers share_mj from server generation
 * `generation`.  Another generation with a lower total is a slurmd that
 * restarted and counts shares from zero again: what it counted before is
 * kept as a base (*restarted true).  A reload keeps the split: its total
 * just continues.
 */
energy_carry_share_t energy_carry_share(const energy_carry_share_t *s,
					uint64_t generation, uint64_t share_mj,
					bool *restarted);

#endif
