/*
 * gpu_nvml_api.h - what our gpu/nvml (gpu_nvml.c) needs from the file of
 * its release's gpu plugin API (gpu_nvml_2205.c or gpu_nvml_2411.c,
 * chosen by configure).  Include after Slurm's headers and
 * slurm_compat_gres.h.
 */
#ifndef SE_GPU_NVML_API_H
#define SE_GPU_NVML_API_H

/*
 * Add one detected GPU to gres_list the way this release's AutoDetect
 * does: rec describes it (name, count, cpu_cnt, cpus, cpus_bitmap, file,
 * type_name, links, unique_id, config_flags as stock gpu/nvml sets them);
 * rec's strings and bitmap are copied, rec stays the caller's.  22.05's
 * add_gres_to_list() takes those as ten arguments, 23.02+'s a
 * gres_slurmd_conf_t.
 */
extern void se_gpu_add_gres(se_list_t gres_list, gres_slurmd_conf_t *rec);

#endif
