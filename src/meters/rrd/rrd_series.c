/*
 * rrd_series.c - energy from an RRD power series (see rrd_series.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

/* ------------------------------------------- window energy (row means) */

/* The rows of a series as means, invalid ones bridged (see the header). */
typedef struct {
	double *mean;		/* n_rows; valid between first and last */
	bool *bridged;		/* row was invalid and interpolated */
	ptrdiff_t first, last;	/* valid rows; first > last: none */
	int64_t start_ns;	/* row i covers (start + i step, + step] */
	int64_t step_ns;
} rows_t;

static int _rows_fill(rows_t *r, const rrd_series_t *s,
		      const rrd_limits_t *lim, unsigned *n_dropped)
{
	ptrdiff_t prev = -1;

	r->mean = calloc(s->n_rows + 1, sizeof(double));
	r->bridged = calloc(s->n_rows + 1, sizeof(bool));
	if (!r->mean || !r->bridged)
		return -ENOMEM;
	r->start_ns = s->start_s * (int64_t) SE_NS_PER_SEC;
	r->step_ns = (int64_t) (s->step_s * SE_NS_PER_SEC);
	r->first = -1;
	r->last = -2;
	for (ptrdiff_t i = 0; i < (ptrdiff_t) s->n_rows; i++) {
		if (!rrd_value_valid(s->watts[i], lim)) {
			(*n_dropped)++;
			continue;
		}
		r->mean[i] = s->watts[i];
		if (r->first < 0)
			r->first = i;
		/* invalid rows since prev: on the line between the two */
		for (ptrdiff_t j = prev + 1; prev >= 0 && j < i; j++) {
			double f = (double) (j - prev) / (double) (i - prev);

			r->mean[j] = r->mean[prev] +
				     f * (r->mean[i] - r->mean[prev]);
			r->bridged[j] = true;
		}
		prev = r->last = i;
	}
	return r->first < 0 ? -ENODATA : 0;
}

/* Estimated power at the edge between rows i - 1 and i. */
static double _edge_w(const rows_t *r, ptrdiff_t i, double own)
{
	if (i - 2 >= r->first && i + 1 <= r->last)
		return 7.0 / 12.0 * (r->mean[i - 1] + r->mean[i]) -
		       1.0 / 12.0 * (r->mean[i - 2] + r->mean[i + 1]);
	if (i - 1 >= r->first && i <= r->last)
		return (r->mean[i - 1] + r->mean[i]) / 2.0;
	return own;
}

/*
 * Mean power of row i over the fraction [x0, x1] of its step, from the
 * parabola p(x) = L + x (dA + c6 (1 - x)) whose mean over [0, 1] is the
 * row's mean (PPM's form); the row's mean when that dips below min_w.
 */
static double _part_mean_w(const rows_t *r, ptrdiff_t i, double x0,
			   double x1, double min_w)
{
	double a = r->mean[i];
	double L = _edge_w(r, i, a), R = _edge_w(r, i + 1, a);
	double dA = R - L, c6 = 6.0 * (a - (L + R) / 2.0);
	double lowest = L < R ? L : R;
	double F0, F1;

	if (c6 != 0.0) {
		double xv = (dA + c6) / (2.0 * c6);	/* vertex */

		if (xv > 0.0 && xv < 1.0) {
			double pv = L + xv * (dA + c6 * (1.0 - xv));

			lowest = pv < lowest ? pv : lowest;
		}
	}
	if (lowest < min_w || x1 <= x0)
		return a;
	F0 = L * x0 + dA * x0 * x0 / 2 + c6 * (x0 * x0 / 2 - x0 * x0 * x0 / 3);
	F1 = L * x1 + dA * x1 * x1 / 2 + c6 * (x1 * x1 / 2 - x1 * x1 * x1 / 3);
	return (F1 - F0) / (x1 - x0);
}

/* Row holding instant t (rows are (start, end]); may be out of range. */
static ptrdiff_t _row_of(const rows_t *r, int64_t t_ns)
{
	int64_t d = t_ns - r->start_ns;

	if (d <= 0)
		return -1 - (ptrdiff_t) ((-d) / r->step_ns);
	return (ptrdiff_t) ((d - 1) / r->step_ns);
}

int rrd_series_window_energy(const rrd_series_t *s, const rrd_limits_t *lim,
			     uint64_t t0_ns, uint64_t t1_ns,
			     rrd_energy_t *out, bool *complete)
{
	rows_t r = { 0 };
	int64_t t0 = (int64_t) t0_ns, t1 = (int64_t) t1_ns;
	uint64_t valid_lo, valid_hi, held_lo, held_hi;
	double mj = 0.0;
	int rc;

	memset(out, 0, sizeof(*out));
	*complete = false;
	if (t1_ns < t0_ns || !s->step_s || (s->n_rows && !s->watts))
		return -EINVAL;
	if ((rc = _rows_fill(&r, s, lim, &out->n_dropped)))
		goto out;

	/* Outside the valid rows: held at the nearest row's mean. */
	valid_lo = (uint64_t) (r.start_ns + r.first * r.step_ns);
	valid_hi = (uint64_t) (r.start_ns + (r.last + 1) * r.step_ns);
	held_lo = _overlap_ns(0, valid_lo, t0_ns, t1_ns);
	held_hi = _overlap_ns(valid_hi, UINT64_MAX, t0_ns, t1_ns);
	out->held_ns = held_lo + held_hi;
	mj += ((double) held_lo * r.mean[r.first] +
	       (double) held_hi * r.mean[r.last]) / SE_NS_PER_MS;

	for (ptrdiff_t i = r.first; i <= r.last; i++) {
		int64_t lo = r.start_ns + i * r.step_ns, hi = lo + r.step_ns;
		int64_t from = t0 > lo ? t0 : lo, to = t1 < hi ? t1 : hi;
		double watts;

		if (to <= from)
			continue;
		if (to - from == r.step_ns)
			watts = r.mean[i];
		else
			watts = _part_mean_w(&r, i,
					     (double) (from - lo) / r.step_ns,
					     (double) (to - lo) / r.step_ns,
					     lim->min_w);
		mj += (double) (to - from) * watts / SE_NS_PER_MS;
		if (r.bridged[i])
			out->bridged_ns += (uint64_t) (to - from);
		else
			out->n_used++;
	}
	out->energy_mj = (uint64_t) llround(mj);
	*complete = !out->held_ns && _row_of(&r, t0) - 1 >= r.first &&
		    _row_of(&r, t1) + 1 <= r.last;
out:
	free(r.mean);
	free(r.bridged);
	return rc;
}
