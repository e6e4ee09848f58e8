/*
 * rrd_series.c - energy from an RRD power series (see rrd_series.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <string.h>

#include "rrd_series.h"
#include "se_time.h"

/* Energy integration state: a walk over the valid samples, oldest first. */
typedef struct {
	uint64_t t0_ns, t1_ns;
	uint64_t step_ns;
	bool have_prev;
	rrd_sample_t prev;
	rrd_sample_t first;
	double mj;
	rrd_energy_t *out;
} walk_t;

/* ---------------------------------------------------------- public */

uint64_t rrd_series_row_ns(const rrd_series_t *s, size_t i)
{
	int64_t end_s = s->start_s + (int64_t) ((i + 1) * s->step_s);

	return (uint64_t) end_s * SE_NS_PER_SEC - s->step_s * SE_NS_PER_SEC / 2;
}

bool rrd_value_valid(double watts, const rrd_limits_t *lim)
{
	return isfinite(watts) && watts >= lim->min_w && watts <= lim->max_w;
}

double rrd_trapezoid_mj(const rrd_sample_t *a, const rrd_sample_t *b)
{
	double dt_ns = (double) (b->t_ns - a->t_ns);

	return dt_ns * (a->watts + b->watts) / 2.0 / (double) SE_NS_PER_MS;
}

int rrd_series_each_after(const rrd_series_t *s, const rrd_limits_t *lim,
			  uint64_t after_ns, rrd_sample_fn fn, void *arg,
			  unsigned *n_dropped)
{
	unsigned dropped = 0;
	int rv = 0;

	for (size_t i = 0; i < s->n_rows; i++) {
		rrd_sample_t smp = { rrd_series_row_ns(s, i), s->watts[i] };

		if (smp.t_ns <= after_ns)
			continue;
		if (!rrd_value_valid(smp.watts, lim)) {
			dropped++;
			continue;
		}
		if ((rv = fn(arg, &smp)))
			break;
	}
	if (n_dropped)
		*n_dropped = dropped;
	return rv;
}

int rrd_series_last(const rrd_series_t *s, const rrd_limits_t *lim,
		    rrd_sample_t *out)
{
	for (size_t i = s->n_rows; i-- > 0;) {
		if (rrd_value_valid(s->watts[i], lim)) {
			out->t_ns = rrd_series_row_ns(s, i);
			out->watts = s->watts[i];
			return 0;
		}
	}
	return -ENODATA;
}

/* ---------------------------------------------------------- energy */

static uint64_t _overlap_ns(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
	uint64_t from = a > lo ? a : lo;
	uint64_t to = b < hi ? b : hi;

	return to > from ? to - from : 0;
}

/* Power on the line through a and b at t (a.t_ns < b.t_ns). */
static double _lerp_w(const rrd_sample_t *a, const rrd_sample_t *b,
		      uint64_t t_ns)
{
	double f = (double) (t_ns - a->t_ns) / (double) (b->t_ns - a->t_ns);

	return a->watts + f * (b->watts - a->watts);
}

/* The part of segment [a, b] inside [t0, t1], integrated exactly. */
static double _segment_mj(const walk_t *w, const rrd_sample_t *a,
			  const rrd_sample_t *b)
{
	rrd_sample_t lo, hi;

	if (b->t_ns <= w->t0_ns || a->t_ns >= w->t1_ns)
		return 0.0;
	lo.t_ns = a->t_ns > w->t0_ns ? a->t_ns : w->t0_ns;
	hi.t_ns = b->t_ns < w->t1_ns ? b->t_ns : w->t1_ns;
	lo.watts = _lerp_w(a, b, lo.t_ns);
	hi.watts = _lerp_w(a, b, hi.t_ns);
	return rrd_trapezoid_mj(&lo, &hi);
}

/* Flat power w over [a_ns, b_ns] clipped to [t0, t1]; adds to held_ns. */
static double _held_mj(walk_t *w, uint64_t a_ns, uint64_t b_ns, double watts)
{
	uint64_t len = _overlap_ns(a_ns, b_ns, w->t0_ns, w->t1_ns);

	w->out->held_ns += len;
	return (double) len * watts / (double) SE_NS_PER_MS;
}

static int _walk_sample(void *arg, const rrd_sample_t *smp)
{
	walk_t *w = arg;

	if (smp->t_ns >= w->t0_ns && smp->t_ns <= w->t1_ns)
		w->out->n_used++;
	if (!w->have_prev) {
		w->first = *smp;
		w->have_prev = true;
	} else {
		w->mj += _segment_mj(w, &w->prev, smp);
		if (smp->t_ns - w->prev.t_ns > w->step_ns)
			w->out->bridged_ns += _overlap_ns(w->prev.t_ns,
							  smp->t_ns, w->t0_ns,
							  w->t1_ns);
	}
	w->prev = *smp;
	return 0;
}

int rrd_series_energy(const rrd_series_t *s, const rrd_limits_t *lim,
		      uint64_t t0_ns, uint64_t t1_ns, rrd_energy_t *out)
{
	walk_t w = {
		.t0_ns = t0_ns, .t1_ns = t1_ns,
		.step_ns = s->step_s * SE_NS_PER_SEC, .out = out,
	};
	unsigned dropped = 0;

	memset(out, 0, sizeof(*out));
	if (t1_ns < t0_ns || !s->step_s || (s->n_rows && !s->watts))
		return -EINVAL;

	rrd_series_each_after(s, lim, 0, _walk_sample, &w, &dropped);
	out->n_dropped = dropped;
	if (!w.have_prev)
		return -ENODATA;

	/* Before the first and after the last valid sample: held flat. */
	w.mj += _held_mj(&w, t0_ns, w.first.t_ns, w.first.watts);
	w.mj += _held_mj(&w, w.prev.t_ns, t1_ns, w.prev.watts);

	out->energy_mj = (uint64_t) llround(w.mj);
	return 0;
}
