/*
 * spank_energy_settle.c - SPANK plugin: take a step's energy at its own
 * boundaries, once the data covering them exists, before it is recorded.
 *
 *   plugstack.conf:  optional /usr/lib/slurm-energy/spank_energy_settle.so max_wait=30
 *
 * Slurm records a step's energy as it ends, from the running figure.  Two
 * kinds of source settle here instead:
 *  - late data (rrd): an RRD row is written a step (plus the collector's
 *    delay) after the power it averages, so when a step's tasks end, the
 *    rows covering its end do not exist yet; the settle waits for them, up
 *    to max_wait, and takes the step's energy over its window from them.
 *    Batch, extern and interactive steps do not wait (their end is the
 *    job's).
 *  - live meters (modbus, bmc): slurmd's sampler keeps a history; each
 *    boundary of the step kicks a reading (src/common/energy_query.h), and
 *    the settle takes E(end) - E(start) from that history once the reading
 *    after the end exists: normally at once, at most one poll period plus
 *    the read timeout (and never past max_wait).  Every step settles.
 * In both, a settle that cannot be exact keeps the running figure.
 * slurmstepd runs
 * slurm_spank_exit after it has told srun the tasks ended and before it
 * sends the step's completion (with its energy) to slurmctld (job_manager(),
 * src/slurmd/slurmstepd/mgr.c): waiting there costs the user nothing; the
 * node stays in the job (completing) while it waits, and the step's end
 * time in sacct is when the wait ended.
 *
 * This file only finds the energy plugin of the suite in this slurmstepd and
 * calls its se_energy_step_settle(max_wait); the work and the rules (which
 * steps wait, for what) are in src/acct_gather_energy/common/se_energy_settle.c.
 * Slurm loads plugins with RTLD_LOCAL, so the symbol is looked up in each
 * loaded acct_gather_energy_*.so through dlopen(RTLD_NOLOAD), which neither
 * loads nor initialises anything.  A plugin of ours with nothing to settle
 * for this step answers so at once; stock ones lack the symbol.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "settle_conf.h"

SPANK_PLUGIN(energy_settle, 1);

#define SETTLE_SYMBOL		"se_energy_step_settle"

typedef int (*settle_fn)(unsigned max_wait_s);

static unsigned max_wait_s = SETTLE_DEF_MAX_WAIT_S;

/* ------------------------------------------------------------ options */

/* max_wait=SECONDS (settle_conf.c); anything else is an error naming the
 * argument. */
static int _parse_args(int ac, char **av)
{
	settle_conf_t c;
	char err[512];

	settle_conf_init(&c);
	if (settle_conf_args(&c, ac, av, err, sizeof(err))) {
		slurm_error("energy_settle: %s", err);
		return -1;
	}
	max_wait_s = c.max_wait_s;
	return 0;
}

/* ------------------------------------------------ the energy plugin */

#define MAX_CANDIDATES	8

/* Paths of the loaded acct_gather_energy_*.so (dlopen is not called from
 * inside dl_iterate_phdr's walk, which holds the loader's lock). */
typedef struct {
	char *path[MAX_CANDIDATES];
	int n;
} candidates_t;

static int _collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	candidates_t *c = arg;
	const char *base = strrchr(info->dlpi_name, '/');

	(void) size;
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "acct_gather_energy_", 19) &&
	    c->n < MAX_CANDIDATES && (c->path[c->n] = strdup(info->dlpi_name)))
		c->n++;
	return 0;
}

/* The settle entry point of the first loaded plugin that has one; *handle
 * is to be dlclose'd.  NULL when none has. */
static settle_fn _find_settle(void **handle)
{
	candidates_t c = { { NULL }, 0 };
	settle_fn fn = NULL;

	dl_iterate_phdr(_collect, &c);
	for (int i = 0; i < c.n; i++) {
		void *h = fn ? NULL :
			  dlopen(c.path[i], RTLD_LAZY | RTLD_NOLOAD);

		if (h && (fn = (settle_fn) dlsym(h, SETTLE_SYMBOL)))
			*handle = h;
		else if (h)
			dlclose(h);
		free(c.path[i]);
	}
	return fn;
}

/* ------------------------------------------------------------ SPANK */

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void) sp;
	return _parse_args(ac, av) ? ESPANK_BAD_ARG : ESPANK_SUCCESS;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	void *handle = NULL;
	settle_fn settle;
	int rc;

	(void) sp;
	(void) ac;
	(void) av;
	if (spank_context() != S_CTX_REMOTE)
		return ESPANK_SUCCESS;
	if (!(settle = _find_settle(&handle))) {
		slurm_debug("energy_settle: no energy plugin of slurm-energy-plugins in this slurmstepd; nothing to settle");
		return ESPANK_SUCCESS;
	}
	rc = settle(max_wait_s);
	slurm_debug("energy_settle: settle returned %d (max_wait=%u)", rc,
		    max_wait_s);
	dlclose(handle);
	return ESPANK_SUCCESS;	/* never fail a step over its energy */
}
