/*
 * se_energy.c - shared Slurm glue of the suite's acct_gather_energy plugins:
 * the entry points of se_energy.h, the dispatcher above the role files
 * (the state they share is below them, in se_energy_state.c).
 *
 * See se_energy.h for the model.  The plugin's own entry points
 * (se_energy_plugin.c) call in here; each call goes to the role of the
 * process that makes it, in the file of that role, which lists what Slurm
 * 22.05 asks there and so what each answer must be:
 *
 *  slurmd      se_energy_node.c   (the sampler, the node's total and its
 *                                  carry over a reload)
 *              se_energy_share.c  (EnergyAttribution=share: the split)
 *  slurmstepd  se_energy_step.c   (the step's running total)
 *              se_energy_settle.c (the step's energy at its end, called by
 *                                  spank_energy_settle.so)
 *  elsewhere   (slurmctld, clients) the configuration only.
 *
 * Calls reaching every role (src/ paths are Slurm's):
 *  slurm_acct_gather_energy.c:acct_gather_energy_g_conf_set()  conf_set:
 *	the role is told here; slurmd starts its sampler, slurmstepd takes
 *	the step's start.
 *  slurm_acct_gather.c:acct_gather_reconfig()  unloads the plugin (fini,
 *	dlclose) and loads it again: the plugin is linked -z nodelete, so
 *	what a role keeps over a reload (the node total, the split) survives
 *	and a detached sampler thread never runs in unmapped code.
 *  slurmstepd unloads the plugin before slurm_spank_exit, where the settle
 *	runs: fini keeps the step's state (se_energy_fini).
 *
 * Slurm serialises calls into one plugin with its own context lock; the
 * glue still keeps its state under se_state_lock (se_energy_int.h).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <stdbool.h>
#include <string.h>

#include "se_energy_int.h"
#include "se_slurm_log.h"

/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(ENERGY);

static role_t _role(void)
{
	if (se_in_slurmd())
		return ROLE_SLURMD;
	if (se_in_slurmstepd())
		return ROLE_STEPD;
	return ROLE_OTHER;
}

void se_energy_init(void)
{
	se_slurm_log_install(&log_to);
	debug("%s: slurm-energy-plugins %s (built for Slurm %s) loaded",
	      plugin_type, se_energy_version, se_energy_slurm_version);
}

void se_energy_conf_set(int context_id_in, const char *meter_name,
			const char *conf_error, se_energy_make_meter_fn make,
			void *arg)
{
	slurm_mutex_lock(&se_state_lock);
	se_context_id = context_id_in;
	se_role = _role();

	if (conf_error) {
		if (se_role == ROLE_SLURMD)
			fatal("%s: %s", plugin_type, conf_error);
		error("%s: %s", plugin_type, conf_error);
		/*
		 * A step gets slurmd's table, which after a refused reload
		 * holds the refused values while slurmd kept its last good
		 * ones (se_energy_plugin.c): the step still counts the node
		 * energy slurmd serves, and only a settle that needs this
		 * configuration (window_energy) is off.
		 */
		if (se_role == ROLE_STEPD) {
			se_step.conf_bad = true;
			se_step_start();
		}
		slurm_mutex_unlock(&se_state_lock);
		return;
	}

	switch (se_role) {
	case ROLE_SLURMD:
		se_node_start(meter_name, make, arg);
		break;
	case ROLE_STEPD:
		se_step_start();
		break;
	default:
		break;
	}
	slurm_mutex_unlock(&se_state_lock);
}

bool se_energy_fini(const settle_conf_t *settle)
{
	bool keep;

	slurm_mutex_lock(&se_state_lock);
	se_step_tell_end();
	se_node_fini();
	slurm_mutex_unlock(&se_state_lock);
	se_settle_at_fini(settle);
	slurm_mutex_lock(&se_state_lock);
	/*
	 * slurmstepd unloads the plugin (acct_gather_profile_fini()) before
	 * slurm_spank_exit: a step left to spank_energy_settle.so keeps its
	 * state (the .so stays mapped, -z nodelete; the process ends right
	 * after the step's completion is sent) and tells the caller to keep
	 * the configuration too.
	 */
	keep = se_role == ROLE_STEPD && !se_settle_refused();
	if (!keep)
		se_step_drop_question();	/* no settle to read it */
	if (se_role != ROLE_STEPD) {
		memset(&se_step, 0, sizeof(se_step));
		se_step_job = NULL;
		se_context_id = -1;
	}
	slurm_mutex_unlock(&se_state_lock);
	return keep;
}

int se_energy_update_node_energy(void)
{
	/* The sampler keeps the node current; nothing to do on demand. */
	return SLURM_SUCCESS;
}

int se_energy_get_data(int data_type, void *data)
{
	int rc;

	if (!data)
		return SLURM_ERROR;
	slurm_mutex_lock(&se_state_lock);
	switch (se_role) {
	case ROLE_SLURMD:
		rc = se_node_get_data(data_type, data);
		break;
	case ROLE_STEPD:
		rc = se_step_get_data(data_type, data);
		break;
	default:
		rc = SLURM_ERROR;
		break;
	}
	slurm_mutex_unlock(&se_state_lock);
	return rc;
}

int se_energy_set_data(int data_type, void *data)
{
	slurm_mutex_lock(&se_state_lock);
	switch (data_type) {
	case ENERGY_DATA_PROFILE:
		if (se_role == ROLE_STEPD)
			se_step_profile();
		break;
	case ENERGY_DATA_STEP_PTR:
		/* slurmstepd.c, before job_manager(), maybe before conf_set
		 * has set role: for the settle */
		if (se_in_slurmstepd())
			se_step_job = data;
		break;
	case ENERGY_DATA_RECONFIG:
		/* slurmd reloads the plugin on reconfigure (see top) */
		break;
	default:
		error("%s: %s: unknown data type %d", plugin_type, __func__,
		      data_type);
		slurm_mutex_unlock(&se_state_lock);
		return SLURM_ERROR;
	}
	slurm_mutex_unlock(&se_state_lock);
	return SLURM_SUCCESS;
}
