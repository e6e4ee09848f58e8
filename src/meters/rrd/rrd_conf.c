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

/* ---------------------------------------------------------- the keys */

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

static const se_conf_key_t keys[] = {
	/* a template (%n): bad escapes are refused at load time */
	SE_KEY_PATH("EnergyRRDFile", rrd_conf_t, file_tmpl, conf_template,
		    ""),
	SE_KEY_STR("EnergyRRDDataSource", rrd_conf_t, ds, rrd_conf_check_ds,
		   "(first)"),
	SE_KEY_ENUM("EnergyRRDConsolidation", rrd_conf_t, cf, cf_names),
	SE_KEY_SECONDS("EnergyRRDFrequency", rrd_conf_t, period_ns,
		       RRD_PERIOD_MIN_NS, RRD_PERIOD_MAX_NS),
	SE_KEY_SECONDS("EnergyRRDMaxAge", rrd_conf_t, max_age_ns,
		       SE_NS_PER_SEC, RRD_AGE_MAX_NS),
	/* an address ("unix:/run/rrdcached.sock", "host:port") or "none";
	 * empty would silently mean $RRDCACHED_ADDRESS */
	SE_KEY_STR("EnergyRRDDaemon", rrd_conf_t, daemon, conf_word,
		   "(RRDCACHED_ADDRESS)"),
	SE_KEY_REAL("EnergyRRDMinWatt", rrd_conf_t, min_w, 0, RRD_WATT_MAX),
	SE_KEY_REAL("EnergyRRDMaxWatt", rrd_conf_t, max_w, 0, RRD_WATT_MAX),
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
	se_conf_keys_free(keys, sizeof(keys) / sizeof(keys[0]), c);
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
