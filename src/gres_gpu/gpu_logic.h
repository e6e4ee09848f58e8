/*
 * gpu_logic.h - the Slurm-free logic of the GPU plugins (unit-tested alone).
 *
 *  - NVML CPU-affinity masks to CPU range strings;
 *  - NvLink counts to a gres.conf Links= string;
 *  - PCI bus id ordering, and the *_VISIBLE_DEVICES value of an allocation
 *    numbered in PCI bus order (what CUDA uses with
 *    CUDA_DEVICE_ORDER=PCI_BUS_ID);
 *  - per-task GPU choice for --gpu-bind=closest|map_gpu:|mask_gpu: and
 *    --gpus-per-task;
 *  - energy: average watts of an interval with the rounding carried over,
 *    and a job's GPU energy counting only its own GPUs.
 *
 * Functions return 0 or a negative errno; strings are NUL-terminated and
 * -ENOSPC means the buffer was too small.
 */
#ifndef SE_GPU_LOGIC_H
#define SE_GPU_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPU_LOGIC_MAX_GPUS	64

/*
 * Write the CPUs set in an NVML affinity mask (n unsigned longs, CPU c is
 * bit c % bits of word c / bits, as nvmlDeviceGetCpuAffinity fills it) as a
 * range list "0-3,8,10-11".  "" when none is set.
 */
int gpu_cpumask_to_range(const unsigned long *set, unsigned n, char *buf,
			 size_t len);

/*
 * Compare two PCI bus ids "DDDD:BB:DD.F" (case-insensitive hex, the domain
 * may have 4 or 8 digits) numerically, field by field.  An empty or
 * malformed id sorts after every valid one.  strcmp-like result.
 */
int gpu_pci_busid_cmp(const char *a, const char *b);

/*
 * rank[i] = position of bus_ids[i] in PCI bus order among the n devices
 * (ties and unknown ids keep their input order).
 */
int gpu_pci_rank(const char *const *bus_ids, size_t n, int *rank);

/*
 * The value of CUDA_VISIBLE_DEVICES (and its ROCm/oneAPI/OpenCL siblings)
 * for the devices sel[i] among n, each numbered by its PCI bus order among
 * the devices visible to the process: all n (visible NULL) or, when the
 * job's devices are constrained by cgroups, only those with visible[i].
 * Numbers are listed ascending.  A selected device that is not visible is
 * -EINVAL.  "" when nothing is selected.
 */
int gpu_visible_devices(const char *const *bus_ids, size_t n,
			const bool *visible, const bool *sel, char *buf,
			size_t len);

/*
 * Device file of a GPU from a template: "%u" is the minor number, "%h" the
 * host name, "%%" a percent sign; NULL fmt means "/dev/nvidia%u".
 * -EINVAL for any other conversion.
 */
int gpu_device_path(const char *fmt, const char *host, unsigned minor,
		    char *buf, size_t len);

/*
 * gres.conf Links= for device i of n: for each j, -1 when j == i, else
 * link_count[i * n + j].
 */
int gpu_links_string(const int *link_count, size_t n, size_t i, char *buf,
		     size_t len);

/* --gpu-bind forms. */
typedef enum {
	GPU_BIND_NONE = 0,	/* task sees all of the step's GPUs */
	GPU_BIND_CLOSEST,	/* GPUs local to the task's CPUs */
	GPU_BIND_MAP,		/* map_gpu:<list>: one GPU per task */
	GPU_BIND_MASK,		/* mask_gpu:<list>: a mask per task */
	GPU_BIND_PER_TASK,	/* --gpus-per-task=N: N GPUs per task, in turn */
} gpu_bind_type_t;

typedef struct {
	gpu_bind_type_t type;
	unsigned long values[GPU_LOGIC_MAX_GPUS]; /* map ids / masks */
	size_t n_values;
	unsigned per_task;		/* GPU_BIND_PER_TASK */
} gpu_bind_t;

/*
 * Parse a --gpu-bind value ("closest", "map_gpu:0,1", "mask_gpu:0x3,0xc",
 * an optional "verbose," prefix is skipped) or, for spec NULL and
 * per_task > 0, --gpus-per-task.  map/mask entries accept "X*N" repeats
 * like Slurm.  -EINVAL for anything else.
 */
int gpu_bind_parse(const char *spec, unsigned per_task, gpu_bind_t *out);

/*
 * Choose the GPUs of local task `task` (of ntasks on the node) among the
 * step's GPUs alloc[0..n) (device indices as in map_gpu:/mask_gpu:, i.e.
 * node-local device numbers).  For CLOSEST, task_cpus[c] and gpu_cpus[i *
 * ncpus + c] give the task's CPUs and the CPUs local to each GPU: the
 * allocated GPUs sharing the most CPUs with the task are chosen (all
 * allocated ones if none shares any; *local is then false).  Entries naming
 * a device outside the allocation are dropped.  out[i] says whether device i
 * is usable by the task.  Returns the number chosen or -EINVAL.
 */
int gpu_task_choose(const gpu_bind_t *bind, unsigned task, unsigned ntasks,
		    const bool *alloc, size_t n, const bool *task_cpus,
		    const bool *gpu_cpus, size_t ncpus, bool *out,
		    bool *local);

/*
 * Average power over an interval for a consumer that integrates whole
 * watts over whole seconds (Slurm's acct_gather_energy/gpu): returns
 * floor((energy_mj + *carry_mj) / (seconds * 1000)) and keeps the
 * remainder in *carry_mj, so that the sum of watts x seconds handed out
 * never drifts from the true energy by more than 1 J.  seconds 0 returns
 * 0 and carries all the energy.
 */
uint32_t gpu_avg_watts(uint64_t energy_mj, uint64_t seconds,
		       uint64_t *carry_mj);

/*
 * A job's GPU energy between t0 and t1 counts only its own GPUs:
 * the sum, over the devices with gpus[i], of energy_between(arg, i, t0, t1).
 * Returns 0 or the first error of the callback.
 */
typedef int (*gpu_energy_between_fn)(void *arg, unsigned gpu, uint64_t t0,
				     uint64_t t1, uint64_t *mj);
int gpu_job_energy(gpu_energy_between_fn fn, void *arg, const bool *gpus,
		   size_t n, uint64_t t0, uint64_t t1, uint64_t *mj);

#endif
