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

#include <stddef.h>
#include <stdint.h>

#include "gpu_cursor.h"
#include "sampler.h"

typedef struct gpu_energy gpu_energy_t;

/*
 * Open NVML (lib_path NULL: libnvidia-ml.so.1) and start one sampler per
 * GPU, reading every period_ns.  GPU i below is the one with the i-th
 * smallest minor number (Slurm's gres device index, see
 * nvml_lib_minor_order), not NVML's index.  Returns NULL with a reason in
 * err and errno as nvml_lib_open's (ENOENT: no NVML library installed,
 * ENOEXEC: too old a one; EAGAIN: nvmlInit failed), or ENODEV (NVML
 * reports no GPU), ENOMEM, or a sampler's.
 */
gpu_energy_t *gpu_energy_start(const char *lib_path, uint64_t period_ns,
			       char *err, size_t err_len);

/*
 * The same, keeping each GPU's scale across runs in state_dir (slurmd's
 * spool directory; NULL: not kept): the total of GPU i
 * (gpu_energy_total) is then the previous run's total plus the
 * counter's increase since, when the counter went on (same GPU, not gone
 * back, no more than a GPU can use in the time since); otherwise the
 * counter's raw value at the first good read.  A file per GPU,
 * slurm-energy-gpu<i>.scale ("raw_mj total_mj wall_s"), rewritten every
 * 10 s and at stop.
 */
gpu_energy_t *gpu_energy_start_kept(const char *lib_path, uint64_t period_ns,
				    const char *state_dir, char *err,
				    size_t err_len);

/* Stop the samplers and close NVML.  ge may be NULL. */
void gpu_energy_stop(gpu_energy_t *ge);

/* Number of GPUs sampled. */
unsigned gpu_energy_count(const gpu_energy_t *ge);

/* Every GPU reads now (sampler_kick): a reading at another meter's kicked
 * instant. */
void gpu_energy_kick(gpu_energy_t *ge);

/*
 * The minor number (/dev/nvidia<minor>) of GPU i, as NVML gave it at
 * start; -1 when NVML could not read it (or no such GPU).  Minors are
 * what a step's device cgroup names, so slurmd maps a step's GPUs to
 * samplers with gpu_energy_index_of_minor().
 */
int gpu_energy_minor(const gpu_energy_t *ge, unsigned i);

/* The GPU i whose minor is minor; -1 when no sampler has it. */
int gpu_energy_index_of_minor(const gpu_energy_t *ge, int minor);

/*
 * NVML may be missing when the daemon starts (the driver not loaded
 * yet): gpu_energy_start_async() tries once at once and, if NVML is not
 * ready, again in a thread of its own every retry_first_ns doubling up to
 * retry_max_ns, until it answers or gpu_energy_async_stop().  Nothing
 * ever waits for it: gpu_energy_async_get() gives the GPUs once there.
 * It says one line when it starts retrying (error level: "no GPU energy
 * on this node yet: <reason>; ...; <meanwhile>") and one when NVML
 * answers (info: "NVML available after N tries over S s: ..."), through
 * se_log; each failed retry only at debug level.
 */
typedef struct {
	const char *lib_path;	/* NULL: libnvidia-ml.so.1 */
	uint64_t period_ns;	/* the samplers' */
	const char *state_dir;	/* scales kept there (see _kept); NULL not */
	uint64_t retry_first_ns; /* 0: 5 s */
	uint64_t retry_max_ns;	/* 0: 300 s */
	const char *meanwhile;	/* what happens until NVML answers, for the
				 * log (e.g. "steps count no GPU energy
				 * until it works"); NULL: nothing said */
	/* Tests: how to start the GPUs (NULL: gpu_energy_start_kept with
	 * the fields above); errno as gpu_energy_start's on failure. */
	gpu_energy_t *(*open)(void *arg, char *err, size_t err_len);
	void *open_arg;
} gpu_energy_async_config_t;

typedef struct gpu_energy_async gpu_energy_async_t;

/*
 * Start as above (cfg is copied).  NULL, with the reason in err and errno
 * ENOENT or ENOEXEC, when the NVML library cannot be used at all (not
 * installed, too old): then nothing is retried and nothing logged, the
 * caller says it once (a CPU node sharing the cluster's configuration
 * is no error).  NULL with ENOMEM when out of memory.  Otherwise the
 * handle, whose GPUs may come later.
 */
gpu_energy_async_t *gpu_energy_start_async(
	const gpu_energy_async_config_t *cfg, char *err, size_t err_len);

/* The GPUs, or NULL while NVML has not answered.  Valid until
 * gpu_energy_async_stop(a).  a may be NULL. */
gpu_energy_t *gpu_energy_async_get(gpu_energy_async_t *a);

/* Tries made so far, the first (synchronous) one included. */
unsigned gpu_energy_async_tries(gpu_energy_async_t *a);

/* End the retries (joins the thread: waits for a try in progress), stop
 * the GPUs if there are and free a.  a may be NULL. */
void gpu_energy_async_stop(gpu_energy_async_t *a);

/*
 * Before the split of the node meter's interval ending at t_ns: wait, at
 * most max_wait_ns, until every GPU whose sampler reads (not starting, not
 * failing, not a whole tick late) has a sample no older than t_ns -
 * skew_ns, kicking once those behind.  The GPUs read on the meter's ticks
 * and kicks in threads of their own, so a GPU's read of the same round may
 * land just after the meter's: read then, its interval would end at its
 * previous sample, and the next one would span more than the meter's,
 * whose energy a short interval can be cut to (the cut is lost to the CPU
 * split).  Returns how many GPUs are still behind (a hung read: the
 * interval takes what is there, as without the wait); ge may be NULL (0,
 * at once).
 */
unsigned gpu_energy_await(gpu_energy_t *ge, uint64_t t_ns, uint64_t skew_ns,
			  uint64_t max_wait_ns);

/*
 * GPU i's part of the node meter's interval (t0_ns, t1_ns], on GPU i's
 * own cursor (gpu_cursor_interval; stale past its period plus its read
 * deadline).  One caller at a time (slurmd's meter sampler thread).
 * 0, or -EINVAL for a bad ge or i (out->why GPU_OUT_STARTING then).
 */
int gpu_energy_interval(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
			uint64_t t1_ns, gpu_interval_t *out);

/*
 * GPU i's total, what slurmd hands out for it, on the GPU's own scale
 * (the counter's value at the first good read, or the kept scale: see
 * gpu_energy_start_kept) so that a reader that outlives us (a step across
 * a slurmd restart or reconfigure) sees it go on.
 */
typedef struct {
	uint64_t energy_mj;	/* at now_ns: sample_mj + power_mw since
				 * (at most 600 s): an estimate while reads
				 * fail, replaced by the counter's total,
				 * lower or higher, when they resume */
	uint64_t sample_mj;	/* at the last good sample: exact */
	uint64_t sample_ns;	/* its monotonic instant */
	uint64_t power_mw;	/* its power */
	sampler_state_t state;
} gpu_energy_total_t;

/* 0; -ENODATA before GPU i's first good sample (no total: the GPU has
 * no data yet, e.g. NVML failing since slurmd started); -EINVAL bad i. */
int gpu_energy_total(gpu_energy_t *ge, unsigned i, uint64_t now_ns,
		     gpu_energy_total_t *out);

/*
 * A step's view of one GPU from slurmd's totals (slurmstepd; Slurm-free
 * so that it is unit-tested).  The GPU's energy in the step is what its
 * total rose since the first one (the base), so a total that slurmd
 * corrects downwards (an estimate across a failed read replaced by the
 * counter's total) is taken as is.  A total below the base is another
 * scale (the counter went back while slurmd was down: a driver reload):
 * what was counted is kept and the time since the last total is bridged
 * at its power; counting goes on from the new total.
 */
typedef struct {
	bool seen;
	uint64_t base_j;	/* the scale's total where counting began */
	uint64_t counted_j;	/* earlier scales, bridges, a late start */
	uint64_t last_j;	/* the last total (J) */
	uint32_t last_w;	/* and its power */
	uint64_t last_ns;	/* and when it came (monotonic) */
} gpu_step_gpu_t;

/*
 * Feed total j (J) with power w (W) at now_ns to a step that started at
 * start_ns; a first total later than late_ns after start_ns also counts
 * w over the time before it.  Returns 1 when j began a new scale (then
 * *bridged_j is the energy bridged), else 0 (*bridged_j 0).
 */
int gpu_step_feed(gpu_step_gpu_t *g, uint64_t j, uint32_t w,
		  uint64_t now_ns, uint64_t start_ns, uint64_t late_ns,
		  uint64_t *bridged_j);

/* The GPU's energy in the step so far (J). */
uint64_t gpu_step_energy(const gpu_step_gpu_t *g);

/*
 * GPU i's cumulative energy on its sampler's own scale at t_ns (as
 * sampler_energy_at: interpolated in its history, extrapolated past its
 * newest sample): slurmd's node-mode GPU part, whose differences only a
 * step uses (within one server generation).  0 or -errno.
 */
int gpu_energy_at(gpu_energy_t *ge, unsigned i, uint64_t t_ns, uint64_t *mj);

/* Energy of GPU i between t0_ns and t1_ns. */
int gpu_energy_between(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
		       uint64_t t1_ns, uint64_t *mj);

#endif
