/*
 * gpu_energy.h - one sampler per GPU on NVML's total-energy counter.
 *
 * Slurm-free.  gpu_energy_start() opens NVML and starts a sampler thread
 * per GPU (src/common/sampler.h): every NVML call happens in those
 * threads, so callers (slurmd RPC threads) read energy at once from the
 * last good samples, interpolated to the instant they ask.
 */
#ifndef SE_GPU_ENERGY_H
#define SE_GPU_ENERGY_H

#include <stdint.h>

#include "sampler.h"

typedef struct gpu_energy gpu_energy_t;

/*
 * Open NVML (lib_path NULL: libnvidia-ml.so.1) and start one sampler per
 * GPU, reading every period_ns.  GPU i below is the one with the i-th
 * smallest minor number (Slurm's gres device index, see
 * nvml_lib_minor_order), not NVML's index.  Returns NULL with a reason in
 * err.
 */
gpu_energy_t *gpu_energy_start(const char *lib_path, uint64_t period_ns,
			       char *err, size_t err_len);

/* Stop the samplers and close NVML.  ge may be NULL. */
void gpu_energy_stop(gpu_energy_t *ge);

/* Number of GPUs sampled. */
unsigned gpu_energy_count(const gpu_energy_t *ge);

/*
 * Energy of GPU i at monotonic t_ns (see sampler_energy_at) on the GPU's
 * own scale: the counter's value at the first good read plus what was
 * counted since (resets and gaps filled), so that a reader that outlives
 * us (a step across a slurmd restart or reconfigure) sees the figure go
 * on instead of starting again from 0.  -EINVAL for a bad i.
 */
int gpu_energy_at(gpu_energy_t *ge, unsigned i, uint64_t t_ns, uint64_t *mj);

/* Energy of GPU i between t0_ns and t1_ns. */
int gpu_energy_between(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
		       uint64_t t1_ns, uint64_t *mj);

/* Status of GPU i's sampler (power, last sample); -EINVAL for a bad i. */
int gpu_energy_status(gpu_energy_t *ge, unsigned i, sampler_status_t *out);

#endif
