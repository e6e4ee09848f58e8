/*
 * slurm_compat_ext_sensors.h - where Slurm releases differ for an
 * ext_sensors plugin (see slurm_compat.h for the scheme).  ext_sensors
 * exists up to 23.11 (removed in 24.05; configure builds no ext_sensors
 * plugin there).
 *
 *  - the interface headers: src/common/slurm_ext_sensors.h and
 *    slurm_jobacct_gather.h (a step's jobacct; 22.05's slurmctld.h pulled
 *    it in, 23.11's does not), src/interfaces/ext_sensors.h and
 *    jobacct_gather.h (23.02+: SE_SLURM_IFACE_INTERFACES);
 *  - the topology header (switch_record_table, switch_record_cnt):
 *    src/common/slurm_topology.h (22.05), src/interfaces/topology.h
 *    (23.11: SE_SLURM_TOPOLOGY_IFACE, found by configure);
 *  - get_config returns a List (22.05: struct xlist *; 23.11's ops still
 *    say List, a typedef of the same pointer): se_list_t.
 * The four entry points' signatures are otherwise the same in 22.05 and
 * 23.11 (ops of slurm_ext_sensors.c / ext_sensors.c).
 */
#ifndef SE_SLURM_COMPAT_EXT_SENSORS_H
#define SE_SLURM_COMPAT_EXT_SENSORS_H

#include "slurm_compat.h"

#ifdef SE_SLURM_IFACE_INTERFACES
#  include "src/interfaces/ext_sensors.h"
#  include "src/interfaces/jobacct_gather.h"
#else
#  include "src/common/slurm_ext_sensors.h"
#  include "src/common/slurm_jobacct_gather.h"
#endif
#ifdef SE_SLURM_TOPOLOGY_IFACE
#  include "src/interfaces/topology.h"
#else
#  include "src/common/slurm_topology.h"
#endif
#include "src/slurmctld/slurmctld.h"

/* Entry points Slurm resolves with dlsym() (syms[] of ext_sensors.c). */
extern int ext_sensors_p_update_component_data(void);
extern int ext_sensors_p_get_stepstartdata(step_record_t *step_rec);
extern int ext_sensors_p_get_stependdata(step_record_t *step_rec);
extern se_list_t ext_sensors_p_get_config(void);

#endif
