/*
 * se_bench_spank_shell.c - a SPANK plugin with the hooks and options of one
 * of ours and none of the work: the launch-rate bench's floor (what Slurm
 * itself costs a step for hosting the suite's SPANK plugins), never
 * installed.  Built twice (bench/Makefile.inc):
 *
 *   SHELL_POLICY  spank_energy_policy's shape: the two options in
 *                 spank_options, registered again in the allocator
 *                 context, and init_post_opt;
 *   SHELL_SETTLE  spank_energy_settle's shape: init and exit.
 *
 * bench/soak/run.py's `floor` row loads both, with cli_filter/none in
 * place of cli_filter/energy_policy and acct_gather_energy/none: the same
 * number and kinds of plugins in srun and slurmstepd as the suite, doing
 * nothing.  The suite against the floor is then our code's own cost; the
 * floor against stock Slurm is Slurm's cost of loading plugins.
 */
#include <stddef.h>

#include <slurm/spank.h>

#if defined(SHELL_POLICY)
SPANK_PLUGIN(shell_policy, 1);

static int _opt_ignore(int val, const char *optarg, int remote)
{
	(void) val;
	(void) optarg;
	(void) remote;
	return 0;
}

struct spank_option spank_options[] = {
	{ "energy-policy", "NAME", "ignored (bench shell)", 1, 0,
	  _opt_ignore },
	{ "energy-tag", "TAG", "ignored (bench shell)", 1, 0, _opt_ignore },
	{ NULL, NULL, NULL, 0, 0, NULL }
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void) ac;
	(void) av;
	if (spank_context() != S_CTX_ALLOCATOR)
		return 0;
	for (struct spank_option *o = spank_options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS)
			return -1;
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void) sp;
	(void) ac;
	(void) av;
	return 0;
}
#elif defined(SHELL_SETTLE)
SPANK_PLUGIN(shell_settle, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void) sp;
	(void) ac;
	(void) av;
	return ESPANK_SUCCESS;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void) sp;
	(void) ac;
	(void) av;
	return ESPANK_SUCCESS;
}
#else
#error "build with -DSHELL_POLICY or -DSHELL_SETTLE"
#endif
