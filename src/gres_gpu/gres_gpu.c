/*
 * gres_gpu.c - gres/gpu (slurm-energy-plugins): a drop-in for Slurm's
 * gres/gpu, compatible with stock gres.conf.
 *
 * Every stock behaviour is kept: Slurm's own gres/gpu code is compiled from
 * the configured tree into this plugin (slurm_gres_gpu.c, entry points
 * renamed stock_*; gres_gpu_<release>.c) and called first.  The entry
 * points every release has are here; those of one release's gres plugin
 * API (22.05: gres_p_epilog_*, gres_p_get_{job,step}_info; 23.02+:
 * gres_p_prep_*) are in gres_gpu_2205.c / gres_gpu_2411.c, which configure
 * chooses.  On top of stock:
 *  - *_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
 *    ZE_AFFINITY_MASK, GPU_DEVICE_ORDINAL, as stock sets them per Flags=)
 *    number the devices in PCI bus id order, and CUDA_DEVICE_ORDER=PCI_BUS_ID
 *    is set, so that CUDA's numbering agrees with the allocation whatever
 *    the order of the /dev/nvidiaN minor numbers;
 *  - a gres.conf record without Cores= gets, per GPU, the CPUs local to the
 *    GPU's PCI bus (hwloc; a File=nvidia[0-3] record is split into one
 *    record per file), so that slurmctld allocates GPUs next to the job's
 *    cores and --gpu-bind=closest binds each task to its NUMA node's GPUs,
 *    as with AutoDetect;
 *  - in each task (--gpu-bind), the GPUs' PCI locality (hwloc) is checked
 *    against the task's CPUs and a remote placement is logged; with
 *    SLURM_ENERGY_GPU_MEMBIND=local (job or slurmd environment) the task's
 *    memory is bound to its GPUs' NUMA nodes.
 * Bus ids come from NVML (minor number -> PCI bus id) when libnvidia-ml.so.1
 * loads, else from hwloc OS device names (nvidiaN); slurmd finds them and
 * sends them to slurmstepd with the stock device list.  Without bus ids the
 * order is stock's.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "slurm_compat_gres.h"

#include "gpu_logic.h"
#include "gpu_topo.h"
#include "nvml_lib.h"
#include "slurm_gres_gpu.h"

const char plugin_name[] = "Gres GPU plugin (slurm-energy-plugins)";
const char plugin_type[] = "gres/gpu";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Entry points Slurm resolves (syms[] of gres.c) in every release. */
extern int gres_p_node_config_load(se_list_t gres_conf_list,
				   node_config_load_t *node_config);
extern void gres_p_job_set_env(char ***job_env_ptr, bitstr_t *gres_bit_alloc,
			       uint64_t gres_cnt, gres_internal_flags_t flags);
extern void gres_p_step_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
				uint64_t gres_cnt, gres_internal_flags_t flags);
extern void gres_p_task_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
				uint64_t gres_cnt, bitstr_t *usable_gres,
				gres_internal_flags_t flags);
extern void gres_p_send_stepd(buf_t *buffer);
extern void gres_p_recv_stepd(buf_t *buffer);
extern se_list_t gres_p_get_devices(void);
extern void gres_p_step_hardware_init(bitstr_t *usable_gpus, char *tres_freq);
extern void gres_p_step_hardware_fini(void);

#define BUSID_LEN	32

/* NVML library, as for gpu/nvml (default libnvidia-ml.so.1). */
#define ENV_NVML_LIBRARY	"SLURM_ENERGY_NVML_LIBRARY"

/* Memory of each task bound to its GPUs' NUMA nodes: "local" in the job's
 * environment (user) or in slurmd's (site default). */
#define ENV_MEMBIND	"SLURM_ENERGY_GPU_MEMBIND"

/* set_mempolicy(2) mode, from <linux/mempolicy.h> (no libnuma needed). */
#ifndef MPOL_BIND
#define MPOL_BIND	2
#endif

/* The variables stock may set, all numbered the same way. */
static const char *const visible_vars[] = {
	"CUDA_VISIBLE_DEVICES",
	"ROCR_VISIBLE_DEVICES",
	"ZE_AFFINITY_MASK",
	"GPU_DEVICE_ORDINAL",
};

/* Private variables: PCI bus id per gres device index (slurmd finds them,
 * slurmstepd receives them). */
static char (*dev_bus)[BUSID_LEN];
static uint32_t dev_cnt;

/* Private functions */

/* The first gres_device_t of each index, in a table indexed by index. */
static uint32_t _devices(gres_device_t **tab, uint32_t max)
{
	se_list_t devs = stock_gres_p_get_devices();
	gres_device_t *d;
	se_list_itr_t it;
	uint32_t n = 0;

	memset(tab, 0, max * sizeof(*tab));
	if (!devs)
		return 0;
	it = list_iterator_create(devs);
	while ((d = list_next(it))) {
		if (d->index < 0 || (uint32_t) d->index >= max ||
		    tab[d->index])
			continue;
		tab[d->index] = d;
		if ((uint32_t) d->index + 1 > n)
			n = d->index + 1;
	}
	list_iterator_destroy(it);
	return n;
}

/* Bus ids by minor number, from NVML; 0 when NVML answered. */
static int _bus_from_nvml(gres_device_t **tab, uint32_t n)
{
	char err[256] = "";
	const nvml_lib_t *lib = nvml_lib_open(getenv(ENV_NVML_LIBRARY), err,
					      sizeof(err));
	unsigned int count = 0;

	if (!lib) {
		debug("%s: no PCI bus ids from NVML: %s", plugin_type, err);
		return -ENOENT;
	}
	if (lib->DeviceGetCount(&count) != NVML_SUCCESS)
		count = 0;
	for (unsigned int i = 0; i < count; i++) {
		nvmlDevice_t dev;
		nvmlPciInfo_t pci;
		unsigned int minor;

		memset(&pci, 0, sizeof(pci));
		if (lib->DeviceGetHandleByIndex(i, &dev) != NVML_SUCCESS ||
		    lib->DeviceGetMinorNumber(dev, &minor) != NVML_SUCCESS ||
		    lib->DeviceGetPciInfo(dev, &pci) != NVML_SUCCESS)
			continue;
		for (uint32_t k = 0; k < n; k++)
			if (tab[k] && tab[k]->dev_num == (int) minor)
				snprintf(dev_bus[k], BUSID_LEN, "%s",
					 pci.busId);
	}
	nvml_lib_close();
	return 0;
}

/* Bus ids from hwloc OS device names (nvidiaN). */
static void _bus_from_hwloc(gres_device_t **tab, uint32_t n)
{
	const char *names[GPU_LOGIC_MAX_GPUS];
	char ids[GPU_LOGIC_MAX_GPUS][BUSID_LEN];

	for (uint32_t k = 0; k < n; k++) {
		const char *slash = (tab[k] && tab[k]->path) ?
				    strrchr(tab[k]->path, '/') : NULL;

		names[k] = slash ? slash + 1 : NULL;
	}
	if (gpu_topo_osdev_busids(NULL, names, n, ids))
		return;
	for (uint32_t k = 0; k < n; k++)
		if (!dev_bus[k][0] && ids[k][0])
			snprintf(dev_bus[k], BUSID_LEN, "%s", ids[k]);
}

static void _find_bus_ids(void)
{
	gres_device_t *tab[GPU_LOGIC_MAX_GPUS];
	uint32_t n = _devices(tab, GPU_LOGIC_MAX_GPUS);
	char *desc = NULL;

	xfree(dev_bus);
	dev_cnt = n;
	if (!n)
		return;
	dev_bus = xcalloc(n, sizeof(*dev_bus));
	(void) _bus_from_nvml(tab, n);
	_bus_from_hwloc(tab, n);	/* any left unknown */
	for (uint32_t k = 0; k < n; k++)
		xstrfmtcat(desc, "%s%s=%s", k ? " " : "",
			   tab[k] ? tab[k]->path : "?",
			   dev_bus[k][0] ? dev_bus[k] : "unknown");
	info("%s: %u GPU(s), numbered in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID): %s (slurm-energy-plugins)",
	     plugin_type, n, desc);
	xfree(desc);
}

/* PCI bus id of device file `path` ("" when unknown). */
static const char *_bus_of_file(const char *path)
{
	gres_device_t *tab[GPU_LOGIC_MAX_GPUS];
	uint32_t n = _devices(tab, GPU_LOGIC_MAX_GPUS);

	for (uint32_t k = 0; k < n && k < dev_cnt; k++)
		if (tab[k] && tab[k]->path && !xstrcmp(tab[k]->path, path))
			return dev_bus[k];
	return "";
}

/*
 * Cores of one GPU from its PCI locality: the abstract range and the
 * machine bitmap Slurm keeps in a gres.conf record.  -1 when unknown or
 * when the GPU is equally close to every CPU.
 */
static int _locality(const char *bus, node_config_load_t *nc, char **abs,
		     bitstr_t **mac_bits)
{
	static bool cpus[CPU_SETSIZE];
	const char *ids[1] = { bus };
	unsigned long mask[CPU_SETSIZE / (8 * sizeof(unsigned long))];
	const unsigned bits = 8 * sizeof(unsigned long);
	char mac[4096];
	int numa;

	if (!bus[0] || gpu_topo_locality(NULL, ids, 1, cpus, CPU_SETSIZE,
					 &numa) || numa < 0)
		return -1;
	memset(mask, 0, sizeof(mask));
	for (unsigned c = 0; c < CPU_SETSIZE && c < nc->cpu_cnt; c++)
		if (cpus[c])
			mask[c / bits] |= 1UL << (c % bits);
	if (gpu_cpumask_to_range(mask, CPU_SETSIZE / bits, mac, sizeof(mac)) ||
	    !mac[0])
		return -1;
	*mac_bits = bit_alloc(nc->cpu_cnt);
	if (bit_unfmt(*mac_bits, mac) || nc->xcpuinfo_mac_to_abs(mac, abs)) {
		FREE_NULL_BITMAP(*mac_bits);
		xfree(*abs);
		return -1;
	}
	return 0;
}

/* A one-file copy of a gpu record, with its GPU's locality. */
static gres_slurmd_conf_t *_split_one(gres_slurmd_conf_t *r, const char *file,
				      node_config_load_t *nc)
{
	gres_slurmd_conf_t *o = xmalloc(sizeof(*o));

	o->config_flags = r->config_flags & ~GRES_CONF_HAS_MULT;
	o->count = 1;
	o->cpu_cnt = r->cpu_cnt;
	o->file = xstrdup(file);
	o->links = xstrdup(r->links);
	o->name = xstrdup(r->name);
	o->type_name = xstrdup(r->type_name);
	o->unique_id = xstrdup(r->unique_id);
	o->plugin_id = r->plugin_id;
	if (!_locality(_bus_of_file(file), nc, &o->cpus, &o->cpus_bitmap))
		info("%s: %s: Cores=%s from its PCI locality (hwloc) (slurm-energy-plugins)",
		     plugin_type, file, o->cpus);
	return o;
}

/* gpu records without Cores=: one record per file, with locality. */
static void _add_locality(se_list_t gres_conf_list, node_config_load_t *nc)
{
	gres_slurmd_conf_t *r;
	se_list_itr_t it;

	if (!gres_conf_list || !dev_cnt)
		return;
	it = list_iterator_create(gres_conf_list);
	while ((r = list_next(it))) {
		se_hostlist_t hl;
		char *f;

		if (xstrcmp(r->name, "gpu") || r->cpus || r->cpus_bitmap ||
		    !r->file || r->links || r->unique_id)
			continue;
		if (!(hl = hostlist_create(r->file)))
			continue;
		if ((uint64_t) hostlist_count(hl) != r->count) {
			hostlist_destroy(hl);
			continue;
		}
		while ((f = hostlist_shift(hl))) {
			list_insert(it, _split_one(r, f, nc));
			free(f);
		}
		hostlist_destroy(hl);
		list_delete_item(it);
	}
	list_iterator_destroy(it);
}

/*
 * The devices of a job, step or task: sel[k] for gres device index k, and
 * vis[k] for the devices of the allocation.  usable: NULL for job and
 * step, the task's usable devices (indexed like stock: local index when
 * devices are constrained) for a task.  Returns the device count, 0 when
 * nothing applies, -1 when a selected device has a unique id (MIG/UUID).
 */
static int _selected(bitstr_t *alloc, bitstr_t *usable, bool is_task,
		     gres_device_t **tab, bool *sel, bool *vis)
{
	bool local = gres_use_local_device_index();
	int local_inx = 0, alloc_n;
	uint32_t n;

	if (!alloc || (is_task && !usable))
		return 0;
	n = _devices(tab, GPU_LOGIC_MAX_GPUS);
	alloc_n = bit_size(alloc);
	for (uint32_t k = 0; k < n; k++) {
		sel[k] = vis[k] = false;
		if ((int) k >= alloc_n || !bit_test(alloc, k) || !tab[k])
			continue;
		vis[k] = true;
		if (!is_task)
			sel[k] = true;
		else if (local)
			sel[k] = (local_inx < bit_size(usable)) &&
				 bit_test(usable, local_inx);
		else
			sel[k] = ((int) k < bit_size(usable)) &&
				 bit_test(usable, k);
		local_inx++;
		if (sel[k] && tab[k]->unique_id)
			return -1;
	}
	return n;
}

/*
 * Rewrite the visible-devices variables stock set, numbering the selected
 * devices in PCI bus order.
 */
static void _renumber(char ***env, bitstr_t *alloc, bitstr_t *usable,
		      bool is_task)
{
	const char *ids[GPU_LOGIC_MAX_GPUS];
	bool sel[GPU_LOGIC_MAX_GPUS], vis[GPU_LOGIC_MAX_GPUS];
	gres_device_t *tab[GPU_LOGIC_MAX_GPUS];
	char value[4 * GPU_LOGIC_MAX_GPUS];
	int n = _selected(alloc, usable, is_task, tab, sel, vis);

	if (n <= 0)
		return;	/* nothing, or MIG / UUID values: keep stock's */
	for (int k = 0; k < n; k++)
		ids[k] = ((uint32_t) k < dev_cnt && dev_bus) ? dev_bus[k] : "";
	if (gpu_visible_devices(ids, n, gres_use_local_device_index() ?
				vis : NULL, sel, value, sizeof(value)) ||
	    !value[0])
		return;
	for (size_t v = 0; v < sizeof(visible_vars) / sizeof(*visible_vars);
	     v++)
		if (getenvp(*env, visible_vars[v]))
			env_array_overwrite(env, visible_vars[v], value);
	if (getenvp(*env, "CUDA_VISIBLE_DEVICES"))
		env_array_overwrite(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
}

/* Bind the task's memory to the NUMA nodes in nodes[0..n). */
static void _membind(const int *nodes, int n)
{
	unsigned long mask = 0;

	for (int i = 0; i < n; i++)
		if (nodes[i] >= 0 && nodes[i] < (int) (8 * sizeof(mask)))
			mask |= 1UL << nodes[i];
	if (!mask)
		return;
	/* set_mempolicy(2): inherited across exec by the task's program */
	if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, 8 * sizeof(mask) + 1))
		info("%s: cannot bind task memory to NUMA nodes 0x%lx of its GPUs: %m",
		     plugin_type, mask);
	else
		debug("%s: task memory bound to NUMA nodes 0x%lx of its GPUs",
		      plugin_type, mask);
}

/*
 * "GPUs not local" is said once per step, not once per task: each task
 * decides in its own process, forked by slurmstepd after init(), so they
 * share this anonymous page and the first task to claim it logs.
 */
static int *remote_said;

static bool _say_remote_once(void)
{
	if (!remote_said)	/* no shared page: better twice than never */
		return true;
	return !__atomic_exchange_n(remote_said, 1, __ATOMIC_RELAXED);
}

/*
 * In a task: are its GPUs local to its CPUs (logged when not), and bind its
 * memory to its GPUs' NUMA nodes when SLURM_ENERGY_GPU_MEMBIND=local is in
 * the job's environment or slurmd's.
 */
static void _place_task(char **env, bitstr_t *alloc, bitstr_t *usable,
			gres_internal_flags_t flags)
{
	static bool gpu_cpus[GPU_LOGIC_MAX_GPUS * CPU_SETSIZE];
	const char *ids[GPU_LOGIC_MAX_GPUS];
	bool sel[GPU_LOGIC_MAX_GPUS], vis[GPU_LOGIC_MAX_GPUS];
	gres_device_t *tab[GPU_LOGIC_MAX_GPUS];
	int numa[GPU_LOGIC_MAX_GPUS], nodes[GPU_LOGIC_MAX_GPUS], nn = 0;
	int n = _selected(alloc, usable, true, tab, sel, vis);
	const char *membind = getenvp(env, ENV_MEMBIND);
	bool any = false, local = false;
	cpu_set_t mask;

	if (n <= 0 || !dev_bus || sched_getaffinity(0, sizeof(mask), &mask))
		return;
	for (int k = 0; k < n; k++)
		ids[k] = ((uint32_t) k < dev_cnt) ? dev_bus[k] : "";
	if (gpu_topo_locality(NULL, ids, n, gpu_cpus, CPU_SETSIZE, numa))
		return;
	for (int k = 0; k < n; k++) {
		if (!sel[k])
			continue;
		any = true;
		nodes[nn++] = numa[k];
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &mask) &&
			    gpu_cpus[k * CPU_SETSIZE + c])
				local = true;
	}
	if (any && !local && _say_remote_once())
		info("%s: a task's GPUs are not local to its CPUs (NUMA placement; said once per step)",
		     plugin_type);
	if (flags & GRES_INTERNAL_FLAG_VERBOSE)
		fprintf(stderr, "gpu-bind: GPUs local to task CPUs: %s\n",
			any ? (local ? "yes" : "no") : "none");
	if (!membind)
		membind = getenv(ENV_MEMBIND);
	if (any && membind && !xstrcasecmp(membind, "local"))
		_membind(nodes, nn);
}

/* Public functions: Slurm entry points */

extern int init(void)
{
	void *page = mmap(NULL, sizeof(*remote_said), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	remote_said = (page == MAP_FAILED) ? NULL : page;
	debug("%s: %s loaded", plugin_type, plugin_name);
	return stock_init();
}

extern int fini(void)
{
	if (remote_said)
		munmap(remote_said, sizeof(*remote_said));
	remote_said = NULL;
	xfree(dev_bus);
	dev_cnt = 0;
	return se_stock_fini();
}

extern int gres_p_node_config_load(se_list_t gres_conf_list,
				   node_config_load_t *node_config)
{
	int rc = stock_gres_p_node_config_load(gres_conf_list, node_config);

	if (rc == SLURM_SUCCESS && node_config->in_slurmd) {
		_find_bus_ids();
		_add_locality(gres_conf_list, node_config);
	}
	return rc;
}

extern void gres_p_job_set_env(char ***job_env_ptr, bitstr_t *gres_bit_alloc,
			       uint64_t gres_cnt, gres_internal_flags_t flags)
{
	stock_gres_p_job_set_env(job_env_ptr, gres_bit_alloc, gres_cnt, flags);
	_renumber(job_env_ptr, gres_bit_alloc, NULL, false);
}

extern void gres_p_step_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
				uint64_t gres_cnt, gres_internal_flags_t flags)
{
	stock_gres_p_step_set_env(step_env_ptr, gres_bit_alloc, gres_cnt,
				  flags);
	_renumber(step_env_ptr, gres_bit_alloc, NULL, false);
}

extern void gres_p_task_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
				uint64_t gres_cnt, bitstr_t *usable_gres,
				gres_internal_flags_t flags)
{
	stock_gres_p_task_set_env(step_env_ptr, gres_bit_alloc, gres_cnt,
				  usable_gres, flags);
	_renumber(step_env_ptr, gres_bit_alloc, usable_gres, true);
	_place_task(*step_env_ptr, gres_bit_alloc, usable_gres, flags);
}

/* The stock device list, then our bus ids (same order on both sides). */
extern void gres_p_send_stepd(buf_t *buffer)
{
	stock_gres_p_send_stepd(buffer);
	pack32(dev_cnt, buffer);
	for (uint32_t k = 0; k < dev_cnt; k++)
		packstr(dev_bus[k], buffer);
}

extern void gres_p_recv_stepd(buf_t *buffer)
{
	uint32_t n = 0, len;
	char *s = NULL;

	stock_gres_p_recv_stepd(buffer);
	xfree(dev_bus);
	dev_cnt = 0;
	safe_unpack32(&n, buffer);
	if (n > GPU_LOGIC_MAX_GPUS)
		goto unpack_error;
	dev_bus = xcalloc(n ? n : 1, sizeof(*dev_bus));
	for (uint32_t k = 0; k < n; k++) {
		safe_unpackstr_xmalloc(&s, &len, buffer);
		snprintf(dev_bus[k], BUSID_LEN, "%s", s ? s : "");
		xfree(s);
	}
	dev_cnt = n;
	return;
unpack_error:
	xfree(s);
	error("%s: %s: failed", plugin_type, __func__);
}

extern se_list_t gres_p_get_devices(void)
{
	return stock_gres_p_get_devices();
}

extern void gres_p_step_hardware_init(bitstr_t *usable_gpus, char *tres_freq)
{
	stock_gres_p_step_hardware_init(usable_gpus, tres_freq);
}

extern void gres_p_step_hardware_fini(void)
{
	stock_gres_p_step_hardware_fini();
}
