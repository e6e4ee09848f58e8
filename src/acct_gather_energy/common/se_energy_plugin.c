/*
 * se_energy_plugin.c - the acct_gather_energy entry points Slurm looks up,
 * once for every energy plugin of the suite.
 *
 * Each plugin (modbus, bmc, rrd) defines plugin_name/type/version and an
 * se_energy_plugin_t with its configuration hooks and make_meter(); this
 * file, linked into each plugin .so, turns Slurm's calls into those hooks
 * and into the shared glue of se_energy.c.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <stdbool.h>
#include <stdio.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"

#include "se_energy.h"

/* acct_gather.conf's path, handed to make_meter() (xmalloc'ed). */
static char *conf_path;

/*
 * fini() kept the configuration for a step that may still settle.  Slurm
 * may load the plugin again in that slurmstepd (an sstat during the wait):
 * init() must not reset what the settle is reading.
 */
static bool conf_kept;

static size_t _key_count(void)
{
	size_t n = 0;

	while (se_energy_plugin.key(n))
		n++;
	return n;
}

/* Parse and check every key Slurm collected; NULL or the error message. */
static const char *_parse(s_p_hashtbl_t *tbl, char *err, size_t err_len)
{
	const char *key;
	char *value;
	int rc = 0;

	se_energy_plugin.conf_free();
	se_energy_plugin.conf_init();
	for (size_t i = 0; tbl && !rc && (key = se_energy_plugin.key(i)); i++) {
		if (!s_p_get_string(&value, key, tbl))
			continue;
		rc = se_energy_plugin.conf_set(conf_path, i, value, err,
					       err_len);
		xfree(value);
	}
	if (!rc)
		rc = se_energy_plugin.conf_check(conf_path, err, err_len);
	return rc ? err : NULL;
}

/* ------------------------------------------------------- entry points */

extern int init(void)
{
	se_energy_init();
	if (!conf_kept)
		se_energy_plugin.conf_init();
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	/* a step that may still settle needs its configuration */
	if ((conf_kept = se_energy_fini()))
		return SLURM_SUCCESS;
	se_energy_plugin.conf_free();
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
	size_t n = _key_count();
	s_p_options_t *options = xcalloc(n + 1, sizeof(*options));

	for (size_t i = 0; i < n; i++) {
		options[i].key = (char *) se_energy_plugin.key(i);
		options[i].type = S_P_STRING;
	}
	transfer_s_p_options(full_options, options, full_options_cnt);
	xfree(options);
}

extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl)
{
	char err[1024] = "";

	xfree(conf_path);
	conf_path = get_extra_conf_path("acct_gather.conf");
	se_energy_conf_set(context_id_in, se_energy_plugin.meter_name,
			   _parse(tbl, err, sizeof(err)),
			   se_energy_plugin.make_meter, conf_path);
}

extern void acct_gather_energy_p_conf_values(se_list_t *data)
{
	config_key_pair_t *kp;
	const char *key;
	char buf[256];

	for (size_t i = 0; (key = se_energy_plugin.key(i)); i++) {
		se_energy_plugin.conf_show(i, buf, sizeof(buf));
		kp = xmalloc(sizeof(*kp));
		kp->name = xstrdup(key);
		kp->value = xstrdup(buf);
		list_append(*data, kp);
	}
}
