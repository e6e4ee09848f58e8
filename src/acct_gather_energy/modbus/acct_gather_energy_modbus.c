/*
 * acct_gather_energy_modbus.c - acct_gather_energy/modbus: node energy from a
 * Modbus TCP or RTU power/energy meter (or a PDU channel shared by nodes).
 *
 * The thin Slurm side: acct_gather.conf keys in and out (modbus_conf.c does
 * the checking), this node's channel resolved with Slurm's hostlist API,
 * and a modbus_meter_t handed to the shared glue (../common/se_energy*.c),
 * which samples it in slurmd and computes step energy in slurmstepd.
 * See acct_gather_energy_modbus(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "modbus_conf.h"
#include "modbus_dl.h"
#include "modbus_meter.h"
#include "se_energy.h"
#include "se_time.h"

const char plugin_name[] = "AcctGatherEnergy Modbus plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/modbus";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static modbus_conf_t mconf;

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	modbus_meter_destroy(dev);
}

/* The meter's own part of the sampler's policy, after the suite's
 * (acct_gather_energy_modbus(5): a read per EnergyModbusFrequency, each
 * within EnergyModbusTimeout, set by se_energy_meter_give). */
static void _sampler_config(const modbus_meter_t *m,
			    const modbus_target_t *t, sampler_config_t *cfg)
{
	cfg->use_counter = modbus_meter_counter_spec(m, &cfg->counter);
	/* The bound is per channel; the node sees its share of it. */
	cfg->acc.max_power_mw = (uint64_t) (t->max_power_w * t->share *
					    1000.0);
	cfg->label = modbus_meter_label(m);
}

/* se_energy_make_meter_fn: this node's meter, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	modbus_meter_config_t mc;
	modbus_meter_t *m;
	modbus_target_t t;
	int rc;
	size_t n;

	if ((rc = modbus_conf_read_map(&mconf, err, err_len)) ||
	    (rc = modbus_conf_resolve(&mconf, node,
				      &se_slurm_hostlist_ops, &t, err,
				      err_len)))
		return rc;
	if (t.none) {
		snprintf(err, err_len, "%s:%u: Device=none", mconf.map_path,
			 t.line);
		return SE_ENERGY_NO_METER;
	}
	/* libmodbus is opened here, in slurmd, and nowhere else */
	if ((rc = modbus_dl_load(err, err_len)) ||
	    (rc = modbus_conf_meter_config(&mconf, &t, &mc, err, err_len)) ||
	    (rc = modbus_meter_create(&mc, &m, err, err_len)))
		return rc;

	modbus_meter_describe(m, out->describe, sizeof(out->describe));
	se_energy_meter_give(out, &modbus_meter_ops, m, _meter_free,
			     mconf.period_ns, mconf.timeout_ns);
	_sampler_config(m, &t, &out->cfg);
	n = strlen(out->describe);
	if (!out->cfg.use_counter)
		snprintf(out->describe + n, sizeof(out->describe) - n,
			 ", power path (integrated)");
	return 0;
}

/* Slurm's entry points are in ../common/se_energy_plugin.c. */
const se_energy_plugin_t se_energy_plugin = {
	.meter_name = "modbus",
	.conf_desc = &modbus_conf_desc,
	.conf = &mconf,
	.make_meter = _make_meter,
};
