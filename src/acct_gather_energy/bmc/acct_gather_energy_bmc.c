/*
 * acct_gather_energy_bmc.c - acct_gather_energy/bmc: node energy from the
 * BMC, by DCMI Get Power Reading or the sum of SDR Watts sensors, in-band
 * or over an IPMI LAN session, or over Redfish (EnergyBMCMethod=redfish:
 * src/meters/redfish, an energy counter shaped by power when the chassis
 * has one).
 *
 * The thin Slurm side: acct_gather.conf keys in and out (bmc_conf.c does
 * the checking), the node's BMC resolved in slurmd (its EnergyBMCMap line,
 * matched with Slurm's hostlist API; the host's %n; the password file), and
 * a bmc_meter_t handed to the shared glue
 * (../common/se_energy*.c), which samples it in slurmd and computes step
 * energy in slurmstepd.  With EnergyBMCPoller (Redfish PDU outlets) the
 * meter is a pdu_poll_meter_t instead: the node asks
 * slurm-energy-pdu-poller(8) for its reading and never talks HTTP.
 * See acct_gather_energy_bmc(5).
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
#ifdef SE_HAVE_REDFISH
#include "bmc_redfish.h"
#include "rf_dl.h"
#include "rf_meter.h"
#endif
#include "se_energy.h"
#include "se_energy_poll.h"
#include "se_slurm_conf.h"

const char plugin_name[] = "AcctGatherEnergy BMC plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/bmc";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static bmc_conf_t bconf;

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	bmc_meter_destroy(dev);
}

/*
 * The meter m handed to the glue under the suite's policy
 * (acct_gather_energy_bmc(5)): a read per EnergyBMCFrequency, each within
 * EnergyBMCTimeout, its power bound EnergyBMCMaxWatts; out->describe
 * already says the meter.
 */
static void _give(se_energy_meter_t *out, const meter_ops_t *ops, void *m,
		  void (*m_free)(void *dev), const char *label)
{
	se_energy_meter_give(out, ops, m, m_free, bconf.period_ns,
			     bconf.timeout_ns);
	out->cfg.acc.max_power_mw = bconf.max_power_mw;
	out->cfg.label = label;
}

/* The Redfish service's base URL: HOST[:PORT] is https, a URL is taken as
 * written. */
static void _rf_base(char *base, size_t base_len)
{
	snprintf(base, base_len, "%s%s", strstr(bconf.host, "://") ? "" :
		 "https://", bconf.host);
}

/* Any counter: each Redfish reading brings its own spec (the meter's
 * counter_spec, or the poller's over the wire). */
static const counter_spec_t rf_any_counter = { .width_bits = 64,
					       .mj_per_unit = 1.0 };

/* -------------------------------------------- through the PDU poller */

/*
 * EnergyBMCMethod=redfish with EnergyBMCPoller: the node's meter asks
 * slurm-energy-pdu-poller(8), which reads each PDU once a period for all
 * its nodes, and never talks HTTP: no libcurl or json-c loaded, no
 * password read (bmc_conf_finish leaves it to the poller).  The map is
 * resolved as without the poller, for the description (the node's host
 * and Source=); each reading brings its counter's spec over the wire.
 */
static int _make_redfish_poll(const char *path, const char *node,
			      se_energy_meter_t *out, char *err,
			      size_t err_len)
{
	char base[300], source[300];
	int rc;

	if ((rc = bmc_conf_resolve_map(&bconf, node,
				       &se_slurm_hostlist_ops, err,
				       err_len)) ||
	    (rc = bmc_conf_finish(&bconf, path, node, err, err_len)) ||
	    (rc = se_energy_poll_meter_give(out, node, bconf.poller,
					    "EnergyBMCPoller",
					    bconf.period_ns, bconf.timeout_ns,
					    err, err_len)))
		return rc;
	_rf_base(base, sizeof(base));
	se_conf_value(&bmc_conf_desc, &bconf, "EnergyBMCRedfishSource",
		      source, sizeof(source));
	snprintf(out->describe, sizeof(out->describe),
		 "through the PDU poller %s: redfish %s source %s",
		 bconf.poller, base, source);
	out->cfg.acc.max_power_mw = bconf.max_power_mw;
	out->cfg.label = bconf.host;
	out->cfg.deadline_ns = 2 * bconf.timeout_ns;
	out->cfg.use_counter = true;
	out->cfg.counter = rf_any_counter;	/* each reading brings its own */
	return 0;
}

#ifdef SE_HAVE_REDFISH
static void _rf_meter_free(void *dev)
{
	rf_meter_destroy(dev);
}

/*
 * EnergyBMCMethod=redfish: libcurl and json-c opened here, in slurmd only.
 * The sampler's budget of one call is two requests (a sensor's energy and
 * the EnvironmentMetrics' power); the counter's units come with each
 * reading (meter_reading_t.counter_spec), known once discovery is done.
 */
static int _make_redfish(const char *path, const char *node,
			 se_energy_meter_t *out, char *err, size_t err_len)
{
	rf_meter_conf_t mc;
	char base[300];
	rf_meter_t *m;
	int rc;

	if (rf_dl_load(err, err_len))
		return -ELIBACC;
	if ((rc = bmc_conf_resolve_map(&bconf, node,
				       &se_slurm_hostlist_ops, err,
				       err_len)) ||
	    (rc = bmc_conf_finish(&bconf, path, node, err, err_len)))
		return rc;
	if (rf_http_global_init()) {
		snprintf(err, err_len, "libcurl: curl_global_init failed");
		return -EIO;
	}
	bmc_redfish_meter_conf(&bconf, &mc, base, sizeof(base));
	m = rf_meter_create(&mc);
	/* the meter has its own copy; keep no secret here */
	explicit_bzero(bconf.password, sizeof(bconf.password));
	if (!m) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	rf_meter_set_tick_sync(m, bconf.rf_tick_watch == BMC_TICK_WATCH_YES);
	rf_meter_describe(m, out->describe, sizeof(out->describe));
	_give(out, &rf_meter_ops, m, _rf_meter_free, bconf.host);
	out->cfg.deadline_ns = 2 * bconf.timeout_ns;
	out->cfg.use_counter = true;
	out->cfg.counter = rf_any_counter;	/* each reading brings its own */
	return 0;
}
#endif

/* se_energy_make_meter_fn: this node's BMC, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	const char *path = arg;
	bmc_meter_t *m;
	int rc;

	if (bconf.method == BMC_METHOD_REDFISH) {
		/* through the poller: no HTTP here, in any build */
		if (bconf.poller)
			return _make_redfish_poll(path, node, out, err,
						  err_len);
#ifdef SE_HAVE_REDFISH
		return _make_redfish(path, node, out, err, err_len);
#else
		snprintf(err, err_len,
			 "%s: EnergyBMCMethod=redfish: this build has no Redfish (configure found no libcurl or json-c)",
			 path);
		return -ENOTSUP;
#endif
	}
	/* FreeIPMI is opened here, in slurmd, and nowhere else */
	if ((rc = bmc_dl_load(err, err_len)) ||
	    (rc = bmc_conf_resolve_map(&bconf, node,
				       &se_slurm_hostlist_ops, err,
				       err_len)) ||
	    (rc = bmc_conf_finish(&bconf, path, node, err, err_len)))
		return rc;
	if (!(m = bmc_meter_create(&bconf))) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	/* the meter has its own copy; keep no secret here */
	explicit_bzero(bconf.password, sizeof(bconf.password));

	/* BMCs give power, not energy: no counter */
	bmc_meter_describe(m, out->describe, sizeof(out->describe));
	_give(out, &bmc_meter_ops, m, _meter_free,
	      bconf.host ? bconf.host : "in-band");
	return 0;
}

/*
 * Slurm's entry points are in ../common/se_energy_plugin.c.  The node's
 * host and password (none through the poller) are resolved in
 * _make_meter(), in slurmd only.
 */
const se_energy_plugin_t se_energy_plugin = {
	.meter_name = "bmc",
	.conf_desc = &bmc_conf_desc,
	.conf = &bconf,
	.make_meter = _make_meter,
};
