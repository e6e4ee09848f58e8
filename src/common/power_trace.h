/*
 * power_trace.h - the shared power-trace format: time -> watts, per node.
 *
 * Every simulator (Modbus meter, ipmi_sim feeder, RRD feeder, fake NVML)
 * plays a trace, and every energy test compares what Slurm recorded with
 * the trace's true energy over the job's interval.  The simulators' reading,
 * here (scripts call it through the se-trace tool); the tests' truth reads
 * traces with a second, independent implementation
 * (contribs/python/selab/trace.py), held to this one by
 * tests/integration/test_trace_truth.py.
 *
 * File format (text, UTF-8; see contribs/trace/FORMAT.md):
 *   # comment lines and blank lines are ignored
 *   @repeat SECONDS        optional: the trace repeats with this period
 *   time node1 node2 ...   header: "time" then one column name per series
 *   0     200   180        rows: time in seconds (non-decreasing, fractions
 *   10.5  250   180              allowed), then watts for each column
 *   10.5  100   180        a repeated time is a step (left value, right value)
 * Power is linear between rows; before the first row it is the first row's
 * value, after the last (without @repeat) the last row's value.
 * Time 0 is the trace's epoch, which the simulator is given at start.
 */
#ifndef SE_POWER_TRACE_H
#define SE_POWER_TRACE_H

#include <stddef.h>

typedef struct power_trace power_trace_t;

/*
 * Load a trace.  Returns 0, or -errno with a message in err naming the file,
 * line and offending text: -EINVAL for a malformed file
 * ("t.trace:7: time '9' goes back (previous row: 10)"), -ENOENT etc. for an
 * unreadable one ("t.trace: No such file or directory"), -ENOMEM.
 * Rules checked: a "time" header before any row, unique column names,
 * exactly one finite value >= 0 per column, non-decreasing times with at
 * most two rows per time, @repeat once, before the header, with every row
 * time inside [0, period].  Times and the period lie within
 * +/-POWER_TRACE_MAX_S, watts at most POWER_TRACE_MAX_W: energies then stay
 * below 2e16 J, where a double still resolves a few joules (beyond, the
 * integral of a short interval drowned in rounding: tests/fuzz found a
 * 1e64 s @repeat giving -18 J).
 */
#define POWER_TRACE_MAX_S	1e9	/* about 31 years */
#define POWER_TRACE_MAX_W	1e7	/* 10 MW */
int power_trace_load(const char *path, power_trace_t **out,
		     char *err, size_t err_len);
void power_trace_free(power_trace_t *tr);

/* Column index by name, or -1 (names are case-sensitive).  column_name is
 * NULL for an index out of range. */
int power_trace_column(const power_trace_t *tr, const char *name);
int power_trace_columns(const power_trace_t *tr);
const char *power_trace_column_name(const power_trace_t *tr, int col);

/* Watts of column col at trace time t (seconds); at a step time, the
 * right-hand (new) value.  With @repeat the trace is periodic for all t,
 * negative included.  NaN for a bad col. */
double power_trace_watts(const power_trace_t *tr, int col, double t);

/* True energy in joules of column col over [t0, t1] (exact integral of
 * the piecewise-linear power, to double precision); negative when t1 < t0,
 * NaN for a bad col. */
double power_trace_joules(const power_trace_t *tr, int col, double t0,
			  double t1);

/* Energy in joules of min(column col, cap_w) over [t0, t1]: the power of a
 * node whose demand is the trace and whose cap is cap_w (a load-following
 * meter, issue #45), exact: each row interval's line split where it
 * crosses the cap.  A negative cap counts as 0; NaN for a bad col or a NaN
 * cap; negative when t1 < t0. */
double power_trace_joules_capped(const power_trace_t *tr, int col, double t0,
				 double t1, double cap_w);

#endif
