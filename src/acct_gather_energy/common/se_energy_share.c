/*
 * se_energy_share.c - EnergyAttribution=share in slurmd: each interval of
 * the node's energy split among the steps on the node by their cgroups'
 * CPU time (attrib.h, cg_cpu.h; the model in
 * acct_gather_energy_attribution(5)).
 *
 * Slurm does not call in here.  The keys come from the plugin's conf_set
 * (se_energy_set_attribution, in every process); in slurmd the sampler's
 * thread feeds the split after each sample (_attr_on_sample), and the
 * energy query server's thread registers the steps' begin and end and
 * answers their shares (se_share_answer).  The step's side (its share
 * queries, the settle of its share) is in se_energy_step.c and
 * se_energy_settle.c.
 *
 * share_conf: the EnergyAttribution keys, in every process (the mode in
 * se_attribution_mode, se_energy_state.c, which the GPUs and the step read
 * too).  slurmd:
 * split, the node's energy split among its steps (attrib.h), lives as long
 * as slurmd (the plugin is -z nodelete: a reload continues every step's
 * share); split_lock guards it between the sampler thread (on_sample:
 * split) and the query server's thread (shares).  cgroup_scan (the CPU
 * time of every step's cgroup under cgroup_root), cgroup_scan_rc,
 * said_sluid and the status file are the sampler thread's, under
 * se_scan_lock (a sampler thread left behind by a reload, stuck in its
 * meter, may still finish one sample); so are the GPUs' readings
 * (EnergyGPU=nvml, se_energy_gpus.c).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "se_energy_int.h"

#include "attrib.h"
#include "cg_cpu.h"

static attrib_conf_t share_conf;
static char conf_cgroup_root[PATH_MAX];	/* EnergyCgroupRoot, "" auto */
static pthread_mutex_t split_lock = PTHREAD_MUTEX_INITIALIZER;
static attrib_t *split;
static char cgroup_root[PATH_MAX];
static cg_scan_t cgroup_scan;
static bool said_sluid;	/* SLUID job cgroups seen last scan */
static int cgroup_scan_rc = 1;		/* 1: none yet */
static char split_status[PATH_MAX];	/* the totals file, "" none */
static uint64_t split_period_ns;	/* the sampler's (se_share_start) */
/* An ended step's final share stays in the snapshot this many sampler
 * periods (attrib_running_steps' linger): its end kicks extra samples, so
 * without it the final total might be listed for milliseconds, and an
 * exporter scraped every period would miss it. */
#define SNAPSHOT_LINGER_PERIODS	2

void se_energy_set_attribution(const attrib_conf_t *c)
{
	slurm_mutex_lock(&se_state_lock);
	se_attribution_mode = c->mode;
	share_conf.idle = c->idle;
	share_conf.idle_set = c->idle_set;
	share_conf.idle_mw = c->idle_mw;
	snprintf(conf_cgroup_root, sizeof(conf_cgroup_root), "%s",
		 c->cgroup_root ? c->cgroup_root : "");
	slurm_mutex_unlock(&se_state_lock);
}

/*
 * The node's totals since slurmd's split began, for admins and tests, in
 * <SlurmdSpoolDir>/slurm-energy-<node>.attribution (one line, replaced
 * atomically at each sample): "time=<wall s> t_ns=<monotonic>
 * measured_mj= charged_mj= unattributed_mj= idle_mw= idle=configured|
 * learned|unknown intervals= jobs=", then with EnergyGPU=nvml the GPUs'
 * (se_gpus_write_status: "gpus= gpu_raw_mj= ... gpu<i>=<minor>:<state>").
 * charged + unattributed + gpu_held == measured.
 */
static void _attr_write_status(const attrib_totals_t *t, uint64_t t_ns)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (!split_status[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", split_status);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "time=%.3f t_ns=%"PRIu64" measured_mj=%"PRIu64" charged_mj=%"PRIu64" unattributed_mj=%"PRIu64" idle_mw=%"PRIu64" idle=%s intervals=%lu jobs=%zu sluid_jobs=%zu sluid_unread=%zu",
		(double) se_mono_to_wall_ns(t_ns) / 1e9, t_ns, t->measured_mj,
		t->charged_mj, t->unattributed_mj, t->idle_mw,
		share_conf.idle_set ? "configured" :
		(t->idle_learned ? "learned" : "unknown"), t->intervals,
		t->jobs, cgroup_scan.sluid_jobs, cgroup_scan.sluid_unread);
	se_gpus_write_status(f, t);
	fputc('\n', f);
	if (fclose(f) || rename(tmp, split_status))
		unlink(tmp);
}

/*
 * Read the steps' CPU time from their cgroups (se_scan_lock held); say what
 * changed since the last scan.  0, -ENOENT (no job tree yet), or -errno.
 */
static int _attr_scan(void)
{
	int rc = cg_scan(cgroup_root, &cgroup_scan);

	if (rc != cgroup_scan_rc && rc && rc != -ENOENT)
		error("%s: energy attribution: cannot read the steps' CPU time under %s: %s; intervals are merged until it reads again",
		      plugin_type, cgroup_root, strerror(-rc));
	else if (rc != cgroup_scan_rc)
		log_flag(ENERGY, "%s: energy attribution: %s %s", plugin_type,
			 cgroup_root, rc ? "does not exist yet (no job)" :
			 "read");
	cgroup_scan_rc = rc;
	/* Slurm 26.05's cgroup v2 names job directories by SLUID unless
	 * CgroupJobIdPaths=yes; cg_scan() maps them through their steps'
	 * slurmstepd, and says how many it could not */
	if (!rc && cgroup_scan.sluid_unread && !said_sluid)
		log_flag(ENERGY, "%s: energy attribution: %zu job cgroup(s) under %s named by SLUID with no slurmstepd to tell their job id, not read this time (CgroupJobIdPaths=yes in cgroup.conf names them by job id)",
			 plugin_type, cgroup_scan.sluid_unread, cgroup_root);
	said_sluid = !rc && cgroup_scan.sluid_unread;
	return rc;
}

/*
 * The split of the interval ending at t_ns (se_scan_lock held): with
 * GPUs, each one's energy first (attrib_interval_gpus); without, as
 * before they existed.  The totals after it into tot; false without a
 * split.
 */
static bool _attr_split(uint64_t t_ns, uint64_t energy_mj, const cg_scan_t *scan,
			attrib_totals_t *tot)
{
	attrib_gpu_energy_t g[ATTRIB_MAX_GPUS];
	size_t n = se_gpus_interval(t_ns, g);
	attrib_totals_t before;
	int rc;

	slurm_mutex_lock(&split_lock);
	if (!split) {
		slurm_mutex_unlock(&split_lock);
		se_gpus_split_done(t_ns, 0, NULL, NULL);
		return false;
	}
	if (n) {
		attrib_totals(split, &before);
		rc = attrib_interval_gpus(split, t_ns, energy_mj, scan, g, n);
	} else {
		rc = attrib_interval(split, t_ns, energy_mj, scan, NULL, 0);
	}
	if (rc == -ENOMEM)
		error("%s: energy attribution: out of memory", plugin_type);
	attrib_totals(split, tot);
	slurm_mutex_unlock(&split_lock);
	se_gpus_split_done(t_ns, rc, n ? &before : tot, tot);
	return true;
}

/*
 * slurmd's sampler thread, after each good sample: the steps' CPU time
 * from their cgroups, the GPUs' energy (EnergyGPU=nvml), and the split of
 * the energy since the previous sample.  A scan that fails (other than
 * "no job tree yet") splits nothing: the next sample's interval then
 * covers this one too (the GPUs' as well).
 */
static void _attr_on_sample(void *arg, uint64_t t_ns, uint64_t energy_mj)
{
	attrib_totals_t tot;
	int rc;

	(void) arg;
	slurm_mutex_lock(&se_scan_lock);
	rc = _attr_scan();
	if (rc && rc != -ENOENT) {
		slurm_mutex_unlock(&se_scan_lock);
		return;
	}
	if (_attr_split(t_ns, energy_mj, rc ? NULL : &cgroup_scan, &tot))
		_attr_write_status(&tot, t_ns);
	slurm_mutex_unlock(&se_scan_lock);
}

/*
 * Register the step's GPUs (sampler masks from its minors) when slurmd
 * meters GPUs, split_lock held; only for a step the split knows (a query
 * naming an unknown step must still answer -ENOENT).
 */
static void _share_step_gpus(gpu_energy_t *ge, const energy_query_step_t *st)
{
	uint64_t step_mask, job_mask;

	if (!se_gpus_configured())
		return;
	se_gpus_masks(ge, st, &step_mask, &job_mask);
	if (attrib_step_gpus(split, st->job_id, st->step_id, step_mask,
			     job_mask, st->gpus_known) == -ENOMEM)
		error("%s: energy attribution: out of memory", plugin_type);
}

int se_share_answer(void *arg, const energy_query_step_t *st,
		    uint64_t t0_ns, uint64_t t1_ns, uint64_t *share_mj,
		    uint64_t *last_ns, energy_query_gpu_t *gpu)
{
	gpu_energy_t *ge = se_gpus_get();
	attrib_step_share_t sh = { 0 };
	int rc = -ENOENT;

	(void) arg;
	slurm_mutex_lock(&split_lock);
	if (split) {
		if (st->begin)
			(void) attrib_step_begin(split, st->job_id, st->step_id,
						 t0_ns, st->ncpus);
		if (st->end)
			(void) attrib_step_end(split, st->job_id, st->step_id,
					       t1_ns);
		rc = attrib_step_share(split, st->job_id, st->step_id, &sh);
		*last_ns = sh.last_ns;
		if (!rc) {
			*share_mj = sh.share_mj;
			_share_step_gpus(ge, st);
		}
	}
	slurm_mutex_unlock(&split_lock);
	se_gpus_metered(ge, gpu);
	/* the step's charged GPU energy (the extern step: its job's) */
	if (!rc && ge) {
		gpu->part = true;
		gpu->part_mj = sh.gpu_mj;
	}
	return rc;
}

void se_share_start(const char *name, sampler_config_t *cfg)
{
	attrib_params_t p = {
		.idle = share_conf.idle, .idle_set = share_conf.idle_set,
		.idle_mw = share_conf.idle_mw,
		.node_cpus = (&conf && conf) ? conf->cpus : 0,
	};
	char root[PATH_MAX];
	int rc;

	if (!se_share_mode())
		return;
	rc = cg_root_path(conf_cgroup_root[0] ? conf_cgroup_root : NULL, NULL,
			  name, root, sizeof(root));
	if (rc)
		fatal("%s: node %s: EnergyCgroupRoot=%s: cannot make the cgroup root's path: %s",
		      plugin_type, name, conf_cgroup_root, strerror(-rc));
	slurm_mutex_lock(&split_lock);
	if (!split)
		split = attrib_new(&p);
	else
		attrib_rebase(split);	/* a reload: a new sampler from 0 */
	slurm_mutex_unlock(&split_lock);
	if (!split)
		fatal("%s: energy attribution: out of memory", plugin_type);
	slurm_mutex_lock(&se_scan_lock);
	strcpy(cgroup_root, root);
	cgroup_scan_rc = 1;
	if (!_spool_dir() ||
	    snprintf(split_status, sizeof(split_status),
		     "%s/slurm-energy-%s.attribution", _spool_dir(), name) >=
	    (int) sizeof(split_status))
		split_status[0] = '\0';
	slurm_mutex_unlock(&se_scan_lock);
	__atomic_store_n(&split_period_ns, cfg->period_ns, __ATOMIC_RELAXED);
	cfg->on_sample = _attr_on_sample;
	cfg->on_sample_arg = NULL;
	info("%s: node %s: EnergyAttribution=share: each step is charged its share of the node's energy (CPU time from the cgroups under %s; idle %s, %s%s; %u CPUs)",
	     plugin_type, name, cgroup_root,
	     share_conf.idle == ATTRIB_IDLE_SHARE ? "shared by allocated CPUs" :
	     "left unattributed",
	     share_conf.idle_set ? "EnergyIdleWatts=" : "idle power learned",
	     share_conf.idle_set ? "set" : " from job-free intervals", p.node_cpus);
}

/*
 * The steps listed by attrib_running_steps() (running, or ended until the
 * split after their end) with their shares, for slurm-energy-exporter.
 * rows is the server thread's (split_lock held while it is filled).
 */
void se_share_snapshot(energy_snapshot_t *out)
{
	static attrib_step_row_t rows[ENERGY_SNAPSHOT_STEPS_MAX];
	size_t n = 0;

	if (!se_share_mode())
		return;
	slurm_mutex_lock(&split_lock);
	if (split)
		n = attrib_running_steps(split, rows, ENERGY_SNAPSHOT_STEPS_MAX,
					 SNAPSHOT_LINGER_PERIODS *
					 __atomic_load_n(&split_period_ns,
							 __ATOMIC_RELAXED));
	out->flags |= ENERGY_SNAPSHOT_SHARE;
	if (n > ENERGY_SNAPSHOT_STEPS_MAX) {
		out->flags |= ENERGY_SNAPSHOT_TRUNCATED;
		n = ENERGY_SNAPSHOT_STEPS_MAX;
	}
	for (size_t i = 0; i < n; i++)
		out->steps[i] = (energy_snapshot_step_t) {
			.job_id = rows[i].job_id,
			.step_id = rows[i].step_id,
			.flags = (rows[i].ended ? ENERGY_SNAPSHOT_STEP_ENDED : 0) |
				 (rows[i].final ? ENERGY_SNAPSHOT_STEP_FINAL : 0),
			.energy_mj = rows[i].share_mj,
		};
	slurm_mutex_unlock(&split_lock);
	out->n_steps = n;
}
