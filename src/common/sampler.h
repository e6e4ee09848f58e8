/*
 * sampler.h - one thread owns a meter; readers never wait on hardware.
 *
 * The sampler thread reads its meter every period (aligned on monotonic
 * time, a missed tick is skipped, not queued), each read bounded by a
 * deadline, and feeds an energy accumulator.  Readers (slurmd RPC threads,
 * a controller loop) take a short mutex that is never held across I/O, so
 * they get the last good sample and an interpolated energy at once, even
 * while the meter hangs.
 *
 * A failing meter is closed, reopened and backed off (interval doubled up to
 * backoff_max_ns); failures are logged through a rate limiter.  While no
 * sample arrives, energy is extrapolated at the last power (gap fill), and
 * the energy a reader sees never decreases.
 */
#ifndef SE_SAMPLER_H
#define SE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "energy_acc.h"
#include "meter.h"

typedef struct {
	uint64_t period_ns;	/* time between reads (> 0) */
	uint64_t deadline_ns;	/* budget of one open or read (> 0) */
	uint64_t backoff_max_ns; /* longest wait between failing reads */
	bool use_counter;	/* counter path when readings carry one */
	counter_spec_t counter;	/* width and unit of the counter */
	energy_acc_config_t acc; /* history, gap, plausibility bounds */
	const char *label;	/* for logs: e.g. "tcp://10.0.0.5:502 unit 1" */
} sampler_config_t;

typedef enum {
	SAMPLER_STARTING = 0,	/* no reading yet */
	SAMPLER_OK,		/* last read succeeded */
	SAMPLER_FAILING,	/* reads fail; energy is being gap-filled */
} sampler_state_t;

typedef struct {
	sampler_state_t state;
	uint64_t last_sample_ns;	/* monotonic; 0 if none */
	uint64_t power_mw;		/* power at the last sample */
	uint64_t energy_mj;		/* energy now (never decreasing) */
	unsigned consecutive_failures;
	unsigned long reads_ok;
	unsigned long reads_failed;
	unsigned long gaps;
} sampler_status_t;

typedef struct sampler sampler_t;

/*
 * Start the sampler thread on an opened-or-not device.  ops and dev must
 * outlive the sampler.  Returns NULL with errno set (EINVAL bad config).
 * Never performs I/O in the caller's thread.
 */
sampler_t *sampler_start(const meter_ops_t *ops, void *dev,
			 const sampler_config_t *cfg);

/*
 * Stop and join the thread, closing the device.  If the backend overruns
 * its deadline by more than a grace period the thread is detached (logged)
 * rather than cancelled, and the sampler memory is left to it.
 */
void sampler_stop(sampler_t *s);

/* Status now; never blocks on the meter. */
void sampler_status(sampler_t *s, sampler_status_t *out);

/*
 * Cumulative energy at monotonic t_ns (see energy_acc_energy_at).
 * For t_ns >= the newest sample, the result never decreases between calls.
 */
int sampler_energy_at(sampler_t *s, uint64_t t_ns, uint64_t *energy_mj);

/* Energy between two monotonic instants (for attribution). */
int sampler_energy_between(sampler_t *s, uint64_t t0_ns, uint64_t t1_ns,
			   uint64_t *energy_mj);

/* Ask for a read as soon as possible (e.g. Slurm's NODE_ENERGY_UP); never waits. */
void sampler_kick(sampler_t *s);

#endif
