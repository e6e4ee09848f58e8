/*
 * slurm_compat_energy.h - where Slurm releases differ for an
 * acct_gather_energy plugin (see slurm_compat.h for the scheme).
 *
 *  - the interface headers: src/common/slurm_acct_gather_energy.h (22.05),
 *    src/interfaces/acct_gather_energy.h (23.02+), likewise the profile one;
 *  - conf_values takes a pointer to a list in every release (22.05:
 *    List *, i.e. struct xlist **; 24.11: list_t **);
 *  - TRES_ARRAY_ENERGY lives in src/slurmctld/slurmctld.h, which 22.05's
 *    slurmd.h pulled in and 24.11's does not; slurmstepd code must not
 *    include slurmctld.h, so SE_TRES_ARRAY_ENERGY is defined here and
 *    checked against tres_types_t (TRES_ENERGY, 1-based, slurmdb_defs.h);
 *  - acct_gather_energy_t gained slurmd_start_time (packed, "has slurmd been
 *    restarted") and last_adjustment (not packed) in 24.11
 *    (SE_SLURM_ENERGY_START_TIME from configure):
 *    se_energy_set_start_time() and se_energy_start_time().
 *    What else changed in energy accounting, release by release:
 *    doc/releases-survey.md, "Energy accounting per release".
 */
#ifndef SE_SLURM_COMPAT_ENERGY_H
#define SE_SLURM_COMPAT_ENERGY_H

#include "slurm_compat.h"

#include "src/common/slurmdb_defs.h"
#ifdef SE_SLURM_IFACE_INTERFACES
#  include "src/interfaces/acct_gather_energy.h"
#  include "src/interfaces/acct_gather_profile.h"
#else
#  include "src/common/slurm_acct_gather_energy.h"
#  include "src/common/slurm_acct_gather_profile.h"
#endif

/*
 * Index of energy in a step's TRES arrays (jobacctinfo_t tres_usage_*):
 * TRES_ARRAY_CPU = 0, TRES_ARRAY_MEM, TRES_ARRAY_ENERGY (slurmctld.h, 22.05
 * and 24.11), i.e. tres_types_t's TRES_ENERGY (3) - 1.
 */
#define SE_TRES_ARRAY_ENERGY	(TRES_ENERGY - 1)
_Static_assert(TRES_ENERGY - 1 == 2,
	       "energy is no longer the third TRES: check TRES_ARRAY_ENERGY in src/slurmctld/slurmctld.h");

#ifdef SE_SLURM_ENERGY_START_TIME
/* slurmd's start time (node_conf.c; set at its first registration). */
extern time_t slurmd_start_time;
#endif

/*
 * Node energy records (slurmd's answers) carry slurmd's start time from
 * 24.11 on, which a step uses to tell a restarted slurmd (its energy counts
 * from zero again).  No-op before 24.11.
 */
static inline void se_energy_set_start_time(acct_gather_energy_t *e)
{
#ifdef SE_SLURM_ENERGY_START_TIME
	e->slurmd_start_time = slurmd_start_time;
#else
	(void) e;
#endif
}

/* The slurmd start time a node energy record carries; 0 before 24.11. */
static inline time_t se_energy_start_time(const acct_gather_energy_t *e)
{
#ifdef SE_SLURM_ENERGY_START_TIME
	return e->slurmd_start_time;
#else
	(void) e;
	return 0;
#endif
}

/*
 * The entry points Slurm resolves with dlsym() in every acct_gather_energy
 * plugin (syms[] in slurm_acct_gather_energy.c / acct_gather_energy.c,
 * identical in 22.05 and 24.11).  Declared here so that each plugin is
 * compiled against the signatures of the release it is built for, and so
 * -Wmissing-prototypes holds.
 */
extern int acct_gather_energy_p_update_node_energy(void);
extern int acct_gather_energy_p_get_data(enum acct_energy_type data_type,
					 void *data);
extern int acct_gather_energy_p_set_data(enum acct_energy_type data_type,
					 void *data);
extern void acct_gather_energy_p_conf_options(s_p_options_t **full_options,
					      int *full_options_cnt);
extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl);
extern void acct_gather_energy_p_conf_values(se_list_t *data);

#endif
