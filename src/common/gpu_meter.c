/*
 * gpu_meter.c - the arithmetic of a node meter's GPUs (see gpu_meter.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <math.h>

#include "attrib.h"
#include "cg_cpu.h"
#include "gpu_meter.h"

uint64_t gpu_meter_charged_mj(double factor, uint64_t raw_mj)
{
	/* F = 1 (the default) charges NVML's total as is, whatever the
	 * double's rounding would make of a huge one */
	if (factor == 1.0)
		return raw_mj;
	return (uint64_t) llround(factor * (double) raw_mj);
}

uint64_t gpu_meter_mask(const uint64_t minors[ENERGY_QUERY_MINOR_WORDS],
			gpu_meter_index_fn index_of, void *arg)
{
	uint64_t mask = 0;

	for (unsigned minor = 0; minor < ENERGY_QUERY_MINORS_MAX; minor++) {
		int i;

		if (!energy_query_minors_has(minors, minor))
			continue;
		i = index_of(arg, (int) minor);
		if (i >= 0 && i < ATTRIB_MAX_GPUS)
			mask |= UINT64_C(1) << i;
	}
	return mask;
}

const uint64_t *gpu_meter_step_minors(const energy_query_step_t *st)
{
	if (st->step_id == CG_STEP_BATCH || st->step_id == CG_STEP_EXTERN ||
	    st->step_id == CG_STEP_INTERACTIVE)
		return st->job_minors;
	return st->step_minors;
}
