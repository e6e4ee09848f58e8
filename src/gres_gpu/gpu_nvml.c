/*
 * gpu_nvml.c - gpu/nvml (slurm-energy-plugins): a drop-in for Slurm's
 * gpu/nvml that loads NVML at run time.
 *
 * Slurm's src/common/gpu.c loads "gpu/nvml" when gres.conf has
 * AutoDetect=nvml and libnvidia-ml.so can be dlopen()ed.  This plugin then:
 *  - detects the GPUs (gpu_p_get_system_gpu_list): device file from the
 *    minor number, type from the name, Cores= from the CPU affinity,
 *    Links= from the NvLinks, in NVML (PCI bus id) order;
 *  - reads GPU energy (gpu_p_energy_read, for acct_gather_energy/gpu) from
 *    the total-energy counter through one sampler thread per GPU: the
 *    caller gets the last good sample at once, never waits on NVML;
 *  - applies --gpu-freq, as locked clocks when the library has the calls
 *    (as 26.05's gpu/nvml), else as application clocks (as 25.11's), and
 *    resets what it set when the step ends (nvml_lib_set_clocks()).
 * NVML types are our own declarations (se_nvml.h); the library is
 * libnvidia-ml.so.1, found by the dynamic linker.  The entry points every
 * release has are here; what one release's gpu plugin API has alone
 * (22.05: gpu_p_reconfig; 24.11: gpu_p_usage_read) and its form of
 * add_gres_to_list() are in gpu_nvml_2205.c / gpu_nvml_2411.c.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "slurm_compat_gres.h"
#include "src/plugins/gpu/common/gpu_common.h"

#include "gpu_logic.h"
#include "nvml_lib.h"
#include "gpu_energy.h"
#include "gpu_nvml_api.h"
#include "se_log.h"
#include "se_slurm_log.h"
#include "se_time.h"

const char plugin_name[] = "GPU NVML plugin (slurm-energy-plugins)";
const char plugin_type[] = "gpu/nvml";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Entry points Slurm resolves (syms[] of gpu.c) in every release. */
extern se_list_t gpu_p_get_system_gpu_list(node_config_load_t *node_config);
extern void gpu_p_step_hardware_init(bitstr_t *usable_gpus, char *tres_freq);
extern void gpu_p_step_hardware_fini(void);
extern char *gpu_p_test_cpu_conv(char *cpu_range);
extern int gpu_p_energy_read(uint32_t dv_ind, gpu_status_t *gpu);
extern void gpu_p_get_device_count(unsigned int *device_count);

/* Energy sampling period (acct_gather_energy/gpu asks every 30 s). */
#define SAMPLE_PERIOD_NS	(1 * SE_NS_PER_SEC)

/*
 * Hardware roots, from slurmd's environment (both optional):
 * the NVML library (default libnvidia-ml.so.1 through the linker's search
 * path) and the device-file template of AutoDetect (default /dev/nvidia%u;
 * %h is the host name), e.g. for GPUs whose device nodes live elsewhere.
 */
#define ENV_LIBRARY		"SLURM_ENERGY_NVML_LIBRARY"
#define ENV_DEVICE_PATH		"SLURM_ENERGY_NVML_DEVICE_PATH"

#define NVML_CPU_WORDS		(0x8000 / (8 * sizeof(unsigned long)))
#define FREQS_MAX		512

/* Private types */

typedef struct {
	time_t last_wall;	/* end of the last interval handed out */
	uint64_t carry_mj;	/* energy not yet handed out as whole W x s */
} gpu_report_t;

/* What detection learns of the GPUs, in NVML (PCI bus id) order. */
typedef struct {
	const nvml_lib_t *lib;
	unsigned int count;			/* at most GPU_LOGIC_MAX_GPUS */
	nvmlDevice_t devs[GPU_LOGIC_MAX_GPUS];	/* NULL: no handle */
	char bus[GPU_LOGIC_MAX_GPUS][NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} detected_t;

/* Private variables */

static pthread_mutex_t energy_lock = PTHREAD_MUTEX_INITIALIZER;
static gpu_energy_t *energy;		/* samplers, slurmd only */
static gpu_report_t *reports;
static bool energy_failed;		/* do not retry every call */
static unsigned *saved_clocks;		/* per gres device: NVML_CLOCKS_* set */
static int saved_n;
static const nvml_lib_t *freq_lib;
/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(ENERGY);

/* Private functions */


static const nvml_lib_t *_open_lib(void)
{
	char err[256] = "";
	const nvml_lib_t *lib = nvml_lib_open(getenv(ENV_LIBRARY), err,
					      sizeof(err));

	if (!lib)
		error("%s: %s", plugin_type, err);
	return lib;
}

/* Links= for device i: NvLink counts to every other device. */
static char *_links(const detected_t *d, unsigned i)
{
	int count[GPU_LOGIC_MAX_GPUS * GPU_LOGIC_MAX_GPUS] = { 0 };
	char buf[4 * GPU_LOGIC_MAX_GPUS];
	const nvml_lib_t *lib = d->lib;
	unsigned n = d->count;

	if (lib->DeviceGetNvLinkState && lib->DeviceGetNvLinkRemotePciInfo) {
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			nvmlEnableState_t on = NVML_FEATURE_DISABLED;
			nvmlPciInfo_t pci;

			if (lib->DeviceGetNvLinkState(d->devs[i], l, &on) !=
			    NVML_SUCCESS || on != NVML_FEATURE_ENABLED)
				continue;
			if (lib->DeviceGetNvLinkRemotePciInfo(d->devs[i], l,
							      &pci) !=
			    NVML_SUCCESS)
				continue;
			for (unsigned j = 0; j < n; j++)
				if (!gpu_pci_busid_cmp(pci.busId, d->bus[j]))
					count[i * n + j]++;
		}
	}
	if (gpu_links_string(count, n, i, buf, sizeof(buf)))
		return NULL;
	return xstrdup(buf);
}

/* Count the GPUs and take each one's handle and PCI bus id ("" when NVML
 * has none).  -1 (logged) when NVML cannot count them. */
static int _detect_devices(detected_t *d)
{
	nvmlReturn_t rc;

	if ((rc = d->lib->DeviceGetCount(&d->count)) != NVML_SUCCESS) {
		error("%s: nvmlDeviceGetCount: %s", plugin_type,
		      nvml_lib_strerror(d->lib, rc));
		return -1;
	}
	if (d->count > GPU_LOGIC_MAX_GPUS) {
		error("%s: %u GPUs, only the first %d are used", plugin_type,
		      d->count, GPU_LOGIC_MAX_GPUS);
		d->count = GPU_LOGIC_MAX_GPUS;
	}
	for (unsigned i = 0; i < d->count; i++) {
		nvmlPciInfo_t pci;

		memset(&pci, 0, sizeof(pci));
		d->bus[i][0] = '\0';
		d->devs[i] = NULL;
		if (d->lib->DeviceGetHandleByIndex(i, &d->devs[i]) !=
		    NVML_SUCCESS)
			continue;
		if (d->lib->DeviceGetPciInfo(d->devs[i], &pci) == NVML_SUCCESS)
			snprintf(d->bus[i], sizeof(d->bus[i]), "%s", pci.busId);
	}
	return 0;
}

/*
 * Cores= of GPU i: the CPUs of its affinity (any CPU of the node when NVML
 * knows none) as a machine range in mac, as slurmd's abstract range in
 * *abs (xfree) and as a bitmap in *bits (FREE_NULL_BITMAP).  -1 (logged)
 * when the range does not convert.
 */
static int _detect_cpus(const detected_t *d, unsigned i,
			node_config_load_t *node_config, char *mac,
			size_t mac_len, char **abs, bitstr_t **bits)
{
	unsigned long cpus[NVML_CPU_WORDS] = { 0 };

	if (d->lib->DeviceGetCpuAffinity(d->devs[i], NVML_CPU_WORDS, cpus) !=
	    NVML_SUCCESS ||
	    gpu_cpumask_to_range(cpus, NVML_CPU_WORDS, mac, mac_len) ||
	    !mac[0]) {
		/* No affinity known: any CPU of the node. */
		snprintf(mac, mac_len, "0-%u", node_config->cpu_cnt - 1);
	}
	*bits = bit_alloc(0x8000);
	if (bit_unfmt(*bits, mac) ||
	    node_config->xcpuinfo_mac_to_abs(mac, abs)) {
		error("%s: GPU %u: cannot convert CPUs %s", plugin_type, i, mac);
		FREE_NULL_BITMAP(*bits);
		return -1;
	}
	return 0;
}

/* File= of the GPU with this minor number (xfree). */
static char *_device_file(const char *host, unsigned int minor)
{
	char path[PATH_MAX];

	if (gpu_device_path(getenv(ENV_DEVICE_PATH), host, minor, path,
			    sizeof(path))) {
		error("%s: bad %s", plugin_type, ENV_DEVICE_PATH);
		snprintf(path, sizeof(path), "/dev/nvidia%u", minor);
	}
	return xstrdup(path);
}

/* Add GPU i to list as one gres record; a GPU without a handle, a minor
 * number or convertible CPUs is logged and left out. */
static void _detect_one(const detected_t *d, unsigned i,
			node_config_load_t *node_config, const char *host,
			se_list_t list)
{
	char name[NVML_DEVICE_NAME_BUFFER_SIZE] = "";
	char mac[4096], *abs = NULL, *links, *file = NULL;
	bitstr_t *mac_bits = NULL;
	unsigned int minor = 0;
	nvmlReturn_t rc;

	if (!d->devs[i]) {
		error("%s: no handle for GPU %u", plugin_type, i);
		return;
	}
	if ((rc = d->lib->DeviceGetMinorNumber(d->devs[i], &minor)) !=
	    NVML_SUCCESS) {
		error("%s: GPU %u (%s): no minor number: %s", plugin_type, i,
		      d->bus[i], nvml_lib_strerror(d->lib, rc));
		return;
	}
	d->lib->DeviceGetName(d->devs[i], name, sizeof(name));
	gpu_common_underscorify_tolower(name);
	if (_detect_cpus(d, i, node_config, mac, sizeof(mac), &abs,
			 &mac_bits))
		return;
	links = _links(d, i);
	file = _device_file(host, minor);
	debug("%s: GPU %u: %s %s bus %s CPUs %s (abstract %s) links %s",
	      plugin_type, i, file, name, d->bus[i], mac, abs, links);
	{
		gres_slurmd_conf_t rec = {
			.config_flags = GRES_CONF_ENV_NVML,
			.count = 1,
			.cpu_cnt = node_config->cpu_cnt,
			.cpus = abs,
			.cpus_bitmap = mac_bits,
			.file = file,
			.links = links,
			.name = "gpu",
			.type_name = name,
		};

		se_gpu_add_gres(list, &rec);
	}
	FREE_NULL_BITMAP(mac_bits);
	xfree(abs);
	xfree(links);
	xfree(file);
}

static se_list_t _detect(node_config_load_t *node_config)
{
	detected_t d = { 0 };
	se_list_t gres_list_system;
	char host[256] = "";

	if (!(d.lib = _open_lib()))
		return NULL;
	(void) gethostname(host, sizeof(host) - 1);
	if (_detect_devices(&d)) {
		nvml_lib_close();
		return NULL;
	}
	gres_list_system = list_create(destroy_gres_slurmd_conf);
	for (unsigned i = 0; i < d.count; i++)
		_detect_one(&d, i, node_config, host, gres_list_system);
	nvml_lib_close();
	info("%s: %u GPU(s) detected through NVML (slurm-energy-plugins)",
	     plugin_type, d.count);
	return gres_list_system;
}

/* Start the samplers on first use; energy_lock held. */
static int _energy_start(void)
{
	char err[256] = "";

	if (energy)
		return 0;
	if (energy_failed)
		return -ENODEV;
	if (!(energy = gpu_energy_start(getenv(ENV_LIBRARY), SAMPLE_PERIOD_NS,
					err, sizeof(err)))) {
		error("%s: no GPU energy: %s", plugin_type, err);
		energy_failed = true;
		return -ENODEV;
	}
	reports = xcalloc(gpu_energy_count(energy), sizeof(*reports));
	info("%s: sampling energy of %u GPU(s) every %llu ms (slurm-energy-plugins)",
	     plugin_type, gpu_energy_count(energy),
	     (unsigned long long) (SAMPLE_PERIOD_NS / SE_NS_PER_MS));
	return 0;
}

static void _energy_stop(void)
{
	gpu_energy_stop(energy);
	energy = NULL;
	xfree(reports);
}

/* qsort(3) comparator: clocks in descending order. */
static int _freq_desc(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *) a;
	unsigned int y = *(const unsigned int *) b;

	return (x < y) - (x > y);
}

/* NVML's GPU count, or -ENODEV. */
static int _nvml_count(const nvml_lib_t *lib)
{
	unsigned int n = 0;

	if (lib->DeviceGetCount(&n) != NVML_SUCCESS)
		return -ENODEV;
	return (int) n;
}

/* What nvml_lib_set_clocks() set, for the log. */
static const char *_clocks_kind(unsigned set, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s",
		 (set & NVML_CLOCKS_LOCKED_MEM) ? "memory locked" : "",
		 (set & NVML_CLOCKS_LOCKED_MEM) &&
		 (set & ~NVML_CLOCKS_LOCKED_MEM) ? ", " : "",
		 (set & NVML_CLOCKS_LOCKED_GPU) ? "graphics locked" : "",
		 (set & NVML_CLOCKS_LOCKED_GPU) &&
		 (set & NVML_CLOCKS_APPLICATION) ? ", " : "",
		 (set & NVML_CLOCKS_APPLICATION) ? "application clocks" : "");
	return buf;
}

static void _set_freqs(const nvml_lib_t *lib, bitstr_t *gpus, char *spec)
{
	unsigned int gfx_req = 0, mem_req = 0;
	bool verbose = false;
	int n = bit_size(gpus);
	int ngpu;

	gpu_common_parse_gpu_freq(spec, &gfx_req, &mem_req, &verbose);
	if (!gfx_req || !mem_req)
		return;
	/*
	 * Bit i is gres device i.  This plugin runs only with
	 * AutoDetect=nvml, whose merge orders the gres devices as NVML
	 * does (PCI bus order), so bit i is NVML index i.
	 */
	if ((ngpu = _nvml_count(lib)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		unsigned int mem[FREQS_MAX], gfx[FREQS_MAX];
		unsigned int nmem = FREQS_MAX, ngfx = FREQS_MAX;
		unsigned int m = mem_req, g = gfx_req;
		const char *call = "";
		char kind[64];
		nvmlDevice_t dev;
		nvmlReturn_t rc;

		if (!bit_test(gpus, i) || i >= ngpu || i >= saved_n)
			continue;
		if (lib->DeviceGetHandleByIndex(i, &dev) != NVML_SUCCESS ||
		    lib->DeviceGetSupportedMemoryClocks(dev, &nmem, mem) !=
		    NVML_SUCCESS) {
			error("%s: GPU %d: no memory clocks", plugin_type, i);
			continue;
		}
		qsort(mem, nmem, sizeof(mem[0]),
		      _freq_desc);
		gpu_common_get_nearest_freq(&m, nmem, mem);
		if (lib->DeviceGetSupportedGraphicsClocks(dev, m, &ngfx, gfx) !=
		    NVML_SUCCESS) {
			error("%s: GPU %d: no graphics clocks", plugin_type, i);
			continue;
		}
		qsort(gfx, ngfx, sizeof(gfx[0]),
		      _freq_desc);
		gpu_common_get_nearest_freq(&g, ngfx, gfx);
		rc = nvml_lib_set_clocks(lib, dev, m, g, &saved_clocks[i],
					 &call);
		if (rc != NVML_SUCCESS)
			error("%s: GPU %d: set clocks memory %u graphics %u: %s: %s",
			      plugin_type, i, m, g, call,
			      nvml_lib_strerror(lib, rc));
		else
			log_flag(GRES, "%s: GPU %d: clocks memory %u graphics %u (%s)",
				 plugin_type, i, m, g,
				 _clocks_kind(saved_clocks[i], kind,
					      sizeof(kind)));
		if (verbose)
			fprintf(stderr, "GpuFreq=memory_freq:%u,graphics_freq:%u\n",
				m, g);
	}
}

/* Public functions: Slurm entry points */

extern int init(void)
{
	se_slurm_log_install(&log_to);
	debug("%s: %s loaded", plugin_type, plugin_name);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	slurm_mutex_lock(&energy_lock);
	_energy_stop();
	slurm_mutex_unlock(&energy_lock);
	debug("%s: unloading %s", plugin_type, plugin_name);
	return SLURM_SUCCESS;
}

extern se_list_t gpu_p_get_system_gpu_list(node_config_load_t *node_config)
{
	se_list_t l = _detect(node_config);

	if (!l)
		error("%s: system GPU detection failed", plugin_type);
	return l;
}

extern void gpu_p_step_hardware_init(bitstr_t *usable_gpus, char *tres_freq)
{
	char *freq, *p;

	if (!usable_gpus || !tres_freq || !(p = strstr(tres_freq, "gpu:")))
		return;
	freq = xstrdup(p + 4);
	if ((p = strchr(freq, ';')))
		*p = '\0';
	if (!freq_lib && !(freq_lib = _open_lib())) {
		xfree(freq);
		return;
	}
	xfree(saved_clocks);
	saved_n = bit_size(usable_gpus);
	saved_clocks = xcalloc(saved_n ? saved_n : 1, sizeof(*saved_clocks));
	_set_freqs(freq_lib, usable_gpus, freq);
	xfree(freq);
}

/* Reset exactly what _set_freqs() set on each GPU. */
extern void gpu_p_step_hardware_fini(void)
{
	int ngpu;

	if (!saved_clocks || !freq_lib)
		return;
	ngpu = _nvml_count(freq_lib);
	for (int i = 0; i < saved_n && i < ngpu; i++) {
		const char *call = "";
		nvmlDevice_t dev;
		nvmlReturn_t rc;

		if (!saved_clocks[i] ||
		    freq_lib->DeviceGetHandleByIndex(i, &dev) != NVML_SUCCESS)
			continue;
		if ((rc = nvml_lib_reset_clocks(freq_lib, dev, saved_clocks[i],
						&call)) != NVML_SUCCESS)
			error("%s: GPU %d: reset clocks: %s: %s", plugin_type, i,
			      call, nvml_lib_strerror(freq_lib, rc));
		else
			log_flag(GRES, "%s: GPU %d: clocks reset", plugin_type,
				 i);
	}
	xfree(saved_clocks);
	saved_n = 0;
	nvml_lib_close();
	freq_lib = NULL;
}

extern char *gpu_p_test_cpu_conv(char *cpu_range)
{
	return xstrdup("");
}

/*
 * Hand acct_gather_energy/gpu the average power of the whole seconds since
 * its previous call, computed from the energy counter.  It integrates
 * (t1 - t0) x (previous watts + watts) / 2; giving it the same average for
 * both ends makes that integral the counter's energy (to 1 J, the rest is
 * carried to the next interval).  A call within the same second as the
 * previous one returns an error so that it is skipped, not double counted.
 */
extern int gpu_p_energy_read(uint32_t dv_ind, gpu_status_t *gpu)
{
	int rv = SLURM_ERROR;
	gpu_report_t *g;
	uint64_t mj = 0, carry;
	time_t now = time(NULL);
	uint32_t w;

	slurm_mutex_lock(&energy_lock);
	if (_energy_start() || dv_ind >= gpu_energy_count(energy))
		goto out;
	g = &reports[dv_ind];
	if (!g->last_wall) {
		/* First call: the interval starts now. */
		g->last_wall = now;
		gpu->last_update_watt = 0;
		gpu->previous_update_time = 0;
		gpu->last_update_time = now;
		rv = SLURM_SUCCESS;
		goto out;
	}
	if (now <= g->last_wall)
		goto out;
	if (gpu_energy_between(energy, dv_ind,
			se_wall_to_mono_ns((uint64_t) g->last_wall *
					   SE_NS_PER_SEC),
			se_wall_to_mono_ns((uint64_t) now * SE_NS_PER_SEC),
			&mj) < 0 && !mj)
		goto out;	/* no sample yet: skipped, retried next time */
	carry = g->carry_mj;
	w = gpu_avg_watts(mj, now - g->last_wall, &carry);
	if (!w)
		goto out;	/* stock treats 0 W as a restart: wait */
	g->carry_mj = carry;
	/* Both ends of stock's trapezoid at the interval's average. */
	gpu->energy.current_watts = w;
	gpu->last_update_watt = w;
	gpu->previous_update_time = g->last_wall;
	gpu->last_update_time = now;
	log_flag(ENERGY, "%s: GPU %u: %"PRIu64" mJ over %ld s: %u W",
		 plugin_type, dv_ind, mj, (long) (now - g->last_wall), w);
	g->last_wall = now;
	rv = SLURM_SUCCESS;
out:
	slurm_mutex_unlock(&energy_lock);
	return rv;
}

extern void gpu_p_get_device_count(unsigned int *device_count)
{
	const nvml_lib_t *lib = _open_lib();
	nvmlReturn_t rc;

	*device_count = 0;
	if (!lib)
		return;
	if ((rc = lib->DeviceGetCount(device_count)) != NVML_SUCCESS) {
		error("%s: nvmlDeviceGetCount: %s", plugin_type,
		      nvml_lib_strerror(lib, rc));
		*device_count = 0;
	}
	nvml_lib_close();
}
