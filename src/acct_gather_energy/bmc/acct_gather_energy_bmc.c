/*
 * acct_gather_energy_bmc.c - acct_gather_energy/bmc: node energy from the
 * BMC, by DCMI Get Power Reading or the sum of SDR Watts sensors, in-band
 * or over an IPMI LAN session.
 *
 * The thin Slurm side: acct_gather.conf keys in and out (bmc_conf.c does
 * the checking), the node's BMC resolved in slurmd (its EnergyBMCMap line,
 * matched with Slurm's hostlist API; the host's %n; the password file), and
 * a bmc_meter_t handed to the shared glue
 * (../common/se_energy*.c), which samples it in slurmd and computes step
 * energy in slurmstepd.  See acct_gather_energy_bmc(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "bmc_conf.h"
#include "bmc_dl.h"
#include "bmc_meter.h"
#include "se_energy.h"
#include "se_time.h"

const char plugin_name[] = "AcctGatherEnergy BMC plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/bmc";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static bmc_conf_t bconf;
static char describe[512];	/* the meter, for se_energy's load line */

/* ------------------------------------------------- hostlist for the map */

static const bmc_hostlist_ops_t hostlist_ops = {
	.contains = se_hostlist_contains,
};

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	bmc_meter_destroy(dev);
}

static void _sampler_config(sampler_config_t *cfg, const char *label)
{
	/* the suite's policy (acct_gather_energy_bmc(5)): a read per
	 * EnergyBMCFrequency, each within EnergyBMCTimeout; BMCs give
	 * power, not energy (no counter) */
	sampler_config_init(cfg, bconf.period_ns, bconf.timeout_ns);
	cfg->acc.max_power_mw = bconf.max_power_mw;
	cfg->label = label;
}

/* se_energy_make_meter_fn: this node's BMC, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	const char *path = arg;
	bmc_meter_t *m;
	int rc, n;

	/* FreeIPMI is opened here, in slurmd, and nowhere else */
	if ((rc = bmc_dl_load(err, err_len)) ||
	    (rc = bmc_conf_resolve_map(&bconf, node, &hostlist_ops, err,
				       err_len)) ||
	    (rc = bmc_conf_finish(&bconf, path, node, err, err_len)))
		return rc;
	if (!(m = bmc_meter_create(&bconf))) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	/* the meter has its own copy; keep no secret here */
	explicit_bzero(bconf.password, sizeof(bconf.password));

	out->ops = &bmc_meter_ops;
	out->dev = m;
	out->dev_free = _meter_free;
	_sampler_config(&out->cfg, bconf.host ? bconf.host : "in-band");
	bmc_meter_describe(m, describe, sizeof(describe));
	n = strlen(describe);
	snprintf(describe + n, sizeof(describe) - n,
		 ", every %gs, timeout %llums",
		 (double) bconf.period_ns / 1e9,
		 (unsigned long long) (bconf.timeout_ns / SE_NS_PER_MS));
	out->describe = describe;
	return 0;
}

/*
 * Slurm's entry points are in ../common/se_energy_plugin.c.  The node's
 * host and password are resolved in _make_meter(), in slurmd only.
 */
const se_energy_plugin_t se_energy_plugin = {
	.meter_name = "bmc",
	.conf_desc = &bmc_conf_desc,
	.conf = &bconf,
	.make_meter = _make_meter,
};
