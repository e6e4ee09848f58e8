/*
 * gpu_energy.c - one sampler per GPU on NVML's energy counter.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_energy.h"
#include "nvml_lib.h"
#include "se_time.h"

/* Sampling policy: history of > 1 h at 1 s; 5 kW is no GPU. */
#define HISTORY_SAMPLES		4096
#define MAX_GPU_POWER_MW	(5000ULL * 1000)
#define BACKOFF_MAX_NS		(30 * SE_NS_PER_SEC)
#define EXTRAPOLATE_MAX_NS	(600 * SE_NS_PER_SEC)

struct gpu_energy {
	unsigned count;
	nvml_meter_t *meters;
	sampler_t **samplers;
	int leaked;		/* a sampler outlived its deadline */
};

/* Public functions */

gpu_energy_t *gpu_energy_start(const char *lib_path, uint64_t period_ns,
			       char *err, size_t err_len)
{
	const nvml_lib_t *lib = nvml_lib_open(lib_path, err, err_len);
	unsigned order[64];
	gpu_energy_t *ge;
	int n = 0;

	if (!lib)
		return NULL;
	if ((n = nvml_lib_minor_order(lib, order, 64)) <= 0) {
		snprintf(err, err_len, "NVML reports no GPU");
		nvml_lib_close();
		return NULL;
	}
	if (!(ge = calloc(1, sizeof(*ge))) ||
	    !(ge->meters = calloc(n, sizeof(*ge->meters))) ||
	    !(ge->samplers = calloc(n, sizeof(*ge->samplers)))) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	ge->count = n;
	for (unsigned i = 0; i < (unsigned) n; i++) {
		char label[32];
		sampler_config_t cfg = {
			.period_ns = period_ns,
			.deadline_ns = 2 * period_ns,
			.backoff_max_ns = BACKOFF_MAX_NS,
			.use_counter = true,
			.counter = { .width_bits = NVML_ENERGY_COUNTER_BITS,
				     .mj_per_unit = NVML_ENERGY_MJ_PER_UNIT },
			.acc = { .history = HISTORY_SAMPLES,
				 .max_power_mw = MAX_GPU_POWER_MW,
				 .max_extrapolate_ns = EXTRAPOLATE_MAX_NS },
			.label = label,
		};

		snprintf(label, sizeof(label), "GPU %u (NVML %u)", i, order[i]);
		ge->meters[i].lib = lib;
		ge->meters[i].index = order[i];
		ge->samplers[i] = sampler_start(&nvml_meter_ops,
						&ge->meters[i], &cfg);
		if (!ge->samplers[i]) {
			snprintf(err, err_len, "GPU %u: sampler: %s", i,
				 strerror(errno));
			goto fail;
		}
	}
	return ge;
fail:
	gpu_energy_stop(ge);
	if (!ge)
		nvml_lib_close();
	return NULL;
}

void gpu_energy_stop(gpu_energy_t *ge)
{
	if (!ge)
		return;
	for (unsigned i = 0; ge->samplers && i < ge->count; i++)
		if (sampler_stop(ge->samplers[i]) == -ETIMEDOUT)
			ge->leaked = 1;
	if (ge->leaked)
		return;		/* meters stay allocated for the stuck thread */
	free(ge->samplers);
	free(ge->meters);
	free(ge);
	nvml_lib_close();
}

unsigned gpu_energy_count(const gpu_energy_t *ge)
{
	return ge ? ge->count : 0;
}

int gpu_energy_at(gpu_energy_t *ge, unsigned i, uint64_t t_ns, uint64_t *mj)
{
	int rc;

	if (!ge || i >= ge->count)
		return -EINVAL;
	rc = sampler_energy_at(ge->samplers[i], t_ns, mj);
	*mj += __atomic_load_n(&ge->meters[i].first_raw_mj, __ATOMIC_ACQUIRE);
	return rc;
}

int gpu_energy_between(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
		       uint64_t t1_ns, uint64_t *mj)
{
	if (!ge || i >= ge->count)
		return -EINVAL;
	return sampler_energy_between(ge->samplers[i], t0_ns, t1_ns, mj);
}

int gpu_energy_status(gpu_energy_t *ge, unsigned i, sampler_status_t *out)
{
	if (!ge || i >= ge->count)
		return -EINVAL;
	sampler_status(ge->samplers[i], out);
	return 0;
}
