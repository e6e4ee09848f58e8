/*
 * gres_gpu_2411.c - our gres/gpu on the gres plugin API of Slurm 24.11 ..
 * 26.05 (checked against 24.11.5, 25.05.8, 25.11.7, 26.05.3; 23.11 and
 * 24.05 also have gres_p_get_{job,step}_info: gres_gpu_2311.c): Slurm's stock gres/gpu of the configured tree
 * compiled in (entry points renamed stock_*, see slurm_gres_gpu_stock.h),
 * and the entry points only this API has (syms[] of
 * src/interfaces/gres.c; a missing one makes the plugin "incomplete" and
 * slurmd does not load it):
 *
 *	gres_p_prep_build_env, gres_p_prep_set_env	(22.05: gres_p_epilog_*)
 *
 * They add nothing to stock.  The entry points every release has are in
 * gres_gpu.c.  Chosen by configure (SE_GRES_API_2411).
 */
#include "slurm_gres_gpu_stock.h"

/* The stock file's entry points of this API only, renamed (checked against
 * their definitions in the stock file just below). */
extern gres_prep_t *stock_gres_p_prep_build_env(gres_job_state_t *gres_js);
extern void stock_gres_p_prep_set_env(char ***prep_env_ptr,
				      gres_prep_t *gres_prep, int node_inx);

#include "src/plugins/gres/gpu/gres_gpu.c"

#undef gres_p_prep_build_env
#undef gres_p_prep_set_env

extern gres_prep_t *gres_p_prep_build_env(gres_job_state_t *gres_js);
extern void gres_p_prep_set_env(char ***prep_env_ptr, gres_prep_t *gres_prep,
				int node_inx);

extern gres_prep_t *gres_p_prep_build_env(gres_job_state_t *gres_js)
{
	return stock_gres_p_prep_build_env(gres_js);
}

extern void gres_p_prep_set_env(char ***prep_env_ptr, gres_prep_t *gres_prep,
				int node_inx)
{
	stock_gres_p_prep_set_env(prep_env_ptr, gres_prep, node_inx);
}
