/*
 * rrd_conf.h - acct_gather.conf keys of acct_gather_energy/rrd (no Slurm).
 *
 * rrd_conf_desc describes the keys (conf_desc.h): the plugin glue hands
 * every value Slurm's parser collected to se_conf_set(); each key is one
 * row of a table (name, parser, printer), so a key is added in one place
 * and errors always read
 *   acct_gather.conf: EnergyRRDMaxAge=abc: not a number of seconds
 */
#ifndef SE_RRD_CONF_H
#define SE_RRD_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"

typedef enum {
	RRD_CF_AVERAGE = 0,
	RRD_CF_MIN,
	RRD_CF_MAX,
	RRD_CF_LAST,
} rrd_cf_t;

typedef struct {
	char *file_tmpl;	/* EnergyRRDFile: path, %n = node name */
	char *ds;		/* EnergyRRDDataSource; NULL: the first DS */
	rrd_cf_t cf;		/* EnergyRRDConsolidation (AVERAGE) */
	uint64_t period_ns;	/* EnergyRRDFrequency (10 s): poll period */
	uint64_t max_age_ns;	/* EnergyRRDMaxAge (60 s): older is a gap */
	char *daemon;		/* EnergyRRDDaemon; NULL: $RRDCACHED_ADDRESS,
				 * "none": read files directly */
	double min_w;		/* EnergyRRDMinWatt (0): rows below dropped */
	double max_w;		/* EnergyRRDMaxWatt (1e6): rows above dropped */
} rrd_conf_t;

/* The keys, and the calls below through void * (conf_desc.h). */
extern const se_conf_desc_t rrd_conf_desc;

/* An RRD data source name (rrdtool: 1-19 of a-z A-Z 0-9 _); 0 or -EINVAL
 * with "FILE: KEY=VALUE: not an RRD data source name ...". */
int rrd_conf_check_ds(const conf_where_t *w, const char *value, char *err,
		      size_t err_len);

/* Name of a consolidation function ("AVERAGE"). */
const char *rrd_cf_name(rrd_cf_t cf);

/* Fill the defaults. */
void rrd_conf_init(rrd_conf_t *c);
void rrd_conf_free(rrd_conf_t *c);

/* Checks across keys once all are set (EnergyRRDFile given, bounds in
 * order).  Returns 0 or -EINVAL with a message. */
int rrd_conf_check(const rrd_conf_t *c, const char *file, char *err,
		   size_t err_len);

#endif
