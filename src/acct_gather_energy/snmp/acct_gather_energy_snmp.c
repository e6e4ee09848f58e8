/*
 * acct_gather_energy_snmp.c - acct_gather_energy/snmp: node energy from the
 * rack PDU outlets that feed it, over SNMP v2c or v3.
 *
 * The thin Slurm side: acct_gather.conf keys in and out (snmp_conf.c does
 * the checking), the map and the secrets read and this node's outlets
 * resolved with Slurm's hostlist API, and an snmp_meter_t handed to the
 * shared glue (../common/se_energy*.c), which samples it in slurmd's
 * sampler thread (one GET per PDU per period, for all the outlets of this
 * node on it) and computes step energy in slurmstepd.
 * See acct_gather_energy_snmp(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "se_energy.h"
#include "se_energy_poll.h"
#include "se_slurm_conf.h"
#include "snmp_conf.h"
#include "snmp_dl.h"
#include "snmp_meter.h"

const char plugin_name[] = "AcctGatherEnergy SNMP plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/snmp";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static snmp_conf_t sconf;

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	snmp_meter_destroy(dev);
}

/* The secrets leave no copy behind, whichever way _make_meter ends. */
static void _target_free(snmp_target_t *t)
{
	memset(t, 0, sizeof(*t));
	xfree(t);
}

/* The meter of this node's outlets t (libnetsnmp loaded first). */
static int _meter_create(const char *node, const snmp_target_t *t,
			 snmp_meter_t **m, char *err, size_t err_len)
{
	snmp_meter_config_t mc = {
		.node = node, .pdus = t->pdus, .n_pdus = t->n_pdus,
		.outlets = t->outlets, .n_outlets = t->n_outlets,
		.timeout_ns = sconf.timeout_ns,
	};

	/* libnetsnmp is opened here, in slurmd, and nowhere else */
	if (snmp_dl_load(err, err_len))
		return -ELIBACC;
	return snmp_meter_create(&mc, m, err, err_len);
}

/* The meter of t without libnetsnmp: never opened (the poller reads). */
static int _meter_describe_only(const char *node, const snmp_target_t *t,
				snmp_meter_t **m, char *err, size_t err_len)
{
	snmp_meter_config_t mc = {
		.node = node, .pdus = t->pdus, .n_pdus = t->n_pdus,
		.outlets = t->outlets, .n_outlets = t->n_outlets,
		.timeout_ns = sconf.timeout_ns,
	};

	return snmp_meter_create(&mc, m, err, err_len);
}

/* -------------------------------------------- through the PDU poller */

static char poll_label[300];		/* the outlets, once m is gone */

/*
 * With EnergySNMPPoller: the node's meter asks slurm-energy-pdu-poller(8)
 * and never a PDU.  m, this node's SNMP meter as the map makes it (never
 * opened: no secrets here, no libnetsnmp), gives the counter's spec, the
 * power bound and the description, the same as the poller's reading.
 */
static int _give_poll_meter(const char *node, snmp_meter_t *m,
			    se_energy_meter_t *out, char *err,
			    size_t err_len)
{
	size_t n;
	int rc;

	if ((rc = se_energy_poll_meter_give(out, node, sconf.poller,
					    "EnergySNMPPoller",
					    sconf.period_ns, sconf.timeout_ns,
					    err, err_len)))
		return rc;
	n = (size_t) snprintf(out->describe, sizeof(out->describe),
			      "through the PDU poller %s: ", sconf.poller);
	if (n < sizeof(out->describe))
		snmp_meter_describe(m, out->describe + n,
				    sizeof(out->describe) - n);
	out->cfg.use_counter = snmp_meter_counter_spec(m, &out->cfg.counter);
	out->cfg.acc.max_power_mw =
		(uint64_t) (snmp_meter_max_power_w(m) * 1000.0);
	snprintf(poll_label, sizeof(poll_label), "%s", snmp_meter_label(m));
	out->cfg.label = poll_label;
	return 0;
}

/* se_energy_make_meter_fn: this node's meter, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	snmp_target_t *t;	/* 64 outlets and their PDUs: not on a stack */
	snmp_meter_t *m;
	int rc;

	(void) arg;
	/* with the poller, the map alone: the secrets are the poller's */
	if ((rc = sconf.poller ? snmp_conf_read_map(&sconf, err, err_len) :
				 snmp_conf_read_files(&sconf, err, err_len)))
		return rc;
	t = xmalloc(sizeof(*t));
	rc = snmp_conf_resolve(&sconf, node, &se_slurm_hostlist_ops, t, err,
			       err_len);
	if (rc == -ENOENT)
		rc = SE_ENERGY_NO_METER;
	else if (!rc && sconf.poller)
		rc = _meter_describe_only(node, t, &m, err, err_len);
	else if (!rc)
		rc = _meter_create(node, t, &m, err, err_len);
	_target_free(t);	/* the secrets are the meter's now */
	if (rc)
		return rc;
	if (sconf.poller) {
		rc = _give_poll_meter(node, m, out, err, err_len);
		snmp_meter_destroy(m);
		return rc;
	}

	snmp_meter_describe(m, out->describe, sizeof(out->describe));
	se_energy_meter_give(out, &snmp_meter_ops, m, _meter_free,
			     sconf.period_ns, sconf.timeout_ns);
	out->cfg.use_counter = snmp_meter_counter_spec(m, &out->cfg.counter);
	out->cfg.acc.max_power_mw =
		(uint64_t) (snmp_meter_max_power_w(m) * 1000.0);
	out->cfg.label = snmp_meter_label(m);
	return 0;
}

/* Slurm's entry points are in ../common/se_energy_plugin.c. */
const se_energy_plugin_t se_energy_plugin = {
	.meter_name = "snmp",
	.conf_desc = &snmp_conf_desc,
	.conf = &sconf,
	.make_meter = _make_meter,
};
