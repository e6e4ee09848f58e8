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
	uint64_t backoff_max_ns; /* longest wait between failing reads
				 * (waits start at period_ns and double) */
	bool use_counter;	/* counter path when readings carry one */
	counter_spec_t counter;	/* width and unit of the counter */
	energy_acc_config_t acc; /* history, gap, plausibility bounds;
				 * gap_ns 0 here means 1.5 x period_ns +
				 * deadline_ns (one missed tick is a gap) */
	const char *label;	/* for logs: e.g. "tcp://10.0.0.5:502 unit 1"
				 * (copied); logs read "<ops name> <label>: " */
	/* Optional: called in the sampler thread after each good sample,
	 * outside the sampler's lock, with the sample's instant and the
	 * cumulative energy at it (energy attribution splits there). */
	void (*on_sample)(void *arg, uint64_t t_ns, uint64_t energy_mj);
	void *on_sample_arg;
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
	uint64_t first_sample_ns;	/* monotonic: the first sample's
					 * instant (its energy is 0); 0 none */
	int last_error;			/* the last failed open or read's
					 * -errno (-ENODEV: device gone),
					 * 0 after a good one or a refused
					 * reading */
} sampler_status_t;

typedef struct sampler sampler_t;

/*
 * The suite's sampling policy for a node meter read every period_ns, each
 * read or open within deadline_ns: about an hour of history (64 to 16384
 * samples), failing reads backed off up to 30 s (or the period, if
 * longer), and past the newest sample energy grown at the last power for
 * one missed sample only (period + deadline), then held: readers never see
 * energy decrease, so a longer guess during an outage would be locked in
 * even after the meter comes back with the exact counter.  The rest is
 * zero: no counter, the default gap (one missed tick), no power bound, no
 * label, no callback.
 */
void sampler_config_init(sampler_config_t *cfg, uint64_t period_ns,
			 uint64_t deadline_ns);

/*
 * That policy's reach past the newest sample: one missed sample (period +
 * deadline), its acc.max_extrapolate_ns.  Energy past it is held, not
 * measured: a step ending beyond it ends in an outage (step_energy.h).
 */
static inline uint64_t sampler_reach_ns(uint64_t period_ns,
					uint64_t deadline_ns)
{
	return period_ns + deadline_ns;
}

/* Append ", every Ps, timeout Tms" to the string in buf (size len): the
 * configured timing, as the plugins' load lines say it after the meter. */
void sampler_describe_timing(char *buf, size_t len, uint64_t period_ns,
			     uint64_t timeout_ns);

/*
 * Start the sampler thread on an opened-or-not device.  ops and dev must
 * outlive the sampler.  ops->read is required; ops->open and ops->close
 * may be NULL (nothing to connect).  The first read is made at once, then
 * on every multiple of period_ns of the monotonic clock.
 * A reading is fed to the counter path when use_counter is set and it has
 * a counter, else to the power path; one with neither counts as failed.
 * A failed open or read (other than -EAGAIN) closes the device; it is
 * reopened at the next attempt.  A dropped reading (-ERANGE / -EINVAL from
 * the accumulator) counts as a failed read but keeps the connection.  A
 * counter reading the accumulator holds (-EAGAIN: implausible against the
 * last one, the next reading tells a torn read from a reset) is no
 * failure: the meter is read again at once, whatever the backoff.
 * Returns NULL with errno set (EINVAL bad config, ENOMEM, or
 * pthread_create's error).  Never performs I/O in the caller's thread; the
 * thread runs with all signals blocked.
 */
sampler_t *sampler_start(const meter_ops_t *ops, void *dev,
			 const sampler_config_t *cfg);

/*
 * Stop and join the thread, closing the device.  Waits at most
 * deadline_ns + 1 s (on the monotonic clock) for a backend call in
 * progress.  If the backend overruns that, the thread is detached (logged)
 * rather than cancelled, and the sampler memory is left to it: it closes
 * the device and frees itself when the stuck call returns.
 * Returns 0 when the thread was joined (the device is closed and dev may
 * be freed), or -ETIMEDOUT when it was left running: dev must then stay
 * allocated (leak it; the daemon is usually exiting).  s may be NULL.
 */
int sampler_stop(sampler_t *s);

/* Sampler threads left running by sampler_stop() that have not finished. */
unsigned long sampler_abandoned_running(void);

/*
 * Status now; never blocks on the meter.  energy_mj is
 * sampler_energy_at(now), 0 before the first sample.
 */
void sampler_status(sampler_t *s, sampler_status_t *out);

/*
 * Cumulative energy at monotonic t_ns (see energy_acc_energy_at).
 * For t_ns >= the newest sample, the result never decreases between calls
 * made at non-decreasing t_ns (e.g. "now"): an extrapolation at the last
 * power may overshoot the next real sample, so the energy already handed
 * out for the latest instant asked is a floor for any instant after it.
 * Inside the history (t_ns before the newest sample) the interpolated
 * value is returned as is.
 */
int sampler_energy_at(sampler_t *s, uint64_t t_ns, uint64_t *energy_mj);

/* Energy between two monotonic instants (for attribution); both ends are
 * taken as by sampler_energy_at.  Returns as energy_acc_energy_between. */
int sampler_energy_between(sampler_t *s, uint64_t t0_ns, uint64_t t1_ns,
			   uint64_t *energy_mj);

/*
 * The OR of the flags of the samples in (t0_ns, t1_ns]
 * (energy_acc_flags_between): ENERGY_SAMPLE_GAP or ENERGY_SAMPLE_RESET
 * there means part of it was filled in, not measured.
 */
uint32_t sampler_flags_between(sampler_t *s, uint64_t t0_ns, uint64_t t1_ns);

/*
 * Ask for a read as soon as possible (e.g. Slurm's NODE_ENERGY_UP); never
 * waits.  Kicks coalesce (one read for any number of kicks made before it
 * starts; a kick during a read causes one more).  While the meter fails, a
 * kick reads no sooner than one period after the last try (the backoff
 * itself spaces only the reads nobody asked for): a meter that comes up
 * after slurmd started is read at the next step boundary, not up to
 * backoff_max_ns later.
 */
void sampler_kick(sampler_t *s);

/*
 * After each read (good, failed or refused: on_sample has run for a good
 * one), write a 64-bit 1 to fd, an eventfd or a non-blocking pipe, so that
 * a poll() loop learns at once that a reading landed (the energy query
 * server's held questions, energy_query.h).  -1: none.  One fd per
 * sampler; once this returns the old fd is never written again.
 */
void sampler_set_notify_fd(sampler_t *s, int fd);

#endif
