/*
 * acct_gather_energy_gpu.c - acct_gather_energy/gpu (slurm-energy-plugins):
 * a drop-in for Slurm's acct_gather_energy/gpu, for NVIDIA GPUs through
 * NVML's total-energy counter.
 *
 * Why a drop-in: Debian's 22.05.8 acct_gather_energy_gpu.so references
 * slurmd's global `conf`, so slurmctld cannot load it ("undefined symbol:
 * conf") and dies when AcctGatherEnergyType=acct_gather_energy/gpu; and it
 * integrates power polled every 30 s over whole seconds.  This one:
 *
 *  slurmd      one sampler thread per GPU (gpu_energy.c) reads the counter
 *              every second; every get_data is answered at once from the
 *              samples, interpolated to "now", never by calling NVML.
 *              Sensors are the GPUs (SENSOR_CNT = GPU count); STRUCT and
 *              JOULES_TASK fill one record per GPU, NODE_ENERGY[_UP] the
 *              node's sum.
 *  slurmstepd  energy of the step's own GPUs only (its gres bitmap), from
 *              slurmd's per-GPU records: two jobs sharing a node each get
 *              their GPUs' energy.  Sensors are in the order of the GPUs'
 *              minor numbers on both sides: slurmd sorts NVML's GPUs so,
 *              and the step maps its gres device indexes (whose order
 *              depends on gres.conf and AutoDetect) to device files and
 *              their minor numbers.  A GPU's energy in the step is what
 *              its total rose since the first one with data (at
 *              STEP_PTR, before the tasks start), so a total slurmd
 *              corrects downwards is taken as is; a total below that
 *              base is a new scale (gpu_step_feed).
 *  totals     slurmd's total of a GPU is on the counter's own scale,
 *              kept across slurmd restarts and reconfigures in
 *              SlurmdSpoolDir (gpu_energy_start_kept), so that a step
 *              outliving slurmd's samplers sees it go on, the down time
 *              counted by the counter.  It is the exact total of the
 *              last good read plus that read's power since: while reads
 *              fail (a fault) that is an estimate, and when they resume
 *              the counter's total replaces it, lower or higher.  A GPU
 *              without a good read yet has no total (NO_VAL watts).
 *  NVML missing as slurmd starts (driver not loaded yet): gpu_energy's
 *              thread retries every RETRY_FIRST_S, doubling to
 *              RETRY_MAX_S, never in an RPC; the steps report 0 J for the
 *              GPUs until it works.  No NVML library at all (no driver
 *              installed) is said once and not retried.
 *  elsewhere   nothing (slurmctld only loads the plugin to parse config).
 * Units: records hold J and W; samples are mJ on monotonic ns.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"
#include "src/common/bitstring.h"
#include "slurm_compat_gres.h"
#include "src/slurmd/slurmd/slurmd.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "gpu_energy.h"
#include "se_log.h"
#include "se_slurm_log.h"
#include "se_time.h"

/* slurmd and slurmstepd export their slurmd_conf_t; other daemons do not. */
#pragma weak conf

const char plugin_name[] = "AcctGatherEnergy GPU plugin (slurm-energy-plugins)";
const char plugin_type[] = "acct_gather_energy/gpu";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define SAMPLE_PERIOD_NS	(1 * SE_NS_PER_SEC)
#define ENV_LIBRARY		"SLURM_ENERGY_NVML_LIBRARY"
#define GPU_MAX			64
#define RETRY_FIRST_S		5
#define RETRY_MAX_S		300
/* A step's first total this late fills the time before it (see below). */
#define STEP_LATE_NS		(2 * SE_NS_PER_SEC)

/* Private variables (all under state_lock) */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static int context_id = -1;

/* slurmd: the GPUs, maybe later (NVML not ready at start) */
static gpu_energy_async_t *gpus_async;
static bool gpus_missing;		/* no NVML library: said once */

/* slurmstepd */
static char *step_node;
static bitstr_t *step_gpus;		/* by sensor; NULL: no GPU */
static gpu_step_gpu_t step_gpu[GPU_MAX];
static uint64_t step_start_ns;
static acct_gather_energy_t step_energy;	/* last answer */
static se_ratelimit_t query_rl = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC, 1);
/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(ENERGY);

/* Private functions */

/* slurmd: where each GPU's scale is kept (SlurmdSpoolDir), or NULL. */
static const char *_state_dir(void)
{
	return (&conf && conf) ? conf->spooldir : NULL;
}

/* slurmd: the GPUs when NVML has answered, else NULL. */
static gpu_energy_t *_gpus(void)
{
	return gpu_energy_async_get(gpus_async);
}

static void _started(void)
{
	const char *dir = _state_dir();

	info("%s: sampling the energy counters of %u GPU(s) through NVML every %llu ms (slurm-energy-plugins)",
	     plugin_type, gpu_energy_count(_gpus()),
	     (unsigned long long) (SAMPLE_PERIOD_NS / SE_NS_PER_MS));
	debug("%s: each GPU's energy scale is kept across slurmd restarts in %s",
	      plugin_type, dir ? dir : "no directory (SlurmdSpoolDir unknown)");
}

/*
 * slurmd: start the samplers once (state_lock held).  NVML not ready
 * (driver not loaded yet) is tried again in gpu_energy's own thread,
 * never in an RPC; no NVML library at all is said once, not retried.
 */
static void _slurmd_start(void)
{
	gpu_energy_async_config_t cfg = {
		.lib_path = getenv(ENV_LIBRARY),
		.period_ns = SAMPLE_PERIOD_NS,
		.state_dir = _state_dir(),
		.retry_first_ns = RETRY_FIRST_S * SE_NS_PER_SEC,
		.retry_max_ns = RETRY_MAX_S * SE_NS_PER_SEC,
		.meanwhile = "steps count no GPU energy until it works",
	};
	char err[256] = "";

	if (gpus_async || gpus_missing)
		return;
	gpus_async = gpu_energy_start_async(&cfg, err, sizeof(err));
	if (!gpus_async) {
		gpus_missing = true;
		error("%s: no GPU energy on this node: %s", plugin_type, err);
		return;
	}
	if (_gpus())
		_started();
}

/*
 * slurmd: one record for GPU i, its total at now_ns.  No good read yet
 * (starting, or failing since it started): no total, NO_VAL watts, which
 * steps and the node's sum skip.
 */
static void _gpu_record(unsigned i, uint64_t now_ns, acct_gather_energy_t *e)
{
	gpu_energy_total_t f;

	memset(e, 0, sizeof(*e));
	se_energy_set_start_time(e);
	if (gpu_energy_total(_gpus(), i, now_ns, &f)) {
		e->current_watts = NO_VAL;	/* no data yet: skipped */
		return;
	}
	e->consumed_energy = f.energy_mj / 1000;
	e->current_watts = f.power_mw / 1000;
	e->ave_watts = e->current_watts;
	e->poll_time = time(NULL);
}

static void _slurmd_records(acct_gather_energy_t *e, unsigned n)
{
	uint64_t now = se_mono_ns();

	for (unsigned i = 0; i < n; i++)
		_gpu_record(i, now, &e[i]);
}

static void _slurmd_sum(acct_gather_energy_t *sum)
{
	uint64_t now = se_mono_ns();
	unsigned n = gpu_energy_count(_gpus());

	memset(sum, 0, sizeof(*sum));
	se_energy_set_start_time(sum);
	for (unsigned i = 0; i < n; i++) {
		acct_gather_energy_t e;

		_gpu_record(i, now, &e);
		if (e.current_watts == NO_VAL)
			continue;
		sum->consumed_energy += e.consumed_energy;
		sum->current_watts += e.current_watts;
		sum->ave_watts += e.ave_watts;
		sum->poll_time = e.poll_time;
	}
}

/* slurmstepd: one total of slurmd for GPU i (see gpu_step_feed). */
static void _stepd_feed(unsigned i, uint64_t j, uint32_t w, uint64_t now)
{
	uint64_t bridged = 0, before = step_gpu[i].last_j;
	uint64_t since = now - step_gpu[i].last_ns;

	if (gpu_step_feed(&step_gpu[i], j, w, now, step_start_ns,
			  STEP_LATE_NS, &bridged))
		info("%s: GPU %u: slurmd's total went from %"PRIu64" J to %"PRIu64" J, below the step's base (the GPU's counter went back while slurmd was down?): counting goes on from it, the %.1f s since the last reading bridged at its power (%"PRIu64" J)",
		     plugin_type, i, before, j, (double) since / 1e9, bridged);
}

/*
 * slurmstepd: ask slurmd for its per-GPU totals and feed the step's
 * GPUs' to their views; *watts gets their power.  -1 (nothing changed)
 * when slurmd does not answer.
 */
static int _stepd_query(uint32_t *watts)
{
	acct_gather_energy_t *e = NULL;
	uint64_t now;
	uint16_t n = 0;

	*watts = 0;
	if (!step_node || context_id < 0 ||
	    slurm_get_node_energy(step_node, context_id, 0, &n, &e) ||
	    !e) {
		/* the step keeps its last energy; said once a minute */
		se_log_limited(&query_rl, se_mono_ns(), SE_LOG_ERROR,
			       "no GPU energy from slurmd of %s",
			       step_node ? step_node : "?");
		return -1;
	}
	now = se_mono_ns();
	for (uint16_t i = 0; i < n && i < GPU_MAX; i++) {
		/* another GPU, or one without data yet (NO_VAL watts) */
		if (!step_gpus || i >= bit_size(step_gpus) ||
		    !bit_test(step_gpus, i) || e[i].current_watts == NO_VAL)
			continue;
		_stepd_feed(i, e[i].consumed_energy, e[i].current_watts, now);
		*watts += e[i].current_watts;
	}
	acct_gather_energy_destroy(e);
	return 0;
}

/*
 * slurmstepd: the step's energy so far: the sum of its GPUs' (an estimate
 * across a fault is replaced by the counter's total when reads resume).
 */
static void _stepd_energy(acct_gather_energy_t *out)
{
	uint64_t sum = 0;
	uint32_t watts;

	if (step_gpus && !_stepd_query(&watts)) {
		for (unsigned i = 0; i < GPU_MAX; i++)
			sum += gpu_step_energy(&step_gpu[i]);
		step_energy.previous_consumed_energy =
			step_energy.consumed_energy;
		step_energy.base_consumed_energy =
			sum > step_energy.consumed_energy ?
			sum - step_energy.consumed_energy : 0;
		step_energy.consumed_energy = sum;
		step_energy.current_watts = watts;
		step_energy.ave_watts = watts;
		step_energy.poll_time = time(NULL);
	}
	memcpy(out, &step_energy, sizeof(*out));
}

/*
 * slurmstepd: the sensors (GPUs by ascending minor number) of the step's
 * gres device indexes.  NULL when they cannot be mapped.
 */
static bitstr_t *_sensors_of(bitstr_t *index_bits)
{
	se_list_t devs = gres_g_get_devices(NULL, false, 0, NULL, 0, 0);
	int minors[GPU_MAX], idx[GPU_MAX], n = 0;
	bitstr_t *out = NULL;
	gres_device_t *d;
	se_list_itr_t it;

	if (!devs)
		return NULL;
	it = list_iterator_create(devs);
	while ((d = list_next(it)) && n < GPU_MAX) {
		if (!d->path || !strstr(d->path, "nvidia"))
			continue;	/* e.g. another GRES's device */
		minors[n] = d->dev_num;
		idx[n++] = d->index;
	}
	list_iterator_destroy(it);
	FREE_NULL_LIST(devs);
	if (!n)
		return NULL;
	out = bit_alloc(n);
	for (int k = 0; k < n; k++) {
		int rank = 0;

		if (idx[k] >= bit_size(index_bits) ||
		    !bit_test(index_bits, idx[k]))
			continue;
		for (int j = 0; j < n; j++)
			if (minors[j] < minors[k])
				rank++;
		bit_set(out, rank);
	}
	return out;
}

/* slurmstepd: the step's GPUs and its base energies. */
static void _stepd_step(stepd_step_rec_t *job)
{
	bitstr_t *bits = NULL;
	uint32_t watts;
	int rc;

	step_start_ns = se_mono_ns();
	memset(step_gpu, 0, sizeof(step_gpu));
	xfree(step_node);
	step_node = xstrdup(job->node_name);
	FREE_NULL_BITMAP(step_gpus);
	rc = gres_get_step_info(job->step_gres_list, "gpu", 0,
				GRES_STEP_DATA_BITMAP, &bits);
	if (rc != SLURM_SUCCESS || !bits || !bit_set_count(bits)) {
		debug("%s: step has no GPU: no GPU energy", plugin_type);
		return;
	}
	if (!(step_gpus = _sensors_of(bits)))
		return;
	/* the base of each GPU that has data */
	(void) _stepd_query(&watts);
	{
		char *s = bit_fmt_full(step_gpus);

		info("%s: step GPU energy counts GPU(s) %s only (slurm-energy-plugins)",
		     plugin_type, s);
		xfree(s);
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
	slurm_mutex_lock(&state_lock);
	gpu_energy_async_stop(gpus_async);
	gpus_async = NULL;
	gpus_missing = false;
	xfree(step_node);
	FREE_NULL_BITMAP(step_gpus);
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

extern int acct_gather_energy_p_update_node_energy(void)
{
	return SLURM_SUCCESS;
}

/*
 * What every process answers alike: its sensor count and last poll
 * (true), or false for a record the caller fills.
 */
static bool _get_counts(enum acct_energy_type data_type, uint16_t sensors,
			time_t last_poll, void *data)
{
	switch (data_type) {
	case ENERGY_DATA_SENSOR_CNT:
		*(uint16_t *) data = sensors;
		return true;
	case ENERGY_DATA_LAST_POLL:
		*(time_t *) data = last_poll;
		return true;
	default:
		return false;
	}
}

/* slurmd: per-GPU records, or the node's sum (state_lock held). */
static int _slurmd_get_data(enum acct_energy_type data_type, void *data)
{
	acct_gather_energy_t *energy = data;
	unsigned n = gpu_energy_count(_gpus());

	/* 0 sensors would leave the step's RPC unanswered: one empty
	 * sensor without GPUs; answers are interpolated to "now": always
	 * fresh */
	if (_get_counts(data_type, n ? n : 1, time(NULL), data))
		return SLURM_SUCCESS;
	switch (data_type) {
	case ENERGY_DATA_STRUCT:
	case ENERGY_DATA_JOULES_TASK:
		if (n) {
			_slurmd_records(energy, n);
		} else {
			/* no GPU (yet): a record without data */
			memset(energy, 0, sizeof(*energy));
			energy->current_watts = NO_VAL;
		}
		return SLURM_SUCCESS;
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_NODE_ENERGY_UP:
		_slurmd_sum(energy);
		return SLURM_SUCCESS;
	default:
		return SLURM_ERROR;
	}
}

/* slurmstepd: the step's GPUs' energy (state_lock held). */
static int _stepd_get_data(enum acct_energy_type data_type, void *data)
{
	if (_get_counts(data_type, 1, step_energy.poll_time, data))
		return SLURM_SUCCESS;
	switch (data_type) {
	case ENERGY_DATA_STRUCT:
	case ENERGY_DATA_JOULES_TASK:
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_NODE_ENERGY_UP:
		_stepd_energy(data);
		return SLURM_SUCCESS;
	default:
		return SLURM_ERROR;
	}
}

extern int acct_gather_energy_p_get_data(enum acct_energy_type data_type,
					 void *data)
{
	int rc = SLURM_SUCCESS;

	slurm_mutex_lock(&state_lock);
	if (se_in_slurmd())
		rc = _slurmd_get_data(data_type, data);
	else if (se_in_slurmstepd())
		rc = _stepd_get_data(data_type, data);
	slurm_mutex_unlock(&state_lock);
	return rc;
}

extern int acct_gather_energy_p_set_data(enum acct_energy_type data_type,
					 void *data)
{
	slurm_mutex_lock(&state_lock);
	if (data_type == ENERGY_DATA_STEP_PTR && se_in_slurmstepd())
		_stepd_step(data);
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

extern void acct_gather_energy_p_conf_options(s_p_options_t **full_options,
					      int *full_options_cnt)
{
}

extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl)
{
	slurm_mutex_lock(&state_lock);
	context_id = context_id_in;
	if (se_in_slurmd())
		_slurmd_start();
	slurm_mutex_unlock(&state_lock);
}

extern void acct_gather_energy_p_conf_values(se_list_t *data)
{
}
