/*
 * pcap_knob_nvml.c - the "nvml" knob: each GPU's power management limit
 * (NVML "Device Commands": nvmlDeviceSetPowerManagementLimit, in mW,
 * within nvmlDeviceGetPowerManagementLimitConstraints; root only on real
 * drivers).  libnvidia-ml.so.1 is opened at the knob's open by the GPU
 * meter's loader, nvml_lib_open (src/meters/nvml: RTLD_LOCAL, nothing of
 * NVML at build time, process-wide and counted), the power-limit calls
 * among its optional entry points, required here.  A GPU's
 * range is [its constraint's min, its default limit]: the default limit is
 * "uncapped" and what restore writes back.  Options:
 *   lib=PATH   default libnvidia-ml.so.1 (tests: the fake NVML, tests/gpu)
 *   min_w=W    a GPU's lowest limit, if above the constraint's min
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>

#include "nvml_lib.h"
#include "pcap_knob_priv.h"

/* ---------------------------------------------------- private functions */

static int _nvml_fail(const pcap_knob_t *k, const nvml_lib_t *n, size_t gpu,
		      const char *call, nvmlReturn_t rc, char *err,
		      size_t err_len)
{
	snprintf(err, err_len, "%s: GPU %zu: %s: %s", k->ops->name, gpu, call,
		 nvml_lib_strerror(n, rc));
	return rc == NVML_ERROR_NO_PERMISSION ? -EACCES :
	       rc == NVML_ERROR_INVALID_ARGUMENT ? -EINVAL : -EIO;
}

/* The first power-limit call the library lacks (optional to the meter,
 * what this knob is made of), or NULL. */
static const char *_missing_call(const nvml_lib_t *n)
{
	if (!n->DeviceGetPowerManagementLimitConstraints)
		return "nvmlDeviceGetPowerManagementLimitConstraints";
	if (!n->DeviceGetPowerManagementDefaultLimit)
		return "nvmlDeviceGetPowerManagementDefaultLimit";
	if (!n->DeviceGetPowerManagementLimit)
		return "nvmlDeviceGetPowerManagementLimit";
	if (!n->DeviceSetPowerManagementLimit)
		return "nvmlDeviceSetPowerManagementLimit";
	return NULL;
}

/* The library, initialised, into k->priv: 0, or -errno with err. */
static int _load(pcap_knob_t *k, const char *path, char *err, size_t err_len)
{
	char why[400];
	const nvml_lib_t *n = nvml_lib_open(path, why, sizeof(why));
	const char *missing;
	int e = errno;

	if (!n) {
		snprintf(err, err_len, "%s: %s", k->ops->name, why);
		return -e;
	}
	k->priv = (void *)n;
	if ((missing = _missing_call(n))) {
		snprintf(err, err_len, "%s: %s has no %s", k->ops->name,
			 path ? path : NVML_LIB_DEFAULT, missing);
		return -ENOENT;
	}
	return 0;
}

static int _add_gpus(pcap_knob_t *k, const nvml_lib_t *n, uint32_t min_w, char *err,
		     size_t err_len)
{
	unsigned count = 0;
	nvmlReturn_t rc = n->DeviceGetCount(&count);

	if (rc != NVML_SUCCESS)
		return _nvml_fail(k, n, 0, "nvmlDeviceGetCount", rc, err,
				  err_len);
	if (!count || count > PCAP_KNOB_MAX_ZONES) {
		snprintf(err, err_len, "%s: %u GPUs (1..%d handled)",
			 k->ops->name, count, PCAP_KNOB_MAX_ZONES);
		return -ENOENT;
	}
	for (unsigned i = 0; i < count; i++) {
		pcap_zone_t *z = &k->zone[k->n_zones];
		nvmlDevice_t d;
		unsigned lo, hi, dflt;

		if ((rc = n->DeviceGetHandleByIndex(i, &d)) ||
		    (rc = n->DeviceGetPowerManagementLimitConstraints(d, &lo,
								       &hi)) ||
		    (rc = n->DeviceGetPowerManagementDefaultLimit(d, &dflt)))
			return _nvml_fail(k, n, i, "reading its power limits",
					  rc, err, err_len);
		if (min_w * 1000 > lo)
			lo = min_w * 1000;
		if (dflt > hi)
			dflt = hi;
		if (lo > dflt) {
			snprintf(err, err_len, "%s: GPU %u: lowest limit %u mW "
				 "above its default %u mW", k->ops->name, i,
				 lo, dflt);
			return -EINVAL;
		}
		z->handle = d;
		z->lo = lo;
		z->hi = dflt;
		k->n_zones++;
		k->min_mw += lo;
		k->max_mw += dflt;
	}
	return 0;
}

static int _write_all(pcap_knob_t *k, double f, char *err, size_t err_len)
{
	const nvml_lib_t *n = k->priv;

	for (size_t i = 0; i < k->n_zones; i++) {
		pcap_zone_t *z = &k->zone[i];
		unsigned mw = z->lo + (unsigned)(f * (z->hi - z->lo) + 0.5);
		unsigned back = 0;
		nvmlReturn_t rc = n->DeviceSetPowerManagementLimit(z->handle,
								    mw);

		if (rc == NVML_SUCCESS)
			rc = n->DeviceGetPowerManagementLimit(z->handle,
							      &back);
		if (rc != NVML_SUCCESS) {
			char call[80];

			snprintf(call, sizeof(call),
				 "nvmlDeviceSetPowerManagementLimit(%u mW)",
				 mw);
			return _nvml_fail(k, n, i, call, rc, err, err_len);
		}
		if (!pcap_close_enough(mw, back, 1000)) {
			snprintf(err, err_len, "%s: GPU %zu: set %u mW, read "
				 "back %u mW", k->ops->name, i, mw, back);
			return -EIO;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ knob ops */

static void _nvml_close(pcap_knob_t *k)
{
	if (k->priv)
		nvml_lib_close();	/* nvmlShutdown with the last user */
	k->priv = NULL;
}

static int _nvml_open(pcap_knob_t *k, char *err, size_t err_len)
{
	uint32_t min_w;
	int ret = pcap_opt_u32(k, "min_w", 0, 0, 100000, &min_w, err,
			       err_len);

	if (!ret)
		ret = _load(k, pcap_knob_opt(k, "lib"), err, err_len);
	if (!ret)
		ret = _add_gpus(k, k->priv, min_w, err, err_len);
	return ret;
}

static int _nvml_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		       size_t err_len)
{
	return _write_all(k, pcap_fraction(k, cap_mw), err, err_len);
}

static int _nvml_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		      size_t err_len)
{
	const nvml_lib_t *n = k->priv;
	uint64_t sum = 0;

	for (size_t i = 0; i < k->n_zones; i++) {
		unsigned mw;
		nvmlReturn_t rc = n->DeviceGetPowerManagementLimit(
			k->zone[i].handle, &mw);

		if (rc != NVML_SUCCESS)
			return _nvml_fail(k, n, i,
					  "nvmlDeviceGetPowerManagementLimit",
					  rc, err, err_len);
		sum += mw;
	}
	*cap_mw = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
	return 0;
}

/* The GPUs' total-energy counters summed (mJ since the driver loaded;
 * Volta and later). */
static int _nvml_energy(pcap_knob_t *k, uint64_t *mj, char *err,
			size_t err_len)
{
	const nvml_lib_t *n = k->priv;
	uint64_t sum = 0;

	for (size_t i = 0; i < k->n_zones; i++) {
		unsigned long long e;
		nvmlReturn_t rc = n->DeviceGetTotalEnergyConsumption(
			k->zone[i].handle, &e);

		if (rc != NVML_SUCCESS) {
			int ret = _nvml_fail(k, n, i,
					     "nvmlDeviceGetTotalEnergyConsumption",
					     rc, err, err_len);

			return rc == NVML_ERROR_NOT_SUPPORTED ? -ENOENT : ret;
		}
		sum += e;
	}
	*mj = sum;
	return 0;
}

const pcap_knob_ops_t pcap_knob_nvml_ops = {
	.name = "nvml",
	.keys = "lib min_w",
	.open = _nvml_open,
	.apply = _nvml_apply,
	.read = _nvml_read,
	.energy = _nvml_energy,
	.close = _nvml_close,
};
