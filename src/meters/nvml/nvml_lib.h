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
	/* Locked clocks: absent from libraries older than NVML 10.1 (GPU)
	 * or NVML 11 (memory); see nvml_lib_set_clocks(). */
	se_nvmlDeviceSetGpuLockedClocks_f DeviceSetGpuLockedClocks;	/* opt */
	se_nvmlDeviceResetGpuLockedClocks_f DeviceResetGpuLockedClocks; /* opt */
	se_nvmlDeviceSetMemoryLockedClocks_f DeviceSetMemoryLockedClocks; /* opt */
	se_nvmlDeviceResetMemoryLockedClocks_f
		DeviceResetMemoryLockedClocks;				/* opt */
	se_nvmlDeviceGetNvLinkState_f DeviceGetNvLinkState;		/* opt */
	se_nvmlDeviceGetNvLinkRemotePciInfo_f DeviceGetNvLinkRemotePciInfo; /* opt */
	/* Power limits (the power cap's nvml knob checks them; opt) */
	se_nvmlDeviceGetPowerManagementLimitConstraints_f
		DeviceGetPowerManagementLimitConstraints;		/* opt */
	se_nvmlDeviceGetPowerManagementDefaultLimit_f
		DeviceGetPowerManagementDefaultLimit;			/* opt */
	se_nvmlDeviceGetPowerManagementLimit_f
		DeviceGetPowerManagementLimit;				/* opt */
	se_nvmlDeviceSetPowerManagementLimit_f
		DeviceSetPowerManagementLimit;				/* opt */
} nvml_lib_t;

/*
 * Load the library (path NULL: NVML_LIB_DEFAULT, found through the usual
 * dynamic-linker search) and call nvmlInit_v2.  Returns the process-wide
 * table, or NULL with a reason in err and errno telling whether trying
 * again can help:
 *   ENOENT   the library cannot be loaded: no NVIDIA driver installed (a
 *            CPU node sharing the cluster's configuration); retrying is
 *            pointless until it is installed;
 *   ENOEXEC  it lacks a required symbol (too old a driver); the same;
 *   EAGAIN   nvmlInit failed (driver not loaded yet, no permission...):
 *            it may work later.
 * Optional entry points (marked opt) may be NULL.  Thread-safe; every
 * success needs one nvml_lib_close().
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
 * minors (NULL: not wanted) gets minors[k], the minor of order[k], or -1
 * for one that cannot be read.  Returns the count, or -ENODEV when NVML
 * gives none.
 */
int nvml_lib_minor_order(const nvml_lib_t *lib, unsigned *order,
			 int *minors, unsigned max);

/*
 * --gpu-freq on one GPU.  What nvml_lib_set_clocks() set, as bits: the
 * step's end resets exactly these (nvml_lib_reset_clocks).
 */
#define NVML_CLOCKS_LOCKED_MEM	0x1	/* nvmlDeviceSetMemoryLockedClocks */
#define NVML_CLOCKS_LOCKED_GPU	0x2	/* nvmlDeviceSetGpuLockedClocks */
#define NVML_CLOCKS_APPLICATION	0x4	/* nvmlDeviceSetApplicationsClocks */

/*
 * Set dev's memory and graphics clocks to mem_mhz and gfx_mhz (values the
 * GPU lists as supported), chosen by what the loaded library has, not by
 * the Slurm release:
 *  - a library with the locked-clock calls (nvmlDeviceSetGpuLockedClocks
 *    and its reset): each clock locked at min = max = its value, the
 *    memory clock first, as Slurm 26.05's gpu/nvml does; application
 *    clocks are not touched;
 *  - but when a clock cannot be locked, because the GPU refuses it
 *    (NOT_SUPPORTED: memory before Ampere, GPU before Volta; or
 *    FUNCTION_NOT_FOUND) or the library lacks the memory clock's calls
 *    (before NVML 11), the pair is set as application clocks as well (a
 *    clock that was locked stays locked, at the same value);
 *  - a library without them (older than NVML 10.1): application clocks,
 *    as Slurm 25.11 and before.
 * *set gets the NVML_CLOCKS_* bits of what was set, even on failure.
 * Returns NVML_SUCCESS when both clocks were set one way or the other,
 * else the error that stopped it, with its entry point's name in *call.
 */
nvmlReturn_t nvml_lib_set_clocks(const nvml_lib_t *lib, nvmlDevice_t dev,
				 unsigned int mem_mhz, unsigned int gfx_mhz,
				 unsigned *set, const char **call);

/*
 * Reset what set (NVML_CLOCKS_* bits) says nvml_lib_set_clocks() set on
 * dev, and nothing else.  Every reset is tried; returns the first error
 * (its entry point in *call), or NVML_SUCCESS.
 */
nvmlReturn_t nvml_lib_reset_clocks(const nvml_lib_t *lib, nvmlDevice_t dev,
				   unsigned set, const char **call);

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
