/*
 * test_sampler.c - the sampler thread against fake meters.
 *
 * Two fakes share one struct: a generator (power follows a known function
 * of monotonic time, with failures on demand) and a script (each read
 * blocks until the test hands it a result).  The script is how the tests
 * prove that readers never wait on the meter: the meter thread sits in
 * read() on a condition only the test can release while the reader calls
 * return.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler.h"
#include "se_log.h"
#include "se_time.h"

#include "log_record.h"

#define MS	SE_NS_PER_MS
#define SEC	SE_NS_PER_SEC
#define MAX_READS 256

typedef struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool script;		/* block in read() until given a result */

	/* generator: p(t) = p0 + slope x (t - t0), optional counter */
	uint64_t t0_ns;
	double p0_mw;
	double slope_mw_s;
	bool counter;		/* also give a 16-bit counter, 1 mJ/unit */
	double spec_mj;		/* instead: a 64-bit counter of this many
				 * mJ a unit, its spec in each reading, and
				 * no power (a meter that learns its units
				 * at open: Redfish) */
	int fail_next;		/* this many reads fail with fail_rc */
	int fail_rc;
	int open_fail_next;	/* this many opens fail */

	/* script */
	bool has_item;
	int item_rc;
	meter_reading_t item;
	bool release;		/* a blocked read returns -EIO at once */

	/* what happened */
	int opens, closes, reads;
	bool in_read;
	uint64_t read_start[MAX_READS];
	int read_rc[MAX_READS];
	meter_reading_t got[MAX_READS];
} fake_t;

/* ------------------------------------------------------------- the fake */

static double _fake_mj(const fake_t *f, uint64_t t)
{
	double s = (double) (t - f->t0_ns) / SEC;

	return f->p0_mw * s + f->slope_mw_s * s * s / 2;
}

static int _fake_open(void *dev, uint64_t deadline_ns)
{
	fake_t *f = dev;
	int rc = 0;

	pthread_mutex_lock(&f->m);
	f->opens++;
	if (f->open_fail_next > 0) {
		f->open_fail_next--;
		rc = -ECONNREFUSED;
	}
	pthread_mutex_unlock(&f->m);
	return rc;
}

static void _fake_close(void *dev)
{
	fake_t *f = dev;

	pthread_mutex_lock(&f->m);
	f->closes++;
	pthread_cond_broadcast(&f->c);
	pthread_mutex_unlock(&f->m);
}

static int _fake_generate(fake_t *f, meter_reading_t *out, uint64_t now)
{
	double p = f->p0_mw + f->slope_mw_s * (double) (now - f->t0_ns) / SEC;

	if (f->fail_next > 0) {
		f->fail_next--;
		return f->fail_rc;
	}
	out->t_ns = now;
	if (f->spec_mj > 0) {
		out->has_counter = true;
		out->counter_raw = (uint64_t) floor(_fake_mj(f, now) /
						    f->spec_mj);
		out->counter_spec = (counter_spec_t) { 64, f->spec_mj, 0, 0 };
		return 0;
	}
	out->has_power = true;
	out->power_mw = (uint64_t) llround(p);
	if (f->counter) {
		out->has_counter = true;
		out->counter_raw = (uint64_t) floor(_fake_mj(f, now)) & 0xffff;
	}
	return 0;
}

static int _fake_script(fake_t *f, meter_reading_t *out)
{
	int rc;

	while (!f->has_item && !f->release)
		pthread_cond_wait(&f->c, &f->m);
	if (!f->has_item)
		return -EIO;
	f->has_item = false;
	*out = f->item;
	rc = f->item_rc;
	return rc;
}

static int _fake_read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		      char *msg, size_t msg_len)
{
	fake_t *f = dev;
	uint64_t now = se_mono_ns();
	int rc, i;

	pthread_mutex_lock(&f->m);
	i = f->reads < MAX_READS ? f->reads : MAX_READS - 1;
	f->reads++;
	f->in_read = true;
	f->read_start[i] = now;
	pthread_cond_broadcast(&f->c);

	rc = f->script ? _fake_script(f, out) : _fake_generate(f, out, now);
	if (rc && msg)
		snprintf(msg, msg_len, "fake says no");
	f->read_rc[i] = rc;
	f->got[i] = *out;
	f->in_read = false;
	pthread_cond_broadcast(&f->c);
	pthread_mutex_unlock(&f->m);
	return rc;
}

static const meter_ops_t fake_ops = {
	.name = "fake",
	.open = _fake_open,
	.read = _fake_read,
	.close = _fake_close,
};

static void _fake_init(fake_t *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->m, NULL);
	pthread_cond_init(&f->c, NULL);
	f->t0_ns = se_mono_ns();
}

/* Hand the scripted meter one result (it may be waiting for it). */
static void _fake_give(fake_t *f, int rc, uint64_t t_ns, uint64_t power_mw)
{
	pthread_mutex_lock(&f->m);
	ck_assert(!f->has_item);
	f->item = (meter_reading_t) { .t_ns = t_ns, .has_power = true,
				      .power_mw = power_mw };
	f->item_rc = rc;
	f->has_item = true;
	pthread_cond_broadcast(&f->c);
	pthread_mutex_unlock(&f->m);
}

/* Wait (bounded, so a bug fails rather than hangs) until reads >= n and
 * the meter thread sits inside read(). */
static void _fake_wait_blocked(fake_t *f, int n)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	pthread_mutex_lock(&f->m);
	while (!(f->reads >= n && f->in_read))
		ck_assert_int_eq(pthread_cond_timedwait(&f->c, &f->m, &ts), 0);
	pthread_mutex_unlock(&f->m);
}

static bool _logged(const char *needle)
{
	bool found;

	pthread_mutex_lock(&log_lock);
	found = strstr(log_text, needle) != NULL;
	pthread_mutex_unlock(&log_lock);
	return found;
}

/* ------------------------------------------------------------- helpers */

static sampler_config_t _cfg(uint64_t period, uint64_t deadline)
{
	sampler_config_t cfg = {
		.period_ns = period,
		.deadline_ns = deadline,
		.backoff_max_ns = 8 * period,
		.acc = { .history = 1024, .max_power_mw = 10000000 },
		.label = "m1",
	};

	return cfg;
}

static void _sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll the status until cond holds (bounded: 20 s, then fail). */
#define WAIT_STATUS(s, st, cond)					\
	do {								\
		int _i;							\
		for (_i = 0; _i < 20000; _i++) {			\
			sampler_status((s), &(st));			\
			if (cond)					\
				break;					\
			_sleep_ms(1);					\
		}							\
		ck_assert_msg(cond, "timed out waiting for " #cond);	\
	} while (0)

/* -------------------------------------------------------------- tests */

START_TEST(test_policy_defaults)
{
	sampler_config_t cfg;

	/* a read a second within 0.5 s: an hour of samples, backed off to
	 * 30 s, one missed sample extrapolated */
	sampler_config_init(&cfg, SEC, SEC / 2);
	ck_assert_uint_eq(cfg.period_ns, SEC);
	ck_assert_uint_eq(cfg.deadline_ns, SEC / 2);
	ck_assert_uint_eq(cfg.acc.history, 3600);
	ck_assert_uint_eq(cfg.backoff_max_ns, 30 * SEC);
	ck_assert_uint_eq(cfg.acc.max_extrapolate_ns, SEC + SEC / 2);
	ck_assert(!cfg.use_counter && !cfg.acc.gap_ns &&
		  !cfg.acc.max_power_mw && !cfg.label && !cfg.on_sample);
	/* 0.1 s: the ring's cap; 120 s: its floor, backed off no shorter
	 * than the period */
	sampler_config_init(&cfg, SEC / 10, SEC / 20);
	ck_assert_uint_eq(cfg.acc.history, 16384);
	sampler_config_init(&cfg, 120 * SEC, 5 * SEC);
	ck_assert_uint_eq(cfg.acc.history, 64);
	ck_assert_uint_eq(cfg.backoff_max_ns, 120 * SEC);
}
END_TEST

START_TEST(test_bad_config)
{
	sampler_config_t cfg = _cfg(0, MS);
	fake_t f;

	_fake_init(&f);
	errno = 0;
	ck_assert_ptr_null(sampler_start(&fake_ops, &f, &cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg = _cfg(MS, MS);
	cfg.acc.history = 1;
	ck_assert_ptr_null(sampler_start(&fake_ops, &f, &cfg));
	ck_assert_int_eq(f.opens, 0);
	ck_assert_int_eq(sampler_stop(NULL), 0);
}
END_TEST

/* Energy between the first and last sample the fake produced. */
static void _check_energy(sampler_t *s, fake_t *f, int n, double tol_mj)
{
	uint64_t t0, t1, tm, e;
	double want;

	pthread_mutex_lock(&f->m);
	t0 = f->got[0].t_ns;
	t1 = f->got[n - 1].t_ns;
	pthread_mutex_unlock(&f->m);
	ck_assert(t1 > t0);

	ck_assert_int_eq(sampler_energy_between(s, t0, t1, &e), 0);
	want = _fake_mj(f, t1) - _fake_mj(f, t0);
	ck_assert_msg(fabs((double) e - want) <= tol_mj,
		      "energy %llu mJ, true %.3f mJ", (unsigned long long) e,
		      want);

	/* inside an interval, not on a sample */
	tm = t0 + (t1 - t0) / 3 + 12345;
	ck_assert_int_eq(sampler_energy_between(s, t0, tm, &e), 0);
	want = _fake_mj(f, tm) - _fake_mj(f, t0);
	ck_assert_msg(fabs((double) e - want) <= tol_mj,
		      "mid energy %llu mJ, true %.3f mJ",
		      (unsigned long long) e, want);
}

START_TEST(test_constant_power)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;
	int i;

	_fake_init(&f);
	f.p0_mw = 100000;			/* 100 W */
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 12);
	ck_assert_int_eq(st.state, SAMPLER_OK);
	ck_assert_uint_eq(st.power_mw, 100000);
	ck_assert_uint_eq(st.reads_failed, 0);
	_check_energy(s, &f, 12, 1.0);
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert_int_eq(f.opens, 1);
	ck_assert_int_eq(f.closes, 1);
	/* reads wait for the next multiple of the period: never two in one
	 * period slot of the monotonic clock (a late one is not made up) */
	for (i = 1; i < 12; i++)
		ck_assert_uint_gt(f.read_start[i] / cfg.period_ns,
				  f.read_start[i - 1] / cfg.period_ns);
}
END_TEST

START_TEST(test_ramp_power)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.p0_mw = 100000;
	f.slope_mw_s = 500000;			/* +500 W per second */
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 12);
	/* the trapezoid is exact for linear power; 1 mW of rounding per
	 * sample and the final mJ truncation remain */
	_check_energy(s, &f, 12, 1.5);
	ck_assert_int_eq(sampler_stop(s), 0);
}
END_TEST

START_TEST(test_counter_wraps)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	bool wrapped = false;
	fake_t f;
	int i;

	_fake_init(&f);
	f.p0_mw = 100000;		/* 2000 units of 1 mJ per 20 ms */
	f.counter = true;
	cfg.use_counter = true;
	cfg.counter = (counter_spec_t) { 16, 1.0, 0, 0 };
	cfg.acc.max_power_mw = 200000;
	/* a gap is a silence of 300 ms (the default, 40 ms, is a scheduling
	 * hiccup under valgrind on a loaded machine): below the 328 ms at
	 * which 200 W could hide a whole wrap, so a wrap taken for a gap
	 * still fails the count below */
	cfg.acc.gap_ns = 300 * MS;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	/* 65.5 J of range: at 100 W it wraps every 0.66 s */
	WAIT_STATUS(s, st, st.reads_ok >= 50);
	pthread_mutex_lock(&f.m);
	for (i = 1; i < 50; i++)
		wrapped |= f.got[i].counter_raw < f.got[i - 1].counter_raw;
	pthread_mutex_unlock(&f.m);
	ck_assert(wrapped);
	/* a counter truncated to whole units at each end: within 2 mJ; a
	 * missed wrap would be 65.5 J off */
	_check_energy(s, &f, 50, 2.0);
	ck_assert_uint_eq(st.gaps, 0);
	ck_assert_int_eq(sampler_stop(s), 0);
}
END_TEST

/*
 * A reading that carries its counter's spec is counted in it, not in the
 * sampler's: the configuration says 1 mJ a unit, the meter's counter
 * counts joules.  Read in the configured unit the energy would be 1000
 * times too small.
 */
START_TEST(test_reading_brings_its_spec)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.p0_mw = 100000;		/* 2 J per 20 ms */
	f.spec_mj = 1000.0;		/* whole joules */
	cfg.use_counter = true;
	cfg.counter = (counter_spec_t) { 64, 1.0, 0, 0 };
	cfg.acc.max_power_mw = 200000;
	/* a 64-bit counter loses nothing over a silence: this test is about
	 * units, and the sampler thread stalled 1.16 s under valgrind at
	 * load 7 once */
	cfg.acc.gap_ns = 10 * SEC;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 30);
	/* whole joules truncated at each end: within 2 J */
	_check_energy(s, &f, 30, 2000.0);
	ck_assert_uint_eq(st.gaps, 0);
	ck_assert_int_eq(sampler_stop(s), 0);
}
END_TEST

/*
 * The meter hangs inside read(): every reader call must still return.  If
 * any of them waited on the meter, this test would hang (and Check's
 * timeout would fail it) instead of reaching the asserts.
 */
START_TEST(test_hung_meter_readers_return)
{
	sampler_config_t cfg = _cfg(10 * MS, 50 * MS);
	sampler_status_t st;
	/* sample times after "now", so that status() polls (asking for
	 * now) do not take part in the floor checked below */
	uint64_t base = se_mono_ns() + 3600 * SEC, e = 0;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.script = true;
	cfg.acc.max_extrapolate_ns = 60 * SEC;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));

	_fake_wait_blocked(&f, 1);
	_fake_give(&f, 0, base, 100000);
	_fake_wait_blocked(&f, 2);
	_fake_give(&f, 0, base + SEC, 100000);
	_fake_wait_blocked(&f, 3);	/* hung: nothing more given */

	ck_assert_int_eq(sampler_energy_at(s, base + 1500 * MS, &e), 0);
	ck_assert_uint_eq(e, 150000);
	ck_assert_int_eq(sampler_energy_between(s, base, base + 500 * MS, &e),
			 0);
	ck_assert_uint_eq(e, 50000);
	sampler_status(s, &st);
	ck_assert_int_eq(st.state, SAMPLER_OK);
	ck_assert_uint_eq(st.reads_ok, 2);
	ck_assert_uint_eq(st.last_sample_ns, base + SEC);
	ck_assert_uint_eq(st.power_mw, 100000);
	sampler_kick(s);
	/* all of the above ran while the meter thread was blocked */
	pthread_mutex_lock(&f.m);
	ck_assert(f.in_read);
	ck_assert_int_eq(f.reads, 3);
	pthread_mutex_unlock(&f.m);

	/* a reader was told 200 J for base + 2 s (extrapolated at 100 W) */
	ck_assert_int_eq(sampler_energy_at(s, base + 2 * SEC, &e), 0);
	ck_assert_uint_eq(e, 200000);
	/* then power turns out to have fallen to 0 by base + 1.5 s: the
	 * accumulator now says 125 J for base + 2 s, but a reader must not
	 * see energy go down */
	_fake_give(&f, 0, base + 1500 * MS, 0);
	WAIT_STATUS(s, st, st.reads_ok == 3);
	ck_assert_int_eq(sampler_energy_at(s, base + 2 * SEC, &e), 0);
	ck_assert_uint_eq(e, 200000);
	ck_assert_int_eq(sampler_energy_at(s, base + 3 * SEC, &e), 0);
	ck_assert_uint_eq(e, 200000);
	/* inside the history the truth is told: 100 J + 20 J - 4 J */
	ck_assert_int_eq(sampler_energy_at(s, base + 1200 * MS, &e), 0);
	ck_assert_uint_eq(e, 116000);

	/*
	 * Stop while the meter hangs: stop gives up after deadline + 1 s
	 * and leaves the thread (no pthread_cancel: it is still inside
	 * read, and the device is not closed under it).
	 */
	_fake_wait_blocked(&f, 4);
	ck_assert_int_eq(sampler_stop(s), -ETIMEDOUT);
	ck_assert_uint_eq(sampler_abandoned_running(), 1);
	pthread_mutex_lock(&f.m);
	ck_assert(f.in_read);
	ck_assert_int_eq(f.closes, 0);
	f.release = true;
	pthread_cond_broadcast(&f.c);
	pthread_mutex_unlock(&f.m);
	ck_assert(_logged("fake m1: meter call still running"));

	/* the thread finishes on its own: closes the device, frees itself
	 * (f.m: the count above is atomic, an order helgrind cannot see) */
	while (sampler_abandoned_running())
		_sleep_ms(1);
	pthread_mutex_lock(&f.m);
	ck_assert_int_eq(f.closes, 1);
	ck_assert_int_eq(f.reads, 4);
	pthread_mutex_unlock(&f.m);
}
END_TEST

START_TEST(test_fail_backoff_recover)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	uint64_t last_e = 0;
	bool saw_failing = false;
	sampler_t *s;
	fake_t f;
	int first_fail, i;

	_fake_init(&f);
	f.p0_mw = 100000;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 3);

	pthread_mutex_lock(&f.m);
	f.fail_next = 5;
	f.fail_rc = -EIO;
	first_fail = f.reads;
	pthread_mutex_unlock(&f.m);

	/* while it fails and recovers, energy never goes backwards */
	for (i = 0; i < 20000; i++) {
		sampler_status(s, &st);
		ck_assert_uint_ge(st.energy_mj, last_e);
		last_e = st.energy_mj;
		if (st.state == SAMPLER_FAILING) {
			saw_failing = true;
			ck_assert_uint_ge(st.consecutive_failures, 1);
		}
		if (st.reads_failed == 5 && st.state == SAMPLER_OK)
			break;
		_sleep_ms(1);
	}
	ck_assert(saw_failing);
	ck_assert_int_eq(st.state, SAMPLER_OK);
	ck_assert_uint_eq(st.consecutive_failures, 0);
	ck_assert_uint_eq(st.reads_failed, 5);
	ck_assert_uint_ge(st.gaps, 1);		/* the outage is flagged */
	WAIT_STATUS(s, st, st.reads_ok >= 8);
	_check_energy(s, &f, st.reads_ok + 5, 1.0);	/* gap filled exactly */
	ck_assert_int_eq(sampler_stop(s), 0);

	/* each -EIO closed the device; each retry opened it again */
	ck_assert_int_eq(f.opens, 6);
	ck_assert_int_eq(f.closes, 6);
	/*
	 * Backoff 20, 40, 80, 160, 160 ms (capped at 8 periods): retries
	 * must not come at the 20 ms period.  Lower bounds only, at half the
	 * backoff, so a slow machine cannot fail the test.
	 */
	for (i = first_fail + 2; i < first_fail + 5; i++) {
		uint64_t gap = f.read_start[i + 1] - f.read_start[i];
		uint64_t want = (20 * MS << (i - first_fail));

		if (want > 160 * MS)
			want = 160 * MS;
		ck_assert_msg(gap >= want / 2, "retry %d after %llu ms", i,
			      (unsigned long long) (gap / MS));
	}
	/* the fault is marked once at error level as the gap starts (its
	 * second failure), naming the meter and the reason; its other
	 * failures go to debug; its end is marked once */
	ck_assert(_logged("2|fake m1: read failed: Input/output error: fake says no (1 in a row); next try in 0.020 s\n"));
	ck_assert(_logged("0|fake m1: read failed: Input/output error: fake says no (2 in a row); energy held until readings resume, then the gap is filled; next try in 0.040 s\n"));
	ck_assert(_logged("2|fake m1: read failed: Input/output error: fake says no (3 in a row); next try in 0.080 s\n"));
	ck_assert(!_logged("0|fake m1: read failed: Input/output error: fake says no (1 in a row)"));
	ck_assert_int_eq(log_errors, 1);
	ck_assert(_logged("1|fake m1: reading again after 5 failed attempts over 0."));
	ck_assert(_logged(" s; energy of the gap filled linearly\n"));
}
END_TEST

START_TEST(test_eagain_keeps_connection)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.p0_mw = 50000;
	f.fail_next = 2;
	f.fail_rc = -EAGAIN;
	f.open_fail_next = 1;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 2);
	ck_assert_uint_eq(st.reads_failed, 3);	/* open, then 2 reads */
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert_int_eq(f.opens, 2);		/* one failed, one good */
	ck_assert_int_eq(f.closes, 1);		/* only at stop */
	ck_assert(_logged("fake m1: open failed: Connection refused (1 in a row)"));
	ck_assert(_logged("fake m1: read failed: Resource temporarily unavailable: fake says no (2 in a row)"));
}
END_TEST

START_TEST(test_ealready_is_not_a_failure)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.p0_mw = 50000;
	f.fail_next = 3;
	f.fail_rc = -EALREADY;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok >= 2);
	/* "nothing new yet" three times: no failure counted, none logged,
	 * the connection kept */
	ck_assert_uint_eq(st.reads_failed, 0);
	ck_assert_uint_eq(st.consecutive_failures, 0);
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert_int_eq(f.opens, 1);
	ck_assert_int_eq(f.closes, 1);		/* only at stop */
	ck_assert(!_logged("fake m1: read failed"));
}
END_TEST

START_TEST(test_absurd_reading_dropped)
{
	sampler_config_t cfg = _cfg(10 * MS, 50 * MS);
	sampler_status_t st;
	int64_t minus_5w = -5000;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.script = true;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	_fake_wait_blocked(&f, 1);
	_fake_give(&f, 0, 5 * SEC, (uint64_t) minus_5w);
	WAIT_STATUS(s, st, st.reads_failed == 1);
	ck_assert_int_eq(st.state, SAMPLER_FAILING);
	ck_assert_uint_eq(st.reads_ok, 0);
	ck_assert_uint_eq(st.energy_mj, 0);

	_fake_wait_blocked(&f, 2);	/* the first failure is logged */
	ck_assert(_logged("2|fake m1: reading failed: implausible reading dropped (1 in a row)"));
	_fake_give(&f, 0, 6 * SEC, 20000000);	/* 20 kW > 10 kW bound */
	WAIT_STATUS(s, st, st.reads_failed == 2);
	_fake_wait_blocked(&f, 3);	/* the second failure is logged */
	ck_assert(_logged("0|fake m1: reading failed: implausible reading dropped (2 in a row); energy held"));
	_fake_give(&f, 0, 7 * SEC, 200000);
	WAIT_STATUS(s, st, st.reads_ok == 1);
	ck_assert_int_eq(st.state, SAMPLER_OK);
	ck_assert_uint_eq(st.power_mw, 200000);

	pthread_mutex_lock(&f.m);
	f.release = true;			/* let stop join at once */
	pthread_cond_broadcast(&f.c);
	pthread_mutex_unlock(&f.m);
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert_int_eq(f.closes, 1);		/* only at stop */
}
END_TEST

START_TEST(test_kick)
{
	sampler_config_t cfg = _cfg(1000000 * SEC, 100 * MS);
	sampler_status_t st;
	sampler_t *s;
	fake_t f;

	_fake_init(&f);
	f.p0_mw = 1000;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	WAIT_STATUS(s, st, st.reads_ok == 1);	/* the first read, at once */
	sampler_kick(s);
	WAIT_STATUS(s, st, st.reads_ok == 2);	/* not in 11 days */
	sampler_kick(s);
	WAIT_STATUS(s, st, st.reads_ok == 3);
	/* stop wakes the sleeping thread: joined, not abandoned */
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert_int_eq(f.reads, 3);
}
END_TEST

/*
 * A meter not up when the sampler starts (slurmd started before it), up
 * once the backoff has grown: a kick (a step's boundary asking for a
 * reading) reads it at once, not at the backoff's next try.  With the
 * default 30 s cap that try came after a 20 s job had ended, and the job
 * got 0 J (test_gpu_share.py, node mode, Slurm 25.05.8).  While the meter
 * still fails, kicks read it at most once a period: not one read a kick.
 */
START_TEST(test_kick_while_failing)
{
	sampler_config_t cfg = _cfg(20 * MS, 10 * MS);
	sampler_status_t st;
	uint64_t t_kick, t_end, good_start, delay;
	sampler_t *s;
	fake_t f;
	int before, during, good;

	cfg.backoff_max_ns = 1000 * SEC;	/* only kicks read soon */
	_fake_init(&f);
	f.p0_mw = 100000;
	f.fail_next = 1000000;			/* not up: refused */
	f.fail_rc = -ECONNREFUSED;
	ck_assert_ptr_nonnull(s = sampler_start(&fake_ops, &f, &cfg));
	/* tries at 0, 20, 60, 140, 300, 620 ms, 1.26 s: the next 1.28 s on */
	WAIT_STATUS(s, st, st.consecutive_failures >= 7);

	/* still down: 200 ms of kicks every 2 ms read once a period (about
	 * 10 reads; without the floor ~100, without kicks none) */
	pthread_mutex_lock(&f.m);
	before = f.reads;
	pthread_mutex_unlock(&f.m);
	t_end = se_mono_ns() + 200 * MS;
	while (se_mono_ns() < t_end) {
		sampler_kick(s);
		_sleep_ms(2);
	}
	pthread_mutex_lock(&f.m);
	during = f.reads - before;
	pthread_mutex_unlock(&f.m);
	ck_assert_msg(during >= 3 && during <= 12,
		      "%d reads in 200 ms of kicks, period 20 ms", during);

	/* up now: the next kick reads it within a period or so */
	pthread_mutex_lock(&f.m);
	f.fail_next = 0;
	good = f.reads;
	pthread_mutex_unlock(&f.m);
	t_kick = se_mono_ns();
	sampler_kick(s);
	WAIT_STATUS(s, st, st.reads_ok >= 1);
	pthread_mutex_lock(&f.m);
	good_start = f.read_start[good];
	ck_assert_int_eq(f.read_rc[good], 0);
	pthread_mutex_unlock(&f.m);
	delay = good_start > t_kick ? good_start - t_kick : 0;
	ck_assert_msg(delay < 300 * MS,
		      "the kicked read came %.3f s after the kick",
		      (double) delay / SEC);
	ck_assert_int_eq(st.state, SAMPLER_OK);
	ck_assert_int_eq(sampler_stop(s), 0);
	ck_assert(_logged("fake m1: reading again after "));
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("sampler");
	TCase *tc = tcase_create("fake meter");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_policy_defaults);
	tcase_add_test(tc, test_bad_config);
	tcase_add_test(tc, test_constant_power);
	tcase_add_test(tc, test_ramp_power);
	tcase_add_test(tc, test_counter_wraps);
	tcase_add_test(tc, test_reading_brings_its_spec);
	tcase_add_test(tc, test_hung_meter_readers_return);
	tcase_add_test(tc, test_fail_backoff_recover);
	tcase_add_test(tc, test_eagain_keeps_connection);
	tcase_add_test(tc, test_ealready_is_not_a_failure);
	tcase_add_test(tc, test_absurd_reading_dropped);
	tcase_add_test(tc, test_kick);
	tcase_add_test(tc, test_kick_while_failing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
