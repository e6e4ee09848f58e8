/*
 * se_energy_gpus.c - EnergyGPU=nvml in slurmd: the node-meter plugin also
 * reads the node's NVIDIA GPUs through NVML (src/meters/nvml/), on the
 * meter's clock (doc/design-gpu-nodes.md §2, §4;
 * acct_gather_energy_attribution(5), GPUS).
 *
 * Slurm does not call in here.  The keys come from the plugin's conf_set
 * (se_energy_set_gpus, in every process).  In slurmd, se_node_start()
 * starts the GPU samplers after the meter's (se_gpus_start) and
 * _node_stop() stops them after the query server and the meter's sampler
 * (se_gpus_stop).  Share mode: the meter's sampler thread reads each GPU
 * over the split's interval (se_gpus_interval, from _attr_on_sample), and
 * the query server's thread maps a step's GPU minors to sampler masks
 * (se_gpus_masks).  Node mode: the query server's GPU hook shows a step
 * its GPUs' energy (se_gpus_node_part).
 *
 * gpus (the samplers and what the split read of them) is under
 * se_scan_lock: a meter sampler left detached by a reload may still
 * finish one on_sample, and must find the GPUs gone.  gpus.async,
 * period_ns and factor are also read, without the lock, by the query
 * server's thread: they are set before that thread starts and cleared
 * after it stopped.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_energy_int.h"

#include "gpu_energy.h"
#include "gpu_meter.h"

/* Most GPUs read: a split's mask holds 64 (gpu_energy: 64 too). */
#define GPUS_MAX	ATTRIB_MAX_GPUS
/* Before a split, a GPU read more than ROUND_SKEW before the meter is
 * waited for (kicked), at most a quarter of the GPUs' period: a thread
 * that late is more than a busy node's scheduling (gpu_energy_await). */
#define ROUND_SKEW_NS	(5 * SE_NS_PER_MS)

/* The keys, in every process (se_state_lock) */
static int gpus_kind = GPU_METER_NONE;
static double gpus_factor = 1.0;
static char gpus_library[PATH_MAX];	/* EnergyGPULibrary, "" default */

/* slurmd: the GPU samplers and what the split read of them */
typedef struct {
	gpu_energy_async_t *async;	/* NULL: no GPU metered */
	uint64_t period_ns;		/* the GPU samplers' */
	double factor;			/* EnergyGPUFactor in force */
	uint64_t t0_ns;			/* end of the last interval read */
	unsigned n;			/* GPUs in that interval */
	gpu_why_t why[GPUS_MAX];	/* ... and how each one read */
} gpus_state_t;

static gpus_state_t gpus;
/* The start line once NVML answered (any thread: atomic) */
static bool said_started;
/* The cut warning: once per slurmd, the totals count every cut */
static bool said_cut;

void se_energy_set_gpus(const gpu_meter_conf_t *c)
{
	slurm_mutex_lock(&se_state_lock);
	gpus_kind = c->kind;
	gpus_factor = c->factor;
	snprintf(gpus_library, sizeof(gpus_library), "%s",
		 c->library ? c->library : "");
	slurm_mutex_unlock(&se_state_lock);
}

bool se_gpus_configured(void)
{
	return gpus_kind == GPU_METER_NVML;
}

/* What happens to the GPUs' energy while NVML does not answer. */
static const char *_meanwhile(void)
{
	return se_share_mode() ?
		"the GPUs' energy is split by CPU time until NVML answers" :
		"steps are shown no GPU part until NVML answers";
}

gpu_energy_t *se_gpus_get(void)
{
	gpu_energy_t *ge = gpu_energy_async_get(gpus.async);

	if (ge && !__atomic_exchange_n(&said_started, true, __ATOMIC_ACQ_REL))
		info("%s: EnergyGPU=nvml: %u GPU(s) metered through NVML every %"PRIu64" ms on the meter's clock (EnergyGPUFactor=%.3f)",
		     plugin_type, gpu_energy_count(ge),
		     (uint64_t) (gpus.period_ns / SE_NS_PER_MS), gpus.factor);
	return ge;
}

void se_gpus_kick(void *arg)
{
	(void) arg;
	gpu_energy_kick(gpu_energy_async_get(gpus.async));
}

/* The GPUs' period: the meter's, at most 1 s (design §2: a GPU sample
 * near every meter sample). */
static uint64_t _gpus_period_ns(uint64_t meter_period_ns)
{
	if (!meter_period_ns || meter_period_ns > SE_NS_PER_SEC)
		return SE_NS_PER_SEC;
	return meter_period_ns;
}

/* Open NVML and start the GPUs' samplers, or retry NVML in the
 * background; NULL when this node meters no GPU (said here). */
static gpu_energy_async_t *_gpus_open(const char *name, uint64_t period_ns)
{
	gpu_meter_conf_t keys = { .library = gpus_library };
	gpu_energy_async_config_t cfg = {
		.lib_path = gpu_meter_library(&keys,
					      getenv(GPU_METER_LIBRARY_ENV)),
		.period_ns = period_ns,
		.meanwhile = _meanwhile(),
	};
	gpu_energy_async_t *a;
	char err[256] = "";

	a = gpu_energy_start_async(&cfg, err, sizeof(err));
	if (!a && (errno == ENOENT || errno == ENOEXEC))
		/* a CPU node sharing the cluster's acct_gather.conf */
		info("%s: node %s: EnergyGPU=nvml but %s is not installed or cannot be used (%s): this node meters no GPU",
		     plugin_type, name, cfg.lib_path, err);
	else if (!a)
		error("%s: node %s: EnergyGPU=nvml: %s: this node meters no GPU",
		      plugin_type, name, err);
	return a;
}

void se_gpus_start(const char *name, uint64_t meter_period_ns)
{
	uint64_t period_ns = _gpus_period_ns(meter_period_ns);
	gpu_energy_async_t *a;

	if (!se_gpus_configured())
		return;
	if (!(a = _gpus_open(name, period_ns)))
		return;
	/* before the meter's sampler thread can see the GPUs (a reload says
	 * the start line again, once) */
	__atomic_store_n(&said_started, false, __ATOMIC_RELEASE);
	slurm_mutex_lock(&se_scan_lock);
	memset(&gpus, 0, sizeof(gpus));
	gpus.async = a;
	gpus.period_ns = period_ns;
	gpus.factor = gpus_factor;
	slurm_mutex_unlock(&se_scan_lock);
	(void) se_gpus_get();	/* NVML answered at once: say so now */
}

void se_gpus_stop(void)
{
	slurm_mutex_lock(&se_scan_lock);
	gpu_energy_async_stop(gpus.async);
	memset(&gpus, 0, sizeof(gpus));
	slurm_mutex_unlock(&se_scan_lock);
}

/* ------------------------------------------------ share mode: the split */

/*
 * A GPU's fault, once when it goes out (no sample yet at start is none),
 * and its return; the sampler's own read errors are said by the sampler.
 */
static void _gpu_say(gpu_energy_t *ge, unsigned i, const gpu_interval_t *iv)
{
	int minor = gpu_energy_minor(ge, i);

	if (iv->why != GPU_IN && iv->why != GPU_OUT_STARTING &&
	    iv->out_run == 1)
		error("%s: GPU %u (minor %d): %s: its energy is split by CPU time until it reads again",
		      plugin_type, i, minor, gpu_why_str(iv->why));
	else if (iv->why == GPU_IN && iv->out_run > 0)
		info("%s: GPU %u (minor %d) reads again after %u interval(s) split by CPU time",
		     plugin_type, i, minor, iv->out_run);
}

/* GPU i over (gpus.t0_ns, t1_ns] into g (se_scan_lock held). */
static void _gpu_read(gpu_energy_t *ge, unsigned i, uint64_t t1_ns,
		      attrib_gpu_energy_t *g)
{
	gpu_interval_t iv;

	(void) gpu_energy_interval(ge, i, gpus.t0_ns, t1_ns, &iv);
	g->valid = iv.why == GPU_IN;
	g->raw_mj = g->valid ? iv.energy_mj : 0;
	g->energy_mj = gpu_meter_charged_mj(gpus.factor, g->raw_mj);
	gpus.why[i] = iv.why;
	_gpu_say(ge, i, &iv);
}

size_t se_gpus_interval(uint64_t t1_ns, attrib_gpu_energy_t *g)
{
	gpu_energy_t *ge = se_gpus_get();
	unsigned n = ge ? gpu_energy_count(ge) : 0;

	if (n > GPUS_MAX)
		n = GPUS_MAX;
	(void) gpu_energy_await(ge, t1_ns, ROUND_SKEW_NS, gpus.period_ns / 4);
	for (unsigned i = 0; i < n; i++)
		_gpu_read(ge, i, t1_ns, &g[i]);
	gpus.n = n;
	return n;
}

/* The GPUs' charged energy in the totals (valid GPUs, x F, before a
 * cut): every part of it is in exactly one of these. */
static uint64_t _gpus_read_mj(const attrib_totals_t *t)
{
	return t->gpu_charged_mj + t->gpu_unowned_mj + t->gpu_to_rest_mj +
	       t->gpu_clipped_mj + t->gpu_held_mj;
}

void se_gpus_split_done(uint64_t t1_ns, int rc, const attrib_totals_t *before,
			const attrib_totals_t *after)
{
	uint64_t t0_ns = gpus.t0_ns;

	gpus.t0_ns = t1_ns;
	if (rc != ATTRIB_GPUS_CUT || said_cut || !before || !after)
		return;
	/* A cut in an interval of milliseconds (a kicked read just after a
	 * tick, the GPUs read up to ROUND_SKEW_NS before the meter) is the
	 * two reads' timing, worth a few joules: counted, not said. */
	if (!t0_ns || t1_ns - t0_ns < gpus.period_ns / 2)
		return;
	said_cut = true;
	/* Slurm 22.05 has no warning(): error() is the level above info */
	error("%s: EnergyGPU=nvml: the GPUs' energy (%"PRIu64" mJ, x%.3f) exceeded the node's (%"PRIu64" mJ) over a %.1f s interval: cut to the node's. Said once; the totals file counts every cut (gpu_clipped_mj, gpu_clipped_intervals): EnergyGPUFactor too high, or a meter lagging the GPUs?",
	      plugin_type, _gpus_read_mj(after) - _gpus_read_mj(before),
	      gpus.factor, after->measured_mj - before->measured_mj,
	      (double) (t1_ns - t0_ns) / SE_NS_PER_SEC);
}

/* A GPU's state in the totals file, one word. */
static const char *_why_word(gpu_why_t why)
{
	switch (why) {
	case GPU_IN:
		return "in";
	case GPU_OUT_STARTING:
		return "starting";
	case GPU_OUT_FAILING:
		return "failing";
	case GPU_OUT_LOST:
		return "lost";
	case GPU_OUT_STALE:
		return "stale";
	case GPU_OUT_RESET:
		return "reset";
	case GPU_OUT_GAP:
		return "gap";
	}
	return "?";
}

void se_gpus_write_status(FILE *f, const attrib_totals_t *t)
{
	gpu_energy_t *ge = gpu_energy_async_get(gpus.async);

	if (!se_gpus_configured())
		return;
	fprintf(f, " gpus=%u gpu_raw_mj=%"PRIu64" gpu_charged_mj=%"PRIu64" gpu_unowned_mj=%"PRIu64" gpu_to_rest_mj=%"PRIu64" gpu_clipped_mj=%"PRIu64" gpu_held_mj=%"PRIu64" gpu_clipped_intervals=%lu gpu_out_intervals=%lu",
		gpus.n, t->gpu_raw_mj, t->gpu_charged_mj, t->gpu_unowned_mj,
		t->gpu_to_rest_mj, t->gpu_clipped_mj, t->gpu_held_mj,
		t->gpu_clipped_intervals, t->gpu_out_intervals);
	for (unsigned i = 0; ge && i < gpus.n; i++) {
		int minor = gpu_energy_minor(ge, i);

		if (minor < 0)
			fprintf(f, " gpu%u=?:%s", i, _why_word(gpus.why[i]));
		else
			fprintf(f, " gpu%u=%d:%s", i, minor,
				_why_word(gpus.why[i]));
	}
}

/* ------------------------------------------------- the steps' GPUs */

static int _index_of_minor(void *ge, int minor)
{
	return gpu_energy_index_of_minor(ge, minor);
}

void se_gpus_masks(gpu_energy_t *ge, const energy_query_step_t *st,
		   uint64_t *step_mask, uint64_t *job_mask)
{
	*step_mask = *job_mask = 0;
	if (!ge || !st->gpus_known)
		return;
	*step_mask = gpu_meter_mask(st->step_minors, _index_of_minor, ge);
	*job_mask = gpu_meter_mask(st->job_minors, _index_of_minor, ge);
}

void se_gpus_metered(gpu_energy_t *ge, energy_query_gpu_t *gpu)
{
	gpu->metered = ge != NULL;
	gpu->count = ge ? gpu_energy_count(ge) : 0;
}

/* The GPUs of mask, their NVML energy at t_ns summed: 0, or -errno (a
 * GPU without a sample there). */
static int _gpus_energy_at(gpu_energy_t *ge, uint64_t mask, uint64_t t_ns,
			   uint64_t *mj)
{
	unsigned n = gpu_energy_count(ge);

	*mj = 0;
	for (unsigned i = 0; i < n && i < GPUS_MAX; i++) {
		uint64_t e;
		int rc;

		if (!(mask & (UINT64_C(1) << i)))
			continue;
		if ((rc = gpu_energy_at(ge, i, t_ns, &e)))
			return rc;
		*mj += e;
	}
	return 0;
}

int se_gpus_node_part(void *arg, const energy_query_step_t *st,
		      uint64_t t0_ns, uint64_t t1_ns, energy_query_gpu_t *gpu)
{
	gpu_energy_t *ge = se_gpus_get();
	uint64_t mask, e0, e1;

	(void) arg;
	se_gpus_metered(ge, gpu);
	if (!ge || !st->gpus_known)
		return 0;
	mask = gpu_meter_mask(gpu_meter_step_minors(st), _index_of_minor, ge);
	/* a GPU without a sample at t0 or t1 yet: no part this time, the
	 * step asks again */
	if (_gpus_energy_at(ge, mask, t0_ns, &e0) ||
	    _gpus_energy_at(ge, mask, t1_ns, &e1))
		return 0;
	gpu->part = true;
	gpu->e0_mj = gpu_meter_charged_mj(gpus.factor, e0);
	gpu->e1_mj = gpu_meter_charged_mj(gpus.factor, e1);
	return 0;
}

void se_gpus_snapshot(energy_snapshot_t *out)
{
	gpu_energy_t *ge = se_gpus_get();
	uint64_t now = se_mono_ns();
	unsigned n;

	if (!ge)
		return;
	n = gpu_energy_count(ge);
	if (n > ENERGY_SNAPSHOT_GPUS_MAX)
		n = ENERGY_SNAPSHOT_GPUS_MAX;
	for (unsigned i = 0; i < n; i++) {
		energy_snapshot_gpu_t *g = &out->gpus[i];
		gpu_energy_total_t t;
		int minor = gpu_energy_minor(ge, i);

		g->minor = minor < 0 ? UINT32_MAX : (uint32_t) minor;
		if (minor < 0 || gpu_energy_total(ge, i, now, &t))
			continue;	/* not read yet: not shown */
		g->flags = ENERGY_SNAPSHOT_GPU_VALID;
		g->power_mw = t.power_mw;
		/* at the newest good reading, not extrapolated past it: an
		 * extrapolation the next reading corrects downwards would
		 * make the counter go back (a reset to Prometheus) */
		g->energy_mj = gpu_meter_charged_mj(gpus.factor, t.sample_mj);
	}
	out->n_gpus = n;
}
