/*
 * gpu_nvml_2411.c - our gpu/nvml on the gpu plugin API of Slurm 24.05 ..
 * 26.05 (syms[] of src/interfaces/gpu.c, checked against 24.05.8, 24.11.5,
 * 25.05.8, 25.11.7, 26.05.3): the entry point only this API has,
 * gpu_p_usage_read (24.05 dropped gpu_p_reconfig), and AutoDetect's
 * add_gres_to_list() taking a gres_slurmd_conf_t (23.02+), with stock's
 * GRES_CONF_AUTODETECT flag where the tree has it (24.11+).  Everything
 * else is in gpu_nvml.c.  Chosen by configure (SE_GPU_API_2411).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "slurm_compat_gres.h"

#include "gpu_nvml_api.h"

extern int gpu_p_usage_read(pid_t pid, acct_gather_data_t *data);

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
