/*
 * pcap_knob_nvml.c - the "nvml" knob: each GPU's power management limit
 * (NVML "Device Commands": nvmlDeviceSetPowerManagementLimit, in mW,
 * within nvmlDeviceGetPowerManagementLimitConstraints; root only on real
 * drivers).  libnvidia-ml.so.1 is opened here, at the knob's open, with
 * RTLD_LOCAL (no NVML at build time; the agent alone loads it).  A GPU's
 * range is [its constraint's min, its default limit]: the default limit is
 * "uncapped" and what restore writes back.  Options:
 *   lib=PATH   default libnvidia-ml.so.1 (tests: the fake NVML, tests/gpu)
 *   min_w=W    a GPU's lowest limit, if above the constraint's min
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_knob_priv.h"
#include "se_nvml.h"

#define NVML_LIB	"libnvidia-ml.so.1"

/* The calls of NVML's API this knob uses. */
typedef struct {
	void *dl;
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*GetCount)(unsigned int *);
	nvmlReturn_t (*GetHandle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*Constraints)(nvmlDevice_t, unsigned int *,
				    unsigned int *);
	nvmlReturn_t (*DefaultLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*GetLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*SetLimit)(nvmlDevice_t, unsigned int);
	bool inited;
} nvml_t;

/* ---------------------------------------------------- private functions */

static int _nvml_fail(const pcap_knob_t *k, const nvml_t *n, size_t gpu,
		      const char *call, nvmlReturn_t rc, char *err,
		      size_t err_len)
{
	snprintf(err, err_len, "%s: GPU %zu: %s: %s", k->ops->name, gpu, call,
		 n->ErrorString ? n->ErrorString(rc) : "error");
	return rc == NVML_ERROR_NO_PERMISSION ? -EACCES :
	       rc == NVML_ERROR_INVALID_ARGUMENT ? -EINVAL : -EIO;
}

static int _load(pcap_knob_t *k, nvml_t *n, const char *lib, char *err,
		 size_t err_len)
{
	const struct {
		const char *name;
		void **slot;
	} syms[] = {
		{ "nvmlInit_v2", (void **)&n->Init },
		{ "nvmlShutdown", (void **)&n->Shutdown },
		{ "nvmlErrorString", (void **)&n->ErrorString },
		{ "nvmlDeviceGetCount_v2", (void **)&n->GetCount },
		{ "nvmlDeviceGetHandleByIndex_v2", (void **)&n->GetHandle },
		{ "nvmlDeviceGetPowerManagementLimitConstraints",
		  (void **)&n->Constraints },
		{ "nvmlDeviceGetPowerManagementDefaultLimit",
		  (void **)&n->DefaultLimit },
		{ "nvmlDeviceGetPowerManagementLimit", (void **)&n->GetLimit },
		{ "nvmlDeviceSetPowerManagementLimit", (void **)&n->SetLimit },
	};

	if (!(n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, err_len, "%s: cannot load %s: %s", k->ops->name,
			 lib, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].slot = dlsym(n->dl, syms[i].name))) {
			snprintf(err, err_len, "%s: %s has no %s",
				 k->ops->name, lib, syms[i].name);
			return -ENOENT;
		}
	return 0;
}

static int _add_gpus(pcap_knob_t *k, nvml_t *n, uint32_t min_w, char *err,
		     size_t err_len)
{
	unsigned count = 0;
	nvmlReturn_t rc = n->GetCount(&count);

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

		if ((rc = n->GetHandle(i, &d)) ||
		    (rc = n->Constraints(d, &lo, &hi)) ||
		    (rc = n->DefaultLimit(d, &dflt)))
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
	nvml_t *n = k->priv;

	for (size_t i = 0; i < k->n_zones; i++) {
		pcap_zone_t *z = &k->zone[i];
		unsigned mw = z->lo + (unsigned)(f * (z->hi - z->lo) + 0.5);
		unsigned back = 0;
		nvmlReturn_t rc = n->SetLimit(z->handle, mw);

		if (rc == NVML_SUCCESS)
			rc = n->GetLimit(z->handle, &back);
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
	nvml_t *n = k->priv;

	if (!n)
		return;
	if (n->inited)
		n->Shutdown();
	if (n->dl)
		dlclose(n->dl);
	free(n);
	k->priv = NULL;
}

static int _nvml_open(pcap_knob_t *k, char *err, size_t err_len)
{
	const char *lib = pcap_knob_opt(k, "lib");
	nvml_t *n = calloc(1, sizeof(*n));
	uint32_t min_w;
	nvmlReturn_t rc;
	int ret;

	if (!(k->priv = n))
		return -ENOMEM;
	ret = pcap_opt_u32(k, "min_w", 0, 0, 100000, &min_w, err, err_len);
	if (!ret)
		ret = _load(k, n, lib ? lib : NVML_LIB, err, err_len);
	if (ret)
		return ret;
	if ((rc = n->Init()) != NVML_SUCCESS)
		return _nvml_fail(k, n, 0, "nvmlInit", rc, err, err_len);
	n->inited = true;
	return _add_gpus(k, n, min_w, err, err_len);
}

static int _nvml_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		       size_t err_len)
{
	return _write_all(k, pcap_fraction(k, cap_mw), err, err_len);
}

static int _nvml_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		      size_t err_len)
{
	nvml_t *n = k->priv;
	uint64_t sum = 0;

	for (size_t i = 0; i < k->n_zones; i++) {
		unsigned mw;
		nvmlReturn_t rc = n->GetLimit(k->zone[i].handle, &mw);

		if (rc != NVML_SUCCESS)
			return _nvml_fail(k, n, i,
					  "nvmlDeviceGetPowerManagementLimit",
					  rc, err, err_len);
		sum += mw;
	}
	*cap_mw = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
	return 0;
}

const pcap_knob_ops_t pcap_knob_nvml_ops = {
	.name = "nvml",
	.keys = "lib min_w",
	.open = _nvml_open,
	.apply = _nvml_apply,
	.read = _nvml_read,
	.close = _nvml_close,
};
