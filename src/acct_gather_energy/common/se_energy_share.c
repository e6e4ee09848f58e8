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
 * acfg: the keys, in every process.  slurmd: attr, the split, lives as
 * long as slurmd (the plugin is -z nodelete: a reload continues every
 * step's share); attr_lock guards it between the sampler thread
 * (on_sample: split) and the query server's thread (shares).  attr_scan,
 * attr_scan_rc, attr_said_sluid and the status file are the sampler
 * thread's, under scan_lock (a sampler thread left behind by a reload,
 * stuck in its meter, may still finish one sample).
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

static attrib_conf_t acfg;
static char acfg_root[PATH_MAX];	/* EnergyCgroupRoot, "" auto */
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static attrib_t *attr;
static char attr_root[PATH_MAX];
static cg_scan_t attr_scan;
static bool attr_said_sluid;	/* SLUID job cgroups seen last scan */
static int attr_scan_rc = 1;		/* 1: none yet */
static char attr_status[PATH_MAX];	/* the totals file, "" none */

bool se_share_mode(void)
{
	return acfg.mode == ATTRIB_MODE_SHARE;
}

void se_energy_set_attribution(const attrib_conf_t *c)
{
	slurm_mutex_lock(&se_state_lock);
	acfg.mode = c->mode;
	acfg.idle = c->idle;
	acfg.idle_set = c->idle_set;
	acfg.idle_mw = c->idle_mw;
	snprintf(acfg_root, sizeof(acfg_root), "%s",
		 c->cgroup_root ? c->cgroup_root : "");
	slurm_mutex_unlock(&se_state_lock);
}

/*
 * The node's totals since slurmd's split began, for admins and tests, in
 * <SlurmdSpoolDir>/slurm-energy-<node>.attribution (one line, replaced
 * atomically at each sample): "time=<wall s> t_ns=<monotonic>
 * measured_mj= charged_mj= unattributed_mj= idle_mw= idle=configured|
 * learned|unknown intervals= jobs=".  charged + unattributed == measured.
 */
static void _attr_write_status(const attrib_totals_t *t, uint64_t t_ns)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (!attr_status[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", attr_status);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "time=%.3f t_ns=%"PRIu64" measured_mj=%"PRIu64" charged_mj=%"PRIu64" unattributed_mj=%"PRIu64" idle_mw=%"PRIu64" idle=%s intervals=%lu jobs=%zu sluid_jobs=%zu sluid_unread=%zu\n",
		(double) se_mono_to_wall_ns(t_ns) / 1e9, t_ns, t->measured_mj,
		t->charged_mj, t->unattributed_mj, t->idle_mw,
		acfg.idle_set ? "configured" :
		(t->idle_learned ? "learned" : "unknown"), t->intervals,
		t->jobs, attr_scan.sluid_jobs, attr_scan.sluid_unread);
	if (fclose(f) || rename(tmp, attr_status))
		unlink(tmp);
}

/*
 * Read the steps' CPU time from their cgroups (scan_lock held); say what
 * changed since the last scan.  0, -ENOENT (no job tree yet), or -errno.
 */
static int _attr_scan(void)
{
	int rc = cg_scan(attr_root, &attr_scan);

	if (rc != attr_scan_rc && rc && rc != -ENOENT)
		error("%s: energy attribution: cannot read the steps' CPU time under %s: %s; intervals are merged until it reads again",
		      plugin_type, attr_root, strerror(-rc));
	else if (rc != attr_scan_rc)
		log_flag(ENERGY, "%s: energy attribution: %s %s", plugin_type,
			 attr_root, rc ? "does not exist yet (no job)" :
			 "read");
	attr_scan_rc = rc;
	/* Slurm 26.05's cgroup v2 names job directories by SLUID unless
	 * CgroupJobIdPaths=yes; cg_scan() maps them through their steps'
	 * slurmstepd, and says how many it could not */
	if (!rc && attr_scan.sluid_unread && !attr_said_sluid)
		log_flag(ENERGY, "%s: energy attribution: %zu job cgroup(s) under %s named by SLUID with no slurmstepd to tell their job id, not read this time (CgroupJobIdPaths=yes in cgroup.conf names them by job id)",
			 plugin_type, attr_scan.sluid_unread, attr_root);
	attr_said_sluid = !rc && attr_scan.sluid_unread;
	return rc;
}

/*
 * slurmd's sampler thread, after each good sample: the steps' CPU time
 * from their cgroups, and the split of the energy since the previous
 * sample.  A scan that fails (other than "no job tree yet") splits
 * nothing: the next sample's interval then covers this one too.
 */
static void _attr_on_sample(void *arg, uint64_t t_ns, uint64_t energy_mj)
{
	attrib_totals_t tot;
	int rc;

	(void) arg;
	slurm_mutex_lock(&scan_lock);
	rc = _attr_scan();
	if (rc && rc != -ENOENT) {
		slurm_mutex_unlock(&scan_lock);
		return;
	}
	slurm_mutex_lock(&attr_lock);
	if (attr && attrib_interval(attr, t_ns, energy_mj,
				    rc ? NULL : &attr_scan, NULL, 0) == -ENOMEM)
		error("%s: energy attribution: out of memory", plugin_type);
	if (attr)
		attrib_totals(attr, &tot);
	slurm_mutex_unlock(&attr_lock);
	if (attr)
		_attr_write_status(&tot, t_ns);
	slurm_mutex_unlock(&scan_lock);
}

int se_share_answer(void *arg, const eq_step_t *st, uint64_t t0_ns,
		    uint64_t t1_ns, uint64_t *share_mj, uint64_t *last_ns)
{
	int rc = -ENOENT;

	(void) arg;
	slurm_mutex_lock(&attr_lock);
	if (attr) {
		if (st->begin)
			(void) attrib_step_begin(attr, st->job_id, st->step_id,
						 t0_ns, st->ncpus);
		if (st->end)
			(void) attrib_step_end(attr, st->job_id, st->step_id,
					       t1_ns);
		rc = attrib_share(attr, st->job_id, st->step_id, share_mj,
				  last_ns);
	}
	slurm_mutex_unlock(&attr_lock);
	return rc;
}

void se_share_start(const char *name, sampler_config_t *cfg)
{
	attrib_params_t p = {
		.idle = acfg.idle, .idle_set = acfg.idle_set,
		.idle_mw = acfg.idle_mw,
		.node_cpus = (&conf && conf) ? conf->cpus : 0,
	};
	char root[PATH_MAX];
	int rc;

	if (!se_share_mode())
		return;
	rc = cg_root_path(acfg_root[0] ? acfg_root : NULL, NULL, name, root,
			  sizeof(root));
	if (rc)
		fatal("%s: node %s: EnergyCgroupRoot=%s: cannot make the cgroup root's path: %s",
		      plugin_type, name, acfg_root, strerror(-rc));
	slurm_mutex_lock(&attr_lock);
	if (!attr)
		attr = attrib_new(&p);
	else
		attrib_rebase(attr);	/* a reload: a new sampler from 0 */
	slurm_mutex_unlock(&attr_lock);
	if (!attr)
		fatal("%s: energy attribution: out of memory", plugin_type);
	slurm_mutex_lock(&scan_lock);
	strcpy(attr_root, root);
	attr_scan_rc = 1;
	if (!_spool_dir() ||
	    snprintf(attr_status, sizeof(attr_status),
		     "%s/slurm-energy-%s.attribution", _spool_dir(), name) >=
	    (int) sizeof(attr_status))
		attr_status[0] = '\0';
	slurm_mutex_unlock(&scan_lock);
	cfg->on_sample = _attr_on_sample;
	cfg->on_sample_arg = NULL;
	info("%s: node %s: EnergyAttribution=share: each step is charged its share of the node's energy (CPU time from the cgroups under %s; idle %s, %s%s; %u CPUs)",
	     plugin_type, name, attr_root,
	     acfg.idle == ATTRIB_IDLE_SHARE ? "shared by allocated CPUs" :
	     "left unattributed",
	     acfg.idle_set ? "EnergyIdleWatts=" : "idle power learned",
	     acfg.idle_set ? "set" : " from job-free intervals", p.node_cpus);
}
