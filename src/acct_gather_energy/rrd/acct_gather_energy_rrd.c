/*
 * acct_gather_energy_rrd.c - acct_gather_energy/rrd: node energy from the
 * RRD file a monitoring system (collectd, Ganglia, Munin, a PDU poller)
 * writes for this node.  The RRD path of every Slurm release, and the only
 * one from 24.05 on, where ext_sensors is gone.
 *
 * The thin Slurm side: acct_gather.conf keys in and out (rrd_conf.c checks
 * them), and an rrd_meter_t for this node handed to the shared glue
 * (../common/se_energy.c), which samples it in slurmd and computes step
 * energy in slurmstepd.  See acct_gather_energy_rrd(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat.h"

#include "rrd_conf.h"
#include "rrd_meter.h"
#include "se_energy.h"
#include "se_time.h"

const char plugin_name[] = "AcctGatherEnergy RRD plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/rrd";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Sampling policy (documented in acct_gather_energy_rrd(5)). */
#define HISTORY_NS	(3600 * SE_NS_PER_SEC)	/* ring: ~1 h */
#define HISTORY_MIN	64
#define HISTORY_MAX	16384
#define DEADLINE_MAX_NS	(5 * SE_NS_PER_SEC)

static rrd_conf_t rconf;
static char describe[512];	/* the meter, for se_energy's load line */

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	rrd_meter_destroy(dev);
}

static void _sampler_config(const rrd_meter_t *m, sampler_config_t *cfg)
{
	uint64_t history = HISTORY_NS / rconf.period_ns;

	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ns = rconf.period_ns;
	/* A local file read takes milliseconds; a slow one must not make
	 * the next poll late. */
	cfg->deadline_ns = rconf.period_ns < DEADLINE_MAX_NS ?
		rconf.period_ns : DEADLINE_MAX_NS;
	/* A file that has no valid row is -EAGAIN, not a sick meter: never
	 * back off beyond the poll period, or rows would be read late. */
	cfg->backoff_max_ns = rconf.period_ns;
	cfg->use_counter = true;
	rrd_meter_counter_spec(&cfg->counter);
	cfg->acc.history = history < HISTORY_MIN ? HISTORY_MIN :
		history > HISTORY_MAX ? HISTORY_MAX : history;
	/* Rows up to MaxAge apart are data; a longer silence is a gap, and
	 * the newest power is not extrapolated past MaxAge either. */
	cfg->acc.gap_ns = rconf.max_age_ns;
	cfg->acc.max_power_mw = (uint64_t) (rconf.max_w * 1000.0);
	cfg->acc.max_extrapolate_ns = rconf.max_age_ns;
	cfg->label = rrd_meter_path(m);
}

/* se_energy_make_meter_fn: this node's meter, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	rrd_meter_t *m = rrd_meter_create(&rconf, node, err, err_len);

	if (!m)
		return -EINVAL;
	out->ops = &rrd_meter_ops;
	out->dev = m;
	out->dev_free = _meter_free;
	_sampler_config(m, &out->cfg);
	snprintf(describe, sizeof(describe), "%s DS %s CF %s, every %gs, "
		 "max age %gs", rrd_meter_path(m),
		 rconf.ds ? rconf.ds : "(first)", rrd_cf_name(rconf.cf),
		 (double) rconf.period_ns / SE_NS_PER_SEC,
		 (double) rconf.max_age_ns / SE_NS_PER_SEC);
	out->describe = describe;
	return 0;
}

/* ------------------------------------------------------- entry points */

extern int init(void)
{
	se_energy_init();
	rrd_conf_init(&rconf);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	se_energy_fini();
	rrd_conf_free(&rconf);
	return SLURM_SUCCESS;
}

extern int acct_gather_energy_p_update_node_energy(void)
{
	return se_energy_update_node_energy();
}

extern int acct_gather_energy_p_get_data(enum acct_energy_type data_type,
					 void *data)
{
	return se_energy_get_data(data_type, data);
}

extern int acct_gather_energy_p_set_data(enum acct_energy_type data_type,
					 void *data)
{
	return se_energy_set_data(data_type, data);
}

extern void acct_gather_energy_p_conf_options(s_p_options_t **full_options,
					      int *full_options_cnt)
{
	size_t i, n = 0;
	s_p_options_t *options;

	while (rrd_conf_key(n))
		n++;
	options = xcalloc(n + 1, sizeof(*options));
	/* All strings: rrd_conf checks them with messages that name file,
	 * key and value. */
	for (i = 0; i < n; i++) {
		options[i].key = (char *) rrd_conf_key(i);
		options[i].type = S_P_STRING;
	}
	transfer_s_p_options(full_options, options, full_options_cnt);
	xfree(options);
}

extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl)
{
	char *path = get_extra_conf_path("acct_gather.conf");
	char err[1024] = "", *value;
	const char *key;
	size_t i;
	int rc = 0;

	rrd_conf_free(&rconf);
	rrd_conf_init(&rconf);
	for (i = 0; tbl && !rc && (key = rrd_conf_key(i)); i++) {
		if (!s_p_get_string(&value, key, tbl))
			continue;
		rc = rrd_conf_set(&rconf, path, key, value, err, sizeof(err));
		xfree(value);
	}
	if (!rc)
		rc = rrd_conf_check(&rconf, path, err, sizeof(err));
	xfree(path);

	se_energy_conf_set(context_id_in, "rrd", rc ? err : NULL, _make_meter,
			   NULL);
}

extern void acct_gather_energy_p_conf_values(se_slurm_list_t *data)
{
	config_key_pair_t *kp;
	const char *key;
	char buf[256];

	for (size_t i = 0; (key = rrd_conf_key(i)); i++) {
		kp = xmalloc(sizeof(*kp));
		kp->name = xstrdup(key);
		kp->value = xstrdup(rrd_conf_value(&rconf, key, buf,
						   sizeof(buf)));
		list_append(*data, kp);
	}
}
