/*
 * gres_gpu_2311.c - our gres/gpu on the gres plugin API of Slurm 23.11 and
 * 24.05 (checked against 23.11.11 and 24.05.8): Slurm's stock gres/gpu of
 * the configured tree compiled in (entry points renamed stock_*, see
 * slurm_gres_gpu_stock.h), and the entry points only this API has (syms[]
 * of src/interfaces/gres.c; a missing one makes the plugin "incomplete"
 * and slurmd does not load it):
 *
 *	gres_p_get_job_info, gres_p_get_step_info	(22.05 .. 24.05)
 *	gres_p_prep_build_env, gres_p_prep_set_env	(23.02+)
 *
 * They add nothing to stock.  The entry points every release has are in
 * gres_gpu.c.  Chosen by configure (SE_GRES_API_2311: the tree's syms[]
 * names both gres_p_get_job_info and gres_p_prep_build_env).
 */
#include "slurm_gres_gpu_stock.h"

/* The stock file's entry points of this API only, renamed (checked against
 * their definitions in the stock file just below). */
extern int stock_gres_p_get_job_info(gres_job_state_t *gres_js,
				     uint32_t node_inx,
				     enum gres_job_data_type data_type,
				     void *data);
extern int stock_gres_p_get_step_info(gres_step_state_t *gres_ss,
				      uint32_t node_inx,
				      enum gres_step_data_type data_type,
				      void *data);
extern gres_prep_t *stock_gres_p_prep_build_env(gres_job_state_t *gres_js);
extern void stock_gres_p_prep_set_env(char ***prep_env_ptr,
				      gres_prep_t *gres_prep, int node_inx);

#include "src/plugins/gres/gpu/gres_gpu.c"

#undef gres_p_get_job_info
#undef gres_p_get_step_info
#undef gres_p_prep_build_env
#undef gres_p_prep_set_env

extern int gres_p_get_job_info(gres_job_state_t *gres_js, uint32_t node_inx,
			       enum gres_job_data_type data_type, void *data);
extern int gres_p_get_step_info(gres_step_state_t *gres_ss, uint32_t node_inx,
				enum gres_step_data_type data_type, void *data);
extern gres_prep_t *gres_p_prep_build_env(gres_job_state_t *gres_js);
extern void gres_p_prep_set_env(char ***prep_env_ptr, gres_prep_t *gres_prep,
				int node_inx);

extern int gres_p_get_job_info(gres_job_state_t *gres_js, uint32_t node_inx,
			       enum gres_job_data_type data_type, void *data)
{
	return stock_gres_p_get_job_info(gres_js, node_inx, data_type, data);
}

extern int gres_p_get_step_info(gres_step_state_t *gres_ss, uint32_t node_inx,
				enum gres_step_data_type data_type, void *data)
{
	return stock_gres_p_get_step_info(gres_ss, node_inx, data_type, data);
}

extern gres_prep_t *gres_p_prep_build_env(gres_job_state_t *gres_js)
{
	return stock_gres_p_prep_build_env(gres_js);
}

extern void gres_p_prep_set_env(char ***prep_env_ptr, gres_prep_t *gres_prep,
				int node_inx)
{
	stock_gres_p_prep_set_env(prep_env_ptr, gres_prep, node_inx);
}
