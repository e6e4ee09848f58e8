/*
 * nvml_lib.h - NVML loaded at run time, and a GPU energy meter on top of it.
 *
 * Slurm-free.  nvml_lib_open() dlopens libnvidia-ml.so.1 (or a path given)
 * and resolves the entry points of se_nvml.h; nothing of NVML is needed at
 * build time.  The library handle is process-wide and reference-counted:
 * each open is matched by one nvml_lib_close(), which calls nvmlShutdown.
 *
 * nvml_meter_ops is a meter_ops_t (src/common/meter.h) reading one GPU's
 * total-energy counter (mJ, 64 bit) and power (mW), so that a sampler
 * thread owns all NVML calls and readers never wait on the driver.
 */
#ifndef SE_NVML_LIB_H
#define SE_NVML_LIB_H

#include <stdbool.h>
#include <stddef.h>

#include "meter.h"
#include "se_nvml.h"

#define NVML_LIB_DEFAULT	"libnvidia-ml.so.1"

typedef struct {
	se_nvmlInit_f Init;
	se_nvmlShutdown_f Shutdown;
	se_nvmlErrorString_f ErrorString;
	se_nvmlDeviceGetCount_f DeviceGetCount;
	se_nvmlDeviceGetHandleByIndex_f DeviceGetHandleByIndex;
	se_nvmlDeviceGetPciInfo_f DeviceGetPciInfo;
	se_nvmlDeviceGetUUID_f DeviceGetUUID;
	se_nvmlDeviceGetName_f DeviceGetName;
	se_nvmlDeviceGetMinorNumber_f DeviceGetMinorNumber;
	se_nvmlDeviceGetCpuAffinity_f DeviceGetCpuAffinity;
	se_nvmlDeviceGetTotalEnergyConsumption_f DeviceGetTotalEnergyConsumption;
	se_nvmlDeviceGetPowerUsage_f DeviceGetPowerUsage;		/* opt */
	se_nvmlDeviceGetSupportedMemoryClocks_f DeviceGetSupportedMemoryClocks;
	se_nvmlDeviceGetSupportedGraphicsClocks_f
		DeviceGetSupportedGraphicsClocks;
	se_nvmlDeviceSetApplicationsClocks_f DeviceSetApplicationsClocks;
	se_nvmlDeviceResetApplicationsClocks_f DeviceResetApplicationsClocks;
	se_nvmlDeviceGetApplicationsClock_f DeviceGetApplicationsClock;	/* opt */
	se_nvmlDeviceGetNvLinkState_f DeviceGetNvLinkState;		/* opt */
	se_nvmlDeviceGetNvLinkRemotePciInfo_f DeviceGetNvLinkRemotePciInfo; /* opt */
} nvml_lib_t;

/*
 * Load the library (path NULL: NVML_LIB_DEFAULT, found through the usual
 * dynamic-linker search) and call nvmlInit_v2.  Returns the process-wide
 * table, or NULL with a reason in err: a missing library or required
 * symbol, or nvmlInit's error string.  Optional entry points (marked opt)
 * may be NULL.  Thread-safe; every success needs one nvml_lib_close().
 */
const nvml_lib_t *nvml_lib_open(const char *path, char *err, size_t err_len);

/* nvmlShutdown and unload when the last user closes. */
void nvml_lib_close(void);

/* NVML's message for rc ("NVML error N" when the library gives none). */
const char *nvml_lib_strerror(const nvml_lib_t *lib, nvmlReturn_t rc);

/*
 * order[k] = NVML index of the GPU with the k-th smallest minor number, for
 * k < count (at most max).  Slurm's gres device index k is that GPU when
 * the device files are /dev/nvidia<minor> (sorted by name), while NVML
 * numbers GPUs in PCI bus order: the two differ when the minor numbers are
 * not in bus order.  A GPU whose minor cannot be read sorts last.
 * Returns the count, or -ENODEV when NVML gives none.
 */
int nvml_lib_minor_order(const nvml_lib_t *lib, unsigned *order,
			 unsigned max);

/* One GPU as a meter: the device for nvml_meter_ops. */
typedef struct {
	const nvml_lib_t *lib;
	unsigned int index;	/* NVML index */
	nvmlDevice_t dev;	/* set by open */
	bool have_power;	/* power read works (else derived) */
	/* The counter at the last good read (mJ since the driver loaded);
	 * written and read by the sampler thread only (its on_sample hook
	 * pairs it with the sampler's energy at that sample). */
	uint64_t last_raw_mj;
} nvml_meter_t;

/*
 * open: gets the handle of index; read: total energy (counter, mJ) and,
 * when it works, power usage.  NVML calls have no timeout of their own;
 * the sampler's deadline bounds how long readers can be kept from a fresh
 * sample, never how long they wait.
 */
extern const meter_ops_t nvml_meter_ops;

/* Counter spec of nvmlDeviceGetTotalEnergyConsumption: 64-bit mJ. */
#define NVML_ENERGY_COUNTER_BITS	64
#define NVML_ENERGY_MJ_PER_UNIT		1.0

#endif
