/*
 * gpu_meter_conf.c - EnergyGPU, EnergyGPUFactor, EnergyGPULibrary (see
 * gpu_meter_conf.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_desc.h"
#include "gpu_meter_conf.h"

static const char *const kind_names[] = { "none", "nvml", NULL };

static const se_conf_key_t keys[] = {
	SE_KEY_ENUM("EnergyGPU", gpu_meter_conf_t, kind, kind_names),
	SE_KEY_REAL("EnergyGPUFactor", gpu_meter_conf_t, factor,
		    GPU_METER_FACTOR_MIN, GPU_METER_FACTOR_MAX),
	/* unset: $SLURM_ENERGY_NVML_LIBRARY, else libnvidia-ml.so.1 */
	SE_KEY_PATH("EnergyGPULibrary", gpu_meter_conf_t, library, NULL,
		    "default"),
};

void gpu_meter_conf_init(gpu_meter_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = GPU_METER_NONE;
	c->factor = 1.0;
}

void gpu_meter_conf_free(gpu_meter_conf_t *c)
{
	free(c->library);
	gpu_meter_conf_init(c);
}

const char *gpu_meter_library(const gpu_meter_conf_t *c,
			      const char *env_value)
{
	if (c->library && c->library[0])
		return c->library;
	if (env_value && env_value[0])
		return env_value;
	return GPU_METER_LIBRARY_DEFAULT;
}

SE_CONF_DESC_DEFINE_NOCHECK(gpu_meter_conf_desc, gpu_meter_conf,
			    gpu_meter_conf_t, "node-gpus", "acct_gather.conf",
			    keys);
