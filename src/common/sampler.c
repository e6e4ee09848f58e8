/*
 * sampler.c - one thread per meter; readers take the last good sample.
 *
 * One thing, though over 800 lines: the tick loop, the read with its
 * deadline, the fault marks of the log, the kick that a step's boundary
 * asks for and the readers' queries all work on one struct under one lock,
 * and their order (tick, read, record, wake the readers) is the sampler's
 * contract; split, each part would need the whole struct and the lock.
 *
 * Locking: s->lock guards the accumulator, the status and the control
 * flags.  The thread takes it only to wait for its next tick and to record
 * a result; it is never held across a meter_ops_t call, so a reader waits
 * at most for an accumulator update (microseconds), never for hardware.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "energy_acc.h"
#include "sampler.h"
#include "se_log.h"
#include "se_thread.h"
#include "se_time.h"

/* How long sampler_stop() waits beyond one deadline before giving up. */
#define SAMPLER_STOP_GRACE_NS	SE_NS_PER_SEC

/*
 * Failure logs.  A fault (failed reads until one succeeds) is marked
 * twice: its second failure in a row at error level (the gap starts: one
 * failed read alone loses nothing, the next reading spans it) and the
 * reading that ends it (the gap is filled); the other failures go to
 * debug, with a reminder at error level every SAMPLER_REMIND_NS of a long
 * fault.  A single failed read followed by a good one (a timeout under
 * load, a garbled frame) is a debug line, and an info line says how many
 * there were at most once per SAMPLER_REMIND_NS.  Faults themselves are
 * rate-limited (a meter that flaps): a few per minute, then a count; a
 * fault whose start was not logged is not logged when it ends either.
 */
#define SAMPLER_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define SAMPLER_LOG_BURST	5
#define SAMPLER_REMIND_NS	(60 * SE_NS_PER_SEC)
/* A read past its deadline by less than this is the library's own timer
 * granularity (libfreeipmi: a few ms), not a backend ignoring it. */
#define SAMPLER_OVERRUN_GRACE_NS (50 * SE_NS_PER_MS)

struct sampler {
	const meter_ops_t *ops;
	void *dev;
	sampler_config_t cfg;
	char *label;			/* owned copy of cfg.label */
	char *who;			/* "ops name + label", for logs */
	pthread_t thread;

	pthread_mutex_t lock;
	pthread_cond_t wake;		/* stop or kick, for the thread */
	pthread_cond_t done;		/* thread finished, for stop */

	/* under lock */
	bool stop;
	bool kicked;
	bool exited;
	bool abandoned;			/* stop gave up: the thread frees */
	int notify_fd;			/* -1, or written after each read
					 * (sampler_set_notify_fd) */
	energy_acc_t *acc;
	sampler_status_t st;		/* energy_mj and gaps filled on read */
	uint64_t floor_t_ns;		/* latest instant handed out at or
					 * after the newest sample ... */
	uint64_t floor_mj;		/* ... and the energy given for it */

	/* sampler thread only */
	bool opened;
	uint64_t tick_ns;		/* when the current read was due */
	bool reread;			/* the accumulator holds a reading
					 * until the next one: read at once */
	uint64_t backoff_ns;
	se_ratelimit_t fail_rl;		/* faults (their first failure) */
	se_ratelimit_t note_rl;
	se_ratelimit_t overrun_rl;	/* reads past their deadline */
	bool fault_told;		/* this fault's start is in the log */
	char fault_why[160];		/* its first failure, for the logs */
	unsigned singles;		/* single failed reads not yet told */
	uint64_t singles_since_ns;	/* the first of them */
	uint64_t singles_told_ns;	/* the last line about them, 0 none */
	uint64_t fault_start_ns;	/* monotonic: its first failure */
	uint64_t fault_told_ns;		/* its last error-level line */
	unsigned long anomalies_seen;	/* energy_acc_anomaly().count logged */
	uint32_t anomaly_kinds_told;	/* kinds whose first was at info */
	bool resolution_told;
};

static unsigned long _abandoned_running;	/* atomic builtins only */

/* ------------------------------------------------------------ helpers */

static void _sampler_free(sampler_t *s)
{
	energy_acc_destroy(s->acc);
	pthread_cond_destroy(&s->done);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s->label);
	free(s->who);
	free(s);
}

static struct timespec _ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / SE_NS_PER_SEC,
		.tv_nsec = ns % SE_NS_PER_SEC,
	};

	return ts;
}

/* Wait on cond (CLOCK_MONOTONIC) until abs_ns; lock held. */
static void _cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock,
			     uint64_t abs_ns)
{
	struct timespec ts = _ts(abs_ns);

	pthread_cond_timedwait(cond, lock, &ts);
}

/* First multiple of period strictly after t. */
static uint64_t _tick_after(uint64_t t_ns, uint64_t period_ns)
{
	return (t_ns / period_ns + 1) * period_ns;
}

/* First multiple of period at or after t. */
static uint64_t _tick_at_or_after(uint64_t t_ns, uint64_t period_ns)
{
	return (t_ns + period_ns - 1) / period_ns * period_ns;
}

/* ---------------------------------------------- energy under the lock */

/*
 * Energy at t.  An extrapolation at the last power may overshoot the next
 * real sample, and a reader asking for "now" must never see energy go
 * backwards: so at or after the newest sample, an instant no earlier than
 * the latest one already answered gets at least the energy given for it.
 * Instants inside the history get the interpolated truth.
 */
static int _energy_at_locked(sampler_t *s, uint64_t t_ns, uint64_t *e_mj)
{
	energy_sample_t last;
	int rc;

	rc = energy_acc_energy_at(s->acc, t_ns, e_mj);
	if (rc || energy_acc_last(s->acc, &last) || t_ns < last.t_ns ||
	    t_ns < s->floor_t_ns)
		return rc;
	if (*e_mj < s->floor_mj)
		*e_mj = s->floor_mj;
	s->floor_t_ns = t_ns;
	s->floor_mj = *e_mj;
	return 0;
}

/* -------------------------------------------------- the sampler thread */

/*
 * When a kick may start a read: at once, or, while the meter fails, one
 * period after the last try.  The backoff spares a sick meter the reads
 * nobody asked for; a kick is a step's boundary asking for a reading, and
 * ignoring it until the backoff's next try (up to backoff_max_ns, 30 s by
 * default) lost whole jobs: a meter that came up after slurmd started was
 * not read again until after a 20 s job had ended, and the job got 0 J.
 * A sick meter is still never read more often than its period.
 */
static uint64_t _kick_read_at(const sampler_t *s)
{
	if (s->st.state != SAMPLER_FAILING)
		return 0;
	return s->tick_ns + s->cfg.period_ns;
}

/*
 * Sleep until wake_ns, a kick (while failing, not before _kick_read_at) or
 * stop.  Returns false on stop.
 */
static bool _wait_for_tick(sampler_t *s, uint64_t wake_ns)
{
	uint64_t now, until, kick_at;
	bool run;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && (now = se_mono_ns()) < wake_ns) {
		until = wake_ns;
		if (s->kicked) {
			kick_at = _kick_read_at(s);
			if (now >= kick_at)
				break;
			if (kick_at < until)
				until = kick_at;
		}
		_cond_wait_until(&s->wake, &s->lock, until);
	}
	s->kicked = false;
	run = !s->stop;
	pthread_mutex_unlock(&s->lock);
	return run;
}

/* Feed one reading to the accumulator; lock held.  0 or -errno. */
static int _account_locked(sampler_t *s, const meter_reading_t *rd,
			   uint64_t t_ns)
{
	int64_t power = rd->has_power ? (int64_t) rd->power_mw : -1;

	/* A power beyond INT64_MAX is a negative one cast: let acc refuse. */
	if (rd->has_power && rd->power_mw > INT64_MAX)
		return energy_acc_add_power(s->acc, t_ns, rd->power_mw);
	if (s->cfg.use_counter && rd->has_counter)
		return energy_acc_add_counter(s->acc, t_ns, rd->counter_raw,
					      rd->counter_spec.width_bits ?
					      &rd->counter_spec :
					      &s->cfg.counter, power);
	if (rd->has_power)
		return energy_acc_add_power(s->acc, t_ns, rd->power_mw);
	return -ENODATA;
}

static const char *_account_reason(int rc)
{
	switch (rc) {
	case -ERANGE:
		return "implausible reading dropped";
	case -EINVAL:
		return "reading not newer than the previous one";
	case -ENODATA:
		return "reading has neither power nor energy";
	default:
		return "reading refused";
	}
}

static const char *_anomaly_name(uint32_t kind)
{
	switch (kind) {
	case ENERGY_ACC_REJECTED:
		return "counter reading rejected (implausible against the last one; a reset if the next reading follows on from it, else a torn read)";
	case ENERGY_SAMPLE_RESET:
		return "counter reset (filled with the power readings)";
	default:
		return "counter gap (so long that whole wraps may hide in it; filled with the power readings)";
	}
}

/*
 * The first counter anomaly of each kind goes to the log at info with the
 * two readings and the time between them, so an admin can tell a torn read
 * from a wrongly set MaxPower; later ones are counted and rate-limited.
 */
static void _tell_anomaly(sampler_t *s, const energy_acc_anomaly_t *a)
{
	bool first = !(s->anomaly_kinds_told & a->kind);
	char bound[64] = "no bound";

	s->anomalies_seen = a->count;
	s->anomaly_kinds_told |= a->kind;
	if (a->max_delta)
		snprintf(bound, sizeof(bound), "bound %llu units",
			 (unsigned long long) a->max_delta);
	if (first)
		se_log(SE_LOG_INFO,
		       "%s: %s: %llu -> %llu after %.3f s (%s); repeats are counted",
		       s->who, _anomaly_name(a->kind),
		       (unsigned long long) a->prev_raw,
		       (unsigned long long) a->raw,
		       (double) a->dt_ns / SE_NS_PER_SEC, bound);
	else
		se_log_limited(&s->note_rl, se_mono_ns(), SE_LOG_INFO,
			       "%s: %s: %llu -> %llu after %.3f s (%s); %lu so far",
			       s->who, _anomaly_name(a->kind),
			       (unsigned long long) a->prev_raw,
			       (unsigned long long) a->raw,
			       (double) a->dt_ns / SE_NS_PER_SEC, bound,
			       a->count);
}

/*
 * Once, at the first counter reading: the register's step there, and what
 * it means for a job when the meter gives no power to follow between
 * steps.
 */
static void _tell_resolution(sampler_t *s, const meter_reading_t *rd)
{
	double step_mj = energy_acc_counter_step_mj(s->acc);

	if (s->resolution_told || !step_mj)
		return;
	s->resolution_told = true;
	if (rd->has_power)
		se_log(SE_LOG_INFO,
		       "%s: energy register steps %.3f kJ at this reading; between its steps energy follows the power register",
		       s->who, step_mj / 1e6);
	else
		se_log(SE_LOG_INFO,
		       "%s: energy register steps %.3f kJ at this reading and the meter gives no power: a job's energy is known to +/-%.3f kJ; add a power register",
		       s->who, step_mj / 1e6, step_mj / 1e6);
}

/*
 * One failed read followed by a good one: no gap, no error; counted, and
 * said at info at most once per SAMPLER_REMIND_NS (a meter that often
 * misses one read is worth knowing about, not worth an error each time).
 */
static void _single_failure(sampler_t *s, uint64_t now)
{
	if (!s->singles++)
		s->singles_since_ns = now;
	if (s->singles_told_ns && now - s->singles_told_ns < SAMPLER_REMIND_NS)
		return;
	se_log(SE_LOG_INFO,
	       "%s: %u single read error%s in %.0f s, each spanned by the next reading (nothing lost); the last: %s",
	       s->who, s->singles, s->singles == 1 ? "" : "s",
	       (double) (now - s->singles_since_ns) / SE_NS_PER_SEC,
	       s->fault_why);
	s->singles = 0;
	s->singles_told_ns = now;
}

static void _succeeded(sampler_t *s, const energy_sample_t *smp)
{
	uint64_t now = se_mono_ns();
	unsigned failures;

	pthread_mutex_lock(&s->lock);
	failures = s->st.consecutive_failures;
	s->st.state = SAMPLER_OK;
	s->st.consecutive_failures = 0;
	s->st.last_error = 0;
	s->st.reads_ok++;
	s->st.last_sample_ns = smp->t_ns;
	if (!s->st.first_sample_ns)
		s->st.first_sample_ns = smp->t_ns;
	s->st.power_mw = smp->power_mw;
	pthread_mutex_unlock(&s->lock);

	s->backoff_ns = 0;
	if (failures == 1)
		_single_failure(s, now);
	else if (failures && s->fault_told)
		se_log(SE_LOG_INFO,
		       "%s: reading again after %u failed attempts over %.1f s%s",
		       s->who, failures,
		       (double) (now - s->fault_start_ns) / SE_NS_PER_SEC,
		       smp->flags & ENERGY_SAMPLE_GAP ?
		       "; energy of the gap filled linearly" : "");
	s->fault_told = false;
	se_log(SE_LOG_SAMPLE,
	       "%s: t=%llu ns power=%llu mW energy=%llu mJ flags=0x%x",
	       s->who, (unsigned long long) smp->t_ns,
	       (unsigned long long) smp->power_mw,
	       (unsigned long long) smp->energy_mj, smp->flags);
}

/*
 * Record a failure, grow the backoff and complain (rate-limited).  what is
 * the step ("open", "read", "reading"); rc the -errno or 0; msg the
 * backend's reason, if any.
 */
static void _failed(sampler_t *s, const char *what, int rc, const char *msg)
{
	const char *sep = rc && msg && *msg ? ": " : "";
	uint64_t max = s->cfg.backoff_max_ns, now = se_mono_ns();
	char ebuf[128] = "";
	const char *err;
	unsigned failures;

	if (max < s->cfg.period_ns)
		max = s->cfg.period_ns;
	if (!s->backoff_ns)
		s->backoff_ns = s->cfg.period_ns;
	else if (s->backoff_ns > max / 2)
		s->backoff_ns = max;
	else
		s->backoff_ns *= 2;

	pthread_mutex_lock(&s->lock);
	s->st.state = SAMPLER_FAILING;
	failures = ++s->st.consecutive_failures;
	s->st.last_error = rc;
	s->st.reads_failed++;
	pthread_mutex_unlock(&s->lock);

	err = rc ? strerror_r(-rc, ebuf, sizeof(ebuf)) : "";	/* GNU */
	if (failures == 1) {
		/* one failed read loses nothing yet: debug, until a second */
		s->fault_start_ns = now;
		s->fault_told = false;
		snprintf(s->fault_why, sizeof(s->fault_why), "%s: %s%s%s", what,
			 err, sep, msg ? msg : "");
		se_log(SE_LOG_DEBUG,
		       "%s: %s failed: %s%s%s (1 in a row); next try in %.3f s",
		       s->who, what, err, sep, msg ? msg : "",
		       (double) s->backoff_ns / SE_NS_PER_SEC);
	} else if (failures == 2) {
		s->fault_told_ns = now;
		s->fault_told = se_log_limited(&s->fail_rl, now, SE_LOG_ERROR,
			"%s: %s failed: %s%s%s (2 in a row); energy held until readings resume, then the gap is filled; next try in %.3f s",
			s->who, what, err, sep, msg ? msg : "",
			(double) s->backoff_ns / SE_NS_PER_SEC);
	} else if (s->fault_told &&
		   now - s->fault_told_ns >= SAMPLER_REMIND_NS) {
		s->fault_told_ns = now;
		se_log(SE_LOG_ERROR,
		       "%s: %s still failing: %s%s%s (%u in a row, for %.0f s); next try in %.3f s",
		       s->who, what, err, sep, msg ? msg : "", failures,
		       (double) (now - s->fault_start_ns) / SE_NS_PER_SEC,
		       (double) s->backoff_ns / SE_NS_PER_SEC);
	} else {
		se_log(SE_LOG_DEBUG,
		       "%s: %s failed: %s%s%s (%u in a row); next try in %.3f s",
		       s->who, what, err, sep, msg ? msg : "", failures,
		       (double) s->backoff_ns / SE_NS_PER_SEC);
	}
}

static void _close(sampler_t *s)
{
	if (s->opened && s->ops->close)
		s->ops->close(s->dev);
	s->opened = false;
}

/* Open if needed; false (failure recorded) when the meter cannot be opened. */
static bool _ensure_open(sampler_t *s)
{
	int rc;

	if (s->opened)
		return true;
	if (s->ops->open) {
		rc = s->ops->open(s->dev, se_mono_ns() + s->cfg.deadline_ns);
		if (rc) {
			_failed(s, "open", rc, NULL);
			return false;
		}
	}
	s->opened = true;
	return true;
}

/*
 * A backend that ignores its deadline is a bug worth a (limited) log.
 * Returns by how much the read [start, end] overran (0: within the grace).
 */
static uint64_t _overrun_ns(sampler_t *s, uint64_t start, uint64_t end)
{
	uint64_t budget = s->cfg.deadline_ns;

	if (end - start <= budget + SAMPLER_OVERRUN_GRACE_NS)
		return 0;
	return end - start - budget;
}

static void _tell_overrun(sampler_t *s, uint64_t overrun, uint64_t now)
{
	se_log_limited(&s->overrun_rl, now, SE_LOG_ERROR,
		       "%s: read overran its %.3f s deadline by %.3f s",
		       s->who, (double) s->cfg.deadline_ns / SE_NS_PER_SEC,
		       (double) overrun / SE_NS_PER_SEC);
}

static void _sample_once(sampler_t *s)
{
	meter_reading_t rd;
	energy_sample_t smp = { 0 };
	energy_acc_anomaly_t anomaly;
	uint64_t start, end, overrun;
	char msg[320] = "";
	int rc;

	if (!_ensure_open(s))
		return;

	memset(&rd, 0, sizeof(rd));
	start = se_mono_ns();
	rc = s->ops->read(s->dev, &rd, start + s->cfg.deadline_ns, msg,
			  sizeof(msg));
	end = se_mono_ns();
	overrun = _overrun_ns(s, start, end);
	/* A failed read says its overrun in its own line (one fault, one
	 * line); a read that answers late gets a line of its own. */
	if (overrun && rc && rc != -EALREADY) {
		size_t len = strlen(msg);

		snprintf(msg + len, sizeof(msg) - len,
			 "%sthe read overran its %.3f s deadline by %.3f s",
			 len ? "; " : "",
			 (double) s->cfg.deadline_ns / SE_NS_PER_SEC,
			 (double) overrun / SE_NS_PER_SEC);
	} else if (overrun) {
		_tell_overrun(s, overrun, end);
	}
	/* -EALREADY: the source has nothing newer (e.g. an RRD step not yet
	 * over); not a failure, so no log, no backoff, no close. */
	if (rc == -EALREADY)
		return;
	if (rc) {
		/* -EAGAIN: a transient error on a usable connection */
		if (rc != -EAGAIN)
			_close(s);
		_failed(s, "read", rc, msg);
		return;
	}

	pthread_mutex_lock(&s->lock);
	rc = _account_locked(s, &rd, rd.t_ns ? rd.t_ns : start +
						(end - start) / 2);
	if (!rc)
		energy_acc_last(s->acc, &smp);
	energy_acc_anomaly(s->acc, &anomaly);
	if (rd.has_counter && s->cfg.use_counter)
		_tell_resolution(s, &rd);
	pthread_mutex_unlock(&s->lock);

	if (anomaly.count != s->anomalies_seen)
		_tell_anomaly(s, &anomaly);

	if (rc == -EAGAIN) {
		/*
		 * Held, not failed: the meter answered, and the next reading
		 * tells a torn read from a counter reset.  Taken at once, so
		 * that a jump costs one dropped reading and a few ms, and a
		 * read failing next to it (a timeout under load) stays a
		 * single failure, not the start of a fault.
		 */
		se_log(SE_LOG_DEBUG,
		       "%s: counter reading held (implausible against the last one); reading again at once",
		       s->who);
		s->reread = true;
		return;
	}
	if (rc) {
		_failed(s, "reading", 0, _account_reason(rc));
		return;
	}
	_succeeded(s, &smp);
	if (s->cfg.on_sample)
		s->cfg.on_sample(s->cfg.on_sample_arg, smp.t_ns,
				 smp.energy_mj);
}

/*
 * A read is over (good, failed or refused; on_sample has run): tell the
 * notify fd's owner.  Under the lock, so that once sampler_set_notify_fd()
 * has replaced an fd it is never written again (its owner may close it).
 */
static void _notify(sampler_t *s)
{
	uint64_t one = 1;

	pthread_mutex_lock(&s->lock);
	if (s->notify_fd >= 0 &&
	    write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		se_log(SE_LOG_DEBUG, "%s: notify: %s", s->who,
		       strerror(errno));
	pthread_mutex_unlock(&s->lock);
}

/* When to read next: the next tick, or later while backing off. */
static uint64_t _next_wake(const sampler_t *s)
{
	uint64_t period = s->cfg.period_ns;
	uint64_t next = _tick_after(se_mono_ns(), period);
	uint64_t later;

	if (!s->backoff_ns)
		return next;
	later = _tick_at_or_after(s->tick_ns + s->backoff_ns, period);
	return later > next ? later : next;
}

/* Leave: the owner joins us, or, if it gave up on us, we clean up. */
static void _thread_exit(sampler_t *s)
{
	bool abandoned;

	_close(s);

	pthread_mutex_lock(&s->lock);
	s->exited = true;
	abandoned = s->abandoned;
	pthread_cond_broadcast(&s->done);
	pthread_mutex_unlock(&s->lock);

	if (abandoned) {
		se_log(SE_LOG_INFO, "%s: stuck meter call returned; sampler thread finished",
		       s->who);
		_sampler_free(s);
		__atomic_sub_fetch(&_abandoned_running, 1, __ATOMIC_SEQ_CST);
	}
}

static void *_thread_main(void *arg)
{
	sampler_t *s = arg;
	uint64_t wake = se_mono_ns();	/* first read at once */

	while (_wait_for_tick(s, wake)) {
		uint64_t now = se_mono_ns();

		/* A kick wakes us before the tick: back off from now. */
		s->tick_ns = now < wake ? now : wake;
		s->reread = false;
		_sample_once(s);
		_notify(s);
		wake = s->reread ? se_mono_ns() : _next_wake(s);
	}
	_thread_exit(s);
	return NULL;
}

/* ------------------------------------------------------------- public */

static bool _config_valid(const meter_ops_t *ops, const sampler_config_t *cfg)
{
	return ops && ops->read && cfg && cfg->period_ns && cfg->deadline_ns &&
	       cfg->acc.history >= 2 &&
	       (!cfg->use_counter || (cfg->counter.width_bits >= 1 &&
				      cfg->counter.width_bits <= 64 &&
				      cfg->counter.significand_bits <= 64 &&
				      isfinite(cfg->counter.mj_per_unit) &&
				      cfg->counter.mj_per_unit > 0));
}

/* "modbus tcp://10.0.0.5:502 unit 1", or just the name without a label */
static char *_who(const meter_ops_t *ops, const char *label)
{
	const char *name = ops->name ? ops->name : "meter";
	size_t len = strlen(name) + 1 + strlen(label) + 1;
	char *who = malloc(len);

	if (who)
		snprintf(who, len, "%s%s%s", name, *label ? " " : "", label);
	return who;
}

static int _sampler_init(sampler_t *s, const meter_ops_t *ops, void *dev,
			 const sampler_config_t *cfg)
{
	pthread_condattr_t ca;
	energy_acc_config_t acc_cfg = cfg->acc;

	s->ops = ops;
	s->dev = dev;
	s->cfg = *cfg;
	s->fail_rl = (se_ratelimit_t) SE_RATELIMIT_INIT(SAMPLER_LOG_INTERVAL_NS,
							SAMPLER_LOG_BURST);
	s->note_rl = s->fail_rl;
	s->overrun_rl = s->fail_rl;
	if (!(s->label = strdup(cfg->label ? cfg->label : "")) ||
	    !(s->who = _who(ops, s->label)))
		return -ENOMEM;
	s->cfg.label = s->label;

	/* Default gap: one missed tick, plus a slow read. */
	if (!acc_cfg.gap_ns)
		acc_cfg.gap_ns = cfg->period_ns * 3 / 2 + cfg->deadline_ns;
	/* A counter's power over half a period at least: a kicked read's
	 * short interval alone is too coarse; a tick's interval is enough. */
	if (!acc_cfg.power_window_ns)
		acc_cfg.power_window_ns = cfg->period_ns / 2;
	if (!(s->acc = energy_acc_create(&acc_cfg)))
		return -errno;

	s->notify_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->done, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

static int _spawn(sampler_t *s)
{
	return se_thread_start(&s->thread, _thread_main, s, "se-sampler");
}

#define POLICY_HISTORY_NS	(3600 * SE_NS_PER_SEC)
#define POLICY_HISTORY_MIN	64
#define POLICY_HISTORY_MAX	16384
#define POLICY_BACKOFF_MAX_NS	(30 * SE_NS_PER_SEC)

void sampler_config_init(sampler_config_t *cfg, uint64_t period_ns,
			 uint64_t deadline_ns)
{
	uint64_t history = period_ns ? POLICY_HISTORY_NS / period_ns : 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ns = period_ns;
	cfg->deadline_ns = deadline_ns;
	cfg->backoff_max_ns = period_ns > POLICY_BACKOFF_MAX_NS ?
			      period_ns : POLICY_BACKOFF_MAX_NS;
	cfg->acc.history = history < POLICY_HISTORY_MIN ? POLICY_HISTORY_MIN :
			   history > POLICY_HISTORY_MAX ? POLICY_HISTORY_MAX :
			   history;
	cfg->acc.max_extrapolate_ns = sampler_reach_ns(period_ns, deadline_ns);
}

void sampler_describe_timing(char *buf, size_t len, uint64_t period_ns,
			     uint64_t timeout_ns)
{
	size_t n = strnlen(buf, len);

	if (n + 1 < len)
		snprintf(buf + n, len - n, ", every %gs, timeout %llums",
			 (double) period_ns / 1e9,
			 (unsigned long long) (timeout_ns / SE_NS_PER_MS));
}

sampler_t *sampler_start(const meter_ops_t *ops, void *dev,
			 const sampler_config_t *cfg)
{
	sampler_t *s;
	int rc;

	if (!_config_valid(ops, cfg)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	if ((rc = _sampler_init(s, ops, dev, cfg))) {
		free(s->label);
		free(s->who);
		energy_acc_destroy(s->acc);
		free(s);
		errno = -rc;
		return NULL;
	}
	if ((rc = _spawn(s))) {
		_sampler_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

int sampler_stop(sampler_t *s)
{
	uint64_t limit;

	if (!s)
		return 0;

	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	/* A read in progress returns by its deadline, or should. */
	limit = se_mono_ns() + s->cfg.deadline_ns + SAMPLER_STOP_GRACE_NS;
	while (!s->exited && se_mono_ns() < limit)
		_cond_wait_until(&s->done, &s->lock, limit);

	if (!s->exited) {
		/* No pthread_cancel: a backend cancelled mid-call may leave
		 * its library's locks held.  Leave the thread to finish. */
		s->abandoned = true;
		__atomic_add_fetch(&_abandoned_running, 1, __ATOMIC_SEQ_CST);
		se_log(SE_LOG_ERROR, "%s: meter call still running %.3f s past its deadline; sampler thread left to finish on its own",
		       s->who,
		       (double) SAMPLER_STOP_GRACE_NS / SE_NS_PER_SEC);
		pthread_detach(s->thread);
		pthread_mutex_unlock(&s->lock);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&s->lock);

	pthread_join(s->thread, NULL);
	_sampler_free(s);
	return 0;
}

unsigned long sampler_abandoned_running(void)
{
	return __atomic_load_n(&_abandoned_running, __ATOMIC_SEQ_CST);
}

void sampler_status(sampler_t *s, sampler_status_t *out)
{
	uint64_t e;

	pthread_mutex_lock(&s->lock);
	*out = s->st;
	out->energy_mj = _energy_at_locked(s, se_mono_ns(), &e) ? 0 : e;
	out->gaps = energy_acc_gaps(s->acc);
	pthread_mutex_unlock(&s->lock);
}

int sampler_energy_at(sampler_t *s, uint64_t t_ns, uint64_t *energy_mj)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = _energy_at_locked(s, t_ns, energy_mj);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sampler_energy_between(sampler_t *s, uint64_t t0_ns, uint64_t t1_ns,
			   uint64_t *energy_mj)
{
	uint64_t e0, e1;
	int rc0, rc1;

	*energy_mj = 0;
	if (t0_ns > t1_ns)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	rc0 = _energy_at_locked(s, t0_ns, &e0);
	rc1 = _energy_at_locked(s, t1_ns, &e1);
	pthread_mutex_unlock(&s->lock);
	if (e1 > e0)
		*energy_mj = e1 - e0;
	return rc0 ? rc0 : rc1;
}

uint32_t sampler_flags_between(sampler_t *s, uint64_t t0_ns, uint64_t t1_ns)
{
	uint32_t flags;

	pthread_mutex_lock(&s->lock);
	flags = energy_acc_flags_between(s->acc, t0_ns, t1_ns);
	pthread_mutex_unlock(&s->lock);
	return flags;
}

void sampler_set_notify_fd(sampler_t *s, int fd)
{
	pthread_mutex_lock(&s->lock);
	s->notify_fd = fd;
	pthread_mutex_unlock(&s->lock);
}

void sampler_kick(sampler_t *s)
{
	pthread_mutex_lock(&s->lock);
	s->kicked = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}
