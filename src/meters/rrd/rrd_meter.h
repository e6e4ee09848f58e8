/*
 * rrd_meter.h - an RRD file written by a monitoring system, as a meter.
 *
 * The backend of acct_gather_energy/rrd behind meter_ops_t: each read
 * fetches the newest rows of one data source (rrd_fetch_r, or rrdcached's
 * FETCH) and hands the sampler
 *   - a 64-bit energy counter in mJ: the trapezoid over every valid row so
 *     far (rrd_series.h), so that rows never get lost when two arrive
 *     between reads or a read is late;
 *   - the power of the newest valid row;
 *   - the row's own instant (its step's midpoint, wall clock mapped to the
 *     monotonic clock), not the time of the read: a collector writes a row
 *     a step or more after the power it averages.
 * A newest valid row older than EnergyRRDMaxAge is not a value: the read
 * fails with -ESTALE and the sampler fills the gap.  Until a new row is
 * written, reads return -EAGAIN ("no new row"): poll at the RRD step.
 */
#ifndef SE_RRD_METER_H
#define SE_RRD_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_acc.h"
#include "meter.h"
#include "rrd_conf.h"
#include "rrd_series.h"

typedef struct rrd_meter rrd_meter_t;

extern const meter_ops_t rrd_meter_ops;

/*
 * A meter for node (expands %n in c->file_tmpl).  No I/O.  Returns NULL
 * with a message in err (bad template, ENOMEM).
 */
rrd_meter_t *rrd_meter_create(const rrd_conf_t *c, const char *node,
			      char *err, size_t err_len);
void rrd_meter_destroy(rrd_meter_t *m);

/* The file this meter reads ("…/n1/power.rrd"). */
const char *rrd_meter_path(const rrd_meter_t *m);

/* The counter the meter's readings carry: 64 bits of 1 mJ. */
void rrd_meter_counter_spec(counter_spec_t *spec);

/*
 * The part of a read after the fetch (what tests drive): take the samples
 * of s newer than the last one taken, at wall-clock now_wall_ns.  Returns 0
 * with a reading in out (t_ns still wall clock), -EAGAIN (nothing new),
 * -ESTALE (newest valid row older than max age) or -ENODATA (no valid row
 * yet), with a reason in msg.
 */
int rrd_meter_absorb(rrd_meter_t *m, const rrd_series_t *s,
		     uint64_t now_wall_ns, meter_reading_t *out, char *msg,
		     size_t msg_len);

/*
 * Energy over [t0_ns, t1_ns] (wall-clock ns) straight from the file, the
 * way a step's own window is computed once the rows covering it exist
 * (acct_gather_energy_rrd(5), STEP ENERGY).  Fetches from two lookbacks
 * before t0 to now.  *complete is true when valid samples lie on both
 * sides of both ends (rrd_series_window_energy).
 * Returns 0, or the negative errno of rrd_read_fetch / -ENODATA (no valid
 * row at all), with the reason in msg.
 */
int rrd_meter_window(rrd_meter_t *m, uint64_t t0_ns, uint64_t t1_ns,
		     rrd_energy_t *out, bool *complete, char *msg,
		     size_t msg_len);

#endif
