/*
 * cli_filter_energy_policy.c - cli_filter/energy_policy: makes srun steps
 * run at the frequency job_submit/energy_policy chose for their job.
 *
 * Why it exists (Slurm 22.05 and 24.11 fact): slurmstepd sets the CPU
 * frequency from the launch message srun sends (22.05 launch_slurm.c,
 * 24.11 src/srun/launch.c:1441 copy srun's own --cpu-freq), not from the
 * controller's step record.  A frequency that job_submit wrote into the job
 * (cpu_freq_min/max/gov) therefore reaches `scontrol show job` and the step
 * record in accounting (24.11: stepmgr.c:3661 gives a step without its own
 * request the job's three fields), but not the CPUs.  In 24.11 too srun
 * calls post_submit after the step exists and before the launch
 * (srun_job.c create_srun_job -> _srun_cli_filter_post_submit).  What the
 * three fields must hold for 24.11's slurmstepd to act on them (a single
 * frequency needs the userspace governor): freq_slurm.c.
 * So in srun only: pre_submit remembers srun's options, whether the user
 * gave --cpu-freq (directly or through SLURM_CPU_FREQ_REQ) and whether
 * this srun creates the allocation; post_submit, which srun calls after
 * the allocation and the step exist and before the launch, reads the job's
 * frequency from slurmctld (one RPC, no database) and puts it into srun's
 * options, which the launch then uses:
 *  - srun made the allocation: the job's value always wins (it is the
 *    user's request as job_submit accepted, clamped or lowered it);
 *  - a step in an existing allocation (e.g. in a batch script): only when
 *    the step asks for no frequency itself.
 * A batch job's steps normally take the first way out: job_submit wrote
 * the job's request into the script's environment as SLURM_CPU_FREQ_REQ
 * (as sbatch --cpu-freq does), which srun reads as the step's own, so the
 * step is only checked, with no RPC (a step launch costs milliseconds, and
 * a workflow of many short steps would pay a round trip to slurmctld for
 * each).
 * A batch job's step that asks for nothing and finds no SLURM_CPU_FREQ_REQ
 * skips the RPC too when the job's rule gives jobs that ask for nothing no
 * frequency (no default, no policy, no power budget, as the client reads
 * energy_policy.conf): the job then has none, or one its user chose and
 * took out of the script's environment, and no rule is at stake.
 * A step in an existing allocation that does ask for a frequency is
 * checked here (job_submit never sees steps) against the rules of
 * energy_policy.conf (read from next to slurm.conf on the client; missing
 * or unreadable: not checked, the controller stays the authority for
 * jobs), matched by the job's SLURM_JOB_PARTITION/QOS/ACCOUNT: rejected
 * with the rule's message or clamped, as job_submit would.
 * Heterogeneous steps are left alone.
 *
 * At submit (sbatch, salloc, an srun that makes its allocation) the user
 * is told in one line when the cluster is power-capped: the cap's daemon
 * (slurm-energy-powercapd) publishes its state at PowerCapStateFile, a key
 * read here from powercap.conf next to slurm.conf.  The file is read in a
 * child process given STATE_TIMEOUT_MS (pcap_state.h): a submit never
 * waits longer, whatever the file system does.  No file, no key, a stale
 * or unreadable state, not capping: nothing said (a debug line).
 */
#include "config.h"	/* Slurm's: its headers depend on it */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/cpu_frequency.h"
#include "src/common/read_config.h"
#include "src/common/slurm_opt.h"
#include "src/common/uid.h"
#include "src/common/xmalloc.h"
#include "slurm_compat.h"

#include "freq_decide.h"
#include "freq_policy.h"
#include "freq_slurm.h"
#include "pcap_state.h"

#define STATE_TIMEOUT_MS 200	/* the longest a submit waits for the state */

const char plugin_name[] = "cli_filter energy_policy (slurm-energy-plugins)";
const char plugin_type[] = "cli_filter/energy_policy";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int cli_filter_p_setup_defaults(slurm_opt_t *opt, bool early);
extern int cli_filter_p_pre_submit(slurm_opt_t *opt, int offset);
extern void cli_filter_p_post_submit(int offset, uint32_t jobid,
				     uint32_t stepid);

/* ---------------------------------------------------- private variables */

static slurm_opt_t *srun_opt;	/* srun's options (srun only) */
static bool user_set;		/* the step asked for a frequency */
static bool new_alloc;		/* this srun creates the allocation */
static bool rules_give_none;	/* the job's rule gives no frequency to a
				 * batch job that asks for none */
static int n_components;

/* ---------------------------------------------------- private functions */

/*
 * What the rules (energy_policy.conf, read next to slurm.conf on the
 * client) decide for a step of this job asking for min/max/gov (Slurm's
 * --cpu-freq encoding; NO_VAL: nothing), the job's partition, QOS and
 * account taken from its environment.  d->rule points into rules freed
 * here: only action, req, policy and msg are the caller's.  0, or -1 when
 * the file cannot be read (err says why).  *budget: the file sets a
 * PowerBudget, which only slurmctld can apply (it measures the cluster).
 */
static int _decide_step(uint32_t min, uint32_t max, uint32_t gov,
			freq_decision_t *d, bool *budget, char *err,
			size_t err_len)
{
	char *path = get_extra_conf_path("energy_policy.conf");
	freq_job_t job = { .measured_w = -1 };
	freq_policy_t pol;
	int rc = -1;

	freq_policy_init(&pol);
	if (!freq_policy_load(&pol, path, err, err_len)) {
		job.partition = getenv("SLURM_JOB_PARTITION");
		job.qos = getenv("SLURM_JOB_QOS");
		job.account = getenv("SLURM_JOB_ACCOUNT");
		job.user = uid_to_string_cached(getuid());
		freq_request_from_slurm(min, max, gov, &job.req);
		freq_decide(&pol, NULL, &job, d);
		d->rule = NULL;
		*budget = pol.power_budget_w > 0;
		rc = 0;
	}
	freq_policy_free(&pol);
	xfree(path);
	return rc;
}

/*
 * A step of a batch job, asking for no frequency, without SLURM_CPU_FREQ_REQ
 * (job_submit writes it when it gave the job one): true when the job's rule
 * gives a job that asks for nothing no frequency, so the job's own can only
 * be none or its user's choice (see the top).  Any doubt (not a batch job,
 * no rules file, a default, a policy, a power budget): false.
 */
static bool _rules_give_none(void)
{
	const char *env = getenv("ENVIRONMENT");
	freq_decision_t d;
	char err[512];
	bool budget;

	if (!env || strcmp(env, "BATCH") || getenv("SLURM_CPU_FREQ_REQ"))
		return false;
	if (_decide_step(NO_VAL, NO_VAL, NO_VAL, &d, &budget, err,
			 sizeof(err)))
		return false;
	return !budget && d.action == FREQ_DECIDE_KEEP &&
	       d.policy == FREQ_POLICY_NONE;
}

/* An explicit request of a step in an existing allocation, against the
 * rules.  Returns SLURM_SUCCESS (opt possibly clamped) or SLURM_ERROR. */
static int _check_step(slurm_opt_t *opt)
{
	freq_decision_t d;
	char err[512], rs[96];
	bool budget;

	if (_decide_step(opt->cpu_freq_min, opt->cpu_freq_max,
			 opt->cpu_freq_gov, &d, &budget, err, sizeof(err))) {
		debug("%s: %s: steps not checked", plugin_type, err);
		return SLURM_SUCCESS;
	}
	if (d.action == FREQ_DECIDE_REJECT) {
		error("%s", d.msg);
		return SLURM_ERROR;
	}
	if (d.action == FREQ_DECIDE_SET) {
		freq_request_to_slurm(&d.req, &opt->cpu_freq_min,
				      &opt->cpu_freq_max, &opt->cpu_freq_gov);
		info("%s", d.msg);
		verbose("%s: step runs at --cpu-freq=%s", plugin_type,
			freq_request_str(&d.req, rs, sizeof(rs)));
	}
	return SLURM_SUCCESS;
}

/* One line to the user at submit when the cluster is power-capped. */
static void _tell_capping(void)
{
	char *conf = get_extra_conf_path("powercap.conf");
	char path[4096], err[512], line[512];
	pcap_state_t st;
	int rv;

	rv = pcap_state_conf_path(conf, path, sizeof(path));
	if (rv) {
		debug("%s: %s: no PowerCapStateFile (%s): capping not told",
		      plugin_type, conf, strerror(-rv));
	} else if (pcap_state_read_bounded(path, STATE_TIMEOUT_MS, &st, err,
					   sizeof(err))) {
		debug("%s: power cap state: %s", plugin_type, err);
	} else if (pcap_state_notice(&st, (int64_t)time(NULL), line,
				     sizeof(line))) {
		info("%s", line);
	} else {
		debug("%s: %s: not capping (or stale)", plugin_type, path);
	}
	xfree(conf);
}

/* ------------------------------------------------------ public functions */

extern int init(void)
{
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	return SLURM_SUCCESS;
}

extern int cli_filter_p_setup_defaults(slurm_opt_t *opt, bool early)
{
	return SLURM_SUCCESS;
}

extern int cli_filter_p_pre_submit(slurm_opt_t *opt, int offset)
{
	n_components++;
	if (!offset && (opt->sbatch_opt || opt->salloc_opt ||
			(opt->srun_opt && opt->srun_opt->jobid == NO_VAL)))
		_tell_capping();
	if (!opt->srun_opt || offset) {
		srun_opt = NULL;	/* not srun, or heterogeneous */
		return SLURM_SUCCESS;
	}
	srun_opt = opt;
	user_set = opt->cpu_freq_min != NO_VAL ||
		opt->cpu_freq_max != NO_VAL || opt->cpu_freq_gov != NO_VAL;
	new_alloc = opt->srun_opt->jobid == NO_VAL;
	if (user_set && !new_alloc)
		return _check_step(opt);
	rules_give_none = !user_set && !new_alloc && _rules_give_none();
	return SLURM_SUCCESS;
}

extern void cli_filter_p_post_submit(int offset, uint32_t jobid,
				     uint32_t stepid)
{
	job_info_msg_t *msg = NULL;
	slurm_job_info_t *j = NULL;
	char *s;

	if (!srun_opt || offset || n_components != 1 ||
	    (user_set && !new_alloc))
		return;
	if (rules_give_none) {
		verbose("%s: step %u.%u: the job's rule gives no frequency to a job that asks for none; not asking slurmctld",
			plugin_type, jobid, stepid);
		return;
	}
	/* (cpu_freq is in every job record: no SHOW_DETAIL to pack) */
	if (se_slurm_load_job(&msg, jobid, 0) != SLURM_SUCCESS) {
		verbose("%s: cannot read job %u: %s", plugin_type, jobid,
			slurm_strerror(se_slurm_errno()));
		return;
	}
	for (uint32_t i = 0; i < msg->record_count; i++)
		if (msg->job_array[i].job_id == jobid)
			j = &msg->job_array[i];
	if (j && (j->cpu_freq_min != NO_VAL || j->cpu_freq_max != NO_VAL ||
		  j->cpu_freq_gov != NO_VAL)) {
		srun_opt->cpu_freq_min = j->cpu_freq_min;
		srun_opt->cpu_freq_max = j->cpu_freq_max;
		srun_opt->cpu_freq_gov = j->cpu_freq_gov;
		s = cpu_freq_to_cmdline(j->cpu_freq_min, j->cpu_freq_max,
					j->cpu_freq_gov);
		verbose("%s: step %u.%u runs at the job's --cpu-freq=%s",
			plugin_type, jobid, stepid, s ? s : "?");
		xfree(s);
	}
	slurm_free_job_info_msg(msg);
}
