/*
 * gpu_energy.c - one sampler per GPU on NVML's energy counter.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_energy.h"
#include "nvml_lib.h"
#include "se_log.h"
#include "se_time.h"

/* Sampling policy: history of > 1 h at 1 s; 5 kW is no GPU. */
#define HISTORY_SAMPLES		4096
#define MAX_GPU_POWER_MW	(5000ULL * 1000)
#define BACKOFF_MAX_NS		(30 * SE_NS_PER_SEC)
#define EXTRAPOLATE_MAX_NS	(600 * SE_NS_PER_SEC)
/* The scale file of a GPU is rewritten at most this often (and at stop). */
#define KEEP_EVERY_NS		(10 * SE_NS_PER_SEC)
/* NVML not ready at start: tried again this often, doubling up to max. */
#define RETRY_FIRST_NS		(5 * SE_NS_PER_SEC)
#define RETRY_MAX_NS		(300 * SE_NS_PER_SEC)
/* gpu_energy_await's pace: a read takes about a millisecond */
#define AWAIT_POLL_NS		(SE_NS_PER_MS / 2)

/*
 * GPU i's total: origin_mj + the sampler's energy.  The origin is set at
 * the first good sample: the counter's raw value then, or, when the scale
 * kept by the previous run (same GPU, counter not gone back, an increase
 * a GPU can make in the time since) goes on, that scale's total plus
 * the counter's increase since it was kept.
 */
typedef struct {
	struct gpu_energy *ge;
	unsigned i;
	bool have;		/* a good sample came: the fields below */
	uint64_t origin_mj;
	uint64_t last_ns;	/* the last good sample (monotonic) */
	uint64_t last_mj;	/* the sampler's energy at it */
	uint64_t last_raw_mj;	/* the counter's raw value at it */
	uint64_t saved_ns;	/* when the scale file was last written */
	bool kept;		/* a scale file of the previous run was read */
	uint64_t kept_raw_mj, kept_fig_mj;
	double kept_wall_s;
} gpu_fig_t;

struct gpu_energy {
	unsigned count;
	uint64_t period_ns, deadline_ns;	/* the samplers' */
	int *minors;		/* by GPU i; -1: NVML could not read it */
	gpu_cursor_t *cursors;	/* gpu_energy_interval's, by GPU i */
	nvml_meter_t *meters;
	sampler_t **samplers;
	int leaked;		/* a sampler outlived its deadline */
	pthread_mutex_t fig_lock;	/* figs[] */
	gpu_fig_t *figs;
	char *state_dir;	/* NULL: no scale kept across runs */
};

/* Private functions */

static void _scale_path(const gpu_energy_t *ge, unsigned i, char *out,
			size_t len)
{
	snprintf(out, len, "%s/slurm-energy-gpu%u.scale", ge->state_dir, i);
}

/* The previous run's scale of GPU i: "raw_mj total_mj wall_s". */
static void _scale_load(gpu_energy_t *ge, unsigned i)
{
	char path[4096];
	unsigned long long raw, fig;
	double wall;
	FILE *f;

	if (!ge->state_dir)
		return;
	_scale_path(ge, i, path, sizeof(path));
	if (!(f = fopen(path, "r")))
		return;
	if (fscanf(f, "%llu %llu %lf", &raw, &fig, &wall) == 3) {
		ge->figs[i].kept = true;
		ge->figs[i].kept_raw_mj = raw;
		ge->figs[i].kept_fig_mj = fig;
		ge->figs[i].kept_wall_s = wall;
	}
	fclose(f);
}

/* Write GPU i's scale (replaced atomically); errors are not fatal. */
static void _scale_save(gpu_energy_t *ge, unsigned i, uint64_t raw_mj,
			uint64_t fig_mj)
{
	char path[4096], tmp[4100];
	struct timespec ts;
	FILE *f;

	if (!ge->state_dir)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	_scale_path(ge, i, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "%" PRIu64 " %" PRIu64 " %.3f\n", raw_mj, fig_mj,
		ts.tv_sec + ts.tv_nsec / 1e9);
	if (fclose(f) == 0)
		(void) rename(tmp, path);
	else
		(void) unlink(tmp);
}

/*
 * The origin of a total whose first good sample read raw_mj when the
 * sampler's energy was energy_mj.
 */
static uint64_t _origin(const gpu_fig_t *g, uint64_t raw_mj,
			uint64_t energy_mj)
{
	uint64_t fig = raw_mj;

	if (g->kept && raw_mj >= g->kept_raw_mj) {
		struct timespec ts;
		double since;

		clock_gettime(CLOCK_REALTIME, &ts);
		since = ts.tv_sec + ts.tv_nsec / 1e9 - g->kept_wall_s;
		if (since < 0)
			since = 0;
		/* at most MAX_GPU_POWER since (a minute's slack for clocks) */
		if ((double) (raw_mj - g->kept_raw_mj) <=
		    (since + 60) * (MAX_GPU_POWER_MW / 1000.0) * 1000.0)
			fig = g->kept_fig_mj + (raw_mj - g->kept_raw_mj);
	}
	return fig >= energy_mj ? fig - energy_mj : 0;
}

/* The sampler thread of GPU i, after each good sample. */
static void _on_sample(void *arg, uint64_t t_ns, uint64_t energy_mj)
{
	gpu_fig_t *g = arg;
	gpu_energy_t *ge = g->ge;
	uint64_t raw = ge->meters[g->i].last_raw_mj, fig;
	bool save = false;

	pthread_mutex_lock(&ge->fig_lock);
	if (!g->have) {
		g->origin_mj = _origin(g, raw, energy_mj);
		g->have = true;
		save = true;
	}
	g->last_ns = t_ns;
	g->last_mj = energy_mj;
	g->last_raw_mj = raw;
	fig = g->origin_mj + energy_mj;
	if (save || t_ns - g->saved_ns >= KEEP_EVERY_NS) {
		g->saved_ns = t_ns;
		save = true;
	}
	pthread_mutex_unlock(&ge->fig_lock);
	if (save)
		_scale_save(ge, g->i, raw, fig);
}

static void _free(gpu_energy_t *ge)
{
	free(ge->minors);
	free(ge->cursors);
	free(ge->samplers);
	free(ge->meters);
	free(ge->figs);
	free(ge->state_dir);
	pthread_mutex_destroy(&ge->fig_lock);
	free(ge);
}

/* Public functions */

gpu_energy_t *gpu_energy_start(const char *lib_path, uint64_t period_ns,
			       char *err, size_t err_len)
{
	return gpu_energy_start_kept(lib_path, period_ns, NULL, err, err_len);
}

gpu_energy_t *gpu_energy_start_kept(const char *lib_path, uint64_t period_ns,
				    const char *state_dir, char *err,
				    size_t err_len)
{
	const nvml_lib_t *lib = nvml_lib_open(lib_path, err, err_len);
	unsigned order[64];
	int minors[64];
	gpu_energy_t *ge;
	int n = 0, why = ENOMEM;

	if (!lib)
		return NULL;	/* errno: nvml_lib_open's */
	if ((n = nvml_lib_minor_order(lib, order, minors, 64)) <= 0) {
		snprintf(err, err_len, "NVML reports no GPU");
		nvml_lib_close();
		errno = ENODEV;
		return NULL;
	}
	if (!(ge = calloc(1, sizeof(*ge)))) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	pthread_mutex_init(&ge->fig_lock, NULL);
	ge->period_ns = period_ns;
	ge->deadline_ns = 2 * period_ns;
	if (!(ge->minors = calloc(n, sizeof(*ge->minors))) ||
	    !(ge->cursors = calloc(n, sizeof(*ge->cursors))) ||
	    !(ge->meters = calloc(n, sizeof(*ge->meters))) ||
	    !(ge->samplers = calloc(n, sizeof(*ge->samplers))) ||
	    !(ge->figs = calloc(n, sizeof(*ge->figs))) ||
	    (state_dir && *state_dir &&
	     !(ge->state_dir = strdup(state_dir)))) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	ge->count = n;
	memcpy(ge->minors, minors, n * sizeof(*minors));
	for (unsigned i = 0; i < (unsigned) n; i++) {
		ge->figs[i].ge = ge;
		ge->figs[i].i = i;
		_scale_load(ge, i);
	}
	for (unsigned i = 0; i < (unsigned) n; i++) {
		char label[32];
		sampler_config_t cfg = {
			.period_ns = ge->period_ns,
			.deadline_ns = ge->deadline_ns,
			.backoff_max_ns = BACKOFF_MAX_NS,
			.use_counter = true,
			.counter = { .width_bits = NVML_ENERGY_COUNTER_BITS,
				     .mj_per_unit = NVML_ENERGY_MJ_PER_UNIT },
			.acc = { .history = HISTORY_SAMPLES,
				 .max_power_mw = MAX_GPU_POWER_MW,
				 .max_extrapolate_ns = EXTRAPOLATE_MAX_NS },
			.label = label,
			.on_sample = _on_sample,
			.on_sample_arg = &ge->figs[i],
		};

		snprintf(label, sizeof(label), "GPU %u (NVML %u)", i, order[i]);
		ge->meters[i].lib = lib;
		ge->meters[i].index = order[i];
		ge->samplers[i] = sampler_start(&nvml_meter_ops,
						&ge->meters[i], &cfg);
		if (!ge->samplers[i]) {
			why = errno;
			snprintf(err, err_len, "GPU %u: sampler: %s", i,
				 strerror(why));
			goto fail;
		}
	}
	return ge;
fail:
	gpu_energy_stop(ge);
	if (!ge)
		nvml_lib_close();
	errno = why;
	return NULL;
}

void gpu_energy_stop(gpu_energy_t *ge)
{
	if (!ge)
		return;
	for (unsigned i = 0; ge->samplers && i < ge->count; i++)
		if (sampler_stop(ge->samplers[i]) == -ETIMEDOUT)
			ge->leaked = 1;
	if (ge->leaked)
		return;		/* meters stay allocated for the stuck thread */
	/* the samplers are joined: keep each scale at its last good sample
	 * (the meter's last raw value may be a reading that was refused) */
	for (unsigned i = 0; ge->figs && i < ge->count; i++)
		if (ge->figs[i].have)
			_scale_save(ge, i, ge->figs[i].last_raw_mj,
				    ge->figs[i].origin_mj +
				    ge->figs[i].last_mj);
	_free(ge);
	nvml_lib_close();
}

void gpu_energy_kick(gpu_energy_t *ge)
{
	for (unsigned i = 0; ge && i < ge->count; i++)
		sampler_kick(ge->samplers[i]);
}

unsigned gpu_energy_count(const gpu_energy_t *ge)
{
	return ge ? ge->count : 0;
}

int gpu_energy_minor(const gpu_energy_t *ge, unsigned i)
{
	if (!ge || i >= ge->count)
		return -1;
	return ge->minors[i];
}

int gpu_energy_index_of_minor(const gpu_energy_t *ge, int minor)
{
	if (minor < 0)
		return -1;	/* unreadable minors match nothing */
	for (unsigned i = 0; ge && i < ge->count; i++)
		if (ge->minors[i] == minor)
			return (int) i;
	return -1;
}

int gpu_energy_total(gpu_energy_t *ge, unsigned i, uint64_t now_ns,
		     gpu_energy_total_t *out)
{
	sampler_status_t st;
	gpu_fig_t *g;
	uint64_t dt;

	memset(out, 0, sizeof(*out));
	if (!ge || i >= ge->count)
		return -EINVAL;
	g = &ge->figs[i];
	pthread_mutex_lock(&ge->fig_lock);
	if (!g->have) {
		pthread_mutex_unlock(&ge->fig_lock);
		return -ENODATA;
	}
	sampler_status(ge->samplers[i], &st);
	out->sample_ns = g->last_ns;
	out->sample_mj = g->origin_mj + g->last_mj;
	out->power_mw = st.power_mw;
	out->state = st.state;
	pthread_mutex_unlock(&ge->fig_lock);
	dt = now_ns > out->sample_ns ? now_ns - out->sample_ns : 0;
	if (dt > EXTRAPOLATE_MAX_NS)
		dt = EXTRAPOLATE_MAX_NS;
	out->energy_mj = out->sample_mj +
			 (uint64_t) ((unsigned __int128) out->power_mw * dt /
				     SE_NS_PER_SEC);
	return 0;
}

int gpu_energy_at(gpu_energy_t *ge, unsigned i, uint64_t t_ns, uint64_t *mj)
{
	if (!ge || i >= ge->count)
		return -EINVAL;
	return sampler_energy_at(ge->samplers[i], t_ns, mj);
}

int gpu_energy_between(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
		       uint64_t t1_ns, uint64_t *mj)
{
	if (!ge || i >= ge->count)
		return -EINVAL;
	return sampler_energy_between(ge->samplers[i], t0_ns, t1_ns, mj);
}


/* ------------------------------------ the node meter's intervals */

static void _source_status(void *src, sampler_status_t *out)
{
	sampler_status(src, out);
}

static int _source_energy_at(void *src, uint64_t t_ns, uint64_t *mj)
{
	return sampler_energy_at(src, t_ns, mj);
}

static uint32_t _source_flags(void *src, uint64_t t0_ns, uint64_t t1_ns)
{
	return sampler_flags_between(src, t0_ns, t1_ns);
}

static const gpu_source_ops_t sampler_source = {
	.status = _source_status,
	.energy_at = _source_energy_at,
	.flags_between = _source_flags,
};

/*
 * Is GPU i's read of t_ns's round still to come: its sampler reading, its
 * newest sample older than t_ns - skew, but not by more than one and a
 * half periods (one that missed its tick hangs: the cursor judges it,
 * waiting would only slow every split while it hangs)?
 */
static bool _behind(gpu_energy_t *ge, unsigned i, uint64_t t_ns,
		    uint64_t skew_ns)
{
	sampler_status_t st;

	sampler_status(ge->samplers[i], &st);
	return st.state == SAMPLER_OK && st.last_sample_ns + skew_ns < t_ns &&
	       t_ns - st.last_sample_ns <= ge->period_ns + ge->period_ns / 2;
}

unsigned gpu_energy_await(gpu_energy_t *ge, uint64_t t_ns, uint64_t skew_ns,
			  uint64_t max_wait_ns)
{
	uint64_t limit = se_mono_ns() + max_wait_ns;
	bool first = true;

	for (;;) {
		unsigned behind = 0;

		for (unsigned i = 0; ge && i < ge->count; i++) {
			if (!_behind(ge, i, t_ns, skew_ns))
				continue;
			behind++;
			if (first)
				sampler_kick(ge->samplers[i]);
		}
		first = false;
		if (!behind || se_mono_ns() >= limit)
			return behind;
		se_sleep_ns(AWAIT_POLL_NS);
	}
}

int gpu_energy_interval(gpu_energy_t *ge, unsigned i, uint64_t t0_ns,
			uint64_t t1_ns, gpu_interval_t *out)
{
	if (!ge || i >= ge->count) {
		memset(out, 0, sizeof(*out));
		out->why = GPU_OUT_STARTING;
		return -EINVAL;
	}
	gpu_cursor_interval(&ge->cursors[i], &sampler_source, ge->samplers[i],
			    t0_ns, t1_ns, ge->period_ns + ge->deadline_ns,
			    out);
	return 0;
}

/* ----------------------------------- NVML not there at start: retry */

struct gpu_energy_async {
	gpu_energy_async_config_t cfg;	/* strings copied below */
	char *lib_path, *state_dir, *meanwhile;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* stop, for the thread */
	pthread_t thread;
	bool running;			/* the thread was started */
	bool stop;			/* under lock */
	gpu_energy_t *ge;		/* under lock; set once */
	unsigned tries;			/* under lock */
	uint64_t since_ns;		/* the first try */
};

static gpu_energy_t *_async_open(gpu_energy_async_t *a, char *err,
				 size_t len)
{
	if (a->cfg.open)
		return a->cfg.open(a->cfg.open_arg, err, len);
	return gpu_energy_start_kept(a->lib_path, a->cfg.period_ns,
				     a->state_dir, err, len);
}

/* A library that cannot be loaded, or too old: retrying cannot help. */
static bool _hopeless(int why)
{
	return why == ENOENT || why == ENOEXEC;
}

static void _async_free(gpu_energy_async_t *a)
{
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	free(a->lib_path);
	free(a->state_dir);
	free(a->meanwhile);
	free(a);
}

static char *_strdup_or_null(const char *s, bool *fail)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup(s)))
		*fail = true;
	return d;
}

static gpu_energy_async_t *_async_new(const gpu_energy_async_config_t *cfg)
{
	gpu_energy_async_t *a = calloc(1, sizeof(*a));
	pthread_condattr_t ca;
	bool fail = false;

	if (!a)
		return NULL;
	a->cfg = *cfg;
	if (!a->cfg.retry_first_ns)
		a->cfg.retry_first_ns = RETRY_FIRST_NS;
	if (!a->cfg.retry_max_ns)
		a->cfg.retry_max_ns = RETRY_MAX_NS;
	a->lib_path = _strdup_or_null(cfg->lib_path, &fail);
	a->state_dir = _strdup_or_null(cfg->state_dir, &fail);
	a->meanwhile = _strdup_or_null(cfg->meanwhile, &fail);
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (fail) {
		_async_free(a);
		return NULL;
	}
	return a;
}

/* Sleep wait_ns or until stop (lock held); false on stop. */
static bool _async_wait(gpu_energy_async_t *a, uint64_t wait_ns)
{
	uint64_t until = se_mono_ns() + wait_ns;
	struct timespec ts = { .tv_sec = until / SE_NS_PER_SEC,
			       .tv_nsec = until % SE_NS_PER_SEC };

	while (!a->stop && se_mono_ns() < until)
		pthread_cond_timedwait(&a->wake, &a->lock, &ts);
	return !a->stop;
}

static void _async_ready(gpu_energy_async_t *a, gpu_energy_t *ge)
{
	se_log(SE_LOG_INFO,
	       "NVML available after %u tries over %.0f s: sampling the energy counters of %u GPU(s) every %llu ms",
	       a->tries, (double) (se_mono_ns() - a->since_ns) / 1e9,
	       gpu_energy_count(ge),
	       (unsigned long long) (a->cfg.period_ns / SE_NS_PER_MS));
}

/*
 * The retry thread: nvmlInit may take seconds on a real node, so it is
 * never called in a daemon's RPC; waits double up to retry_max_ns.
 */
static void *_async_main(void *arg)
{
	gpu_energy_async_t *a = arg;
	uint64_t wait_ns = a->cfg.retry_first_ns;

	pthread_mutex_lock(&a->lock);
	while (_async_wait(a, wait_ns)) {
		char err[256] = "";
		gpu_energy_t *ge;

		pthread_mutex_unlock(&a->lock);
		ge = _async_open(a, err, sizeof(err));
		pthread_mutex_lock(&a->lock);
		a->tries++;
		if (ge && a->stop) {
			gpu_energy_stop(ge);	/* too late: stopping */
			break;
		}
		if (ge) {
			a->ge = ge;
			_async_ready(a, ge);
			break;
		}
		se_log(SE_LOG_DEBUG, "NVML still unavailable: %s; next try in %.0f s",
		       err, (double) wait_ns / SE_NS_PER_SEC);
		wait_ns = wait_ns > a->cfg.retry_max_ns / 2 ?
			  a->cfg.retry_max_ns : wait_ns * 2;
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void _async_retry(gpu_energy_async_t *a, const char *why)
{
	const char *meanwhile = a->meanwhile ? a->meanwhile : "";
	int rc;

	se_log(SE_LOG_ERROR,
	       "no GPU energy on this node yet: %s; trying again in the background every %.0f s, then less often (up to %.0f s)%s%s",
	       why, (double) a->cfg.retry_first_ns / SE_NS_PER_SEC,
	       (double) a->cfg.retry_max_ns / SE_NS_PER_SEC,
	       *meanwhile ? "; " : "", meanwhile);
	if ((rc = pthread_create(&a->thread, NULL, _async_main, a))) {
		se_log(SE_LOG_ERROR, "cannot start the NVML retry thread: %s",
		       strerror(rc));
		return;
	}
	a->running = true;
}

gpu_energy_async_t *gpu_energy_start_async(
	const gpu_energy_async_config_t *cfg, char *err, size_t err_len)
{
	gpu_energy_async_t *a = _async_new(cfg);
	int why;

	if (!a) {
		snprintf(err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	a->since_ns = se_mono_ns();
	a->tries = 1;
	if ((a->ge = _async_open(a, err, err_len)))
		return a;
	why = errno;
	if (_hopeless(why)) {
		_async_free(a);
		errno = why;
		return NULL;
	}
	_async_retry(a, err);
	return a;
}

gpu_energy_t *gpu_energy_async_get(gpu_energy_async_t *a)
{
	gpu_energy_t *ge;

	if (!a)
		return NULL;
	pthread_mutex_lock(&a->lock);
	ge = a->ge;
	pthread_mutex_unlock(&a->lock);
	return ge;
}

unsigned gpu_energy_async_tries(gpu_energy_async_t *a)
{
	unsigned n;

	pthread_mutex_lock(&a->lock);
	n = a->tries;
	pthread_mutex_unlock(&a->lock);
	return n;
}

void gpu_energy_async_stop(gpu_energy_async_t *a)
{
	if (!a)
		return;
	if (a->running) {
		pthread_mutex_lock(&a->lock);
		a->stop = true;
		pthread_cond_broadcast(&a->wake);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
	}
	gpu_energy_stop(a->ge);
	_async_free(a);
}

/* ------------------------------------------------ a step's view (J) */

int gpu_step_feed(gpu_step_gpu_t *g, uint64_t j, uint32_t w,
		  uint64_t now_ns, uint64_t start_ns, uint64_t late_ns,
		  uint64_t *bridged_j)
{
	uint64_t bridged = 0;
	int scale = 0;

	if (!g->seen) {
		g->seen = true;
		g->base_j = j;
		g->counted_j = 0;
		if (now_ns > start_ns && now_ns - start_ns > late_ns)
			g->counted_j = (uint64_t) w * (now_ns - start_ns) /
				       SE_NS_PER_SEC;
	} else if (j < g->base_j) {
		/* another scale: keep what was counted, bridge the gap */
		if (now_ns > g->last_ns)
			bridged = (uint64_t) g->last_w *
				  (now_ns - g->last_ns) / SE_NS_PER_SEC;
		g->counted_j += g->last_j - g->base_j + bridged;
		g->base_j = j;
		scale = 1;
	}
	g->last_j = j;
	g->last_w = w;
	g->last_ns = now_ns;
	*bridged_j = bridged;
	return scale;
}

uint64_t gpu_step_energy(const gpu_step_gpu_t *g)
{
	if (!g->seen)
		return 0;
	return g->counted_j + (g->last_j - g->base_j);
}
