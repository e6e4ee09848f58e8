/*
 * slurm_compat.h - where Slurm releases differ for our glue: the base.
 *
 * Only Slurm-glue files include this (after Slurm's "config.h"); the
 * Slurm-free core never does.  Plugins never test SLURM_VERSION_NUMBER: they
 * include the compat header of their API family, which absorbs the
 * difference:
 *
 *   slurm_compat.h         list/hostlist types, errno, which daemon runs us
 *   slurm_compat_energy.h  acct_gather_energy headers, entry points, the
 *                          energy TRES index, fields added to the record
 *   slurm_compat_submit.h  job_submit / cli_filter entry points
 *   slurm_compat_gres.h    gres.h / gpu.h, wherever the release keeps them
 *   slurm_compat_ext_sensors.h  ext_sensors and topology headers, entry
 *                          points (up to 23.11)
 *
 * The drop-in gres/gpu and gpu/nvml, whose *set* of entry points changes,
 * keep what differs in one file per release (src/gres_gpu/..._2205.c,
 * *_2411.c), chosen by configure.
 *
 * What configure found in the tree arrives as -D flags (SLURM_CPPFLAGS; see
 * m4/se_slurm.m4), never guessed from the version number:
 *   SE_SLURM_IFACE_INTERFACES     plugin-interface headers in src/interfaces/
 *                                 (23.02+), else src/common/
 *   SE_SLURM_HAVE_RUNNING_IN      running_in_slurmd() & co exist (functions
 *                                 up to 24.11, macros from 25.05)
 *   SE_SLURM_STOCK_FINI_VOID      stock plugins define void fini() (25.11+)
 *   SE_SLURM_JOB_MODIFY_ERR_MSG   job_modify() takes char **err_msg (23.02+)
 *   SE_SLURM_LOAD_JOB_STEP_ID     slurm_load_job() takes a slurm_step_id_t
 *                                 instead of a job id (26.05)
 *   SE_SLURM_GRES_DEVICES_STEP    gres_g_get_devices() takes the step
 *                                 record, not a pid_t (23.02+)
 *
 * Differences absorbed here, per release:
 *  - List / ListIterator (22.05: typedefs of struct xlist *, struct
 *    listIterator *) became list_t / list_itr_t (the structs themselves,
 *    23.02+; the old names are gone in 23.11): se_list_t and se_list_itr_t
 *    name the pointer in every release.
 *  - hostlist_t was a pointer up to 23.05 and is the struct from 23.11:
 *    se_hostlist_t is the pointer in every release.
 *  - slurm_get_errno() is gone in 24.11 (it returned errno): se_slurm_errno().
 *  - running_in_slurmd() & co are functions up to 24.11 and macros over
 *    run_in_daemon(IS_SLURMD) & co from 25.05 (src/common/run_in_daemon.h;
 *    libslurmfull no longer exports the names): se_in_slurmd() & co
 *    (slurm_compat.c) call whichever the header gives.
 *  - slurm_load_job() takes a slurm_step_id_t (job id or SLUID) in 26.05,
 *    a job id before: se_slurm_load_job().
 */
#ifndef SE_SLURM_COMPAT_H
#define SE_SLURM_COMPAT_H

#include <errno.h>
#include <stdbool.h>

#include "slurm/slurm.h"
#include "slurm/slurm_version.h"

#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "conf_map.h"

#ifndef SLURM_VERSION_NUM
#  define SLURM_VERSION_NUM(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#endif

/* A Slurm list and its iterator, as pointers, in every release. */
typedef struct xlist *se_list_t;
typedef struct listIterator *se_list_itr_t;

/* A Slurm hostlist, as a pointer, in every release. */
typedef struct hostlist *se_hostlist_t;

/*
 * The errno of the last failed Slurm API call.  slurm_get_errno() only ever
 * returned errno, and 24.11 removed it.
 */
#define se_slurm_errno()	(errno)

/*
 * Which Slurm daemon loaded us.  These are Slurm's own running_in_slurmd(),
 * running_in_slurmstepd() and running_in_slurmd_stepd() (up to 24.11 the
 * name the daemon gave log_init(), from 25.05 the daemon's slurm_daemon bits
 * through run_in_daemon(): exactly Slurm's view).  Where a tree's
 * run_in_daemon.h has none of them (none known today), the basename of
 * the process's executable (/proc/self/exe), read once: "slurmd" or
 * "slurmstepd" (slurmd starts slurmstepd by its full path, SlurmdStepdLoc
 * aside; argv[0] is no use, slurmstepd rewrites it with setproctitle()).
 */
extern bool se_in_slurmd(void);
extern bool se_in_slurmstepd(void);
extern bool se_in_slurmd_or_stepd(void);

/*
 * Is node one of the hostlist expression expr ("node[1-4],gpu2")?  1 or 0,
 * -EINVAL for an expression Slurm cannot parse.  The shape of the map
 * readers' contains() callback (modbus_hostlist_ops_t, bmc_hostlist_ops_t),
 * which keep the core free of Slurm; arg is unused.
 */
extern int se_hostlist_contains(void *arg, const char *expr,
				const char *node);

/*
 * How many distinct hosts the union of n hostlist expressions names, or
 * -EINVAL if Slurm cannot parse one: the map readers' count() callback
 * (modbus_hostlist_ops_t, snmp_hostlist_ops_t); arg is unused.
 */
extern long se_hostlist_count(void *arg, const char *const *exprs, size_t n);

/* The two above as the map readers' se_hostlist_ops_t (conf_map.h). */
extern const se_hostlist_ops_t se_slurm_hostlist_ops;

/*
 * slurm_load_job() of one job by its id, in every release.  26.05 takes a
 * slurm_step_id_t (slurm.h: "job_id or sluid to target"; sluid 0 selects by
 * job_id, as its own sbatch --wait does).
 */
static inline int se_slurm_load_job(job_info_msg_t **resp, uint32_t job_id,
				    uint16_t show_flags)
{
#ifdef SE_SLURM_LOAD_JOB_STEP_ID
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job_id;
	return slurm_load_job(resp, id, show_flags);
#else
	return slurm_load_job(resp, job_id, show_flags);
#endif
}

/* What every Slurm plugin defines and Slurm looks up (all releases). */
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
extern int init(void);
extern int fini(void);

/*
 * The fallback's test, exposed for unit tests: whether the basename of
 * exe_path is name.  NULL exe_path: the process's own executable.
 */
extern bool se_exe_is(const char *exe_path, const char *name);

#endif
