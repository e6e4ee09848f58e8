/*
 * rrd_read.c - fetch one data source of an RRD file (see rrd_read.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rrd.h>
#include <rrd_client.h>

#include "rrd_read.h"

/* What rrd_fetch hands back, freed in one place. */
typedef struct {
	time_t start, end;
	unsigned long step, ds_cnt;
	char **ds_names;
	rrd_value_t *data;
} raw_fetch_t;

/* ---------------------------------------------------------- helpers */

static void _raw_free(raw_fetch_t *r)
{
	for (unsigned long i = 0; r->ds_names && i < r->ds_cnt; i++)
		free(r->ds_names[i]);
	free(r->ds_names);
	free(r->data);
}

static int _flush(const char *daemon, const rrd_what_t *what, char *err,
		  size_t err_len)
{
	const char *why;

	rrd_clear_error();
	if (!rrdc_flush_if_daemon(daemon, what->path))
		return 0;
	why = rrd_test_error() ? rrd_get_error() : "";
	snprintf(err, err_len, "%s: rrdcached %s: flush failed: %s",
		 what->path, daemon, why[0] ? why : "unknown error");
	rrd_clear_error();
	return -ECOMM;
}

static int _raw_fetch(const char *daemon, const rrd_what_t *what,
		      raw_fetch_t *r, char *err, size_t err_len)
{
	struct stat st;
	int rc;

	/*
	 * librrd reports a missing file only as text; tell it apart first so
	 * that the caller can say "missing" rather than "corrupt".
	 */
	if (stat(what->path, &st) < 0) {
		int e = errno;

		snprintf(err, err_len, "%s: %s", what->path, strerror(e));
		return -e;
	}
	if (daemon && (rc = _flush(daemon, what, err, err_len)))
		return rc;
	rrd_clear_error();
	if (rrd_fetch_r(what->path, what->cf, &r->start, &r->end, &r->step,
			&r->ds_cnt, &r->ds_names, &r->data)) {
		const char *why = rrd_test_error() ? rrd_get_error() : "";

		snprintf(err, err_len, "%s: rrd fetch %s failed: %s",
			 what->path, what->cf, why[0] ? why : "unknown error");
		rrd_clear_error();
		return -EIO;
	}
	if (!r->step || r->end < r->start || !r->ds_cnt) {
		snprintf(err, err_len, "%s: rrd fetch gave no data", what->path);
		return -EIO;
	}
	return 0;
}

/* Column of what->ds, or -ENOKEY with the available names in err. */
static int _ds_column(const rrd_what_t *what, const raw_fetch_t *r,
		      char *err, size_t err_len)
{
	size_t off;

	if (!what->ds)
		return 0;
	for (unsigned long i = 0; i < r->ds_cnt; i++)
		if (!strcmp(r->ds_names[i], what->ds))
			return (int) i;

	off = (size_t) snprintf(err, err_len, "%s: no data source \"%s\" (has",
				what->path, what->ds);
	for (unsigned long i = 0; i < r->ds_cnt && off < err_len; i++)
		off += (size_t) snprintf(err + off, err_len - off, " %s",
					 r->ds_names[i]);
	if (off < err_len)
		snprintf(err + off, err_len - off, ")");
	return -ENOKEY;
}

/* ---------------------------------------------------------- public */

int rrd_read_fetch(const char *daemon, const rrd_what_t *what,
		   int64_t start_s, int64_t end_s, rrd_fetched_t *out,
		   char *err, size_t err_len)
{
	raw_fetch_t r = { .start = (time_t) start_s, .end = (time_t) end_s,
			  .step = 1 };
	size_t n_rows;
	int col, rv;

	memset(out, 0, sizeof(*out));
	if ((rv = _raw_fetch(daemon, what, &r, err, err_len)))
		goto out;
	if ((col = _ds_column(what, &r, err, err_len)) < 0) {
		rv = col;
		goto out;
	}

	n_rows = (size_t) (r.end - r.start) / r.step;
	out->values = calloc(n_rows ? n_rows : 1, sizeof(double));
	if (!out->values) {
		rv = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_rows; i++)
		out->values[i] = r.data[i * r.ds_cnt + (size_t) col];

	out->s.start_s = (int64_t) r.start;
	out->s.step_s = r.step;
	out->s.n_rows = n_rows;
	out->s.watts = out->values;
out:
	_raw_free(&r);
	return rv;
}

void rrd_fetched_free(rrd_fetched_t *f)
{
	free(f->values);
	memset(f, 0, sizeof(*f));
}
