/*
 * spank_energy_policy.c - SPANK plugin energy_policy: the user's side of
 * the cpufreq policies.
 *
 * Adds --energy-policy=NAME and --energy-tag=TAG to srun, sbatch and salloc
 * (listed in their --help; srun takes them from spank_options, sbatch and
 * salloc in 22.05 only from spank_option_register() in slurm_spank_init).
 * The values are checked at once on the client (an unknown policy fails
 * before anything is submitted) and handed to job_submit/energy_policy in
 * the job's SPANK environment as ENERGY_POLICY and ENERGY_TAG
 * (spank_job_control_setenv: job_desc->spank_job_env, which travels in the
 * allocation request; prolog/epilog see SPANK_ENERGY_*).  The job_submit
 * plugin in slurmctld decides and enforces.  Nothing runs on the nodes:
 * the frequency itself is set by Slurm's core --cpu-freq code
 * (task/affinity).  SPANK checks this plugin's version only to major.minor.
 */
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "conf_desc.h"
#include "freq_options.h"

SPANK_PLUGIN(energy_policy, 1);

/* ---------------------------------------------------- private variables */

static freq_options_t opts;

/* ---------------------------------------------------- private functions */

/* One option through its checker (freq_options.c); the message names the
 * option and the value. */
static int _opt(const char *key, const char *optarg)
{
	char err[256];

	if (se_conf_set(&freq_options_desc, &opts, NULL, key,
			optarg ? optarg : "", err, sizeof(err))) {
		slurm_error("%s", err);
		return -1;
	}
	return 0;
}

static int _opt_policy(int val, const char *optarg, int remote)
{
	return _opt("energy-policy", optarg);
}

static int _opt_tag(int val, const char *optarg, int remote)
{
	return _opt("energy-tag", optarg);
}

/* ------------------------------------------------------ public symbols */

struct spank_option spank_options[] = {
	{ "energy-policy", "NAME",
	  "CPU frequency policy: performance, min_energy (least energy "
	  "within the site's slowdown limit, from this application's "
	  "history), min_time (fastest within the site's energy/power cap) "
	  "or none (the site default)", 1, 0, _opt_policy },
	{ "energy-tag", "TAG",
	  "name this application's energy history (default: the job name)",
	  1, 0, _opt_tag },
	SPANK_OPTIONS_TABLE_END
};

/* 22.05 reads the static spank_options table only in srun (and slurmd);
 * sbatch and salloc (allocator context) see options registered here. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_ALLOCATOR)
		return 0;
	for (struct spank_option *o = spank_options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
			slurm_error("energy_policy: cannot register --%s",
				    o->name);
			return -1;
		}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR)
		return 0;
	if (opts.policy[0] &&
	    spank_job_control_setenv(sp, "ENERGY_POLICY", opts.policy, 1) !=
	    ESPANK_SUCCESS) {
		slurm_error("energy_policy: cannot pass --energy-policy to "
			    "the controller");
		return -1;
	}
	if (opts.tag[0] &&
	    spank_job_control_setenv(sp, "ENERGY_TAG", opts.tag, 1) !=
	    ESPANK_SUCCESS) {
		slurm_error("energy_policy: cannot pass --energy-tag to the "
			    "controller");
		return -1;
	}
	return 0;
}
