/*
 * rrd_conf.c - acct_gather.conf keys of acct_gather_energy/rrd.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "rrd_conf.h"
#include "se_time.h"

#define RRD_PERIOD_MIN_NS	(100 * SE_NS_PER_MS)
#define RRD_PERIOD_MAX_NS	(3600 * SE_NS_PER_SEC)
#define RRD_AGE_MAX_NS		(86400 * SE_NS_PER_SEC)
#define RRD_WATT_MAX		1e9

static const char *const cf_names[] = { "AVERAGE", "MIN", "MAX", "LAST",
					NULL };

/* ---------------------------------------------------------- setters */

static int _set_string(char **dst, const char *value)
{
	char *s = strdup(value);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int _set_file(void *conf, const conf_where_t *w, const char *value,
		     char *err, size_t err_len)
{
	rrd_conf_t *c = conf;
	char probe[4096];
	int rc;

	if (value[0] != '/') {	/* slurmd's working directory is no base */
		snprintf(err, err_len, "%s: %s=%s: must be an absolute path",
			 w->file, w->key, value);
		return -EINVAL;
	}
	/* Reject bad % escapes now, at load time, not on the first read. */
	rc = conf_expand(w, value, "node", probe, sizeof(probe), err, err_len);
	if (rc)
		return rc;
	return _set_string(&c->file_tmpl, value);
}

int rrd_conf_check_ds(const conf_where_t *w, const char *value, char *err,
		      size_t err_len)
{
	/* rrdtool's own rule: 1 to 19 characters of [a-zA-Z0-9_]. */
	size_t n = strlen(value);

	if (!n || n > 19 || strspn(value, "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n) {
		snprintf(err, err_len, "%s: %s=%s: not an RRD data source name "
			 "(1-19 of a-z A-Z 0-9 _)", w->file, w->key, value);
		return -EINVAL;
	}
	return 0;
}

static int _set_ds(void *conf, const conf_where_t *w, const char *value,
		   char *err, size_t err_len)
{
	rrd_conf_t *c = conf;
	int rc = rrd_conf_check_ds(w, value, err, err_len);

	return rc ? rc : _set_string(&c->ds, value);
}

static int _set_cf(void *conf, const conf_where_t *w, const char *value,
		   char *err, size_t err_len)
{
	rrd_conf_t *c = conf;
	int idx, rc;

	rc = conf_enum(w, value, cf_names, &idx, err, err_len);
	if (!rc)
		c->cf = (rrd_cf_t) idx;
	return rc;
}

static int _set_period(void *conf, const conf_where_t *w, const char *value,
		       char *err, size_t err_len)
{
	rrd_conf_t *c = conf;

	return conf_seconds_ns(w, value, RRD_PERIOD_MIN_NS, RRD_PERIOD_MAX_NS,
			       &c->period_ns, err, err_len);
}

static int _set_max_age(void *conf, const conf_where_t *w, const char *value,
			char *err, size_t err_len)
{
	rrd_conf_t *c = conf;

	return conf_seconds_ns(w, value, SE_NS_PER_SEC, RRD_AGE_MAX_NS,
			       &c->max_age_ns, err, err_len);
}

static int _set_daemon(void *conf, const conf_where_t *w, const char *value,
		       char *err, size_t err_len)
{
	rrd_conf_t *c = conf;
	/* an address ("unix:/run/rrdcached.sock", "host:port") or "none";
	 * empty would silently mean $RRDCACHED_ADDRESS */
	int rc = conf_word(w, value, err, err_len);

	return rc ? rc : _set_string(&c->daemon, value);
}

static int _set_min_w(void *conf, const conf_where_t *w, const char *value,
		      char *err, size_t err_len)
{
	rrd_conf_t *c = conf;

	return conf_double(w, value, 0, RRD_WATT_MAX, &c->min_w, err, err_len);
}

static int _set_max_w(void *conf, const conf_where_t *w, const char *value,
		      char *err, size_t err_len)
{
	rrd_conf_t *c = conf;

	return conf_double(w, value, 0, RRD_WATT_MAX, &c->max_w, err, err_len);
}

/* ---------------------------------------------------------- showers */

static void _show_file(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%s", c->file_tmpl ? c->file_tmpl : "");
}

static void _show_ds(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%s", c->ds ? c->ds : "(first)");
}

static void _show_cf(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%s", rrd_cf_name(c->cf));
}

static void _show_period(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%g", (double) c->period_ns / SE_NS_PER_SEC);
}

static void _show_max_age(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%g", (double) c->max_age_ns / SE_NS_PER_SEC);
}

static void _show_daemon(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%s", c->daemon ? c->daemon : "(RRDCACHED_ADDRESS)");
}

static void _show_min_w(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%g", c->min_w);
}

static void _show_max_w(const void *conf, char *buf, size_t len)
{
	const rrd_conf_t *c = conf;

	snprintf(buf, len, "%g", c->max_w);
}

static const se_conf_key_t keys[] = {
	{ "EnergyRRDFile",		_set_file,	_show_file },
	{ "EnergyRRDDataSource",	_set_ds,	_show_ds },
	{ "EnergyRRDConsolidation",	_set_cf,	_show_cf },
	{ "EnergyRRDFrequency",		_set_period,	_show_period },
	{ "EnergyRRDMaxAge",		_set_max_age,	_show_max_age },
	{ "EnergyRRDDaemon",		_set_daemon,	_show_daemon },
	{ "EnergyRRDMinWatt",		_set_min_w,	_show_min_w },
	{ "EnergyRRDMaxWatt",		_set_max_w,	_show_max_w },
};

/* ---------------------------------------------------------- public */

const char *rrd_cf_name(rrd_cf_t cf)
{
	return (unsigned) cf < 4 ? cf_names[cf] : "AVERAGE";
}

void rrd_conf_init(rrd_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->cf = RRD_CF_AVERAGE;
	c->period_ns = 10 * SE_NS_PER_SEC;
	c->max_age_ns = 60 * SE_NS_PER_SEC;
	c->min_w = 0;
	c->max_w = 1e6;
}

void rrd_conf_free(rrd_conf_t *c)
{
	free(c->file_tmpl);
	free(c->ds);
	free(c->daemon);
	memset(c, 0, sizeof(*c));
}

int rrd_conf_check(const rrd_conf_t *c, const char *file, char *err,
		   size_t err_len)
{
	if (!c->file_tmpl || !c->file_tmpl[0]) {
		snprintf(err, err_len, "%s: EnergyRRDFile= is required "
			 "(e.g. /var/lib/collectd/rrd/%%n/power/power.rrd)",
			 file);
		return -EINVAL;
	}
	if (c->min_w >= c->max_w) {
		snprintf(err, err_len, "%s: EnergyRRDMinWatt=%g is not below "
			 "EnergyRRDMaxWatt=%g", file, c->min_w, c->max_w);
		return -EINVAL;
	}
	if (c->max_age_ns < c->period_ns) {
		snprintf(err, err_len, "%s: EnergyRRDMaxAge=%g is shorter than "
			 "EnergyRRDFrequency=%g: every row would be stale",
			 file, (double) c->max_age_ns / SE_NS_PER_SEC,
			 (double) c->period_ns / SE_NS_PER_SEC);
		return -EINVAL;
	}
	return 0;
}

SE_CONF_DESC_DEFINE(rrd_conf_desc, rrd_conf, rrd_conf_t, "rrd",
		    "acct_gather.conf", keys);
