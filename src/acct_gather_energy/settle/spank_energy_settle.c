/*
 * spank_energy_settle.c - SPANK plugin: let a late energy source settle before a
 * step's energy is recorded.
 *
 *   plugstack.conf:  optional /usr/lib/slurm-energy/spank_energy_settle.so max_wait=30
 *
 * An RRD row is written a step (plus the collector's delay) after the power
 * it averages, so when a step's tasks end, the rows covering its end do not
 * exist yet, and Slurm records a step's energy as it ends.  slurmstepd runs
 * slurm_spank_exit after it has told srun the tasks ended and before it
 * sends the step's completion (with its energy) to slurmctld (job_manager(),
 * src/slurmd/slurmstepd/mgr.c): waiting there costs the user nothing; the
 * node stays in the job (completing) while it waits, and the step's end
 * time in sacct is when the wait ended.
 *
 * This file only finds the energy plugin of the suite in this slurmstepd and
 * calls its se_energy_step_settle(max_wait); the work and the rules (which
 * steps wait, for what) are in src/acct_gather_energy/common/se_energy.c.
 * Slurm loads plugins with RTLD_LOCAL, so the symbol is looked up in each
 * loaded acct_gather_energy_*.so through dlopen(RTLD_NOLOAD), which neither
 * loads nor initialises anything.  Energy plugins without late data (modbus,
 * bmc) answer "nothing to do" at once; stock ones lack the symbol.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

SPANK_PLUGIN(energy_settle, 1);

#define DEFAULT_MAX_WAIT_S	30
#define MAX_MAX_WAIT_S		600
#define SETTLE_SYMBOL		"se_energy_step_settle"

typedef int (*settle_fn)(unsigned max_wait_s);

static unsigned max_wait_s = DEFAULT_MAX_WAIT_S;

/* ------------------------------------------------------------ options */

/* max_wait=SECONDS; anything else is an error naming the argument. */
static int _parse_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		char *end;
		long v;

		if (strncmp(av[i], "max_wait=", 9)) {
			slurm_error("energy_settle: plugstack.conf: unknown argument '%s' (known: max_wait=SECONDS)",
				    av[i]);
			return -1;
		}
		errno = 0;
		v = strtol(av[i] + 9, &end, 10);
		if (errno || end == av[i] + 9 || *end || v < 0 ||
		    v > MAX_MAX_WAIT_S) {
			slurm_error("energy_settle: plugstack.conf: max_wait=%s: not a number of seconds in 0..%d",
				    av[i] + 9, MAX_MAX_WAIT_S);
			return -1;
		}
		max_wait_s = (unsigned) v;
	}
	return 0;
}

/* ------------------------------------------------ the energy plugin */

typedef struct {
	settle_fn fn;
	void *handle;
} found_t;

static int _look_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	found_t *found = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	void *h;

	(void) size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "acct_gather_energy_", 19))
		return 0;
	if (!(h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD)))
		return 0;
	if ((found->fn = (settle_fn) dlsym(h, SETTLE_SYMBOL))) {
		found->handle = h;
		return 1;	/* stop the walk */
	}
	dlclose(h);
	return 0;
}

/* ------------------------------------------------------------ SPANK */

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void) sp;
	return _parse_args(ac, av) ? ESPANK_BAD_ARG : ESPANK_SUCCESS;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	found_t found = { NULL, NULL };
	int rc;

	(void) ac;
	(void) av;
	if (spank_context() != S_CTX_REMOTE)
		return ESPANK_SUCCESS;
	dl_iterate_phdr(_look_in, &found);
	if (!found.fn) {
		slurm_debug("energy_settle: no energy plugin of slurm-energy-plugins in this slurmstepd; nothing to settle");
		return ESPANK_SUCCESS;
	}
	rc = found.fn(max_wait_s);
	slurm_debug("energy_settle: settle returned %d (max_wait=%u)", rc,
		    max_wait_s);
	dlclose(found.handle);
	(void) sp;
	return ESPANK_SUCCESS;	/* never fail a step over its energy */
}
