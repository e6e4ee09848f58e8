/*
 * slurm_compat_submit.h - where Slurm releases differ for a job_submit
 * plugin (see slurm_compat.h for the scheme).  Include after
 * src/slurmctld/slurmctld.h (job_record_t).
 *
 *  - job_modify() takes a fourth argument, char **err_msg, from 23.02 on
 *    (24.11 src/interfaces/job_submit.c: int (*modify)(job_desc_msg_t *,
 *    job_record_t *, uint32_t submit_uid, char **err_msg); 22.05
 *    src/slurmctld/job_submit.c: three arguments).  No compiler sees a
 *    mismatch (the plugin is found by dlsym), so the prototype comes from
 *    here and the definition is written with SE_JOB_MODIFY_ARGS:
 *
 *	extern int job_modify(SE_JOB_MODIFY_ARGS(job_desc, job_ptr,
 *						 submit_uid, err_msg))
 *
 *    Where the release has no such argument there is no err_msg either: a
 *    use of it fails to compile there, loudly, rather than reading a
 *    register that holds nothing.
 *  - job_submit(job_desc_msg_t *, uint32_t submit_uid, char **err_msg):
 *    unchanged 22.05 .. 24.11.
 *  - cli_filter_p_setup_defaults(slurm_opt_t *, bool early),
 *    cli_filter_p_pre_submit(slurm_opt_t *, int offset),
 *    cli_filter_p_post_submit(int offset, uint32_t jobid, uint32_t stepid):
 *    unchanged 22.05 .. 24.11 (src/interfaces/cli_filter.c), declared in the
 *    plugin itself.  SPANK: <slurm/spank.h> declares its own (24.11 adds
 *    spank_prepend_task_argv(), 26.05 slurm_spank_init_failure_mode; none
 *    is used).
 *  - --cpu-freq's encoding (cpu_freq_min/max/gov) is the same, but not its
 *    meaning: 24.11's clients send a single frequency with the userspace
 *    governor and its slurmstepd ignores a frequency without a governor
 *    (no CpuFreqDef); 22.05 sends and runs it without one.  Our plugins
 *    write and read a single frequency as max + userspace on every
 *    release, which both run at that frequency: no #if, the one place is
 *    src/cpufreq/freq_slurm.c.
 */
#ifndef SE_SLURM_COMPAT_SUBMIT_H
#define SE_SLURM_COMPAT_SUBMIT_H

#include "slurm_compat.h"

#ifdef SE_SLURM_JOB_MODIFY_ERR_MSG
#  define SE_JOB_MODIFY_ARGS(desc, job, uid, msg)			\
	job_desc_msg_t *desc, job_record_t *job, uint32_t uid, char **msg
#else
#  define SE_JOB_MODIFY_ARGS(desc, job, uid, msg)			\
	job_desc_msg_t *desc, job_record_t *job, uint32_t uid
#endif

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg);
extern int job_modify(SE_JOB_MODIFY_ARGS(job_desc, job_ptr, submit_uid,
					 err_msg));

#endif
