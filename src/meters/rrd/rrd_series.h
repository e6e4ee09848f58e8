/*
 * rrd_series.h - energy from an RRD power series (no Slurm, no librrd).
 *
 * Shared by acct_gather_energy/rrd (slurmd) and ext_sensors/meters
 * (slurmctld).  A series is one data source of an rrd_fetch() answer: row i
 * holds the consolidated (normally AVERAGE) power in watts over the step
 * (start + i x step, start + (i + 1) x step], NaN where rrdtool knows nothing.
 *
 * Each valid row is taken as a sample at the midpoint of its step: the mean
 * of a power that is linear across the step equals its value there, so the
 * trapezoid over those samples reproduces the interior energy of a
 * piecewise-linear power exactly and conserves the total of the rows.  A row
 * that is NaN, or outside [min_w, max_w], is dropped: the trapezoid bridges
 * the valid samples on either side (and the bridged time is reported).  An
 * interval end that falls between samples is interpolated; one before the
 * first or after the last valid sample is held at that sample's power (and
 * the held time is reported, for the caller to bound).
 *
 * Error bound (documented for admins in ext_sensors_meters(5)): a power step
 * of dP watts inside the RRD step that contains t0 or t1 is misplaced by at
 * most half a step, so each end adds at most step x |dP| / 4 joules of
 * error; with a 10 s step and a 100 W swing, 250 J per end (1.4 % of a 60 s
 * job at 300 W).  Away from such changes the result is exact to the rows.
 */
#ifndef SE_RRD_SERIES_H
#define SE_RRD_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	int64_t start_s;	/* rrd_fetch start: row 0 ends at start+step */
	uint64_t step_s;	/* > 0 */
	size_t n_rows;
	const double *watts;	/* n_rows values, NaN = unknown */
} rrd_series_t;

typedef struct {
	double min_w;		/* rows below are dropped (MinWatt) */
	double max_w;		/* rows above are dropped (MaxWatt) */
} rrd_limits_t;

/* A valid sample: wall-clock instant (ns since the epoch) and watts. */
typedef struct {
	uint64_t t_ns;
	double watts;
} rrd_sample_t;

typedef struct {
	uint64_t energy_mj;	/* energy over [t0, t1] */
	uint64_t bridged_ns;	/* part of [t0, t1] bridged over dropped rows
				 * (beyond the normal one-step spacing) */
	uint64_t held_ns;	/* part of [t0, t1] before the first or after
				 * the last valid sample, held flat */
	unsigned n_used;	/* valid samples inside [t0, t1] */
	unsigned n_dropped;	/* NaN or out-of-range rows in the series */
} rrd_energy_t;

/* Midpoint instant of row i, in wall-clock ns. */
uint64_t rrd_series_row_ns(const rrd_series_t *s, size_t i);

/* Is a value a usable power under the limits (finite, within bounds)? */
bool rrd_value_valid(double watts, const rrd_limits_t *lim);

/*
 * Energy over [t0_ns, t1_ns] (wall-clock ns) as described above.
 * Returns 0; -EINVAL for t1_ns < t0_ns or a bad series; -ENODATA when the
 * series holds no valid row (out is zeroed but for n_dropped).
 */
int rrd_series_energy(const rrd_series_t *s, const rrd_limits_t *lim,
		      uint64_t t0_ns, uint64_t t1_ns, rrd_energy_t *out);

/*
 * Energy over [t0_ns, t1_ns] the way a step's window is computed once the
 * rows around it are written (acct_gather_energy/rrd in slurmstepd).  A row
 * is the mean power over its step, so a row wholly inside the window counts
 * exactly (mean x step).  A row cut by t0 or t1 counts the matching part of
 * a parabola over the row that keeps the row's mean and meets its
 * neighbours at estimated edge powers (the piecewise-parabolic
 * reconstruction of Colella & Woodward's PPM scheme): the edge between rows
 * a and b is 7/12 (a + b) - 1/12 (the next row out on each side) where those
 * exist, else (a + b) / 2, else the row's own mean; a parabola that would
 * dip below min_w falls back to the flat mean.  Power that varies smoothly
 * over a few steps is then reproduced to third order: the test trace's
 * +/-150 W sine of 60 s period at a 10 s step gives 30 s windows within
 * 0.4 %, where the midpoint trapezoid above errs by up to 7.7 %
 * (bench/rrd/rrd_window_bench).
 *
 * Invalid rows between valid ones take the linear interpolation of the
 * valid means on either side (bridged_ns); time before the first or after
 * the last valid row is held at that row's mean (held_ns).  *complete is
 * true when a valid row lies beyond the rows holding t0 and t1 on their
 * outer sides, so no end is held and both end rows have real edges.
 * Returns 0, -EINVAL (t1 < t0, bad series), -ENOMEM, or -ENODATA (no valid
 * row).
 */
int rrd_series_window_energy(const rrd_series_t *s, const rrd_limits_t *lim,
			     uint64_t t0_ns, uint64_t t1_ns,
			     rrd_energy_t *out, bool *complete);

/*
 * The newest valid sample (at or before the series end).  Returns 0 or
 * -ENODATA when there is none.
 */
int rrd_series_last(const rrd_series_t *s, const rrd_limits_t *lim,
		    rrd_sample_t *out);

/*
 * Visit, oldest first, the valid samples strictly after after_ns; fn returns
 * 0 to go on, anything else stops the walk and is returned.  Returns 0 or
 * fn's value; *n_dropped (if not NULL) counts the dropped rows after after_ns.
 */
typedef int (*rrd_sample_fn)(void *arg, const rrd_sample_t *sample);

int rrd_series_each_after(const rrd_series_t *s, const rrd_limits_t *lim,
			  uint64_t after_ns, rrd_sample_fn fn, void *arg,
			  unsigned *n_dropped);

/* Trapezoid energy in mJ between two samples (t1 >= t0). */
double rrd_trapezoid_mj(const rrd_sample_t *a, const rrd_sample_t *b);

#endif
