/*
 * power_trace.h - the shared power-trace format: time -> watts, per node.
 *
 * Every simulator (Modbus meter, ipmi_sim feeder, RRD feeder, fake NVML)
 * plays a trace, and every energy test compares what Slurm recorded with
 * the trace's true energy over the job's interval.  One implementation, here;
 * tests and scripts call it through the se-trace tool.
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
 * line and offending text (-EINVAL for a malformed file).
 */
int power_trace_load(const char *path, power_trace_t **out,
		     char *err, size_t err_len);
void power_trace_free(power_trace_t *tr);

/* Column index by name, or -1 (names are case-sensitive). */
int power_trace_column(const power_trace_t *tr, const char *name);
int power_trace_columns(const power_trace_t *tr);
const char *power_trace_column_name(const power_trace_t *tr, int col);

/* Watts of column col at trace time t (seconds). */
double power_trace_watts(const power_trace_t *tr, int col, double t);

/* True energy in joules of column col over [t0, t1] (exact integral). */
double power_trace_joules(const power_trace_t *tr, int col, double t0,
			  double t1);

#endif
