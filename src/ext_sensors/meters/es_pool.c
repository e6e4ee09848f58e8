/*
 * es_pool.c - out-of-band sensors for slurmctld (see es_pool.h): the
 * reader pool.  One thing, though over 800 lines: the queue, the readers,
 * the folding into components and the pacer all work on one struct under
 * its two locks, and every part would need all of it.
 *
 * Two locks, never held across I/O and never nested:
 *   q_lock     the read queue, the list of finished reads, the count of
 *              reads outstanding, stop, the pacer's kick and stats;
 *   st_lock    the components and their accumulated state.
 * The step start instants are a registry of their own (es_step_starts.c,
 * its own lock) that the core only owns.
 * A read job carries copies of everything the reader needs (paths, fetch
 * window), so readers never look at the components, and a job whose
 * component set was replaced meanwhile (generation changed) is dropped.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#define _GNU_SOURCE		/* pthread_timedjoin_np */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "energy_acc.h"
#include "es_pool.h"
#include "es_step_starts.h"
#include "rrd_read.h"
#include "rrd_series.h"
#include "se_log.h"
#include "se_thread.h"
#include "se_time.h"

#define ES_ERR_LEN		256
#define ES_TEMP_LOOKBACK_S	600	/* temperature rows fetched per read */
#define ES_LOG_INTERVAL_NS	(300 * SE_NS_PER_SEC)
#define ES_LOG_BURST		20
#define ES_PACER_WAIT_NS	(2 * SE_NS_PER_SEC) /* wait for a round's reads */

/* One read of one component, queued by a round and done by a reader. */
typedef struct es_job {
	struct es_job *next;
	es_kind_t kind;
	size_t idx;
	unsigned gen;
	uint64_t deadline_ns;	/* not started by then: dropped as late */
	char *energy_path;	/* NULL: no energy wanted */
	char *temp_path;	/* NULL: no temperature wanted */
	int64_t energy_from_s;

	bool late;
	int energy_rc, temp_rc;
	rrd_fetched_t energy;
	/* A component's first read brings its whole history: the reader
	 * builds the series off the lock, the round only adopts it. */
	bool first;
	energy_acc_t *acc;	/* NULL: fold the rows under the lock */
	bool have_last;
	rrd_sample_t last;
	rrd_sample_t temp;
	char energy_err[ES_ERR_LEN], temp_err[ES_ERR_LEN];
} es_job_t;

typedef struct {
	char *name;
	char *energy_path, *temp_path;	/* expanded; NULL: not wanted */
	bool in_flight;

	energy_acc_t *acc;		/* power series, NULL until a row */
	bool have_last;
	rrd_sample_t last;		/* newest power sample taken */
	bool have_temp;
	rrd_sample_t temp;		/* newest valid temperature */
	int energy_state, temp_state;	/* last outcome, for logging */
} es_comp_t;

struct es_pool {
	es_conf_t conf;
	rrd_limits_t watt_lim, temp_lim;
	const char *daemon;		/* NULL: no rrdcached */

	pthread_mutex_t q_lock;
	pthread_cond_t q_cond;		/* a job was queued; stop */
	pthread_cond_t done_cond;	/* a job is done (CLOCK_MONOTONIC) */
	pthread_cond_t p_cond;		/* kick; stop (CLOCK_MONOTONIC) */
	es_job_t *q_head, *q_tail;
	es_job_t *done;
	unsigned outstanding;		/* queued or being read */
	bool stop;
	pthread_t *threads;
	unsigned n_threads;

	bool pacer_on, kick;
	pthread_t pacer;
	uint64_t period_ns;
	es_pacer_hook_t hook;
	void *hook_arg;
	es_round_stats_t pacer_last;
	uint64_t pacer_rounds;

	es_step_starts_t *starts;

	pthread_mutex_t st_lock;
	es_comp_t *comps[ES_KIND_COUNT];
	size_t n_comps[ES_KIND_COUNT];
	unsigned gen[ES_KIND_COUNT];
	se_ratelimit_t rl;
};

static const char *const kind_names[ES_KIND_COUNT] = {
	"node", "switch", "cold door",
};

/* ---------------------------------------------------------- series */

static energy_acc_t *_acc_new(const es_pool_t *c, uint64_t step_s)
{
	energy_acc_config_t cfg = {
		.history = (size_t) (c->conf.history_ns /
				     (step_s * SE_NS_PER_SEC)) + 4,
		.gap_ns = 2 * step_s * SE_NS_PER_SEC + 1,
		.max_power_mw = (uint64_t) (c->conf.max_w * 1000.0),
		.max_extrapolate_ns = c->conf.max_age_ns,
	};

	return energy_acc_create(&cfg);
}

/* A power series being fed: a component's, or a first read's. */
typedef struct {
	energy_acc_t *acc;
	bool have_last;
	rrd_sample_t last;	/* newest sample taken */
} feed_t;

static int _take_power(void *arg, const rrd_sample_t *smp)
{
	feed_t *f = arg;
	uint64_t mw = (uint64_t) llround(smp->watts * 1000.0);

	/* a dropped sample (-ERANGE) leaves a gap the next one bridges */
	if (energy_acc_add_power(f->acc, smp->t_ns, mw) == 0) {
		f->last = *smp;
		f->have_last = true;
	}
	return 0;
}

/* ---------------------------------------------------------- readers */

static void _read_energy(const es_pool_t *c, es_job_t *j, int64_t now_s)
{
	rrd_what_t what = { j->energy_path, c->conf.energy_ds, "AVERAGE" };

	feed_t f = { 0 };

	j->energy_rc = rrd_read_fetch(c->daemon, &what, j->energy_from_s,
				      now_s, &j->energy, j->energy_err,
				      sizeof(j->energy_err));
	if (j->energy_rc || !j->first ||
	    !(f.acc = _acc_new(c, j->energy.s.step_s)))
		return;
	rrd_series_each_after(&j->energy.s, &c->watt_lim, 0, _take_power, &f,
			      NULL);
	j->acc = f.acc;
	j->have_last = f.have_last;
	j->last = f.last;
}

static void _read_temp(const es_pool_t *c, es_job_t *j, int64_t now_s)
{
	rrd_what_t what = { j->temp_path, c->conf.temp_ds, "AVERAGE" };
	rrd_fetched_t f;

	j->temp_rc = rrd_read_fetch(c->daemon, &what,
				    now_s - ES_TEMP_LOOKBACK_S, now_s, &f,
				    j->temp_err, sizeof(j->temp_err));
	if (j->temp_rc)
		return;
	j->temp_rc = rrd_series_last(&f.s, &c->temp_lim, &j->temp);
	if (j->temp_rc)
		snprintf(j->temp_err, sizeof(j->temp_err),
			 "%s: no temperature within [%g, %g] in the last %d s",
			 j->temp_path, c->conf.min_temp_c, c->conf.max_temp_c,
			 ES_TEMP_LOOKBACK_S);
	rrd_fetched_free(&f);
}

static void _do_job(const es_pool_t *c, es_job_t *j)
{
	uint64_t now_ns = se_wall_ns();
	int64_t now_s = (int64_t) (now_ns / SE_NS_PER_SEC);

	/* A read that waited a whole round in the queue would give data the
	 * next round's read gives fresher: the pool is behind, skip it. */
	if (se_mono_ns() > j->deadline_ns) {
		j->late = true;
		return;
	}
	if (j->energy_path)
		_read_energy(c, j, now_s);
	if (j->temp_path)
		_read_temp(c, j, now_s);
}

static void *_reader(void *arg)
{
	es_pool_t *c = arg;
	es_job_t *j;

	pthread_mutex_lock(&c->q_lock);
	while (!c->stop) {
		if (!(j = c->q_head)) {
			pthread_cond_wait(&c->q_cond, &c->q_lock);
			continue;
		}
		c->q_head = j->next;
		if (!c->q_head)
			c->q_tail = NULL;
		pthread_mutex_unlock(&c->q_lock);

		_do_job(c, j);

		pthread_mutex_lock(&c->q_lock);
		j->next = c->done;
		c->done = j;
		if (c->outstanding)
			c->outstanding--;
		pthread_cond_broadcast(&c->done_cond);
	}
	pthread_mutex_unlock(&c->q_lock);
	return NULL;
}

/* ---------------------------------------------------------- jobs */

static void _job_free(es_job_t *j)
{
	free(j->energy_path);
	free(j->temp_path);
	rrd_fetched_free(&j->energy);
	energy_acc_destroy(j->acc);
	free(j);
}

static void _jobs_free(es_job_t *j)
{
	while (j) {
		es_job_t *next = j->next;

		_job_free(j);
		j = next;
	}
}

/* Where the next energy read starts: just before the newest sample taken
 * (rows may be rewritten up to a step late), never beyond the history. */
static int64_t _energy_from_s(const es_pool_t *c, const es_comp_t *comp,
			      uint64_t now_ns)
{
	int64_t oldest = (int64_t) ((now_ns - c->conf.history_ns) /
				    SE_NS_PER_SEC);
	int64_t from;

	if (!comp->have_last)
		return oldest;
	from = (int64_t) (comp->last.t_ns / SE_NS_PER_SEC) - 60;
	return from > oldest ? from : oldest;
}

static es_job_t *_job_new(const es_pool_t *c, es_kind_t kind, size_t idx,
			  const es_comp_t *comp, uint64_t deadline_ns)
{
	es_job_t *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->idx = idx;
	j->gen = c->gen[kind];
	j->deadline_ns = deadline_ns;
	j->energy_from_s = _energy_from_s(c, comp, se_wall_ns());
	j->first = !comp->acc;
	if ((comp->energy_path && !(j->energy_path = strdup(comp->energy_path)))
	    || (comp->temp_path && !(j->temp_path = strdup(comp->temp_path)))) {
		_job_free(j);
		return NULL;
	}
	return j;
}

/* ---------------------------------------------------------- folding in */

/* Log a component's change of state (ok <-> failing, or another error). */
static void _log_state(es_pool_t *c, es_kind_t kind, const es_comp_t *comp,
		       int *state, int rc, const char *what, const char *err)
{
	if (rc == *state)
		return;
	if (rc)
		se_log_limited(&c->rl, se_mono_ns(), SE_LOG_ERROR,
			       "%s %s: %s skipped: %s", kind_names[kind],
			       comp->name, what, err);
	else if (*state != 1)
		se_log_limited(&c->rl, se_mono_ns(), SE_LOG_INFO,
			       "%s %s: %s readable again", kind_names[kind],
			       comp->name, what);
	*state = rc;
}

static int _acc_ensure(es_pool_t *c, es_comp_t *comp, uint64_t step_s)
{
	if (comp->acc)
		return 0;
	comp->acc = _acc_new(c, step_s);
	return comp->acc ? 0 : -ENOMEM;
}

/* The rows of a read into the component's series (under st_lock). */
static int _feed_comp(es_pool_t *c, es_job_t *j, es_comp_t *comp)
{
	feed_t f;
	int rc;

	if (j->acc && !comp->acc) {	/* a first read, built off the lock */
		comp->acc = j->acc;
		comp->have_last = j->have_last;
		comp->last = j->last;
		j->acc = NULL;
		return 0;
	}
	if ((rc = _acc_ensure(c, comp, j->energy.s.step_s)))
		return rc;
	f = (feed_t) { comp->acc, comp->have_last, comp->last };
	rrd_series_each_after(&j->energy.s, &c->watt_lim,
			      comp->have_last ? comp->last.t_ns : 0,
			      _take_power, &f, NULL);
	comp->have_last = f.have_last;
	comp->last = f.last;
	return 0;
}

/* Returns the outcome: 0, the read's error, or -ESTALE. */
static int _fold_energy(es_pool_t *c, es_job_t *j, es_comp_t *comp,
			uint64_t now_ns)
{
	int rc = j->energy_rc;
	char msg[ES_ERR_LEN];

	if (!rc)
		rc = _feed_comp(c, j, comp);
	snprintf(msg, sizeof(msg), "%s", j->energy_err);
	if (!rc && (!comp->have_last ||
		    now_ns - comp->last.t_ns > c->conf.max_age_ns)) {
		snprintf(msg, sizeof(msg), "%s: no valid row (within [%g, %g] "
			 "W) in the last %.0f s", comp->energy_path,
			 c->conf.min_w, c->conf.max_w,
			 (double) c->conf.max_age_ns / SE_NS_PER_SEC);
		rc = -ESTALE;
	}
	_log_state(c, j->kind, comp, &comp->energy_state, rc, "energy", msg);
	return rc;
}

static int _fold_temp(es_pool_t *c, es_job_t *j, es_comp_t *comp,
		      uint64_t now_ns)
{
	int rc = j->temp_rc;

	if (!rc) {
		comp->temp = j->temp;
		comp->have_temp = true;
	}
	_log_state(c, j->kind, comp, &comp->temp_state, rc, "temperature",
		   j->temp_err);
	return rc;
}

/* Fold finished reads into the components; count outcomes. */
static void _fold_all(es_pool_t *c, es_job_t *done, uint64_t now_ns,
		      es_round_stats_t *st)
{
	for (es_job_t *j = done; j; j = j->next) {
		es_comp_t *comp;
		int rc = 0;

		if (j->gen != c->gen[j->kind] || j->idx >= c->n_comps[j->kind])
			continue;
		comp = &c->comps[j->kind][j->idx];
		comp->in_flight = false;
		if (j->late) {
			st->late++;
			continue;
		}
		if (j->energy_path)
			rc |= _fold_energy(c, j, comp, now_ns);
		if (j->temp_path)
			rc |= _fold_temp(c, j, comp, now_ns);
		if (rc)
			st->failed++;
		else
			st->ok++;
	}
}

/* Queue a read for every idle component; returns the jobs, in order. */
static es_job_t *_queue_all(es_pool_t *c, uint64_t deadline_ns,
			    es_round_stats_t *st)
{
	es_job_t *head = NULL, **tail = &head;

	for (int k = 0; k < ES_KIND_COUNT; k++) {
		for (size_t i = 0; i < c->n_comps[k]; i++) {
			es_comp_t *comp = &c->comps[k][i];
			es_job_t *j;

			if (comp->in_flight) {
				st->in_flight++;
				continue;
			}
			if ((!comp->energy_path && !comp->temp_path) ||
			    !(j = _job_new(c, k, i, comp, deadline_ns)))
				continue;
			comp->in_flight = true;
			*tail = j;
			tail = &j->next;
			st->queued++;
		}
	}
	return head;
}

/* ---------------------------------------------------------- components */

static void _comp_clear(es_comp_t *comp)
{
	free(comp->name);
	free(comp->energy_path);
	free(comp->temp_path);
	energy_acc_destroy(comp->acc);
	memset(comp, 0, sizeof(*comp));
}

static void _comps_free(es_comp_t *comps, size_t n)
{
	for (size_t i = 0; comps && i < n; i++)
		_comp_clear(&comps[i]);
	free(comps);
}

static bool _wants(const es_pool_t *c, es_kind_t kind, bool energy)
{
	static const unsigned want[ES_KIND_COUNT][2] = {
		[ES_KIND_NODE] = { ES_NODE_TEMP,
				   ES_NODE_ENERGY | ES_JOB_ENERGY },
		[ES_KIND_SWITCH] = { ES_SWITCH_TEMP, ES_SWITCH_ENERGY },
		[ES_KIND_DOOR] = { ES_DOOR_TEMP, 0 },
	};

	return c->conf.data & want[kind][energy];
}

static int _expand(const char *key, const char *tmpl, const char *name,
		   char **out, char *err, size_t err_len)
{
	conf_where_t w = { "ext_sensors.conf", key, 0 };
	char path[4096];
	int rc = conf_expand(&w, tmpl, name, path, sizeof(path), err,
			     err_len);

	if (rc)
		return rc;
	return (*out = strdup(path)) ? 0 : -ENOMEM;
}

static int _comp_init(const es_pool_t *c, es_kind_t kind, es_comp_t *comp,
		      const char *name, char *err, size_t err_len)
{
	int rc = 0;

	comp->energy_state = comp->temp_state = 1;	/* not known yet */
	/* A hole in Slurm's node table (a dynamic node gone): no name, no
	 * file, never read; its index keeps node i = component i. */
	if (!name)
		return 0;
	if (!(comp->name = strdup(name)))
		return -ENOMEM;
	if (_wants(c, kind, true))
		rc = _expand("EnergyPathRRD", c->conf.energy_path, name,
			     &comp->energy_path, err, err_len);
	if (!rc && _wants(c, kind, false))
		rc = _expand("TempPathRRD", c->conf.temp_path, name,
			     &comp->temp_path, err, err_len);
	return rc;
}

/* Reuse the state of a same-named component of the old set, if any. */
static void _comp_adopt(es_comp_t *comp, es_comp_t *old, size_t n_old,
			size_t hint)
{
	es_comp_t *o = NULL;

	if (!comp->name)
		return;
	if (hint < n_old && old[hint].name &&
	    !strcmp(old[hint].name, comp->name))
		o = &old[hint];
	for (size_t i = 0; !o && i < n_old; i++)
		if (old[i].name && !strcmp(old[i].name, comp->name))
			o = &old[i];
	if (!o)
		return;
	comp->acc = o->acc;
	comp->have_last = o->have_last;
	comp->last = o->last;
	comp->have_temp = o->have_temp;
	comp->temp = o->temp;
	comp->energy_state = o->energy_state;
	comp->temp_state = o->temp_state;
	o->acc = NULL;
}

/* ---------------------------------------------------------- public */

static int _start_threads(es_pool_t *c, char *err, size_t err_len)
{
	int rc = 0;

	if (!(c->threads = calloc(c->conf.threads, sizeof(pthread_t))))
		return -ENOMEM;
	for (unsigned i = 0; i < c->conf.threads && !rc; i++) {
		rc = se_thread_start(&c->threads[i], _reader, c,
				     "se-es-reader");
		if (!rc)
			c->n_threads++;
	}
	if (rc)
		snprintf(err, err_len, "cannot start RRD reader threads: %s",
			 strerror(-rc));
	return rc;
}

static void _cond_init_mono(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

static int _conf_copy(es_conf_t *dst, const es_conf_t *src)
{
	char **s[] = { &dst->energy_ds, &dst->temp_ds, &dst->energy_path,
		       &dst->temp_path, &dst->cold_doors, &dst->switches,
		       &dst->daemon };

	*dst = *src;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (*s[i] && !(*s[i] = strdup(*s[i])))
			return -ENOMEM;
	return 0;
}

es_pool_t *es_pool_create(const es_conf_t *conf, char *err, size_t err_len)
{
	es_pool_t *c = calloc(1, sizeof(*c));
	const char *addr;

	if (!c || _conf_copy(&c->conf, conf)) {
		snprintf(err, err_len, "out of memory");
		free(c);
		return NULL;
	}
	c->watt_lim = (rrd_limits_t) { conf->min_w, conf->max_w };
	c->temp_lim = (rrd_limits_t) { conf->min_temp_c, conf->max_temp_c };
	addr = c->conf.daemon ? c->conf.daemon : getenv("RRDCACHED_ADDRESS");
	if (addr && addr[0] && strcmp(addr, "none"))
		c->daemon = addr;
	c->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(ES_LOG_INTERVAL_NS,
						   ES_LOG_BURST);
	pthread_mutex_init(&c->q_lock, NULL);
	pthread_cond_init(&c->q_cond, NULL);
	_cond_init_mono(&c->done_cond);
	_cond_init_mono(&c->p_cond);
	pthread_mutex_init(&c->st_lock, NULL);
	if (!(c->starts = es_step_starts_create(c->conf.history_ns)))
		snprintf(err, err_len, "out of memory");
	if (!c->starts || _start_threads(c, err, err_len)) {
		es_pool_destroy(c, SE_NS_PER_SEC);
		return NULL;
	}
	return c;
}

/* Join the pacer and every reader by an absolute CLOCK_REALTIME deadline. */
static bool _join_all(es_pool_t *c, uint64_t grace_ns)
{
	uint64_t end_ns = se_wall_ns() + grace_ns;
	struct timespec ts = { (time_t) (end_ns / SE_NS_PER_SEC),
			       (long) (end_ns % SE_NS_PER_SEC) };
	bool all = true;

	if (c->pacer_on && pthread_timedjoin_np(c->pacer, NULL, &ts)) {
		pthread_detach(c->pacer);
		all = false;
	}
	for (unsigned i = 0; i < c->n_threads; i++) {
		if (pthread_timedjoin_np(c->threads[i], NULL, &ts)) {
			pthread_detach(c->threads[i]);
			all = false;
		}
	}
	return all;
}

void es_pool_destroy(es_pool_t *c, uint64_t grace_ns)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->q_lock);
	c->stop = true;
	pthread_cond_broadcast(&c->q_cond);
	pthread_cond_broadcast(&c->done_cond);
	pthread_cond_broadcast(&c->p_cond);
	pthread_mutex_unlock(&c->q_lock);

	if (!_join_all(c, grace_ns)) {
		/* A reader is stuck in librrd (a hung file system), or the
		 * pacer in its hook: it still uses the core, so the core is
		 * left to it, and never freed: the thread may wake at any
		 * time or never, and nothing here can know when it lets go.
		 * One core (a few KB) per shutdown or reconfigure that found
		 * a hung file; the unit tests that hang a reader on purpose
		 * suppress exactly this leak for LeakSanitizer
		 * (tests/lsan.supp). */
		se_log(SE_LOG_ERROR, "RRD reader or pacer thread still busy "
		       "after %.1f s; left behind",
		       (double) grace_ns / SE_NS_PER_SEC);
		return;
	}
	_jobs_free(c->q_head);
	_jobs_free(c->done);
	for (int k = 0; k < ES_KIND_COUNT; k++)
		_comps_free(c->comps[k], c->n_comps[k]);
	free(c->threads);
	es_step_starts_destroy(c->starts);
	es_conf_free(&c->conf);
	pthread_mutex_destroy(&c->q_lock);
	pthread_cond_destroy(&c->q_cond);
	pthread_cond_destroy(&c->done_cond);
	pthread_cond_destroy(&c->p_cond);
	pthread_mutex_destroy(&c->st_lock);
	free(c);
}

int es_pool_set_components(es_pool_t *c, es_kind_t kind,
			   const char *const *names, size_t n,
			   char *err, size_t err_len)
{
	es_comp_t *comps = calloc(n ? n : 1, sizeof(*comps));
	int rc = comps ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !rc; i++)
		rc = _comp_init(c, kind, &comps[i], names[i], err, err_len);
	if (rc) {
		_comps_free(comps, n);
		return rc;
	}

	pthread_mutex_lock(&c->st_lock);
	for (size_t i = 0; i < n; i++)
		_comp_adopt(&comps[i], c->comps[kind], c->n_comps[kind], i);
	_comps_free(c->comps[kind], c->n_comps[kind]);
	c->comps[kind] = comps;
	c->n_comps[kind] = n;
	c->gen[kind]++;		/* reads in flight now belong to nobody */
	pthread_mutex_unlock(&c->st_lock);
	return 0;
}

/* Take the finished reads (a pointer swap under q_lock). */
static es_job_t *_take_done(es_pool_t *c)
{
	es_job_t *done;

	pthread_mutex_lock(&c->q_lock);
	done = c->done;
	c->done = NULL;
	pthread_mutex_unlock(&c->q_lock);
	return done;
}

static unsigned _count_jobs(const es_job_t *j)
{
	unsigned n = 0;

	for (; j; j = j->next)
		n++;
	return n;
}

unsigned es_pool_adopt(es_pool_t *c, uint64_t now_ns,
		       es_round_stats_t *stats)
{
	es_round_stats_t st = { 0 };
	es_job_t *done = _take_done(c);
	unsigned n = _count_jobs(done);

	if (done) {
		pthread_mutex_lock(&c->st_lock);
		_fold_all(c, done, now_ns, &st);
		pthread_mutex_unlock(&c->st_lock);
		_jobs_free(done);
	}
	if (stats)
		*stats = st;
	return n;
}

void es_pool_round(es_pool_t *c, uint64_t now_ns, uint64_t round_ns,
		   es_round_stats_t *stats)
{
	es_round_stats_t st = { 0 };
	es_job_t *done, *jobs, *tail;

	done = _take_done(c);
	pthread_mutex_lock(&c->st_lock);
	_fold_all(c, done, now_ns, &st);
	jobs = _queue_all(c, se_mono_ns() + round_ns, &st);
	pthread_mutex_unlock(&c->st_lock);
	_jobs_free(done);

	if (jobs) {
		for (tail = jobs; tail->next; tail = tail->next)
			;
		pthread_mutex_lock(&c->q_lock);
		if (c->q_tail)
			c->q_tail->next = jobs;
		else
			c->q_head = jobs;
		c->q_tail = tail;
		c->outstanding += st.queued;
		pthread_cond_broadcast(&c->q_cond);
		pthread_mutex_unlock(&c->q_lock);
	}
	if (stats)
		*stats = st;
}

/* ---------------------------------------------------------- pacer */

/* Wait on cond (a CLOCK_MONOTONIC one) until mono instant end_ns. */
static void _wait_until(pthread_cond_t *cond, pthread_mutex_t *lock,
			uint64_t end_ns)
{
	struct timespec ts = { (time_t) (end_ns / SE_NS_PER_SEC),
			       (long) (end_ns % SE_NS_PER_SEC) };

	pthread_cond_timedwait(cond, lock, &ts);
}

/* One pacer round: queue, wait (bounded) for the reads, adopt, hook. */
static uint64_t _pacer_round(es_pool_t *c)
{
	es_round_stats_t st, got;
	uint64_t wait_ns = c->period_ns / 2, end_ns;

	es_pool_round(c, se_wall_ns(), c->period_ns, &st);
	if (wait_ns > ES_PACER_WAIT_NS)
		wait_ns = ES_PACER_WAIT_NS;
	end_ns = se_mono_ns() + wait_ns;
	pthread_mutex_lock(&c->q_lock);
	while (!c->stop && c->outstanding && se_mono_ns() < end_ns)
		_wait_until(&c->done_cond, &c->q_lock, end_ns);
	pthread_mutex_unlock(&c->q_lock);
	es_pool_adopt(c, se_wall_ns(), &got);
	st.ok += got.ok;
	st.failed += got.failed;
	st.late += got.late;

	pthread_mutex_lock(&c->q_lock);
	c->pacer_last = st;
	c->pacer_rounds++;
	pthread_mutex_unlock(&c->q_lock);
	return c->hook ? c->hook(c->hook_arg) : 0;
}

static void *_pacer(void *arg)
{
	es_pool_t *c = arg;
	uint64_t next_ns = se_mono_ns();

	pthread_mutex_lock(&c->q_lock);
	while (!c->stop) {
		uint64_t start_ns, delay_ns;

		if (!c->kick && se_mono_ns() < next_ns) {
			_wait_until(&c->p_cond, &c->q_lock, next_ns);
			continue;
		}
		c->kick = false;
		pthread_mutex_unlock(&c->q_lock);

		start_ns = se_mono_ns();
		delay_ns = _pacer_round(c);
		/* on the period's grid, not drifting by the round's time */
		next_ns = start_ns + (delay_ns ? delay_ns : c->period_ns);

		pthread_mutex_lock(&c->q_lock);
	}
	pthread_mutex_unlock(&c->q_lock);
	return NULL;
}

int es_pool_start_pacer(es_pool_t *c, uint64_t period_ns,
			es_pacer_hook_t hook, void *arg)
{
	int rc;

	if (c->pacer_on)
		return -EALREADY;
	c->period_ns = period_ns ? period_ns : 10 * SE_NS_PER_SEC;
	c->hook = hook;
	c->hook_arg = arg;
	rc = se_thread_start(&c->pacer, _pacer, c, "se-es-pacer");
	if (!rc)
		c->pacer_on = true;
	return rc;
}

void es_pool_kick(es_pool_t *c)
{
	pthread_mutex_lock(&c->q_lock);
	c->kick = true;
	pthread_cond_broadcast(&c->p_cond);
	pthread_mutex_unlock(&c->q_lock);
}

void es_pool_pacer_stats(es_pool_t *c, es_round_stats_t *last,
			 uint64_t *rounds)
{
	pthread_mutex_lock(&c->q_lock);
	if (last)
		*last = c->pacer_last;
	if (rounds)
		*rounds = c->pacer_rounds;
	pthread_mutex_unlock(&c->q_lock);
}

static void _values_of(const es_pool_t *c, const es_comp_t *comp,
		       uint64_t now_ns, es_values_t *out)
{
	energy_sample_t last;

	memset(out, 0, sizeof(*out));
	if (comp->acc && !energy_acc_last(comp->acc, &last)) {
		out->has_energy = true;
		out->energy_mj = last.energy_mj;
		out->energy_t_ns = last.t_ns;
		out->has_power = now_ns <= last.t_ns + c->conf.max_age_ns;
		out->watts = (double) last.power_mw / 1000.0;
	}
	if (comp->have_temp &&
	    now_ns <= comp->temp.t_ns + c->conf.max_age_ns) {
		out->has_temp = true;
		out->temp_c = comp->temp.watts;
	}
}

int es_pool_values(es_pool_t *c, es_kind_t kind, size_t idx, uint64_t now_ns,
		   es_values_t *out)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&c->st_lock);
	if (idx < c->n_comps[kind]) {
		_values_of(c, &c->comps[kind][idx], now_ns, out);
		rc = 0;
	}
	pthread_mutex_unlock(&c->st_lock);
	return rc;
}

size_t es_pool_count(es_pool_t *c, es_kind_t kind)
{
	size_t n;

	pthread_mutex_lock(&c->st_lock);
	n = c->n_comps[kind];
	pthread_mutex_unlock(&c->st_lock);
	return n;
}

const char *es_pool_name(es_pool_t *c, es_kind_t kind, size_t idx)
{
	const char *name = NULL;

	/* names live as long as the component set: callers hold no lock
	 * across a set change (the glue calls both from the same thread). */
	pthread_mutex_lock(&c->st_lock);
	if (idx < c->n_comps[kind])
		name = c->comps[kind][idx].name;
	pthread_mutex_unlock(&c->st_lock);
	return name;
}

int es_pool_energy_between(es_pool_t *c, const size_t *nodes, size_t n,
			   uint64_t t0_ns, uint64_t t1_ns, uint64_t *energy_mj,
			   char *err, size_t err_len)
{
	uint64_t sum = 0;
	int rc = 0;

	/* a step's end never waits for a round: what is read is used */
	es_pool_adopt(c, se_wall_ns(), NULL);
	pthread_mutex_lock(&c->st_lock);
	for (size_t i = 0; i < n && !rc; i++) {
		const es_comp_t *comp;
		uint64_t mj = 0;

		if (nodes[i] >= c->n_comps[ES_KIND_NODE]) {
			rc = -ENOENT;
			snprintf(err, err_len, "node index %zu unknown",
				 nodes[i]);
			break;
		}
		comp = &c->comps[ES_KIND_NODE][nodes[i]];
		rc = comp->acc ? energy_acc_energy_between(comp->acc, t0_ns,
							   t1_ns, &mj)
			       : -ENODATA;
		if (rc)
			snprintf(err, err_len, "node %s: %s",
				 comp->name ? comp->name : "(none)",
				 rc == -ERANGE ?
				 "step start older than EnergyHistory" :
				 "no power series read yet");
		sum += mj;
	}
	pthread_mutex_unlock(&c->st_lock);
	*energy_mj = sum;
	return rc;
}

/* ---------------------------------------------------------- step starts */

int es_pool_step_begin(es_pool_t *c, const es_step_key_t *k, uint64_t t_ns)
{
	return es_step_starts_begin(c->starts, k, t_ns);
}

uint64_t es_pool_step_start(es_pool_t *c, const es_step_key_t *k,
			    uint64_t coarse_ns, bool forget)
{
	return es_step_starts_get(c->starts, k, coarse_ns, forget);
}
