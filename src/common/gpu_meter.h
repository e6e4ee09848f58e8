/*
 * gpu_meter.h - the arithmetic of a node meter's GPUs in slurmd
 * (EnergyGPU=nvml; doc/design-gpu-nodes.md §2-§4), Slurm-free so that it
 * is unit-tested: what a GPU's NVML energy is charged as, and which GPU
 * samplers a step's minor numbers name.
 */
#ifndef SE_GPU_METER_H
#define SE_GPU_METER_H

#include <stdbool.h>
#include <stdint.h>

#include "energy_query.h"

/*
 * The energy charged for raw_mj of NVML's: round(factor x raw_mj), the
 * meter's view of the GPU's joules (EnergyGPUFactor).  Exact to the mJ up
 * to 2^52 mJ (about 143 years of a 1 kW GPU).
 */
uint64_t gpu_meter_charged_mj(double factor, uint64_t raw_mj);

/*
 * The sampler index of the GPU with minor number minor, or -1 when no
 * sampler has it (gpu_energy_index_of_minor, behind arg).
 */
typedef int (*gpu_meter_index_fn)(void *arg, int minor);

/*
 * The GPU samplers a set of minor numbers names, as a mask (bit i: GPU
 * sampler i).  A minor no sampler has, or one past the 64 a mask holds,
 * is left out: its GPU's energy stays in the CPU split.
 */
uint64_t gpu_meter_mask(const uint64_t minors[ENERGY_QUERY_MINOR_WORDS],
			gpu_meter_index_fn index_of, void *arg);

/*
 * The GPUs a step is shown in node mode: a numbered (srun) step's own; a
 * job-wide step's (batch, interactive, extern: their device cgroup is the
 * job's) its job's.
 */
const uint64_t *gpu_meter_step_minors(const energy_query_step_t *st);

#endif
