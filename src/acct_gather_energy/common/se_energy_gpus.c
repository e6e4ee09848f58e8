/*
 * se_energy_gpus.c - EnergyGPU=nvml in slurmd: the node-meter plugin also
 * reads the node's NVIDIA GPUs through NVML (src/meters/nvml/), on the
 * meter's clock (doc/design-gpu-nodes.md §2, §4).
 *
 * Slurm does not call in here.  The keys come from the plugin's conf_set
 * (se_energy_set_gpus, in every process).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <limits.h>
#include <stdio.h>

#include "se_energy_int.h"

/* The keys, in every process (se_state_lock) */
static int gpus_kind = GPU_METER_NONE;
static double gpus_factor = 1.0;
static char gpus_library[PATH_MAX];	/* EnergyGPULibrary, "" default */

void se_energy_set_gpus(const gpu_meter_conf_t *c)
{
	slurm_mutex_lock(&se_state_lock);
	gpus_kind = c->kind;
	gpus_factor = c->factor;
	snprintf(gpus_library, sizeof(gpus_library), "%s",
		 c->library ? c->library : "");
	slurm_mutex_unlock(&se_state_lock);
}
