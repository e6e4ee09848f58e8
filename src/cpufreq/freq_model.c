/*
 * freq_model.c - min_energy / min_time choice from run history
 * (see freq_model.h for the rules).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "freq_model.h"

#define MAX_POINTS 64

/* ---------------------------------------------------- private functions */

static int _cmp_d(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static int _cmp_run(const void *a, const void *b)
{
	uint32_t x = ((const freq_run_t *) a)->khz;
	uint32_t y = ((const freq_run_t *) b)->khz;

	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double _median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), _cmp_d);
	return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static bool _usable(const freq_run_t *r, const freq_model_params_t *prm)
{
	if (!r->khz || !isfinite(r->elapsed_s) || !isfinite(r->energy_j) ||
	    r->elapsed_s <= 0 || r->energy_j < 0)
		return false;
	if (prm && prm->min_khz && r->khz < prm->min_khz)
		return false;
	if (prm && prm->max_khz && r->khz > prm->max_khz)
		return false;
	return true;
}

/* ------------------------------------------------------ public functions */

size_t freq_model_aggregate(const freq_run_t *runs, size_t n_runs,
			    const freq_model_params_t *prm,
			    freq_point_t *points, size_t max_points)
{
	freq_run_t *s;
	double *t, *e;
	size_t n = 0, np = 0;

	if (!n_runs || !max_points)
		return 0;
	s = malloc(n_runs * sizeof(*s));
	t = malloc(n_runs * sizeof(*t));
	e = malloc(n_runs * sizeof(*e));
	if (!s || !t || !e)
		goto out;
	for (size_t i = 0; i < n_runs; i++)
		if (_usable(&runs[i], prm))
			s[n++] = runs[i];
	qsort(s, n, sizeof(*s), _cmp_run);
	for (size_t i = 0; i < n && np < max_points;) {
		size_t j = i, k = 0;

		while (j < n && s[j].khz == s[i].khz) {
			t[k] = s[j].elapsed_s;
			e[k] = s[j].energy_j;
			k++;
			j++;
		}
		points[np].khz = s[i].khz;
		points[np].time_s = _median(t, k);
		points[np].energy_j = _median(e, k);
		points[np].n = (unsigned) k;
		np++;
		i = j;
	}
out:
	free(s);
	free(t);
	free(e);
	return np;
}

static size_t _points(const freq_run_t *runs, size_t n_runs,
		      const freq_model_params_t *prm, freq_point_t *pts,
		      freq_choice_t *out)
{
	size_t np = freq_model_aggregate(runs, n_runs, prm, pts, MAX_POINTS);
	unsigned need = prm->min_freqs ? prm->min_freqs : 1;

	memset(out, 0, sizeof(*out));
	if (np < need) {
		out->status = FREQ_CHOICE_NO_HISTORY;
		return 0;
	}
	return np;
}

static void _take(freq_choice_t *out, const freq_point_t *p,
		  freq_choice_status_t st)
{
	out->status = st;
	out->khz = p->khz;
	out->time_s = p->time_s;
	out->energy_j = p->energy_j;
}

int freq_model_min_energy(const freq_run_t *runs, size_t n_runs,
			  const freq_model_params_t *prm, freq_choice_t *out)
{
	freq_point_t pts[MAX_POINTS];
	size_t np = _points(runs, n_runs, prm, pts, out), best = 0;
	double t_min = INFINITY, e_min = INFINITY, t_lim, e_lim;

	if (!np)
		return -ENODATA;
	for (size_t i = 0; i < np; i++)
		t_min = fmin(t_min, pts[i].time_s);
	t_lim = t_min * (1.0 + fmax(prm->max_slowdown, 0.0));
	for (size_t i = 0; i < np; i++)
		if (pts[i].time_s <= t_lim)
			e_min = fmin(e_min, pts[i].energy_j);
	e_lim = e_min * (1.0 + fmax(prm->energy_tolerance, 0.0));
	/* highest frequency within the time limit and the energy tolerance */
	for (size_t i = 0; i < np; i++)
		if (pts[i].time_s <= t_lim && pts[i].energy_j <= e_lim)
			best = i;
	_take(out, &pts[best], FREQ_CHOICE_OK);
	return 0;
}

int freq_model_min_time(const freq_run_t *runs, size_t n_runs,
			const freq_model_params_t *prm, freq_choice_t *out)
{
	freq_point_t pts[MAX_POINTS];
	size_t np = _points(runs, n_runs, prm, pts, out);
	ssize_t best = -1;
	size_t low_p = 0;

	if (!np)
		return -ENODATA;
	for (size_t i = 0; i < np; i++) {
		double w = pts[i].energy_j / pts[i].time_s;

		if (w < pts[low_p].energy_j / pts[low_p].time_s)
			low_p = i;
		if (prm->energy_cap_j > 0 && pts[i].energy_j > prm->energy_cap_j)
			continue;
		if (prm->power_cap_w > 0 && w > prm->power_cap_w)
			continue;
		if (best < 0 || pts[i].time_s < pts[best].time_s ||
		    (pts[i].time_s == pts[best].time_s &&
		     pts[i].energy_j < pts[best].energy_j))
			best = (ssize_t) i;
	}
	if (best < 0)
		_take(out, &pts[low_p], FREQ_CHOICE_CAP_UNMET);
	else
		_take(out, &pts[best], FREQ_CHOICE_OK);
	return 0;
}
