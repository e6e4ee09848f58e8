/*
 * se_energy_plugin.c - the acct_gather_energy entry points Slurm looks up,
 * once for every energy plugin of the suite.
 *
 * Each plugin (modbus, bmc, rrd) defines plugin_name/type/version and an
 * se_energy_plugin_t with its back-end's configuration descriptor and
 * make_meter(); this
 * file, linked into each plugin .so, turns Slurm's calls into those hooks
 * and into the shared glue of se_energy.c (the roles: se_energy_int.h).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "se_energy.h"
#include "se_slurm_conf.h"

/* acct_gather.conf's path, handed to make_meter() (xmalloc'ed). */
static char *conf_path;

/*
 * The values slurmd last started with, one per key of the descriptor as
 * acct_gather.conf spelled it (NULL: not given).  On 22.05 "scontrol
 * reconfigure" reloads the plugin inside the same slurmd (fini, dlclose,
 * load, conf_set); the plugin is linked -z nodelete, so this survives, and
 * a reload whose values are refused falls back to it instead of stopping
 * slurmd.  (24.11 re-executes slurmd for a reconfigure and keeps the old
 * process when the new one fails: Slurm's own fallback.)  Lives as long
 * as slurmd; never freed.
 */
static char **last_good;

/*
 * fini() kept the configuration for a step that may still settle.  Slurm
 * may load the plugin again in that slurmstepd (an sstat during the wait):
 * init() must not reset what the settle is reading.
 */
static bool conf_kept;

/*
 * The keys every plugin of the suite reads beside its back-end's: the
 * attribution (attrib.h), the settle (settle_conf.h) and the node's GPUs
 * (gpu_meter_conf.h); their defaults until conf_set (attribution's are
 * static zeroes).  A reload whose keys
 * of a table are refused keeps the ones slurmd had, like the back-end's
 * (see last_good).
 */
static attrib_conf_t attrib_conf;
static settle_conf_t settle_conf = {
	.in_plugin = SETTLE_IN_PLUGIN_YES,
	.max_wait_s = SETTLE_DEF_MAX_WAIT_S,
};
static gpu_meter_conf_t gpu_conf = {
	.kind = GPU_METER_NONE,
	.factor = 1.0,
};

typedef struct {
	const se_conf_desc_t *desc;
	void *conf;		/* the values in force */
	bool loaded;		/* conf was parsed once */
} shared_table_t;

static shared_table_t shared_tables[] = {
	{ &attrib_conf_desc, &attrib_conf, false },
	{ &settle_energy_conf_desc, &settle_conf, false },
	{ &gpu_meter_conf_desc, &gpu_conf, false },
};

#define N_SHARED_TABLES	(sizeof(shared_tables) / sizeof(shared_tables[0]))

/* ------------------------------------------------------- entry points */

extern int init(void)
{
	se_energy_init();
	if (!conf_kept)
		se_energy_plugin.conf_desc->init(se_energy_plugin.conf);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	/*
	 * In slurmstepd at a step's end this settles the step (EnergySettle);
	 * a step left to spank_energy_settle.so needs its configuration.
	 */
	if ((conf_kept = se_energy_fini(&settle_conf)))
		return SLURM_SUCCESS;
	se_energy_plugin.conf_desc->free(se_energy_plugin.conf);
	xfree(conf_path);
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
	const se_conf_desc_t *d = se_energy_plugin.conf_desc;
	s_p_options_t *options = se_slurm_conf_options(d);

	transfer_s_p_options(full_options, options, full_options_cnt);
	xfree(options);
	for (size_t i = 0; i < N_SHARED_TABLES; i++) {
		options = se_slurm_conf_options(shared_tables[i].desc);
		transfer_s_p_options(full_options, options, full_options_cnt);
		xfree(options);
	}
}

/* One shared table's keys from tbl into its conf: 0, or the error (a
 * reload's is logged and the previous keys kept). */
static int _shared_table_set(shared_table_t *t, s_p_hashtbl_t *tbl,
			     char *err, size_t len)
{
	const se_conf_desc_t *d = t->desc;
	void *c = xcalloc(1, d->size);
	int rc;

	rc = se_slurm_conf_parse(d, c, tbl, conf_path, err, len);
	if (rc && t->loaded && se_in_slurmd()) {
		error("%s: %s: keeping the %s keys slurmd had (scontrol reconfigure); fix the file and reconfigure again",
		      plugin_type, err, d->name);
		d->free(c);
		rc = 0;
	} else if (!rc) {
		d->free(t->conf);
		memcpy(t->conf, c, d->size);
		t->loaded = true;
	} else {
		d->free(c);
	}
	xfree(c);
	return rc;
}

/* Every shared table from tbl: 0, or the first error. */
static int _shared_tables_set(s_p_hashtbl_t *tbl, char *err, size_t len)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < N_SHARED_TABLES; i++)
		rc = _shared_table_set(&shared_tables[i], tbl, err, len);
	se_energy_set_attribution(&attrib_conf);
	se_energy_set_gpus(&gpu_conf);
	se_settle_conf_note(&settle_conf);
	return rc;
}

/* Remember the values slurmd starts with (see last_good). */
static void _keep_good(const se_conf_desc_t *d, s_p_hashtbl_t *tbl)
{
	char *value;

	if (!last_good)
		last_good = xcalloc(d->n_keys, sizeof(*last_good));
	for (size_t i = 0; i < d->n_keys; i++) {
		xfree(last_good[i]);
		if (tbl && s_p_get_string(&value, d->keys[i].name, tbl))
			last_good[i] = value;
	}
}

/* The configuration from last_good: 0, or the error (it was good once;
 * only a file it names can have changed since). */
static int _parse_good(const se_conf_desc_t *d, char *err, size_t len)
{
	void *conf = se_energy_plugin.conf;
	int rc = 0;

	d->free(conf);
	d->init(conf);
	for (size_t i = 0; !rc && i < d->n_keys; i++)
		if (last_good[i])
			rc = se_conf_set_index(d, conf, conf_path, i,
					       last_good[i], err, len);
	return rc ? rc : se_conf_check(d, conf, conf_path, err, len);
}

extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl)
{
	const se_conf_desc_t *d = se_energy_plugin.conf_desc;
	char err[1024] = "";
	int rc;

	xfree(conf_path);
	conf_path = get_extra_conf_path("acct_gather.conf");
	rc = se_slurm_conf_parse(d, se_energy_plugin.conf, tbl, conf_path,
				 err, sizeof(err));
	if (!rc && se_in_slurmd()) {
		_keep_good(d, tbl);
	} else if (rc && last_good && se_in_slurmd()) {
		/* a reload (scontrol reconfigure): never stop slurmd over it */
		error("%s: %s: keeping the configuration slurmd had (scontrol reconfigure); fix the file and reconfigure again",
		      plugin_type, err);
		rc = _parse_good(d, err, sizeof(err));
	}
	if (!rc)
		rc = _shared_tables_set(tbl, err, sizeof(err));
	se_energy_conf_set(context_id_in, se_energy_plugin.meter_name,
			   rc ? err : NULL, se_energy_plugin.make_meter,
			   conf_path);
}

extern void acct_gather_energy_p_conf_values(se_list_t *data)
{
	se_slurm_conf_values(se_energy_plugin.conf_desc, se_energy_plugin.conf,
			     *data);
	for (size_t i = 0; i < N_SHARED_TABLES; i++)
		se_slurm_conf_values(shared_tables[i].desc,
				     shared_tables[i].conf, *data);
}
