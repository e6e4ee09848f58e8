/*
 * energy_acc.h - an energy accumulator that answers "energy at instant t".
 *
 * Samples arrive from one meter: a power reading, a raw energy counter, or
 * both.  The accumulator turns them into a cumulative energy (mJ) on
 * monotonic time and keeps a history ring so that energy at any instant
 * inside the history can be interpolated: a step's start and end need not
 * fall on a sample, and any interval [t0, t1] can be asked later (for
 * attribution of a shared node's energy).
 *
 * Two paths:
 *  - counter path (preferred when the meter has one): the counter counts in
 *    its own units and steps (an integer register's unit, a float
 *    register's ulp at the reading: counter_resolution()); wrap of a
 *    16/31/32/63-bit register and resets are handled by counter_step().
 *    Without a power reading, energy is the sum of counter deltas x unit,
 *    exact to the counter's step.  With one, energy follows the trapezoid
 *    of the power readings and the counter disciplines it: at every
 *    reading the energy is held within one step of what the counter
 *    counted since its base, so a coarse register (0.1 kWh = 360 kJ) does
 *    not make a job's total jump by its step, while over hours the total
 *    is the counter's, within one step, and no step is counted twice;
 *  - power path: trapezoid integration of power over monotonic time.
 * An interval with no sample for longer than gap_ns, or spanning a counter
 * reset, is gap-filled (linear power across it) and flagged.
 *
 * Not thread-safe by itself; the sampler serialises access.
 */
#ifndef SE_ENERGY_ACC_H
#define SE_ENERGY_ACC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* flags of a sample */
#define ENERGY_SAMPLE_COUNTER	0x1	/* energy came from a hardware counter */
#define ENERGY_SAMPLE_GAP	0x2	/* interval before it was gap-filled */
#define ENERGY_SAMPLE_WRAP	0x4	/* counter wrapped before it */
#define ENERGY_SAMPLE_RESET	0x8	/* counter reset before it */
#define ENERGY_SAMPLE_DISCIPLINED 0x10	/* the counter moved the integrated
					 * power's energy to stay within a step */
#define ENERGY_ACC_REJECTED	0x100	/* anomaly kind: a reading dropped */

typedef struct {
	uint64_t t_ns;		/* monotonic instant of the reading */
	uint64_t energy_mj;	/* cumulative energy since accumulator start */
	uint64_t power_mw;	/* power at t (read, or derived from counter) */
	uint32_t flags;		/* ENERGY_SAMPLE_* */
} energy_sample_t;

typedef struct {
	unsigned width_bits;	/* 1..64: where the register wraps */
	double mj_per_unit;	/* millijoules per counter unit (> 0) */
	unsigned significand_bits; /* 0: an integer register, a unit is its
				 * step; N: a float register in fixed point,
				 * its step its ulp (counter_resolution) */
	unsigned registers;	/* 0 or 1: one register; N > 1: the counter
				 * is the sum of N registers (a node on
				 * several PDU outlets), each truncating by
				 * its own step: the sum's step is N steps */
} counter_spec_t;

/* The last counter reading refused or not counted, for the log. */
typedef struct {
	unsigned long count;	/* anomalies since creation */
	uint32_t kind;		/* ENERGY_ACC_REJECTED, or ENERGY_SAMPLE_RESET
				 * / ENERGY_SAMPLE_GAP (counted by a fill) */
	uint64_t prev_raw;	/* the base it was compared with */
	uint64_t raw;		/* the reading */
	uint64_t dt_ns;		/* time since the base's sample */
	uint64_t max_delta;	/* the plausible bound, units (0: none) */
} energy_acc_anomaly_t;

typedef struct {
	size_t history;		/* samples kept in the ring (>= 2) */
	uint64_t gap_ns;	/* a longer interval between samples is a gap */
	uint64_t max_power_mw;	/* plausibility bound for wrap vs reset and
				 * for rejecting absurd power; 0 = none */
	uint64_t max_extrapolate_ns; /* energy_at() past the last sample
				 * extrapolates at last power up to this far,
				 * then holds (0 = no limit) */
	uint64_t power_window_ns; /* a counter alone: its power is the
				 * average over at least this long back
				 * (0: the last interval alone) */
} energy_acc_config_t;

typedef struct energy_acc energy_acc_t;

/* Create an accumulator; NULL on bad config (errno EINVAL) or ENOMEM. */
energy_acc_t *energy_acc_create(const energy_acc_config_t *cfg);
void energy_acc_destroy(energy_acc_t *acc);

/*
 * Add a power sample at monotonic t_ns.  Returns 0, -EINVAL for a time not
 * after the previous sample (a clock step, a duplicate), or -ERANGE for an
 * implausible power: above max_power_mw, or above INT64_MAX (a negative
 * reading cast to unsigned).  A refused sample is dropped.
 * The interval since the previous sample (of either path) gets the
 * trapezoid of the two powers.
 */
int energy_acc_add_power(energy_acc_t *acc, uint64_t t_ns, uint64_t power_mw);

/*
 * Add a counter reading at t_ns.  power_mw < 0 means the meter gave no
 * power, so it is derived from the counter delta (the interval's average)
 * and energy is the counter's; with power_mw >= 0 energy is the trapezoid
 * of the powers, held within one step of the counter (see the top).
 * The first reading sets the base; so does the first after power samples
 * or after a change of spec (the interval before it is then filled with
 * the trapezoid of powers).  Deltas come from counter_step() with a bound
 * of counter_max_delta(): max_power_mw x elapsed / unit plus the register's
 * step at both readings, so no real step is ever refused.
 * A reading implausible against the base (backwards but not a plausible
 * wrap, or too large a jump) is dropped and held: a torn or garbled read,
 * or the first reading after a reset.  The next counter reading decides:
 * plausible against the base, it is counted from the base (the held one
 * was torn); else, if it follows on from the held one (a step MaxPower
 * allows over the time between the two, however short: a read kicked ms
 * later qualifies), the counter really restarted or jumped: a reset.  The
 * interval is filled with the trapezoid of powers (previous power, and
 * this reading's power or, without one, the previous power held), flagged
 * RESET|GAP, and the reading becomes the new base.  Implausible against
 * both, it is dropped and held instead.  So a jump costs one dropped
 * reading, whenever the reads around it happen.  An interval so long that
 * the counter could have wrapped more than once unseen is filled the same
 * way (GAP).
 * Returns 0, -EAGAIN (implausible, dropped and held: the next reading
 * decides), -EINVAL (time not after previous, bad spec), -ERANGE
 * (implausible power, or a reading contradicting the held one: dropped).
 */
int energy_acc_add_counter(energy_acc_t *acc, uint64_t t_ns, uint64_t raw,
			   const counter_spec_t *spec, int64_t power_mw);

/*
 * Cumulative energy at monotonic instant t_ns: interpolated between samples
 * (exactly integrating the linear power of a trapezoid interval, a
 * quadratic in the time since the sample; linearly in energy over an
 * interval measured by the counter), extrapolated at the last power after
 * the last sample (for at most max_extrapolate_ns, then held).  The
 * result is truncated to whole mJ; the running total keeps the fraction.
 * Returns 0; -ENODATA with no sample, or before the first sample ever
 * (*energy_mj = 0, the energy at the first sample); -ERANGE when t_ns is
 * older than the history kept (then *energy_mj is the oldest sample's
 * energy).
 */
int energy_acc_energy_at(const energy_acc_t *acc, uint64_t t_ns,
			 uint64_t *energy_mj);

/*
 * Energy between t0_ns and t1_ns, same rules as energy_at: -EINVAL if
 * t0_ns > t1_ns; otherwise the result of the t0 end if not 0, else of the
 * t1 end, with *energy_mj computed from the values described there.
 */
int energy_acc_energy_between(const energy_acc_t *acc, uint64_t t0_ns,
			      uint64_t t1_ns, uint64_t *energy_mj);

/*
 * The OR of the flags (ENERGY_SAMPLE_*) of the samples whose intervals
 * overlap (t0_ns, t1_ns]: those at instants in it, and the first after
 * t1_ns unless a sample sits at t1_ns.  Each describes the interval that
 * ends at it, so a GAP or RESET among them means part of (t0_ns, t1_ns]
 * was filled in, not measured (a t1_ns inside a gap that a later reading
 * closed was taken as measured: tests/unit/test_gpu_cursor.c).  When
 * t0_ns is older than the history kept (samples were dropped), the
 * unknown part counts as ENERGY_SAMPLE_GAP.  0 when t0_ns >= t1_ns or no
 * sample.  A binary search, then one step per sample in range.
 */
uint32_t energy_acc_flags_between(const energy_acc_t *acc, uint64_t t0_ns,
				  uint64_t t1_ns);

/* The newest sample; -ENODATA when none. */
int energy_acc_last(const energy_acc_t *acc, energy_sample_t *out);

/* The last counter anomaly (count 0: none yet). */
void energy_acc_anomaly(const energy_acc_t *acc, energy_acc_anomaly_t *out);

/* The counter's step at its last reading, in mJ (0: no counter base). */
double energy_acc_counter_step_mj(const energy_acc_t *acc);

/* Count of samples held, and of gaps seen since creation. */
size_t energy_acc_count(const energy_acc_t *acc);
unsigned long energy_acc_gaps(const energy_acc_t *acc);

#endif
