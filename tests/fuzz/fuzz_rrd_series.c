/*
 * fuzz_rrd_series - what acct_gather_energy/rrd and ext_sensors/meters do
 * with the arrays rrd_fetch() returns (src/meters/rrd/rrd_series.c and the
 * absorb step of rrd_meter.c).
 *
 * Input: start (4 bytes, seconds after 2001-09-09), step (2 bytes + 1 s),
 * MinWatt and MaxWatt (1 byte each), the interval [t0, t1] (4 + 4 bytes of
 * ms from one step before the start), then the rows: 8 bytes each, any
 * double (NaN, Inf, negative, huge).  Invariants, with M = MaxWatt and
 * m = MinWatt over an interval of length d:
 *  - energy (trapezoid over the row midpoints) lies in [m d, M d]: every
 *    value it integrates is a valid row or a line between two;
 *  - window energy (PPM over row means) is finite and at most 2 M d (a
 *    parabola may overshoot the rows, never by that much); complete means
 *    nothing was held;
 *  - held and bridged time lie inside the interval;
 *  - the newest sample is a valid row; samples after an instant come
 *    oldest first, strictly after it, valid;
 *  - a meter absorbing three overlapping fetches (as slurmd's polls do)
 *    gives readings whose counter never goes back, whose instants only go
 *    forward, whose power is a valid row, and whose counter grows by at
 *    most M x the time between readings.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <math.h>

#include "rrd_conf.h"
#include "rrd_meter.h"
#include "rrd_series.h"
#include "se_time.h"

#define HEADER 16

typedef struct {
	const rrd_limits_t *lim;
	uint64_t after_ns, last_ns;
	unsigned n;
} walk_check_t;

static int check_sample(void *arg, const rrd_sample_t *smp)
{
	walk_check_t *w = arg;

	FUZZ_CHECK(smp->t_ns > w->after_ns && smp->t_ns > w->last_ns,
		   "sample at %llu after %llu", (unsigned long long) smp->t_ns,
		   (unsigned long long) w->last_ns);
	FUZZ_CHECK(rrd_value_valid(smp->watts, w->lim), "sample %g W",
		   smp->watts);
	w->last_ns = smp->t_ns;
	w->n++;
	return 0;
}

static void check_series(const rrd_series_t *s, const rrd_limits_t *lim,
			 uint64_t t0, uint64_t t1)
{
	double d_ms = (double) (t1 - t0) / SE_NS_PER_MS;
	rrd_energy_t e;
	rrd_sample_t last;
	walk_check_t w = { lim, t0, 0, 0 };
	unsigned dropped = 0;
	bool complete;
	int rc;

	rc = rrd_series_energy(s, lim, t0, t1, &e);
	FUZZ_CHECK(rc == 0 || rc == -ENODATA, "energy rc %d", rc);
	if (!rc) {
		FUZZ_CHECK((double) e.energy_mj <= lim->max_w * d_ms + 1 &&
			   (double) e.energy_mj >= lim->min_w * d_ms - 1,
			   "%llu mJ over %g ms within [%g, %g] W",
			   (unsigned long long) e.energy_mj, d_ms, lim->min_w,
			   lim->max_w);
		FUZZ_CHECK(e.held_ns + e.bridged_ns <= t1 - t0,
			   "held %llu + bridged %llu of %llu ns",
			   (unsigned long long) e.held_ns,
			   (unsigned long long) e.bridged_ns,
			   (unsigned long long) (t1 - t0));
	}
	FUZZ_CHECK(e.n_dropped <= s->n_rows, "dropped %u of %zu", e.n_dropped,
		   s->n_rows);

	rc = rrd_series_window_energy(s, lim, t0, t1, &e, &complete);
	FUZZ_CHECK(rc == 0 || rc == -ENODATA, "window rc %d", rc);
	if (!rc) {
		FUZZ_CHECK((double) e.energy_mj <= 2 * lim->max_w * d_ms + 1,
			   "window %llu mJ over %g ms, MaxWatt %g",
			   (unsigned long long) e.energy_mj, d_ms, lim->max_w);
		FUZZ_CHECK(e.held_ns <= t1 - t0 && e.bridged_ns <= t1 - t0,
			   "window held %llu bridged %llu of %llu",
			   (unsigned long long) e.held_ns,
			   (unsigned long long) e.bridged_ns,
			   (unsigned long long) (t1 - t0));
		FUZZ_CHECK(!complete || !e.held_ns, "complete yet held");
	} else {
		FUZZ_CHECK(!complete, "complete without data");
	}

	if (!rrd_series_last(s, lim, &last))
		FUZZ_CHECK(rrd_value_valid(last.watts, lim), "last %g W",
			   last.watts);
	rrd_series_each_after(s, lim, t0, check_sample, &w, &dropped);
	FUZZ_CHECK(w.n + dropped <= s->n_rows, "%u samples + %u dropped of %zu",
		   w.n, dropped, s->n_rows);
}

/* Rows [from, to) of s as the answer of one fetch. */
static rrd_series_t sub_series(const rrd_series_t *s, size_t from, size_t to)
{
	rrd_series_t f = {
		.start_s = s->start_s + (int64_t) (from * s->step_s),
		.step_s = s->step_s,
		.n_rows = to - from,
		.watts = s->watts + from,
	};
	return f;
}

static void check_meter(const rrd_series_t *s, const rrd_limits_t *lim)
{
	rrd_conf_t c;
	rrd_meter_t *m;
	meter_reading_t r, prev = { 0 };
	char err[256], msg[512];
	size_t n = s->n_rows;
	const size_t cuts[3][2] = { { 0, n / 2 }, { n / 4, 3 * n / 4 },
				    { n / 2, n } };
	bool have_prev = false;

	rrd_conf_init(&c);
	c.file_tmpl = strdup("/var/lib/collectd/%n/power.rrd");
	c.min_w = lim->min_w;
	c.max_w = lim->max_w;
	c.max_age_ns = 3600 * SE_NS_PER_SEC;
	m = rrd_meter_create(&c, "n1", err, sizeof(err));
	FUZZ_CHECK(m != NULL, "create: %s", err);
	for (int i = 0; i < 3; i++) {
		rrd_series_t f = sub_series(s, cuts[i][0], cuts[i][1]);
		uint64_t now = (uint64_t) (f.start_s + (int64_t) (f.n_rows *
					   f.step_s)) * SE_NS_PER_SEC;
		int rc = rrd_meter_absorb(m, &f, now, &r, msg, sizeof(msg));

		if (rc) {
			FUZZ_CHECK(rc == -EALREADY || rc == -ESTALE ||
				   rc == -ENODATA, "absorb rc %d", rc);
			continue;
		}
		FUZZ_CHECK(r.has_power && r.has_counter, "reading incomplete");
		FUZZ_CHECK((double) r.power_mw <= lim->max_w * 1000 + 1 &&
			   (double) r.power_mw >= lim->min_w * 1000 - 1,
			   "power %llu mW", (unsigned long long) r.power_mw);
		if (have_prev) {
			double dt_ms = (double) (r.t_ns - prev.t_ns) /
				       SE_NS_PER_MS;

			FUZZ_CHECK(r.t_ns > prev.t_ns, "instant went back");
			FUZZ_CHECK(r.counter_raw >= prev.counter_raw,
				   "counter went back");
			FUZZ_CHECK((double) (r.counter_raw - prev.counter_raw)
				   <= lim->max_w * dt_ms + 2,
				   "%llu mJ in %g ms",
				   (unsigned long long) (r.counter_raw -
							 prev.counter_raw),
				   dt_ms);
		}
		prev = r;
		have_prev = true;
	}
	rrd_meter_destroy(m);
	rrd_conf_free(&c);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
	       (uint32_t) p[2] << 8 | p[3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rrd_series_t s;
	rrd_limits_t lim;
	uint64_t t0, t1;
	double *rows;
	size_t n;

	if (size < HEADER)
		return 0;
	fuzz_quiet();
	n = (size - HEADER) / sizeof(double);
	s.start_s = 1000000000LL + be32(data);
	s.step_s = 1 + ((uint64_t) data[4] << 8 | data[5]);
	lim.min_w = data[6];
	lim.max_w = lim.min_w + 1 + 20.0 * data[7];
	t0 = (uint64_t) (s.start_s - (int64_t) s.step_s) * SE_NS_PER_SEC +
	     (uint64_t) be32(data + 8) * SE_NS_PER_MS;
	t1 = t0 + (uint64_t) be32(data + 12) * SE_NS_PER_MS;
	/* an exact-size array, so ASan sees any read past the last row */
	rows = malloc(n ? n * sizeof(double) : 1);
	if (!rows)
		return 0;
	memcpy(rows, data + HEADER, n * sizeof(double));
	s.n_rows = n;
	s.watts = rows;

	check_series(&s, &lim, t0, t1);
	check_series(&s, &lim, t0, t0);
	check_meter(&s, &lim);
	free(rows);
	return 0;
}
