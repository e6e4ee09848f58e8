/*
 * rrd_meter.c - an RRD file as a meter (see rrd_meter.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "rrd_meter.h"
#include "rrd_read.h"
#include "se_log.h"
#include "se_time.h"

/* How far back a read looks when it has no row yet, or after a long gap. */
#define RRD_LOOKBACK_MAX_S	3600
/* Extra lookback of a window read, beyond two MaxAge. */
#define RRD_WINDOW_SLACK_S	20
/* Runs of dropped rows: at most this many lines per interval. */
#define RRD_DROP_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define RRD_DROP_LOG_BURST		3

struct rrd_meter {
	char *path;
	char *ds;
	char *daemon;		/* NULL: read the file directly */
	const char *cf;
	rrd_limits_t lim;
	uint64_t max_age_ns;

	bool have_prev;
	rrd_sample_t prev;	/* newest sample taken, wall-clock ns */
	double counter_mj;	/* trapezoid over all samples taken */
	uint64_t step_s;	/* of the last fetch (0 before the first) */

	/* Dropped rows (NaN, outside Min/MaxWatt): marked once per run. */
	uint64_t dropped_upto_ns; /* last row of the last run marked */
	se_ratelimit_t drop_rl;
};

/* Accumulates the samples of one absorb() into the meter. */
typedef struct {
	rrd_meter_t *m;
	unsigned n_new;
} absorb_t;

/* ---------------------------------------------------------- absorb */

static int _take_sample(void *arg, const rrd_sample_t *smp)
{
	absorb_t *a = arg;
	rrd_meter_t *m = a->m;

	if (m->have_prev)
		m->counter_mj += rrd_trapezoid_mj(&m->prev, smp);
	m->prev = *smp;
	m->have_prev = true;
	a->n_new++;
	return 0;
}

/* A run of dropped rows being walked. */
typedef struct {
	uint64_t first_ns, last_ns;
	unsigned n_nan, n_low, n_high;
} drop_run_t;

/*
 * Mark each run of dropped rows (NaN, below EnergyRRDMinWatt, above
 * EnergyRRDMaxWatt) once, as a valid row closes it: one line with its
 * length and why, rate-limited.  Rows not yet followed by a valid one may
 * just be unwritten (the step in progress): a run that never closes is the
 * sampler's stale-data failure instead.  Rows are fetched again on every
 * read; a closed run is never marked twice.
 */
static void _mark_dropped(rrd_meter_t *m, const rrd_series_t *s)
{
	drop_run_t run = { 0 };
	uint64_t after;

	if (!m->have_prev)
		return;		/* no data yet: not a fault (see -ENODATA) */
	after = m->prev.t_ns > m->dropped_upto_ns ? m->prev.t_ns :
						    m->dropped_upto_ns;
	for (size_t i = 0; i < s->n_rows; i++) {
		uint64_t t = rrd_series_row_ns(s, i);
		double w = s->watts[i];

		if (t <= after)
			continue;
		if (!rrd_value_valid(w, &m->lim)) {
			if (!run.first_ns)
				run.first_ns = t;
			run.last_ns = t;
			if (!isfinite(w))
				run.n_nan++;
			else if (w < m->lim.min_w)
				run.n_low++;
			else
				run.n_high++;
			continue;
		}
		if (!run.first_ns)
			continue;
		m->dropped_upto_ns = run.last_ns;
		se_log_limited(&m->drop_rl, se_mono_ns(), SE_LOG_ERROR,
			       "rrd %s: %u row(s) dropped from %lld to %lld s (%u unknown, %u below EnergyRRDMinWatt, %u above EnergyRRDMaxWatt); no energy counted from them, the gap bridged linearly between the valid rows on either side",
			       m->path, run.n_nan + run.n_low + run.n_high,
			       (long long) (run.first_ns / SE_NS_PER_SEC),
			       (long long) (run.last_ns / SE_NS_PER_SEC),
			       run.n_nan, run.n_low, run.n_high);
		memset(&run, 0, sizeof(run));
	}
}

int rrd_meter_absorb(rrd_meter_t *m, const rrd_series_t *s,
		     uint64_t now_wall_ns, meter_reading_t *out, char *msg,
		     size_t msg_len)
{
	absorb_t a = { m, 0 };
	uint64_t age_ns;

	m->step_s = s->step_s;
	_mark_dropped(m, s);
	rrd_series_each_after(s, &m->lim, m->have_prev ? m->prev.t_ns : 0,
			      _take_sample, &a, NULL);
	if (!m->have_prev) {
		snprintf(msg, msg_len, "%s: no valid row in the last %zu",
			 m->path, s->n_rows);
		return -ENODATA;
	}

	age_ns = now_wall_ns > m->prev.t_ns ? now_wall_ns - m->prev.t_ns : 0;
	if (age_ns > m->max_age_ns) {
		snprintf(msg, msg_len, "%s: newest valid row is %.0f s old "
			 "(EnergyRRDMaxAge %.0f s)", m->path,
			 (double) age_ns / SE_NS_PER_SEC,
			 (double) m->max_age_ns / SE_NS_PER_SEC);
		return -ESTALE;
	}
	if (!a.n_new) {
		snprintf(msg, msg_len, "%s: no new row yet", m->path);
		return -EALREADY;
	}

	memset(out, 0, sizeof(*out));
	out->t_ns = m->prev.t_ns;
	out->has_power = true;
	out->power_mw = (uint64_t) llround(m->prev.watts * 1000.0);
	out->has_counter = true;
	out->counter_raw = (uint64_t) llround(m->counter_mj);
	return 0;
}

/* ---------------------------------------------------------- meter_ops */

/* Fetch window: from just before the newest sample taken, bounded. */
static int64_t _fetch_start_s(const rrd_meter_t *m, int64_t now_s)
{
	int64_t oldest = now_s - RRD_LOOKBACK_MAX_S;
	int64_t from;

	if (!m->have_prev)
		return now_s - (int64_t) (m->max_age_ns / SE_NS_PER_SEC) -
		       2 * (int64_t) (m->step_s ? m->step_s : 10);
	from = (int64_t) (m->prev.t_ns / SE_NS_PER_SEC) -
	       2 * (int64_t) m->step_s;
	return from > oldest ? from : oldest;
}

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	rrd_meter_t *m = dev;
	rrd_what_t what = { m->path, m->ds, m->cf };
	uint64_t now_ns = se_wall_ns();
	int64_t now_s = (int64_t) (now_ns / SE_NS_PER_SEC);
	rrd_fetched_t f;
	int rc;

	rc = rrd_read_fetch(m->daemon, &what, _fetch_start_s(m, now_s), now_s,
			    &f, msg, msg_len);
	if (rc)
		return rc;
	rc = rrd_meter_absorb(m, &f.s, now_ns, out, msg, msg_len);
	rrd_fetched_free(&f);
	/*
	 * No new row yet: -EALREADY, the sampler just waits.  No valid or
	 * only stale rows: the file is fine, there is just no value; -EAGAIN
	 * keeps it open and the sampler fills the gap.
	 */
	if (rc)
		return rc == -EALREADY ? rc : -EAGAIN;

	/* The sampler's time is monotonic; the row's is the wall clock. */
	out->t_ns = se_wall_to_mono_ns(out->t_ns);
	return 0;
}

/* ---------------------------------------------------------- a window */

int rrd_meter_window(rrd_meter_t *m, uint64_t t0_ns, uint64_t t1_ns,
		     rrd_energy_t *out, bool *complete, char *msg,
		     size_t msg_len)
{
	rrd_what_t what = { m->path, m->ds, m->cf };
	int64_t now_s = (int64_t) (se_wall_ns() / SE_NS_PER_SEC);
	/* The two rows before the one holding t0 shape its left edge: look
	 * back far enough for them at any step up to MaxAge. */
	int64_t lookback_s = 2 * (int64_t) (m->max_age_ns / SE_NS_PER_SEC) +
			     RRD_WINDOW_SLACK_S;
	rrd_fetched_t f;
	int rc;

	*complete = false;
	rc = rrd_read_fetch(m->daemon, &what,
			    (int64_t) (t0_ns / SE_NS_PER_SEC) - lookback_s,
			    now_s, &f, msg, msg_len);
	if (rc)
		return rc;
	rc = rrd_series_window_energy(&f.s, &m->lim, t0_ns, t1_ns, out,
				      complete);
	rrd_fetched_free(&f);
	if (rc == -ENODATA) {
		snprintf(msg, msg_len, "%s: no valid row around the window",
			 m->path);
		return rc;
	}
	if (rc) {
		snprintf(msg, msg_len, "%s: bad window", m->path);
		return rc;
	}
	return 0;
}

const meter_ops_t rrd_meter_ops = {
	.name = "rrd",
	.open = NULL,	/* nothing to connect: each read opens the file */
	.read = _read,
	.close = NULL,
};

/* ---------------------------------------------------------- public */

static char *_daemon_address(const rrd_conf_t *c)
{
	const char *addr = c->daemon ? c->daemon : getenv("RRDCACHED_ADDRESS");

	if (!addr || !addr[0] || !strcmp(addr, "none"))
		return NULL;
	return strdup(addr);
}

rrd_meter_t *rrd_meter_create(const rrd_conf_t *c, const char *node,
			      char *err, size_t err_len)
{
	conf_where_t w = { "acct_gather.conf", "EnergyRRDFile", 0 };
	char path[4096];
	rrd_meter_t *m;

	if (conf_expand(&w, c->file_tmpl, node, path, sizeof(path), err,
			err_len))
		return NULL;
	if (!(m = calloc(1, sizeof(*m))))
		goto nomem;
	m->path = strdup(path);
	m->ds = c->ds ? strdup(c->ds) : NULL;
	m->daemon = _daemon_address(c);
	if (!m->path || (c->ds && !m->ds))
		goto nomem;
	m->cf = rrd_cf_name(c->cf);
	m->lim.min_w = c->min_w;
	m->lim.max_w = c->max_w;
	m->max_age_ns = c->max_age_ns;
	m->drop_rl = (se_ratelimit_t) SE_RATELIMIT_INIT(
		RRD_DROP_LOG_INTERVAL_NS, RRD_DROP_LOG_BURST);
	return m;
nomem:
	rrd_meter_destroy(m);
	snprintf(err, err_len, "rrd meter for %s: out of memory", node);
	return NULL;
}

void rrd_meter_destroy(rrd_meter_t *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->ds);
	free(m->daemon);
	free(m);
}

const char *rrd_meter_path(const rrd_meter_t *m)
{
	return m->path;
}

void rrd_meter_counter_spec(counter_spec_t *spec)
{
	spec->width_bits = 64;
	spec->mj_per_unit = 1.0;
	spec->significand_bits = 0;
}
