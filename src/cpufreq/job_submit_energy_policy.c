/*
 * job_submit_energy_policy.c - job_submit/energy_policy: the Slurm glue of
 * the cpufreq policies (runs in slurmctld).
 *
 * At submission it converts the job's --cpu-freq request (cpu_freq_min/max/
 * gov, encoded as in slurm.h: kHz, or CPU_FREQ_RANGE_FLAG|LOW... keywords,
 * CPU_FREQ_<GOVERNOR> bits) and the --energy-policy/--energy-tag choice the
 * SPANK plugin put into the job's SPANK environment (ENERGY_POLICY and
 * ENERGY_TAG in spank_job_env; prolog/epilog see SPANK_ENERGY_*) into a
 * freq_job_t, lets the Slurm-free core decide (freq_decide.h), and writes
 * the result back: a new request, or a rejection whose message names the
 * allowed range.  Measured power for the budget is the sum of CurrentWatts
 * in slurmctld's own node table (the caller holds the node read lock);
 * history comes from a file refreshed by se-cpufreq-history outside the
 * submission path.  Nothing here waits on the database or the network.
 * srun steps get the job's frequency through cli_filter/energy_policy
 * (see there why that is needed in 22.05); a batch job's steps also find
 * it in SLURM_CPU_FREQ_REQ, which this plugin writes into the script's
 * environment as sbatch --cpu-freq does (_export_to_steps).
 *
 * energy_policy.conf is found next to slurm.conf; a changed file (mtime) is
 * re-read at the next submission, and a broken new file is logged and the
 * previous rules kept.  A broken file at startup stops slurmctld (bad
 * configuration); a missing one is logged and means "no rules" until it
 * appears.
 */
#include "config.h"	/* Slurm's: its headers depend on it */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/cpu_frequency.h"
#include "src/common/env.h"
#include "src/common/read_config.h"
#include "src/common/uid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include "slurm_compat_submit.h"

#include "freq_decide.h"
#include "freq_history.h"
#include "freq_policy.h"
#include "freq_slurm.h"
#include "se_log.h"
#include "se_slurm_log.h"

const char plugin_name[] = "job_submit energy_policy (slurm-energy-plugins)";
const char plugin_type[] = "job_submit/energy_policy";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The job_submit entry points: slurm_compat_submit.h, per release. */

/* ---------------------------------------------------- private variables */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static freq_policy_t policy;
static char *conf_path;
static struct timespec conf_mtime;
static freq_history_t history;

/* ---------------------------------------------------- private functions */

/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = { plugin_type, 0, NULL };

/* (Re)read energy_policy.conf when it changed.  Caller holds lock. */
static int _load_conf(bool must)
{
	freq_policy_t np;
	struct stat st;
	char err[512];
	int rc;

	if (stat(conf_path, &st)) {
		/* a missing file means no rules (yet): said once per state */
		if (errno != ENOENT || conf_mtime.tv_sec != -1) {
			error("%s: %s: %m: no rules until it can be read",
			      plugin_type, conf_path);
			freq_policy_free(&policy);
			conf_mtime.tv_sec = -1;
			conf_mtime.tv_nsec = 0;
		}
		return SLURM_SUCCESS;
	}
	if (!must && st.st_mtim.tv_sec == conf_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == conf_mtime.tv_nsec)
		return SLURM_SUCCESS;
	freq_policy_init(&np);
	if ((rc = freq_policy_load(&np, conf_path, err, sizeof(err)))) {
		error("%s: %s%s", plugin_type, err,
		      must ? "" : " (keeping the previous rules)");
		freq_policy_free(&np);
		conf_mtime = st.st_mtim;	/* complain once per change */
		return must ? SLURM_ERROR : SLURM_SUCCESS;
	}
	freq_policy_free(&policy);
	policy = np;
	conf_mtime = st.st_mtim;
	info("%s: %s: %zu rules, default policy %s, history %s, power budget %.0f W",
	     plugin_type, conf_path, policy.n_rules,
	     freq_policy_kind_name(policy.default_policy),
	     policy.history_file ? policy.history_file : "none",
	     policy.power_budget_w);
	return SLURM_SUCCESS;
}

/* History: re-read only when the file changed; a missing file is no
 * history.  Caller holds lock. */
static const freq_history_t *_history(void)
{
	static char last_err[512];
	char err[512];
	int rc;

	if (!policy.history_file)
		return NULL;
	rc = freq_history_refresh(&history, policy.history_file, err,
				  sizeof(err));
	if (rc < 0) {
		if (strcmp(err, last_err)) {
			info("%s: history %s", plugin_type, err);
			snprintf(last_err, sizeof(last_err), "%s", err);
		}
		return history.path ? &history : NULL;
	}
	if (rc > 0) {
		last_err[0] = '\0';
		debug("%s: history %s: %zu runs (%u bad lines skipped)",
		      plugin_type, history.path, history.n, history.bad_lines);
	}
	return &history;
}

/* Sum of CurrentWatts over the node table (node read lock held by the
 * caller of job_submit).  -1 when no node reports power. */
static double _measured_watts(void)
{
	double sum = 0;
	bool any = false;
	node_record_t *node_ptr;

	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		if (!node_ptr->energy ||
		    node_ptr->energy->current_watts == NO_VAL)
			continue;
		sum += node_ptr->energy->current_watts;
		any = true;
	}
	return any ? sum : -1.0;
}

/* A variable the SPANK plugin set with spank_job_control_setenv(): the
 * clients store it unprefixed in spank_job_env (prolog and epilog see it
 * as SPANK_NAME). */
static char *_spank_env(job_desc_msg_t *job_desc, const char *name)
{
	char pre[64];
	char *v;

	if (!job_desc->spank_job_env)
		return NULL;
	if ((v = getenvp(job_desc->spank_job_env, name)))
		return v;
	snprintf(pre, sizeof(pre), "SPANK_%s", name);
	return getenvp(job_desc->spank_job_env, pre);
}

static void _append(char **dst, const char *text)
{
	if (*dst && **dst)
		xstrfmtcat(*dst, "; %s", text);
	else
		xstrfmtcat(*dst, "%s", text);
}

/*
 * A batch job's srun steps run at the job's frequency without a question
 * to slurmctld per step: sbatch --cpu-freq puts SLURM_CPU_FREQ_REQ (the
 * request in --cpu-freq syntax, which srun reads as its own default) into
 * the script's environment, so the request as decided goes there too,
 * replacing what sbatch wrote.  cli_filter/energy_policy then only checks
 * a step's request against the rules (no RPC).  Jobs that bring no
 * environment here (salloc, srun) get the frequency through cli_filter's
 * RPC as before.
 */
static void _export_to_steps(job_desc_msg_t *job_desc)
{
	char *req;

	if (!job_desc->environment)
		return;
	req = cpu_freq_to_cmdline(job_desc->cpu_freq_min,
				  job_desc->cpu_freq_max,
				  job_desc->cpu_freq_gov);
	if (!req)
		return;
	env_array_overwrite(&job_desc->environment, "SLURM_CPU_FREQ_REQ",
			    req);
	job_desc->env_size = envcount(job_desc->environment);
	xfree(req);
}

/* ------------------------------------------------------ public functions */

extern int init(void)
{
	int rc;

	se_slurm_log_install(&log_to);
	conf_path = get_extra_conf_path("energy_policy.conf");
	slurm_mutex_lock(&lock);
	freq_policy_init(&policy);
	freq_history_init(&history);
	rc = _load_conf(true);
	slurm_mutex_unlock(&lock);
	if (rc)
		error("%s: cannot load %s: refusing to start", plugin_type,
		      conf_path);
	return rc;
}

extern int fini(void)
{
	slurm_mutex_lock(&lock);
	freq_policy_free(&policy);
	freq_history_free(&history);
	xfree(conf_path);
	slurm_mutex_unlock(&lock);
	return SLURM_SUCCESS;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg)
{
	freq_job_t job = { 0 };
	freq_decision_t d;
	char *user, *part = NULL, rs[96], *c;
	int rc = SLURM_SUCCESS;

	user = uid_to_string_cached((uid_t) job_desc->user_id);
	if (job_desc->partition) {
		part = xstrdup(job_desc->partition);
		if ((c = strchr(part, ',')))
			*c = '\0';
	} else if (default_part_name) {
		part = xstrdup(default_part_name);
	}
	job.partition = part;
	job.qos = job_desc->qos;
	job.account = job_desc->account;
	job.user = user;
	job.job_name = job_desc->name;
	job.policy_name = _spank_env(job_desc, "ENERGY_POLICY");
	job.tag = _spank_env(job_desc, "ENERGY_TAG");
	freq_request_from_slurm(job_desc->cpu_freq_min, job_desc->cpu_freq_max,
				job_desc->cpu_freq_gov, &job.req);

	slurm_mutex_lock(&lock);
	_load_conf(false);
	job.measured_w = policy.power_budget_w > 0 ? _measured_watts() : -1;
	freq_decide(&policy, _history(), &job, &d);
	slurm_mutex_unlock(&lock);

	switch (d.action) {
	case FREQ_DECIDE_REJECT:
		info("%s: rejecting job of %s (%s): %s", plugin_type, user,
		     job.job_name ? job.job_name : "", d.msg);
		if (err_msg)
			*err_msg = xstrdup(d.msg);
		rc = SLURM_ERROR;	/* as job_submit/lua: err_msg says why */
		goto out;
	case FREQ_DECIDE_SET:
		freq_request_to_slurm(&d.req, &job_desc->cpu_freq_min,
				      &job_desc->cpu_freq_max,
				      &job_desc->cpu_freq_gov);
		break;
	case FREQ_DECIDE_KEEP:
		break;
	}
	_export_to_steps(job_desc);
	info("%s: job of %s (%s) rule=%s policy=%s key=%s cpu-freq=%s%s%s",
	     plugin_type, user, job.job_name ? job.job_name : "",
	     d.rule ? d.rule->name : "-", freq_policy_kind_name(d.policy),
	     d.key[0] ? d.key : "-",
	     freq_request_str(&d.req, rs, sizeof(rs)),
	     d.over_budget ? " (over power budget)" : "",
	     d.action == FREQ_DECIDE_SET ? " (set)" : "");
	if (d.msg[0]) {
		_append(&job_desc->comment, d.msg);
		if (err_msg)
			_append(err_msg, d.msg);
	}
	/* users cannot set admin_comment: the history tool trusts this key */
	if (d.key[0]) {
		char kv[300];

		snprintf(kv, sizeof(kv), "energy_key=%s", d.key);
		_append(&job_desc->admin_comment, kv);
	}
out:
	xfree(part);
	return rc;
}

extern int job_modify(SE_JOB_MODIFY_ARGS(job_desc, job_ptr, submit_uid,
					 err_msg))
{
	/* Frequency changes of queued jobs are not re-checked (yet). */
	return SLURM_SUCCESS;
}
