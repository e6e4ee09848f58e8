/*
 * acct_gather_energy_bmc.c - acct_gather_energy/bmc: node energy from the
 * BMC, by DCMI Get Power Reading or the sum of SDR Watts sensors, in-band
 * or over an IPMI LAN session.
 *
 * The thin Slurm side: acct_gather.conf keys in and out (bmc_conf.c does
 * the checking), the node's BMC resolved in slurmd (its EnergyBMCMap line,
 * matched with Slurm's hostlist API; the host's %n; the password file), and
 * a bmc_meter_t handed to the shared glue
 * (../common/se_energy.c), which samples it in slurmd and computes step
 * energy in slurmstepd.  See acct_gather_energy_bmc(5).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat.h"

#include "bmc_conf.h"
#include "bmc_meter.h"
#include "se_energy.h"
#include "se_time.h"

const char plugin_name[] = "AcctGatherEnergy BMC plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/bmc";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Sampling policy (documented in acct_gather_energy_bmc(5)). */
#define HISTORY_NS		(3600 * SE_NS_PER_SEC)	/* ring: ~1 h */
#define HISTORY_MIN		64
#define HISTORY_MAX		16384
#define BACKOFF_MAX_NS		(30 * SE_NS_PER_SEC)

static bmc_conf_t bconf;
static char describe[512];	/* the meter, for se_energy's load line */

/* ------------------------------------------------- hostlist for the map */

static int _hl_contains(void *arg, const char *expr, const char *node)
{
	se_hostlist_t hl = hostlist_create(expr);
	int found;

	if (!hl)
		return -EINVAL;
	found = hostlist_find(hl, node) >= 0;
	hostlist_destroy(hl);
	return found;
}

static const bmc_hostlist_ops_t hostlist_ops = {
	.contains = _hl_contains,
};

/* --------------------------------------------------------- the meter */

static void _meter_free(void *dev)
{
	bmc_meter_destroy(dev);
}

static void _sampler_config(sampler_config_t *cfg, const char *label)
{
	uint64_t history = HISTORY_NS / bconf.period_ns;

	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ns = bconf.period_ns;
	cfg->deadline_ns = bconf.timeout_ns;
	cfg->backoff_max_ns = bconf.period_ns > BACKOFF_MAX_NS ?
		bconf.period_ns : BACKOFF_MAX_NS;
	cfg->use_counter = false;	/* BMCs give power, not energy */
	cfg->acc.history = history < HISTORY_MIN ? HISTORY_MIN :
		history > HISTORY_MAX ? HISTORY_MAX : history;
	cfg->acc.gap_ns = 0;	/* the sampler's default: one missed tick */
	cfg->acc.max_power_mw = bconf.max_power_mw;
	/* One missed sample's worth, then held: readers never see energy
	 * decrease, so a long guess during an outage would be locked in
	 * (see acct_gather_energy_modbus.c). */
	cfg->acc.max_extrapolate_ns = bconf.period_ns + bconf.timeout_ns;
	cfg->label = label;
}

/* se_energy_make_meter_fn: this node's BMC, in slurmd only. */
static int _make_meter(void *arg, const char *node, se_energy_meter_t *out,
		       char *err, size_t err_len)
{
	const char *path = arg;
	bmc_meter_t *m;
	int rc, n;

	if ((rc = bmc_conf_resolve_map(&bconf, node, &hostlist_ops, err,
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

/* ------------------------------------------------------- entry points */

extern int init(void)
{
	se_energy_init();
	bmc_conf_init(&bconf);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	se_energy_fini();
	bmc_conf_free(&bconf);
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
	s_p_options_t *options;
	size_t i, n = 0;

	while (bmc_conf_key(n))
		n++;
	options = xcalloc(n + 1, sizeof(*options));
	/* All strings: bmc_conf checks them with messages that name file,
	 * key and value (Slurm's own parser would only say "bad"). */
	for (i = 0; i < n; i++) {
		options[i].key = (char *) bmc_conf_key(i);
		options[i].type = S_P_STRING;
	}
	transfer_s_p_options(full_options, options, full_options_cnt);
	xfree(options);
}

extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl)
{
	static char path[4096];
	char err[1024] = "", *value, *conf_path;
	size_t i;
	int rc = 0;

	conf_path = get_extra_conf_path("acct_gather.conf");
	snprintf(path, sizeof(path), "%s", conf_path);
	xfree(conf_path);

	bmc_conf_free(&bconf);
	bmc_conf_init(&bconf);
	for (i = 0; tbl && !rc && bmc_conf_key(i); i++) {
		if (!s_p_get_string(&value, bmc_conf_key(i), tbl))
			continue;
		rc = bmc_conf_set(&bconf, path, bmc_conf_key(i), value, err,
				  sizeof(err));
		xfree(value);
	}
	if (!rc)
		rc = bmc_conf_check(&bconf, path, err, sizeof(err));

	/* The node's host and password are resolved in _make_meter(). */
	se_energy_conf_set(context_id_in, "bmc", rc ? err : NULL,
			   _make_meter, path);
}

extern void acct_gather_energy_p_conf_values(se_slurm_list_t *data)
{
	config_key_pair_t *kp;
	char buf[256];
	size_t i;

	for (i = 0; bmc_conf_key(i); i++) {
		bmc_conf_show(&bconf, i, buf, sizeof(buf));
		kp = xmalloc(sizeof(*kp));
		kp->name = xstrdup(bmc_conf_key(i));
		kp->value = xstrdup(buf);
		list_append(*data, kp);
	}
}
