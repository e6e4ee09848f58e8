/*
 * freq_slurm.c - Slurm's cpu_freq encoding (see freq_slurm.h).
 *
 * A single frequency is "F:userspace" in both directions, on every release
 * (the one place where the releases' --cpu-freq=F differ):
 *  - 22.05 srun/sbatch encode --cpu-freq=F as max=F, no governor, and its
 *    slurmstepd runs such a step at F under userspace ("pre 15.08
 *    behavior", src/common/cpu_frequency.c _cpu_freq_setup_data);
 *  - 24.11 cpu_freq_verify_cmdline() adds the userspace governor to a
 *    single frequency ("Also force this in case we specify just one
 *    frequency"), and its slurmstepd ignores a frequency without a
 *    governor unless slurm.conf has CpuFreqDef (the governor falls back to
 *    CpuFreqDef, and without one it returns before reading max): a job
 *    whose frequency job_submit set as max=F alone ran at the node's own
 *    speed.
 * So to Slurm a single frequency (max only, kHz or keyword) always goes out
 * as max=F, governor userspace, min unset: what 24.11's --cpu-freq=F and
 * 22.05's --cpu-freq=F:userspace send, and what both slurmstepds run at F
 * (22.05: new_frequency=F, min untouched; 24.11: setspeed, min and max F).
 * From Slurm, max=F with userspace and no min is read back as the single
 * frequency F (no governor named): 24.11's srun adds that governor to every
 * --cpu-freq=F, and the rules' AllowedGovernors must judge the same request
 * the same way on each release.
 */
#include "config.h"	/* Slurm's: its headers depend on it */
#include <stdbool.h>
#include <stddef.h>

#include "slurm/slurm.h"

#include "freq_slurm.h"

/* ---------------------------------------------------- private variables */

static const struct {
	uint32_t slurm;
	unsigned ours;
} govs[] = {
	{ CPU_FREQ_CONSERVATIVE, FREQ_GOV_CONSERVATIVE },
	{ CPU_FREQ_ONDEMAND, FREQ_GOV_ONDEMAND },
	{ CPU_FREQ_PERFORMANCE, FREQ_GOV_PERFORMANCE },
	{ CPU_FREQ_POWERSAVE, FREQ_GOV_POWERSAVE },
	{ CPU_FREQ_USERSPACE, FREQ_GOV_USERSPACE },
	{ CPU_FREQ_SCHEDUTIL, FREQ_GOV_SCHEDUTIL },
};

static const struct {
	uint32_t slurm;
	freq_kw_t ours;
} kws[] = {
	{ CPU_FREQ_LOW, FREQ_KW_LOW },
	{ CPU_FREQ_MEDIUM, FREQ_KW_MEDIUM },
	{ CPU_FREQ_HIGH, FREQ_KW_HIGH },
	{ CPU_FREQ_HIGHM1, FREQ_KW_HIGHM1 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------- private functions */

static void _freq_in(uint32_t v, uint32_t *khz, freq_kw_t *kw)
{
	*khz = 0;
	*kw = FREQ_KW_NONE;
	if (v == NO_VAL || v == 0)
		return;
	if (v & CPU_FREQ_RANGE_FLAG) {
		for (size_t i = 0; i < N(kws); i++)
			if (v == kws[i].slurm)
				*kw = kws[i].ours;
		return;
	}
	*khz = v;
}

static uint32_t _freq_out(uint32_t khz, freq_kw_t kw)
{
	for (size_t i = 0; kw && i < N(kws); i++)
		if (kw == kws[i].ours)
			return kws[i].slurm;
	return khz ? khz : NO_VAL;
}

/* ------------------------------------------------------ public functions */

/* max only (kHz or a keyword), no min */
static bool _single(const freq_request_t *r)
{
	return (r->max_khz || r->max_kw) && !r->min_khz && !r->min_kw;
}

void freq_request_from_slurm(uint32_t min, uint32_t max, uint32_t gov,
			     freq_request_t *r)
{
	_freq_in(min, &r->min_khz, &r->min_kw);
	_freq_in(max, &r->max_khz, &r->max_kw);
	r->gov = 0;
	if (gov == NO_VAL || gov == 0)
		return;
	for (size_t i = 0; i < N(govs); i++)
		if ((gov & CPU_FREQ_GOV_MASK) == govs[i].slurm)
			r->gov = govs[i].ours;
	/* --cpu-freq=F as 24.11 sends it: the single frequency F */
	if (r->gov == FREQ_GOV_USERSPACE && _single(r))
		r->gov = 0;
}

void freq_request_to_slurm(const freq_request_t *r, uint32_t *min,
			   uint32_t *max, uint32_t *gov)
{
	*min = _freq_out(r->min_khz, r->min_kw);
	*max = _freq_out(r->max_khz, r->max_kw);
	*gov = NO_VAL;
	for (size_t i = 0; r->gov && i < N(govs); i++)
		if (r->gov == govs[i].ours)
			*gov = govs[i].slurm;
	/* a single frequency runs under userspace on every release */
	if (!r->gov && _single(r))
		*gov = CPU_FREQ_USERSPACE;
}
