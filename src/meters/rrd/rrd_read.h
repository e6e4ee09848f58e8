/*
 * rrd_read.h - fetch one data source of an RRD file into an rrd_series_t.
 *
 * The only code of the suite that calls librrd to read.  Thread-safe:
 * rrd_fetch_r() keeps its error in a per-thread context, so workers read
 * files in parallel.
 *
 * With rrdcached (large sites run it so that collectors do not rewrite every
 * file every step), rows still in the daemon's cache are not on disk yet: a
 * direct read would see them as NaN.  The file is first flushed through the
 * daemon (rrdc_flush_if_daemon, as "rrdtool graph --daemon" does), then read
 * directly, so the file must be visible here under the same path.  Debian's
 * librrd exports only the rrdc_* calls, which share one connection under a
 * lock: the flushes are serialised, the reads are not.
 */
#ifndef SE_RRD_READ_H
#define SE_RRD_READ_H

#include <stddef.h>
#include <stdint.h>

#include "rrd_series.h"

typedef struct {
	rrd_series_t s;		/* s.watts points into values */
	double *values;		/* one column, n_rows long */
} rrd_fetched_t;

typedef struct {
	const char *path;	/* absolute path (rrdcached resolves relative
				 * paths against its own base directory) */
	const char *ds;		/* data source name; NULL: the first one */
	const char *cf;		/* consolidation function: "AVERAGE", ... */
} rrd_what_t;

/*
 * Fetch (start_s, end_s] (wall-clock seconds) of what->ds, flushing it
 * through rrdcached at daemon first (NULL: no daemon).  Returns 0, or:
 *   -ENOENT  no such file,
 *   -ENOKEY  no such data source in it (the names it has are in err),
 *   -EIO     librrd refused (corrupt, truncated, not an RRD),
 *   -ECOMM   the daemon failed to flush the file,
 * with a message in err naming the file.  out is freed with rrd_fetched_free.
 */
int rrd_read_fetch(const char *daemon, const rrd_what_t *what,
		   int64_t start_s, int64_t end_s, rrd_fetched_t *out,
		   char *err, size_t err_len);

void rrd_fetched_free(rrd_fetched_t *f);

#endif
