/*
 * se_energy_step_gpus.c - slurmstepd: the GPUs the step holds, as Slurm's
 * device cgroup decides (doc/design-gpu-nodes.md §3.1), read once and sent
 * with every query the step makes (slurmd charges each GPU's energy to its
 * holders).  src/ paths are Slurm's:
 *
 *  plugins/task/cgroup/task_cgroup_devices.c builds the step's device
 *	cgroup from gres_g_get_devices(job_gres_list, true, ...) (the job
 *	level) and, for srun steps only, gres_g_get_devices(step_gres_list,
 *	false, ...) (the step level).  The batch, extern and interactive
 *	steps, and from 23.11 those of an external launcher, get the job
 *	level only.  Both lists come from the step's signed credential: no
 *	variable a user can change is read.
 *
 * We make the same calls, keep each device with alloc set whose file is
 * /dev/nvidiaN and take N (gpu_minors.h).
 *
 * When.  gres_g_get_devices() marks the gres plugins' own device records
 * (alloc cleared, then set), and its caller reads them after it returns
 * with no lock held: a call of ours between task/cgroup's call and its
 * reading could leave a GPU denied to a task.  task/cgroup calls it only in
 * slurmstepd's main thread, in job_manager() (task_g_pre_setuid, and per
 * task post_set_affinity up to 22.05, pre_launch_priv from 23.11), all
 * before the step turns RUNNING.  So the devices are read in the main
 * thread (in turn with those calls: the share registration at conf_set,
 * the poll jobacct_gather makes as the last task is added) or once the
 * step runs.  A question asked from another thread before that says
 * nothing of the GPUs (gpus_known false), and a later one reads them.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "se_energy_int.h"
#include "slurm_compat_gres.h"

#include "gpu_minors.h"

/* Steps given the device cgroup's job level only (task_cgroup_devices.c). */
static bool _job_level_only(const stepd_step_rec_t *job)
{
	return job->step_id.step_id == SLURM_BATCH_SCRIPT ||
	       job->step_id.step_id == SLURM_EXTERN_CONT ||
	       job->step_id.step_id == SLURM_INTERACTIVE_STEP ||
	       SE_STEP_EXT_LAUNCHER(job);
}

/* Whether no task/cgroup call of gres_g_get_devices() can run beside ours
 * (see the top). */
static bool _devices_quiet(const stepd_step_rec_t *job)
{
	return job->state >= SLURMSTEPD_STEP_RUNNING ||
	       getpid() == (pid_t) syscall(SYS_gettid);
}

/*
 * The GPUs of one device-cgroup level into set: true when they say what
 * the step holds.  The list points at the gres plugins' records, which the
 * next call marks again: the minors are copied before it.
 */
static bool _level_minors(se_list_t gres_list, bool is_job,
			  stepd_step_rec_t *job,
			  uint64_t set[ENERGY_QUERY_MINOR_WORDS])
{
	se_list_t devices = gres_g_get_devices(gres_list, is_job, 0, NULL, 0,
					       SE_GRES_DEVICES_STEP(job));
	gpu_minors_t m = { 0 };
	se_list_itr_t it;
	gres_device_t *d;

	if (!devices)
		return false;	/* no gres plugin with device files */
	it = list_iterator_create(devices);
	while ((d = list_next(it)))
		gpu_minors_add_device(&m, d->path, d->dev_num, d->alloc);
	list_iterator_destroy(it);
	FREE_NULL_LIST(devices);
	memcpy(set, m.set, sizeof(m.set));
	return gpu_minors_known(&m);
}

static void _step_gpus_read(stepd_step_rec_t *job)
{
	char job_s[64], step_s[64];

	memset(se_step.gpu_step_minors, 0, sizeof(se_step.gpu_step_minors));
	se_step.gpus_read = true;
	se_step.gpus_step_level = !_job_level_only(job);
	se_step.gpus_known = _level_minors(job->job_gres_list, true, job,
					   se_step.gpu_job_minors);
	if (se_step.gpus_known && se_step.gpus_step_level)
		se_step.gpus_known = _level_minors(job->step_gres_list, false,
						   job,
						   se_step.gpu_step_minors);
	if (!se_step.gpus_known) {
		log_flag(ENERGY, "%s: the step's GPUs are unknown (Slurm's GRES name no NVIDIA GPU here, or a minor above %u): slurmd splits the GPUs' energy by CPU time while it runs",
			 plugin_type, ENERGY_QUERY_MINORS_MAX - 1);
		return;
	}
	step_energy_minors_str(se_step.gpu_job_minors, job_s, sizeof(job_s));
	step_energy_minors_str(se_step.gpu_step_minors, step_s, sizeof(step_s));
	log_flag(ENERGY, "%s: the step's GPUs (minors): job %s, step %s",
		 plugin_type, job_s,
		 se_step.gpus_step_level ? step_s : "(job level only)");
}

void se_step_gpus_fill(energy_query_step_t *q)
{
	stepd_step_rec_t *job = se_step_job;

	/* Without EnergyGPU=nvml slurmd has no use for them: no GRES read
	 * on a step's launch path for a feature that is off */
	if (!se_gpus_configured()) {
		q->gpus_known = false;
		return;
	}
	if (job && !se_step.gpus_read && _devices_quiet(job))
		_step_gpus_read(job);
	step_energy_gpus_fill(&se_step, q);
}
