/*
 * gpu_nvml_2205.c - our gpu/nvml on the gpu plugin API of Slurm 22.05
 * (syms[] of src/common/gpu.c): the entry point only this API has,
 * gpu_p_reconfig (gone in 24.11), and AutoDetect's add_gres_to_list() in
 * its ten-argument form.  Everything else is in gpu_nvml.c.  Chosen by
 * configure (SE_GPU_API_2411 false).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "slurm_compat_gres.h"

#include "gpu_nvml_api.h"

extern void gpu_p_reconfig(void);

/* Nothing of ours depends on slurm.conf's GPU settings. */
extern void gpu_p_reconfig(void)
{
}

extern void se_gpu_add_gres(se_list_t gres_list, gres_slurmd_conf_t *rec)
{
	add_gres_to_list(gres_list, rec->name, rec->count, rec->cpu_cnt,
			 rec->cpus, rec->cpus_bitmap, rec->file,
			 rec->type_name, rec->links, rec->unique_id,
			 rec->config_flags);
}
