/*
 * se_nvml.h - the few NVML types and calls the suite uses, declared by us.
 *
 * No NVML header or library is needed at build time: the plugins dlopen()
 * libnvidia-ml.so.1 at run time and look these symbols up by name.  Every
 * type, constant and prototype below follows NVIDIA's public NVML API
 * reference ("NVML API Reference Guide", docs.nvidia.com/deploy/nvml-api/,
 * sections Initialization and Cleanup, Error reporting, Device Queries,
 * Device Commands, NvLink Methods) and the ABI of the versioned entry points
 * exported by libnvidia-ml.so.1 (nvmlInit_v2, nvmlDeviceGetCount_v2,
 * nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetPciInfo_v3).
 * The test double in tests/gpu/fake_nvml.c implements the same header.
 */
#ifndef SE_NVML_H
#define SE_NVML_H

/* nvmlReturn_t: "Return values for NVML API calls" (subset). */
typedef enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,	/* "local version of NVML
						   doesn't implement this" */
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

/* nvmlClockType_t */
typedef enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

/* nvmlEnableState_t */
typedef enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

/* Buffer sizes documented in "Device Queries" / "Constants". */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE		32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE		16
#define NVML_DEVICE_UUID_BUFFER_SIZE			80
#define NVML_DEVICE_NAME_BUFFER_SIZE			64
#define NVML_NVLINK_MAX_LINKS				12

/* An opaque device handle. */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3. */
typedef struct {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/*
 * The entry points, as function-pointer types (the names the library
 * exports are in the comments).  Energy is in mJ since the driver was
 * loaded; power in mW; clocks in MHz.
 */
typedef nvmlReturn_t (*se_nvmlInit_f)(void);		/* nvmlInit_v2 */
typedef nvmlReturn_t (*se_nvmlShutdown_f)(void);	/* nvmlShutdown */
typedef const char *(*se_nvmlErrorString_f)(nvmlReturn_t);
typedef nvmlReturn_t (*se_nvmlDeviceGetCount_f)(unsigned int *);
typedef nvmlReturn_t (*se_nvmlDeviceGetHandleByIndex_f)(unsigned int,
							nvmlDevice_t *);
typedef nvmlReturn_t (*se_nvmlDeviceGetPciInfo_f)(nvmlDevice_t,
						  nvmlPciInfo_t *);
typedef nvmlReturn_t (*se_nvmlDeviceGetUUID_f)(nvmlDevice_t, char *,
					       unsigned int);
typedef nvmlReturn_t (*se_nvmlDeviceGetName_f)(nvmlDevice_t, char *,
					       unsigned int);
typedef nvmlReturn_t (*se_nvmlDeviceGetMinorNumber_f)(nvmlDevice_t,
						      unsigned int *);
typedef nvmlReturn_t (*se_nvmlDeviceGetCpuAffinity_f)(nvmlDevice_t,
						      unsigned int,
						      unsigned long *);
typedef nvmlReturn_t (*se_nvmlDeviceGetTotalEnergyConsumption_f)(
	nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*se_nvmlDeviceGetPowerUsage_f)(nvmlDevice_t,
						     unsigned int *);
typedef nvmlReturn_t (*se_nvmlDeviceGetSupportedMemoryClocks_f)(
	nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*se_nvmlDeviceGetSupportedGraphicsClocks_f)(
	nvmlDevice_t, unsigned int, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*se_nvmlDeviceSetApplicationsClocks_f)(nvmlDevice_t,
							     unsigned int,
							     unsigned int);
typedef nvmlReturn_t (*se_nvmlDeviceResetApplicationsClocks_f)(nvmlDevice_t);
typedef nvmlReturn_t (*se_nvmlDeviceGetApplicationsClock_f)(nvmlDevice_t,
							    nvmlClockType_t,
							    unsigned int *);
/*
 * Locked clocks (Device Commands): the clock is kept within [min, max] MHz
 * until reset.  The GPU clock's pair is in libraries since NVML 10.1 and
 * works on Volta or newer GPUs; the memory clock's came later (NVML 11)
 * and works on Ampere or newer.  Older libraries lack the symbols.
 */
typedef nvmlReturn_t (*se_nvmlDeviceSetGpuLockedClocks_f)(
	nvmlDevice_t, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz);
typedef nvmlReturn_t (*se_nvmlDeviceResetGpuLockedClocks_f)(nvmlDevice_t);
typedef nvmlReturn_t (*se_nvmlDeviceSetMemoryLockedClocks_f)(
	nvmlDevice_t, unsigned int minMemClockMHz, unsigned int maxMemClockMHz);
typedef nvmlReturn_t (*se_nvmlDeviceResetMemoryLockedClocks_f)(nvmlDevice_t);
typedef nvmlReturn_t (*se_nvmlDeviceGetNvLinkState_f)(nvmlDevice_t,
						      unsigned int,
						      nvmlEnableState_t *);
typedef nvmlReturn_t (*se_nvmlDeviceGetNvLinkRemotePciInfo_f)(
	nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
/*
 * Power management limits (Device Commands, mW; setting needs root on
 * real drivers): the cluster power cap's nvml knob (src/powercap).
 */
typedef nvmlReturn_t (*se_nvmlDeviceGetPowerManagementLimitConstraints_f)(
	nvmlDevice_t, unsigned int *min_mw, unsigned int *max_mw);
typedef nvmlReturn_t (*se_nvmlDeviceGetPowerManagementDefaultLimit_f)(
	nvmlDevice_t, unsigned int *mw);
typedef nvmlReturn_t (*se_nvmlDeviceGetPowerManagementLimit_f)(
	nvmlDevice_t, unsigned int *mw);
typedef nvmlReturn_t (*se_nvmlDeviceSetPowerManagementLimit_f)(
	nvmlDevice_t, unsigned int mw);

#endif
