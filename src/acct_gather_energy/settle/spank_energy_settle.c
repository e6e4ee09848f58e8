/*
 * spank_energy_settle.c - SPANK plugin, optional since the energy plugins
 * settle a step themselves (EnergySettle in acct_gather.conf, default yes):
 *
 *   plugstack.conf:  optional /usr/lib/slurm-energy/spank_energy_settle.so max_wait=30
 *
 * What a settle is (a step's energy over its own boundaries, once the data
 * covering them exists) and its rules are in
 * src/acct_gather_energy/common/se_energy_settle.c.  The energy plugin
 * settles in its fini(), which slurmstepd calls after the step's last task
 * and before the step's completion is sent.  This plugin exists for
 * configurations that list it, and for one case: up to Slurm 25.11,
 * slurm_spank_exit runs after srun has been told the tasks ended, while
 * fini() runs before, so a long wait (RRD rows, 14-20 s for 10 s rows)
 * holds srun in fini() but not here.  When this plugin is listed it says
 * so to the energy plugin at slurm_spank_init, and on those releases the
 * energy plugin leaves the settle to it.  On 26.05 srun is told after
 * both; the energy plugin settles and this plugin finds nothing to do (a
 * step settles once), except for a slow meter (a read deadline over 2 s,
 * as Redfish's), whose end fini() would estimate after 10 ms: fini()
 * leaves that step to this plugin, which waits for the reading after the
 * end (step_energy_fini_leaves_to_spank, src/common/step_energy.h).
 *
 * Slurm loads plugins with RTLD_LOCAL, so the energy plugin's symbols are
 * looked up in each loaded acct_gather_energy_*.so through
 * dlopen(RTLD_NOLOAD), which neither loads nor initialises anything.  Stock
 * plugins lack them.
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
#define PRESENT_SYMBOL		"se_energy_settle_spank_present"

typedef int (*settle_fn)(unsigned max_wait_s);
typedef int (*present_fn)(void);

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

/* The symbol name of the first loaded energy plugin that has one;
 * *handle is to be dlclose'd.  NULL when none has. */
static void *_find_symbol(const char *name, void **handle)
{
	candidates_t c = { { NULL }, 0 };
	void *fn = NULL;

	dl_iterate_phdr(_collect, &c);
	for (int i = 0; i < c.n; i++) {
		void *h = fn ? NULL :
			  dlopen(c.path[i], RTLD_LAZY | RTLD_NOLOAD);

		if (h && (fn = dlsym(h, name)))
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
	void *handle = NULL;
	present_fn present;

	(void) sp;
	if (_parse_args(ac, av))
		return ESPANK_BAD_ARG;
	if (spank_context() != S_CTX_REMOTE)
		return ESPANK_SUCCESS;
	/* the energy plugin is loaded before the SPANK stack (mgr.c) */
	if ((present = (present_fn) _find_symbol(PRESENT_SYMBOL, &handle))) {
		present();
		dlclose(handle);
	}
	return ESPANK_SUCCESS;
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
	if (!(settle = (settle_fn) _find_symbol(SETTLE_SYMBOL, &handle))) {
		slurm_debug("energy_settle: no energy plugin of slurm-energy-plugins in this slurmstepd; nothing to settle");
		return ESPANK_SUCCESS;
	}
	rc = settle(max_wait_s);
	slurm_debug("energy_settle: settle returned %d (max_wait=%u)", rc,
		    max_wait_s);
	dlclose(handle);
	return ESPANK_SUCCESS;	/* never fail a step over its energy */
}
