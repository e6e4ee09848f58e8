/*
 * gpu_meter_conf.h - the keys of acct_gather.conf with which a node-meter
 * plugin (modbus, bmc, rrd) also meters the node's GPUs through NVML, on
 * its own sampler clock, so that in share mode each step is charged its
 * GPUs plus its share of the rest (acct_gather_energy_attribution(5),
 * GPUS; doc/design-gpu-nodes.md).  One table over one struct, checked
 * without Slurm (conf_desc.h); shared by every energy plugin of the suite
 * like the attribution and settle keys:
 *      EnergyGPU=none|nvml
 *      EnergyGPUFactor=1.0..2.0    the meter's view of one NVML joule
 *      EnergyGPULibrary=PATH       the NVML to load
 */
#ifndef SE_GPU_METER_CONF_H
#define SE_GPU_METER_CONF_H

#include "conf_desc.h"

#define GPU_METER_FACTOR_MIN	1.0
#define GPU_METER_FACTOR_MAX	2.0

/* The NVML loaded when EnergyGPULibrary is not given: the environment's
 * (tests point it at the fake), else the driver's. */
#define GPU_METER_LIBRARY_ENV		"SLURM_ENERGY_NVML_LIBRARY"
#define GPU_METER_LIBRARY_DEFAULT	"libnvidia-ml.so.1"

typedef enum {
	GPU_METER_NONE,		/* the default: the meter alone */
	GPU_METER_NVML,		/* the meter and the GPUs' NVML counters */
} gpu_meter_kind_t;

typedef struct {
	int kind;		/* gpu_meter_kind_t (an ENUM key's int) */
	double factor;		/* EnergyGPUFactor */
	char *library;		/* EnergyGPULibrary; NULL: the default */
} gpu_meter_conf_t;

extern const se_conf_desc_t gpu_meter_conf_desc;

void gpu_meter_conf_init(gpu_meter_conf_t *c);
void gpu_meter_conf_free(gpu_meter_conf_t *c);

/*
 * The NVML library to open: EnergyGPULibrary, else env_value (the value
 * of $SLURM_ENERGY_NVML_LIBRARY, NULL or "" when unset), else
 * GPU_METER_LIBRARY_DEFAULT.
 */
const char *gpu_meter_library(const gpu_meter_conf_t *c,
			      const char *env_value);

#endif
