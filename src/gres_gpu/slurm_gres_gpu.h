/*
 * slurm_gres_gpu.h - Slurm's stock gres/gpu, compiled from the configured
 * tree (by gres_gpu_<release>.c through slurm_gres_gpu_stock.h) with its
 * entry points renamed stock_*, so that
 * our gres/gpu (gres_gpu.c) keeps every stock behaviour (gres.conf parsing,
 * AutoDetect merge, device files, cgroup device lists) and adds its own.
 * Here: the entry points every release has (22.05 .. 24.11, same
 * signatures); those of one release only are in its gres_gpu_<release>.c.
 * Include after Slurm's headers.
 */
#ifndef SE_SLURM_GRES_GPU_H
#define SE_SLURM_GRES_GPU_H

extern int stock_init(void);
/*
 * Slurm calls a plugin's fini() as void in every release (plugin.c); the
 * stock plugins define it as int up to 25.05 and as void from 25.11
 * (SE_SLURM_STOCK_FINI_VOID from configure, read in the tree's stock
 * gres/gpu).  se_stock_fini() is stock's fini with stock's result, or
 * SLURM_SUCCESS where it has none.
 */
#ifdef SE_SLURM_STOCK_FINI_VOID
extern void stock_fini(void);
static inline int se_stock_fini(void)
{
	stock_fini();
	return SLURM_SUCCESS;
}
#else
extern int stock_fini(void);
static inline int se_stock_fini(void)
{
	return stock_fini();
}
#endif
extern int stock_gres_p_node_config_load(se_list_t gres_conf_list,
					 node_config_load_t *node_config);
extern void stock_gres_p_job_set_env(char ***job_env_ptr,
				     bitstr_t *gres_bit_alloc,
				     uint64_t gres_cnt,
				     gres_internal_flags_t flags);
extern void stock_gres_p_step_set_env(char ***step_env_ptr,
				      bitstr_t *gres_bit_alloc,
				      uint64_t gres_cnt,
				      gres_internal_flags_t flags);
extern void stock_gres_p_task_set_env(char ***step_env_ptr,
				      bitstr_t *gres_bit_alloc,
				      uint64_t gres_cnt,
				      bitstr_t *usable_gres,
				      gres_internal_flags_t flags);
extern void stock_gres_p_send_stepd(buf_t *buffer);
extern void stock_gres_p_recv_stepd(buf_t *buffer);
extern se_list_t stock_gres_p_get_devices(void);
extern void stock_gres_p_step_hardware_init(bitstr_t *usable_gpus,
					    char *tres_freq);
extern void stock_gres_p_step_hardware_fini(void);

#endif
