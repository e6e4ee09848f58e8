/*
 * nvml_lib.c - dlopen NVML; a meter backend reading a GPU's energy counter.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "nvml_lib.h"
#include "se_time.h"

/* Private variables */

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static void *lib_handle;
static unsigned lib_users;
static nvml_lib_t lib;

/*
 * Symbol table: the names libnvidia-ml.so.1 exports for the ABI we
 * declare (the versioned names are the ones its own header maps to).
 */
typedef struct {
	const char *name;
	size_t offset;
	bool required;
} nvml_sym_t;

#define SYM(field, name, req) { name, offsetof(nvml_lib_t, field), req }
static const nvml_sym_t syms[] = {
	SYM(Init, "nvmlInit_v2", true),
	SYM(Shutdown, "nvmlShutdown", true),
	SYM(ErrorString, "nvmlErrorString", true),
	SYM(DeviceGetCount, "nvmlDeviceGetCount_v2", true),
	SYM(DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", true),
	SYM(DeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3", true),
	SYM(DeviceGetUUID, "nvmlDeviceGetUUID", true),
	SYM(DeviceGetName, "nvmlDeviceGetName", true),
	SYM(DeviceGetMinorNumber, "nvmlDeviceGetMinorNumber", true),
	SYM(DeviceGetCpuAffinity, "nvmlDeviceGetCpuAffinity", true),
	SYM(DeviceGetTotalEnergyConsumption,
	    "nvmlDeviceGetTotalEnergyConsumption", true),
	SYM(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage", false),
	SYM(DeviceGetSupportedMemoryClocks,
	    "nvmlDeviceGetSupportedMemoryClocks", true),
	SYM(DeviceGetSupportedGraphicsClocks,
	    "nvmlDeviceGetSupportedGraphicsClocks", true),
	SYM(DeviceSetApplicationsClocks, "nvmlDeviceSetApplicationsClocks",
	    true),
	SYM(DeviceResetApplicationsClocks,
	    "nvmlDeviceResetApplicationsClocks", true),
	SYM(DeviceGetApplicationsClock, "nvmlDeviceGetApplicationsClock",
	    false),
	SYM(DeviceSetGpuLockedClocks, "nvmlDeviceSetGpuLockedClocks", false),
	SYM(DeviceResetGpuLockedClocks, "nvmlDeviceResetGpuLockedClocks",
	    false),
	SYM(DeviceSetMemoryLockedClocks, "nvmlDeviceSetMemoryLockedClocks",
	    false),
	SYM(DeviceResetMemoryLockedClocks, "nvmlDeviceResetMemoryLockedClocks",
	    false),
	SYM(DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState", false),
	SYM(DeviceGetNvLinkRemotePciInfo,
	    "nvmlDeviceGetNvLinkRemotePciInfo_v2", false),
	SYM(DeviceGetPowerManagementLimitConstraints,
	    "nvmlDeviceGetPowerManagementLimitConstraints", false),
	SYM(DeviceGetPowerManagementDefaultLimit,
	    "nvmlDeviceGetPowerManagementDefaultLimit", false),
	SYM(DeviceGetPowerManagementLimit,
	    "nvmlDeviceGetPowerManagementLimit", false),
	SYM(DeviceSetPowerManagementLimit,
	    "nvmlDeviceSetPowerManagementLimit", false),
};
#undef SYM

/* Public functions */

const nvml_lib_t *nvml_lib_open(const char *path, char *err, size_t err_len)
{
	const nvml_lib_t *rv = NULL;
	nvml_lib_t tmp = { 0 };
	void *h = NULL;
	nvmlReturn_t rc;
	int why = 0;

	pthread_mutex_lock(&lib_lock);
	if (lib_users) {
		lib_users++;
		rv = &lib;
		goto out;
	}
	if (!path)
		path = NVML_LIB_DEFAULT;
	if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, err_len, "cannot load %s: %s", path, dlerror());
		why = ENOENT;
		goto out;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f && syms[i].required) {
			snprintf(err, err_len, "%s: no symbol %s", path,
				 syms[i].name);
			why = ENOEXEC;
			goto fail;
		}
		/* A function pointer stored through its slot in the table. */
		memcpy((char *) &tmp + syms[i].offset, &f, sizeof(f));
	}
	if ((rc = tmp.Init()) != NVML_SUCCESS) {
		snprintf(err, err_len, "nvmlInit: %s", tmp.ErrorString(rc));
		why = EAGAIN;
		goto fail;
	}
	lib = tmp;
	lib_handle = h;
	lib_users = 1;
	rv = &lib;
	goto out;
fail:
	dlclose(h);
out:
	pthread_mutex_unlock(&lib_lock);
	if (!rv)
		errno = why;
	return rv;
}

void nvml_lib_close(void)
{
	pthread_mutex_lock(&lib_lock);
	if (lib_users && --lib_users == 0) {
		lib.Shutdown();
		/*
		 * Never dlclose: a sampler thread left running past its
		 * deadline may still be inside the library.
		 */
		memset(&lib, 0, sizeof(lib));
	}
	pthread_mutex_unlock(&lib_lock);
}

const char *nvml_lib_strerror(const nvml_lib_t *l, nvmlReturn_t rc)
{
	static __thread char buf[32];
	const char *s = (l && l->ErrorString) ? l->ErrorString(rc) : NULL;

	if (s)
		return s;
	snprintf(buf, sizeof(buf), "NVML error %d", (int) rc);
	return buf;
}

int nvml_lib_minor_order(const nvml_lib_t *l, unsigned *order, int *minors,
			 unsigned max)
{
	unsigned minor[64];
	unsigned int n = 0;

	if (!l || !order || l->DeviceGetCount(&n) != NVML_SUCCESS || !n)
		return -ENODEV;
	if (n > max)
		n = max;
	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;

		order[i] = i;
		minor[i] = ~0U;
		if (l->DeviceGetHandleByIndex(i, &d) == NVML_SUCCESS)
			(void) l->DeviceGetMinorNumber(d, &minor[i]);
	}
	/* insertion sort, stable: a handful of GPUs */
	for (unsigned i = 1; i < n; i++) {
		unsigned o = order[i], j = i;

		while (j > 0 && minor[order[j - 1]] > minor[o]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = o;
	}
	for (unsigned k = 0; minors && k < n; k++)
		minors[k] = minor[order[k]] > INT_MAX ? -1 :
			    (int) minor[order[k]];
	return (int) n;
}

/* A clock the GPU or library cannot lock: application clocks instead. */
static bool _no_lock(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_NOT_SUPPORTED ||
	       rc == NVML_ERROR_FUNCTION_NOT_FOUND;
}

/* Keep the first error and its entry point. */
static void _first_err(nvmlReturn_t rc, const char *fn, nvmlReturn_t *err,
		       const char **err_fn)
{
	if (*err == NVML_SUCCESS) {
		*err = rc;
		*err_fn = fn;
	}
}

nvmlReturn_t nvml_lib_set_clocks(const nvml_lib_t *l, nvmlDevice_t dev,
				 unsigned int mem_mhz, unsigned int gfx_mhz,
				 unsigned *set, const char **call)
{
	nvmlReturn_t rc, err = NVML_SUCCESS;
	const char *err_fn = NULL;
	bool app = true;

	*set = 0;
	if (l->DeviceSetGpuLockedClocks && l->DeviceResetGpuLockedClocks) {
		app = false;
		/* The memory clock first, as 26.05. */
		if (l->DeviceSetMemoryLockedClocks &&
		    l->DeviceResetMemoryLockedClocks)
			rc = l->DeviceSetMemoryLockedClocks(dev, mem_mhz,
							    mem_mhz);
		else
			rc = NVML_ERROR_FUNCTION_NOT_FOUND;
		if (rc == NVML_SUCCESS)
			*set |= NVML_CLOCKS_LOCKED_MEM;
		else if (_no_lock(rc))
			app = true;
		else
			_first_err(rc, "nvmlDeviceSetMemoryLockedClocks", &err,
				   &err_fn);
		rc = l->DeviceSetGpuLockedClocks(dev, gfx_mhz, gfx_mhz);
		if (rc == NVML_SUCCESS)
			*set |= NVML_CLOCKS_LOCKED_GPU;
		else if (_no_lock(rc))
			app = true;
		else
			_first_err(rc, "nvmlDeviceSetGpuLockedClocks", &err,
				   &err_fn);
	}
	if (app) {
		rc = l->DeviceSetApplicationsClocks(dev, mem_mhz, gfx_mhz);
		if (rc == NVML_SUCCESS)
			*set |= NVML_CLOCKS_APPLICATION;
		else
			_first_err(rc, "nvmlDeviceSetApplicationsClocks", &err,
				   &err_fn);
	}
	if ((*set & (NVML_CLOCKS_LOCKED_MEM | NVML_CLOCKS_APPLICATION)) &&
	    (*set & (NVML_CLOCKS_LOCKED_GPU | NVML_CLOCKS_APPLICATION)))
		return NVML_SUCCESS;
	if (call)
		*call = err_fn ? err_fn : "nvml_lib_set_clocks";
	return err != NVML_SUCCESS ? err : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvml_lib_reset_clocks(const nvml_lib_t *l, nvmlDevice_t dev,
				   unsigned set, const char **call)
{
	nvmlReturn_t rc, err = NVML_SUCCESS;
	const char *err_fn = NULL;

	if ((set & NVML_CLOCKS_LOCKED_MEM) && l->DeviceResetMemoryLockedClocks &&
	    (rc = l->DeviceResetMemoryLockedClocks(dev)) != NVML_SUCCESS)
		_first_err(rc, "nvmlDeviceResetMemoryLockedClocks", &err,
			   &err_fn);
	if ((set & NVML_CLOCKS_LOCKED_GPU) && l->DeviceResetGpuLockedClocks &&
	    (rc = l->DeviceResetGpuLockedClocks(dev)) != NVML_SUCCESS)
		_first_err(rc, "nvmlDeviceResetGpuLockedClocks", &err,
			   &err_fn);
	if ((set & NVML_CLOCKS_APPLICATION) &&
	    (rc = l->DeviceResetApplicationsClocks(dev)) != NVML_SUCCESS)
		_first_err(rc, "nvmlDeviceResetApplicationsClocks", &err,
			   &err_fn);
	if (call)
		*call = err_fn;
	return err;
}

/* Private functions: the meter backend */

static int _meter_open(void *arg, uint64_t deadline_ns)
{
	nvml_meter_t *m = arg;
	nvmlReturn_t rc;

	rc = m->lib->DeviceGetHandleByIndex(m->index, &m->dev);
	if (rc != NVML_SUCCESS)
		return -ENODEV;
	m->have_power = m->lib->DeviceGetPowerUsage != NULL;
	return 0;
}

static int _meter_read(void *arg, meter_reading_t *out, uint64_t deadline_ns,
		       char *msg, size_t msg_len)
{
	nvml_meter_t *m = arg;
	unsigned long long mj = 0;
	unsigned int mw = 0;
	nvmlReturn_t rc;

	uint64_t before_ns;

	memset(out, 0, sizeof(*out));
	/*
	 * The counter's instant is the middle of its own call, not of the
	 * whole read: the power query after it can take milliseconds on a
	 * real GPU (or the thread be preempted), and would skew it.
	 */
	before_ns = se_mono_ns();
	rc = m->lib->DeviceGetTotalEnergyConsumption(m->dev, &mj);
	out->t_ns = before_ns + (se_mono_ns() - before_ns) / 2;
	if (rc != NVML_SUCCESS) {
		if (msg)
			snprintf(msg, msg_len,
				 "nvmlDeviceGetTotalEnergyConsumption: %s",
				 nvml_lib_strerror(m->lib, rc));
		/* GPU lost: reopen the handle; anything else: retry. */
		return (rc == NVML_ERROR_GPU_IS_LOST) ? -ENODEV : -EAGAIN;
	}
	out->has_counter = true;
	out->counter_raw = mj;
	m->last_raw_mj = mj;
	if (m->have_power &&
	    m->lib->DeviceGetPowerUsage(m->dev, &mw) == NVML_SUCCESS) {
		out->has_power = true;
		out->power_mw = mw;
	}
	return 0;
}

const meter_ops_t nvml_meter_ops = {
	.name = "nvml",
	.open = _meter_open,
	.read = _meter_read,
	.close = NULL,
};
