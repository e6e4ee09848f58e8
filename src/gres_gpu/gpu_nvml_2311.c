/*
 * gpu_nvml_2311.c - our gpu/nvml on the gpu plugin API of Slurm 23.11
 * (syms[] of src/interfaces/gpu.c, checked against 23.11.11): both
 * gpu_p_reconfig (22.05 .. 23.11) and gpu_p_usage_read (23.11+), and
 * AutoDetect's add_gres_to_list() taking a gres_slurmd_conf_t (23.02+),
 * with stock's GRES_CONF_AUTODETECT flag where the tree has it (24.11+).
 * Everything else is in gpu_nvml.c.  Chosen by configure (SE_GPU_API_2311:
 * the tree's syms[] names both).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "slurm_compat_gres.h"

#include "gpu_nvml_api.h"

extern void gpu_p_reconfig(void);
extern int gpu_p_usage_read(pid_t pid, acct_gather_data_t *data);

/* Nothing of ours depends on slurm.conf's GPU settings. */
extern void gpu_p_reconfig(void)
{
}

/*
 * Per-process GPU memory and utilisation for jobacct_gather's gpumem and
 * gpuutil TRES: not read (our NVML loader reads energy, clocks and
 * topology).  Nothing is filled, as gpu/generic does; the TRES stay 0.
 */
extern int gpu_p_usage_read(pid_t pid, acct_gather_data_t *data)
{
	return SLURM_SUCCESS;
}

extern void se_gpu_add_gres(se_list_t gres_list, gres_slurmd_conf_t *rec)
{
	rec->config_flags |= SE_GRES_CONF_AUTODETECT;
	add_gres_to_list(gres_list, rec);
}
