/*
 * gpu_minors.h - the NVIDIA GPUs a step holds, from the device list Slurm's
 * device cgroup is built with (gres_g_get_devices), free of Slurm.
 *
 * Slurm's list holds every device file its GRES plugins know on the node
 * (GPUs, MIG capabilities under /dev/nvidia-caps/, anything else gres.conf
 * names), each with alloc set when the job or step may open it and dev_num,
 * the number at the end of its file name.  For /dev/nvidiaN that number is
 * the GPU's minor, which is how slurmd finds the GPU's NVML sampler
 * (design-gpu-nodes.md §3.1-3.2).  The glue feeds each device here and
 * sends the set it gets.
 */
#ifndef SE_GPU_MINORS_H
#define SE_GPU_MINORS_H

#include <stdbool.h>
#include <stdint.h>

#include "energy_query.h"

typedef struct {
	unsigned gpus;		/* NVIDIA GPU device files seen, allocated
				 * or not */
	unsigned unusable;	/* allocated GPUs whose minor a set cannot
				 * hold (negative, or
				 * ENERGY_QUERY_MINORS_MAX and up) */
	uint64_t set[ENERGY_QUERY_MINOR_WORDS];	/* the allocated GPUs' minors */
} gpu_minors_t;

/* Whether path's file name is an NVIDIA GPU's device: "nvidia" and digits
 * only (not nvidiactl, nvidia-uvm, nvidia-caps/nvidia-cap1). */
bool gpu_minors_is_gpu_path(const char *path);

/* One device of Slurm's list into m: a GPU's minor (dev_num) into the set
 * when alloc; any other device is ignored. */
void gpu_minors_add_device(gpu_minors_t *m, const char *path, int dev_num,
			   bool alloc);

/*
 * Whether m says which GPUs the step holds: Slurm knows at least one
 * NVIDIA GPU on the node (else its cgroup constrains none, and the step
 * may open any), and every allocated one fits the set (an incomplete set
 * would leave a held GPU to no one).
 */
bool gpu_minors_known(const gpu_minors_t *m);

#endif
