/*
 * se-bench-rrd-window - how well a step's energy can be known from RRD rows.
 *
 *   se-bench-rrd-window TRACE [STEP_S]
 *
 * For each power column of TRACE (contribs/trace/FORMAT.md) it makes the
 * rows an RRD file of STEP_S (10) seconds holds when fed that power exactly
 * (each row the mean over its step: what se-rrd-feed's DERIVE data source
 * stores), then, for windows of several lengths at 200 phases each, compares
 * with the trace's exact integral:
 *   trapezoid  rows as samples at their midpoints (rrd_series_energy: the
 *              sampler's and ext_sensors' model);
 *   window     rows as step means, ends on a piecewise-parabolic profile
 *              (rrd_series_window_energy: what a settling step computes).
 * Both see every row around the window: this is the model's error alone,
 * with no late row and no extrapolation.  Prints a markdown table of the
 * largest and mean |error| in percent.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "power_trace.h"
#include "rrd_series.h"
#include "se_time.h"

#define PHASES		200
#define T_FIRST		600.0	/* windows start here (rows from 0) */

/* not multiples of the trace's 30 and 60 s periods, where errors cancel */
static const double lengths_s[] = { 10, 25, 45, 65, 95, 125, 185, 305 };

typedef struct {
	double max, sum;
	unsigned n;
} stat_t;

static void _add(stat_t *st, double err)
{
	err = fabs(err);
	st->max = err > st->max ? err : st->max;
	st->sum += err;
	st->n++;
}

static void _column(const power_trace_t *tr, int col, double step_s)
{
	static const rrd_limits_t any = { 0, 1e9 };
	size_t n_rows = (size_t) ((T_FIRST + 2 * 300 + 60) / step_s);
	double *w = calloc(n_rows, sizeof(double));
	rrd_series_t s = { 0, (uint64_t) step_s, n_rows, w };

	for (size_t i = 0; i < n_rows; i++)
		w[i] = power_trace_joules(tr, col, i * step_s,
					  (i + 1) * step_s) / step_s;
	for (size_t l = 0; l < sizeof(lengths_s) / sizeof(*lengths_s); l++) {
		stat_t trap = { 0 }, win = { 0 };

		for (int p = 0; p < PHASES; p++) {
			double t0 = T_FIRST + p * 60.0 / PHASES * 1.37;
			double t1 = t0 + lengths_s[l];
			double truth = power_trace_joules(tr, col, t0, t1) *
				       1000;
			uint64_t a = (uint64_t) llround(t0 * 1e9);
			uint64_t b = (uint64_t) llround(t1 * 1e9);
			rrd_energy_t e;
			bool complete;

			rrd_series_energy(&s, &any, a, b, &e);
			_add(&trap, e.energy_mj / truth - 1);
			rrd_series_window_energy(&s, &any, a, b, &e,
						 &complete);
			_add(&win, e.energy_mj / truth - 1);
		}
		printf("| %s | %.0f | %.2f | %.2f | %.3f | %.3f |\n",
		       power_trace_column_name(tr, col), lengths_s[l],
		       100 * trap.max, 100 * trap.sum / trap.n,
		       100 * win.max, 100 * win.sum / win.n);
	}
	free(w);
}

int main(int argc, char **argv)
{
	power_trace_t *tr = NULL;
	double step_s = argc > 2 ? atof(argv[2]) : 10;
	char err[512];

	if (argc < 2 || step_s <= 0) {
		fprintf(stderr, "usage: %s TRACE [STEP_S]\n", argv[0]);
		return 2;
	}
	if (power_trace_load(argv[1], &tr, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("RRD step %.0f s, %d phases per length; |error| in %%\n\n",
	       step_s, PHASES);
	printf("| column | window s | trapezoid max | trapezoid mean | window max | window mean |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (int c = 0; c < power_trace_columns(tr); c++)
		_column(tr, c, step_s);
	power_trace_free(tr);
	return 0;
}
