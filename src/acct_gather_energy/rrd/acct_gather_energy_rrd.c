/*
 * acct_gather_energy_rrd.c - acct_gather_energy/rrd: node energy from the
 * RRD file a monitoring system (collectd, Ganglia, Munin, a PDU poller)
 * writes for this node.  The RRD path of every Slurm release, and the only
 * one from 24.05 on, where ext_sensors is gone.
 *
 * The thin Slurm side: acct_gather.conf keys in and out (rrd_conf.c checks
 * them), and an rrd_meter_t for this node handed to the shared glue
 * (../common/se_energy*.c), which samples it in slurmd and computes step
 * energy in slurmstepd.  See acct_gather_energy_rrd(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "rrd_conf.h"
#include "rrd_dl.h"
#include "rrd_meter.h"
#include "se_energy.h"
#include "se_time.h"

const char plugin_name[] = "AcctGatherEnergy RRD plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/rrd";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* A file read's budget (documented in acct_gather_energy_rrd(5)). */
#define DEADLINE_MAX_NS	(5 * SE_NS_PER_SEC)

static rrd_conf_t rconf;

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	rrd_meter_destroy(dev);
}

static void _sampler_config(const rrd_meter_t *m, sampler_config_t *cfg)
{
	/* A local file read takes milliseconds; a slow one must not make
	 * the next poll late. */
	sampler_config_init(cfg, rconf.period_ns,
			    rconf.period_ns < DEADLINE_MAX_NS ?
			    rconf.period_ns : DEADLINE_MAX_NS);
	/* A file that has no valid row is -EAGAIN, not a sick meter: never
	 * back off beyond the poll period, or rows would be read late. */
	cfg->backoff_max_ns = rconf.period_ns;
	cfg->use_counter = true;
	rrd_meter_counter_spec(&cfg->counter);
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
	rrd_meter_t *m;

	/* librrd: here in slurmd; in a slurmstepd only when it settles */
	if (rrd_dl_load(err, err_len))
		return -ELIBACC;
	if (!(m = rrd_meter_create(&rconf, node, err, err_len)))
		return -EINVAL;
	out->ops = &rrd_meter_ops;
	out->dev = m;
	out->dev_free = _meter_free;
	/* its own timing: a file's rows have an age, not a timeout */
	_sampler_config(m, &out->cfg);
	snprintf(out->describe, sizeof(out->describe),
		 "%s DS %s CF %s, every %gs, max age %gs", rrd_meter_path(m),
		 rconf.ds ? rconf.ds : "(first)", rrd_cf_name(rconf.cf),
		 (double) rconf.period_ns / SE_NS_PER_SEC,
		 (double) rconf.max_age_ns / SE_NS_PER_SEC);
	return 0;
}

/*
 * se_energy_window_fn, in slurmstepd: the step's energy from the file over
 * its own window, once the rows around its ends are written (the settle).
 */
static int _window_energy(const char *node, uint64_t t0_ns, uint64_t t1_ns,
			  uint64_t *energy_mj, bool *complete, char *msg,
			  size_t msg_len)
{
	rrd_meter_t *m = rrd_meter_create(&rconf, node, msg, msg_len);
	rrd_energy_t e;
	int rc;

	*complete = false;
	if (!m)
		return -EINVAL;
	rc = rrd_meter_window(m, t0_ns, t1_ns, &e, complete, msg, msg_len);
	rrd_meter_destroy(m);
	if (!rc)
		*energy_mj = e.energy_mj;
	return rc;
}

/* Slurm's entry points are in ../common/se_energy_plugin.c. */
const se_energy_plugin_t se_energy_plugin = {
	.meter_name = "rrd",
	.conf_desc = &rrd_conf_desc,
	.conf = &rconf,
	.make_meter = _make_meter,
	.window_energy = _window_energy,
};
