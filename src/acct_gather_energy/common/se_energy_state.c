/*
 * se_energy_state.c - the state every file of the energy glue shares,
 * below them all: the lock, the process's role, Slurm's plugin context,
 * the node's name, the step's energy (step_energy.h) and record, and the
 * attribution mode.
 *
 * Slurm does not call in here, and nothing here calls another file of
 * the glue: the dispatcher (se_energy.c) calls the role files, the role
 * files call down to this one (tests/check_layering.py keeps it so).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <stdlib.h>

#include "se_energy_int.h"

pthread_mutex_t se_state_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t se_scan_lock = PTHREAD_MUTEX_INITIALIZER;
role_t se_role;
int se_context_id = -1;
step_energy_t se_step;
stepd_step_rec_t *se_step_job;
attrib_mode_t se_attribution_mode;

const char *se_energy_node_name(void)
{
	if (!se_in_slurmd_or_stepd())
		return NULL;
	if (&conf && conf && conf->node_name)
		return conf->node_name;
	return getenv("SLURMD_NODENAME");
}

bool se_share_mode(void)
{
	return se_attribution_mode == ATTRIB_MODE_SHARE;
}

int se_energy_get_common(int data_type, time_t last_poll, void *data)
{
	switch (data_type) {
	case ENERGY_DATA_LAST_POLL:
		*(time_t *) data = last_poll;
		return SLURM_SUCCESS;
	case ENERGY_DATA_SENSOR_CNT:
		/* Always 1: with 0, slurmd leaves the step's RPC unanswered. */
		*(uint16_t *) data = 1;
		return SLURM_SUCCESS;
	default:
		error("%s: %s: unknown data type %d", plugin_type, __func__,
		      data_type);
		return SLURM_ERROR;
	}
}
