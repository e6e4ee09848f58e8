/*
 * slurm_compat_gres.h - where Slurm releases differ for the gres/gpu side
 * (see slurm_compat.h for the scheme): the headers.
 *
 *  - src/common/gres.h and src/common/gpu.h (22.05) moved to
 *    src/interfaces/ (23.02);
 *  - what changed in the *entry points* of gres/gpu and gpu/nvml (a
 *    different set of functions, not only types) is not absorbed here but in
 *    one file per release, chosen by configure from the tree's syms[]:
 *      src/gres_gpu/gres_gpu_{2205,2311,2411}.c   (gres plugin API)
 *      src/gres_gpu/gpu_nvml_{2205,2311,2411}.c   (gpu plugin API)
 *    with their shared declarations in src/gres_gpu/gres_gpu_api.h and
 *    gpu_nvml_api.h.
 */
#ifndef SE_SLURM_COMPAT_GRES_H
#define SE_SLURM_COMPAT_GRES_H

#include "slurm_compat.h"

#ifdef SE_SLURM_IFACE_INTERFACES
#  include "src/interfaces/gres.h"
#  include "src/interfaces/gpu.h"
#else
#  include "src/common/gres.h"
#  include "src/common/gpu.h"
#endif

/*
 * The flag stock gpu/nvml gives AutoDetect's records (gres.h, a macro in
 * 24.11+; 23.11 and 24.05 have none): 0 where the tree has none.
 */
/*
 * The last argument of gres_g_get_devices(): the step record from 23.02 on
 * (task/cgroup passes its step), a pid_t up to 22.05 (task/cgroup passes 0
 * for the job and step levels).  Either way what the device cgroup's job
 * and step levels are built with.
 */
#ifdef SE_SLURM_GRES_DEVICES_STEP
#  define SE_GRES_DEVICES_STEP(step)	(step)
#else
#  define SE_GRES_DEVICES_STEP(step)	((void) (step), 0)
#endif

/*
 * A step launched by an external launcher (23.11+: LAUNCH_EXT_LAUNCHER in
 * the step's flags) gets the device cgroup's job level only, like the
 * batch step; 22.05 has no such step.
 */
#ifdef LAUNCH_EXT_LAUNCHER
#  define SE_STEP_EXT_LAUNCHER(step)	((step)->flags & LAUNCH_EXT_LAUNCHER)
#else
#  define SE_STEP_EXT_LAUNCHER(step)	((void) (step), 0)
#endif

#ifdef GRES_CONF_AUTODETECT
#  define SE_GRES_CONF_AUTODETECT	GRES_CONF_AUTODETECT
#else
#  define SE_GRES_CONF_AUTODETECT	0
#endif

#endif
