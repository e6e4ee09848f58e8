/*
 * se-bench-modbus - benchmark of the Modbus energy path, without Slurm.
 *
 * Runs the real sampler (src/common/sampler.c) over the real Modbus backend
 * (modbus_meter.c) against a running se-modbus-sim, and prints markdown
 * tables.  bench/modbus/run.sh starts the simulators and calls each mode:
 *
 *   se-bench-modbus error --epoch E --seconds S [--windows N] [--seed N]
 *                         --case NAME,DEVICE,TRACE,COLUMN ...
 *       energy error of sampler_energy_between() against the trace's
 *       truth, counter and power path, polls of 0.25/0.5/1/2/5 s;
 *       all configurations sample the same meter at the same time
 *   se-bench-modbus cpu --device DEV [--seconds S] [--period P]
 *       CPU time of the sampler thread per sample
 *   se-bench-modbus stall --device DEV --control FILE [--seconds S]
 *       sampler_energy_at() latency while the meter answers, then stalls
 *   se-bench-modbus rtu --case REGS,DEVICE ... [--reads N] [--baud B]
 *       latency of one backend read of REGS registers over RTU
 *
 * TCP meters are the simulator's sdm630 model (float32 W, float32 kWh);
 * RTU meters use a custom map: float32 W at 0, float32 kWh at REGS - 2,
 * so that one read covers exactly REGS registers.
 *
 * One benchmark program in one file, though over 800 lines: its cases share
 * the simulator, the client and the table they print.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "meter.h"
#include "modbus_codec.h"
#include "modbus_meter.h"
#include "power_trace.h"
#include "sampler.h"
#include "se_log.h"
#include "se_time.h"

/* ------------------------------------------------------- private types */

#define MAX_CASES	4
#define N_PERIODS	5
#define N_WINDOWS	3
#define N_PATHS		2	/* counter, power */

/* The plugin's sampling policy (acct_gather_energy_modbus.c), so that the
 * figures are those of a slurmd. */
#define PLUGIN_DEADLINE_NS	SE_NS_PER_SEC
#define PLUGIN_BACKOFF_MAX_NS	(30 * SE_NS_PER_SEC)
#define PLUGIN_EXTRAPOLATE_NS	(600 * SE_NS_PER_SEC)
#define PLUGIN_MAX_POWER_MW	100000000ULL	/* 100 kW */
#define HISTORY			4096

static const double poll_s[N_PERIODS] = { 0.25, 0.5, 1.0, 2.0, 5.0 };
static const unsigned window_s[N_WINDOWS] = { 10, 30, 120 };

typedef struct {
	const char *name;
	const char *device;
	const char *trace;
	const char *column;
	power_trace_t *tr;
	int col;
	/* [period][path]: path 0 counter, 1 power */
	modbus_meter_t *m[N_PERIODS][N_PATHS];
	sampler_t *s[N_PERIODS][N_PATHS];
	double max_err[N_PERIODS][N_PATHS][N_WINDOWS];
	double sum_err[N_PERIODS][N_PATHS][N_WINDOWS];
	double sum_signed[N_PERIODS][N_PATHS][N_WINDOWS];
	unsigned n_err[N_PERIODS][N_PATHS][N_WINDOWS];
} err_case_t;

/* A meter_ops_t in front of the Modbus backend that learns which thread
 * calls it (to read that thread's CPU clock) and times each read. */
typedef struct {
	void *dev;
	clockid_t cid;
	bool have_cid;		/* atomic: cid is set */
	uint64_t *lat_ns;	/* read durations, up to lat_cap */
	size_t lat_cap;
	size_t lat_n;		/* atomic */
} probe_t;

typedef struct {
	const char *mode;
	const char *device;
	const char *control;
	const char *cases[MAX_CASES];
	unsigned n_cases;
	double seconds;
	double period;
	double epoch;
	unsigned windows;
	unsigned reads;
	unsigned baud;
	uint64_t seed;
} opts_t;

/* -------------------------------------------------- private prototypes */

static void _die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void _log_sink(void *arg, se_log_level_t level, const char *msg);
static void _parse(int argc, char **argv, opts_t *o);
static int _mode_error(const opts_t *o);
static int _mode_cpu(const opts_t *o);
static int _mode_stall(const opts_t *o);
static int _mode_rtu(const opts_t *o);

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	opts_t o;

	se_log_set_sink(_log_sink, NULL);
	_parse(argc, argv, &o);
	if (!strcmp(o.mode, "error"))
		return _mode_error(&o);
	if (!strcmp(o.mode, "cpu"))
		return _mode_cpu(&o);
	if (!strcmp(o.mode, "stall"))
		return _mode_stall(&o);
	if (!strcmp(o.mode, "rtu"))
		return _mode_rtu(&o);
	_die("unknown mode '%s' (error, cpu, stall, rtu)", o.mode);
}

/* -------------------------------------------------- private functions */

static void _die(const char *fmt, ...)
{
	va_list ap;

	fputs("se-bench-modbus: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Sampler errors (timeouts during the stall) go to stderr, which run.sh
 * keeps in a log; per-sample chatter would only cost CPU we measure. */
static void _log_sink(void *arg, se_log_level_t level, const char *msg)
{
	if (level == SE_LOG_ERROR || level == SE_LOG_INFO)
		fprintf(stderr, "se-bench-modbus: %s\n", msg);
}

static const struct option _long_opts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "control", required_argument, NULL, 'c' },
	{ "case", required_argument, NULL, 'C' },
	{ "seconds", required_argument, NULL, 's' },
	{ "period", required_argument, NULL, 'p' },
	{ "epoch", required_argument, NULL, 'e' },
	{ "windows", required_argument, NULL, 'w' },
	{ "reads", required_argument, NULL, 'r' },
	{ "baud", required_argument, NULL, 'b' },
	{ "seed", required_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 },
};

static double _num(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < 0)
		_die("--%s %s: not a number >= 0", opt, s);
	return v;
}

static void _parse(int argc, char **argv, opts_t *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->seconds = 5;
	o->period = 0.05;
	o->windows = 200;
	o->reads = 40;
	o->baud = 9600;
	o->seed = 1;
	if (argc < 2)
		_die("usage: se-bench-modbus error|cpu|stall|rtu [options]");
	o->mode = argv[1];
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", _long_opts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->device = optarg; break;
		case 'c': o->control = optarg; break;
		case 'C':
			if (o->n_cases == MAX_CASES)
				_die("at most %d --case", MAX_CASES);
			o->cases[o->n_cases++] = optarg;
			break;
		case 's': o->seconds = _num("seconds", optarg); break;
		case 'p': o->period = _num("period", optarg); break;
		case 'e': o->epoch = _num("epoch", optarg); break;
		case 'w': o->windows = (unsigned) _num("windows", optarg); break;
		case 'r': o->reads = (unsigned) _num("reads", optarg); break;
		case 'b': o->baud = (unsigned) _num("baud", optarg); break;
		case 'S': o->seed = (uint64_t) _num("seed", optarg); break;
		default: _die("bad option (see the comment at the top)");
		}
	}
	if (o->period <= 0 || o->seconds <= 0 || !o->reads)
		_die("--period, --seconds and --reads must be > 0");
}

/* ------------------------------------------------------------ helpers */

static void _sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / SE_NS_PER_SEC,
		.tv_nsec = ns % SE_NS_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t _cpu_ns(clockid_t cid)
{
	struct timespec ts;

	if (clock_gettime(cid, &ts))
		_die("clock_gettime: %s", strerror(errno));
	return (uint64_t) ts.tv_sec * SE_NS_PER_SEC + (uint64_t) ts.tv_nsec;
}

static uint64_t _tv_ns(const struct timeval *tv)
{
	return (uint64_t) tv->tv_sec * SE_NS_PER_SEC +
	       (uint64_t) tv->tv_usec * SE_NS_PER_US;
}

/* user + system CPU of the whole process */
static uint64_t _process_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return _tv_ns(&ru.ru_utime) + _tv_ns(&ru.ru_stime);
}

static int _cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of v[0..n-1], sorted in place; q in [0, 1]. */
static uint64_t _pct(uint64_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), _cmp_u64);
	k = (size_t) ceil(q * (double) n);
	return v[k ? k - 1 : 0];
}

/* splitmix64: a fixed, documented generator, so that --seed reproduces
 * the same windows everywhere (rand() differs between libcs). */
static uint64_t _rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A meter config from a built-in model, share 1. */
static void _model_config(const char *device, const char *model,
			  modbus_meter_config_t *mc)
{
	const mb_model_t *mod = mb_model_find(model);

	if (!mod)
		_die("no model %s", model);
	memset(mc, 0, sizeof(*mc));
	mc->device = device;
	mc->unit = 1;
	mc->kind = mod->kind;
	mc->power = mod->power;
	mc->energy = mod->energy;
	mc->max_regs_per_read = mod->max_regs_per_read;
	mc->share = 1.0;
}

static modbus_meter_t *_meter(const modbus_meter_config_t *mc)
{
	modbus_meter_t *m;
	char err[256];

	if (modbus_meter_create(mc, &m, err, sizeof(err)))
		_die("meter: %s", err);
	return m;
}

/* The plugin's sampler config for meter m at this period and path. */
static void _sampler_config(const modbus_meter_t *m, double period_s,
			    bool counter, sampler_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ns = (uint64_t) llround(period_s * SE_NS_PER_SEC);
	cfg->deadline_ns = PLUGIN_DEADLINE_NS;
	cfg->backoff_max_ns = PLUGIN_BACKOFF_MAX_NS;
	cfg->use_counter = counter && modbus_meter_counter_spec(m, &cfg->counter);
	cfg->acc.history = HISTORY;
	cfg->acc.max_power_mw = PLUGIN_MAX_POWER_MW;
	cfg->acc.max_extrapolate_ns = PLUGIN_EXTRAPOLATE_NS;
	cfg->label = modbus_meter_label(m);
}

static sampler_t *_start(const meter_ops_t *ops, void *dev,
			 const sampler_config_t *cfg)
{
	sampler_t *s = sampler_start(ops, dev, cfg);

	if (!s)
		_die("sampler_start: %s", strerror(errno));
	return s;
}

/* Wait (polling, bounded) until sampler s has a good sample. */
static void _wait_first(sampler_t *s, double limit_s)
{
	uint64_t end = se_mono_ns() + (uint64_t) (limit_s * SE_NS_PER_SEC);
	sampler_status_t st;

	for (;;) {
		sampler_status(s, &st);
		if (st.reads_ok)
			return;
		if (se_mono_ns() > end)
			_die("no reading from the meter in %.0f s", limit_s);
		_sleep_ns(10 * SE_NS_PER_MS);
	}
}

static void _stop(sampler_t *s)
{
	if (sampler_stop(s))
		_die("sampler left running past its deadline");
}

/* --------------------------------------------------- mode: error */

/* "NAME,DEVICE,TRACE,COLUMN" into c (pointing into a copy of arg). */
static void _case_parse(const char *arg, err_case_t *c)
{
	char *copy = strdup(arg), *f[4], *save = NULL;
	char err[256];
	int i;

	if (!copy)
		_die("out of memory");
	for (i = 0; i < 4; i++)
		if (!(f[i] = strtok_r(i ? NULL : copy, ",", &save)))
			_die("--case %s: want NAME,DEVICE,TRACE,COLUMN", arg);
	c->name = f[0];
	c->device = f[1];
	c->trace = f[2];
	c->column = f[3];
	if (power_trace_load(c->trace, &c->tr, err, sizeof(err)))
		_die("%s", err);
	if ((c->col = power_trace_column(c->tr, c->column)) < 0)
		_die("%s: no column %s", c->trace, c->column);
}

/* Ten samplers on the case's meter: every poll period, both paths. */
static void _case_start(err_case_t *c)
{
	modbus_meter_config_t mc;
	sampler_config_t cfg;
	int p, k;

	_model_config(c->device, "sdm630", &mc);
	for (p = 0; p < N_PERIODS; p++) {
		for (k = 0; k < N_PATHS; k++) {
			c->m[p][k] = _meter(&mc);
			_sampler_config(c->m[p][k], poll_s[p], k == 0, &cfg);
			c->s[p][k] = _start(&modbus_meter_ops, c->m[p][k],
					    &cfg);
		}
	}
}

/* Trace time (s) of monotonic instant t_ns. */
static double _trace_s(uint64_t t_ns, double epoch)
{
	return (double) se_mono_to_wall_ns(t_ns) / 1e9 - epoch;
}

/* Error of one sampler over [t0, t1] against the truth, in percent. */
static void _case_window(err_case_t *c, int p, int k, int w, uint64_t t0,
			 uint64_t t1, double truth_j)
{
	uint64_t mj;
	double e;
	int rc;

	if ((rc = sampler_energy_between(c->s[p][k], t0, t1, &mj)))
		_die("%s: energy_between: %s", c->name, strerror(-rc));
	e = ((double) mj / 1000.0 - truth_j) / truth_j * 100.0;
	c->sum_signed[p][k][w] += e;
	e = fabs(e);
	c->sum_err[p][k][w] += e;
	if (e > c->max_err[p][k][w])
		c->max_err[p][k][w] = e;
	c->n_err[p][k][w]++;
}

/*
 * The same random windows for every sampler of the case, inside the span
 * [lo, hi] where all of them hold samples (no extrapolation).  Lengths are
 * L +/- 10 %: with exactly L, both ends of a 120 s window would sit at the
 * same phase of the traces (periods 60 s and 20 s) and of every poll grid,
 * and their interpolation errors would cancel as they do for no real job.
 */
static void _case_measure(err_case_t *c, const opts_t *o, uint64_t lo,
			  uint64_t hi)
{
	uint64_t rng = o->seed, nominal, len, t0;
	unsigned i;
	double truth;
	int w, p, k;

	for (w = 0; w < N_WINDOWS; w++) {
		nominal = window_s[w] * SE_NS_PER_SEC;
		if (hi - lo <= nominal + nominal / 10)
			_die("run too short for %u s windows", window_s[w]);
		for (i = 0; i < o->windows; i++) {
			len = nominal - nominal / 10 +
			      _rand(&rng) % (nominal / 5);
			t0 = lo + _rand(&rng) % (hi - lo - len);
			truth = power_trace_joules(c->tr, c->col,
						   _trace_s(t0, o->epoch),
						   _trace_s(t0 + len, o->epoch));
			for (p = 0; p < N_PERIODS; p++)
				for (k = 0; k < N_PATHS; k++)
					_case_window(c, p, k, w, t0, t0 + len,
						     truth);
		}
	}
}

static void _case_print(const err_case_t *c)
{
	const char *base = strrchr(c->trace, '/');
	sampler_status_t st;
	int p, k, w;

	printf("\n**%s**: `%s` column `%s`\n\n", c->name,
	       base ? base + 1 : c->trace, c->column);
	printf("| poll | path | reads ok/failed |");
	for (w = 0; w < N_WINDOWS; w++)
		printf(" %u s max | %u s mean | %u s bias |", window_s[w],
		       window_s[w], window_s[w]);
	printf("\n|---:|---|---:|");
	for (w = 0; w < N_WINDOWS; w++)
		printf("---:|---:|---:|");
	printf("\n");
	for (p = 0; p < N_PERIODS; p++) {
		for (k = 0; k < N_PATHS; k++) {
			sampler_status(c->s[p][k], &st);
			printf("| %.2f s | %s | %lu/%lu |", poll_s[p],
			       k ? "power" : "counter", st.reads_ok,
			       st.reads_failed);
			for (w = 0; w < N_WINDOWS; w++)
				printf(" %.3f %% | %.3f %% | %+.3f %% |",
				       c->max_err[p][k][w],
				       c->sum_err[p][k][w] / c->n_err[p][k][w],
				       c->sum_signed[p][k][w] /
				       c->n_err[p][k][w]);
			printf("\n");
		}
	}
}

static void _case_stop(err_case_t *c)
{
	int p, k;

	for (p = 0; p < N_PERIODS; p++) {
		for (k = 0; k < N_PATHS; k++) {
			_stop(c->s[p][k]);
			modbus_meter_destroy(c->m[p][k]);
		}
	}
	power_trace_free(c->tr);
}

/* Newest instant that every sampler of every case has passed. */
static uint64_t _common_last(err_case_t *cs, unsigned n)
{
	uint64_t hi = UINT64_MAX;
	sampler_status_t st;
	unsigned i;
	int p, k;

	for (i = 0; i < n; i++)
		for (p = 0; p < N_PERIODS; p++)
			for (k = 0; k < N_PATHS; k++) {
				sampler_status(cs[i].s[p][k], &st);
				if (st.last_sample_ns < hi)
					hi = st.last_sample_ns;
			}
	return hi;
}

static int _mode_error(const opts_t *o)
{
	static err_case_t cs[MAX_CASES];
	uint64_t lo, hi;
	unsigned i;
	int p, k;

	if (!o->n_cases || !o->epoch)
		_die("error: give --epoch and at least one --case");
	for (i = 0; i < o->n_cases; i++)
		_case_parse(o->cases[i], &cs[i]);
	for (i = 0; i < o->n_cases; i++)
		_case_start(&cs[i]);
	for (i = 0; i < o->n_cases; i++)
		for (p = 0; p < N_PERIODS; p++)
			for (k = 0; k < N_PATHS; k++)
				_wait_first(cs[i].s[p][k], 5.0);
	/* Every sampler has its first sample by now. */
	lo = se_mono_ns();
	_sleep_ns((uint64_t) (o->seconds * SE_NS_PER_SEC));
	hi = _common_last(cs, o->n_cases);

	printf("Energy error of `sampler_energy_between()` against the "
	       "trace's exact integral: %u windows of each length L (drawn in "
	       "L +/- 10 %%) at random offsets over %.0f s (seed %llu), the "
	       "same windows for every row; |error| in %% of the true "
	       "energy; bias = mean signed error.\n", o->windows,
	       (double) (hi - lo) / 1e9, (unsigned long long) o->seed);
	for (i = 0; i < o->n_cases; i++) {
		_case_measure(&cs[i], o, lo, hi);
		_case_print(&cs[i]);
		_case_stop(&cs[i]);
	}
	return 0;
}

/* ------------------------------------------------------ mode: cpu */

static int _probe_open(void *dev, uint64_t deadline_ns)
{
	probe_t *pr = dev;

	return modbus_meter_ops.open(pr->dev, deadline_ns);
}

static int _probe_read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		       char *msg, size_t msg_len)
{
	probe_t *pr = dev;
	uint64_t t0 = se_mono_ns();
	size_t n;
	int rc;

	if (!__atomic_load_n(&pr->have_cid, __ATOMIC_ACQUIRE)) {
		if (pthread_getcpuclockid(pthread_self(), &pr->cid))
			_die("pthread_getcpuclockid failed");
		__atomic_store_n(&pr->have_cid, true, __ATOMIC_RELEASE);
	}
	rc = modbus_meter_ops.read(pr->dev, out, deadline_ns, msg, msg_len);
	n = __atomic_load_n(&pr->lat_n, __ATOMIC_RELAXED);
	if (n < pr->lat_cap) {
		pr->lat_ns[n] = se_mono_ns() - t0;
		__atomic_store_n(&pr->lat_n, n + 1, __ATOMIC_RELEASE);
	}
	return rc;
}

static void _probe_close(void *dev)
{
	probe_t *pr = dev;

	modbus_meter_ops.close(pr->dev);
}

static const meter_ops_t probe_ops = {
	.name = "modbus",
	.open = _probe_open,
	.read = _probe_read,
	.close = _probe_close,
};

/*
 * One path: the sampler thread's own CPU clock (through the probe) and the
 * whole process' rusage over the same stretch, divided by the reads made.
 * The main thread only sleeps meanwhile, so both should agree; the thread
 * clock is the figure, rusage the check that nothing was missed.
 */
static void _cpu_path(const opts_t *o, bool counter)
{
	modbus_meter_config_t mc;
	sampler_config_t cfg;
	sampler_status_t st;
	probe_t pr = { 0 };
	uint64_t c0, c1, p0, p1, w0, w1;
	unsigned long r0, r1;
	modbus_meter_t *m;
	sampler_t *s;
	double per, per_proc;

	_model_config(o->device, "sdm630", &mc);
	m = _meter(&mc);
	pr.dev = m;
	pr.lat_cap = (size_t) (o->seconds / o->period) * 2 + 16;
	if (!(pr.lat_ns = calloc(pr.lat_cap, sizeof(*pr.lat_ns))))
		_die("out of memory");
	_sampler_config(m, o->period, counter, &cfg);
	s = _start(&probe_ops, &pr, &cfg);
	_wait_first(s, 5.0);

	sampler_status(s, &st);
	r0 = st.reads_ok + st.reads_failed;
	c0 = _cpu_ns(pr.cid);
	p0 = _process_cpu_ns();
	w0 = se_mono_ns();
	_sleep_ns((uint64_t) (o->seconds * SE_NS_PER_SEC));
	sampler_status(s, &st);
	r1 = st.reads_ok + st.reads_failed;
	c1 = _cpu_ns(pr.cid);
	p1 = _process_cpu_ns();
	w1 = se_mono_ns();
	_stop(s);

	per = (double) (c1 - c0) / (double) (r1 - r0) / 1e3;
	per_proc = (double) (p1 - p0) / (double) (r1 - r0) / 1e3;
	printf("| %s | %.2f s | %lu (%lu failed) | %.1f µs | %.1f µs | "
	       "%.0f µs | %.4f %% | %.2f %% |\n",
	       counter ? "counter" : "power", o->period, r1 - r0,
	       st.reads_failed, per, per_proc,
	       (double) _pct(pr.lat_ns, pr.lat_n, 0.5) / 1e3,
	       per / 1e6 * 100.0,
	       (double) (c1 - c0) / (double) (w1 - w0) * 100.0);
	modbus_meter_destroy(m);
	free(pr.lat_ns);
}

static int _mode_cpu(const opts_t *o)
{
	if (!o->device)
		_die("cpu: give --device");
	printf("Sampler thread CPU per sample (`pthread_getcpuclockid` of the "
	       "sampler thread, taken inside its first read), cross-checked "
	       "with whole-process `getrusage(RUSAGE_SELF)` while the main "
	       "thread sleeps; %.0f s per path.\n\n", o->seconds);
	printf("| path | poll | samples | thread CPU / sample | "
	       "process CPU / sample | read wall p50 | "
	       "core share at 1 s poll | core share at this poll |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	_cpu_path(o, true);
	_cpu_path(o, false);
	return 0;
}

/* ---------------------------------------------------- mode: stall */

/* Write the control file atomically (the simulator reads it by mtime). */
static void _control(const char *path, const char *line)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		_die("%s: %s", tmp, strerror(errno));
	fputs(line, f);
	if (fclose(f) || rename(tmp, path))
		_die("%s: %s", path, strerror(errno));
}

typedef struct {
	uint64_t *lat_ns;
	size_t n, cap;
	bool monotonic;
	uint64_t e_first, e_last;
} reader_t;

/* Call sampler_energy_at(now) about every ms for seconds; time each call. */
static void _reader(sampler_t *s, double seconds, reader_t *r)
{
	uint64_t end = se_mono_ns() + (uint64_t) (seconds * SE_NS_PER_SEC);
	uint64_t t0, t1, mj, prev = 0;

	r->n = 0;
	r->monotonic = true;
	while ((t0 = se_mono_ns()) < end && r->n < r->cap) {
		if (sampler_energy_at(s, t0, &mj))
			_die("energy_at failed");
		t1 = se_mono_ns();
		r->lat_ns[r->n++] = t1 - t0;
		if (r->n == 1)
			r->e_first = mj;
		if (mj < prev)
			r->monotonic = false;
		prev = mj;
		_sleep_ns(SE_NS_PER_MS);
	}
	r->e_last = prev;
}

static void _reader_row(const char *what, reader_t *r, sampler_t *s)
{
	static const char *const states[] = { "starting", "ok", "failing" };
	sampler_status_t st;

	sampler_status(s, &st);
	printf("| %s | %zu | %.1f µs | %.1f µs | %.1f µs | %s | %lu/%lu | "
	       "%.0f J, %s |\n", what, r->n,
	       (double) _pct(r->lat_ns, r->n, 0.5) / 1e3,
	       (double) _pct(r->lat_ns, r->n, 0.99) / 1e3,
	       (double) _pct(r->lat_ns, r->n, 1.0) / 1e3,
	       states[st.state], st.reads_ok, st.reads_failed,
	       (double) (r->e_last - r->e_first) / 1e3,
	       r->monotonic ? "never decreasing" : "DECREASED");
}

/* What an inline read (as stock plugins do in the RPC) costs meanwhile. */
static void _direct_row(modbus_meter_t *m, unsigned n)
{
	uint64_t lat[8], t0;
	meter_reading_t rd;
	char msg[128] = "";
	unsigned i, fails = 0;

	for (i = 0; i < n && i < 8; i++) {
		t0 = se_mono_ns();
		if (modbus_meter_ops.read(m, &rd, t0 + PLUGIN_DEADLINE_NS,
					  msg, sizeof(msg)))
			fails++;
		lat[i] = se_mono_ns() - t0;
	}
	modbus_meter_ops.close(m);
	printf("| stalled, inline backend read (no sampler) | %u | %.1f µs | "
	       "%.1f µs | %.1f µs | - | %u/%u | %s |\n", i,
	       (double) _pct(lat, i, 0.5) / 1e3,
	       (double) _pct(lat, i, 0.99) / 1e3,
	       (double) _pct(lat, i, 1.0) / 1e3, i - fails, fails,
	       fails ? msg : "");
}

static int _mode_stall(const opts_t *o)
{
	modbus_meter_config_t mc;
	sampler_config_t cfg;
	reader_t r = { 0 };
	modbus_meter_t *m;
	sampler_t *s;

	if (!o->device || !o->control)
		_die("stall: give --device and --control");
	r.cap = (size_t) (o->seconds * 1000.0) + 16;
	if (!(r.lat_ns = calloc(r.cap, sizeof(*r.lat_ns))))
		_die("out of memory");
	_control(o->control, "");
	_model_config(o->device, "sdm630", &mc);
	m = _meter(&mc);
	_sampler_config(m, 1.0, true, &cfg);
	s = _start(&modbus_meter_ops, m, &cfg);
	_wait_first(s, 5.0);

	printf("Latency of `sampler_energy_at(now)` called about every ms "
	       "by a reader thread, poll 1 s, read deadline 1 s (plugin "
	       "defaults), %.0f s per phase; the stall is the simulator's "
	       "`stall` fault (it stops answering).\n\n", o->seconds);
	printf("| phase | calls | p50 | p99 | max | sampler state at end | "
	       "reads ok/failed (total) | energy seen by the reader |\n");
	printf("|---|---:|---:|---:|---:|---|---:|---|\n");
	_reader(s, o->seconds, &r);
	_reader_row("meter answering", &r, s);
	_control(o->control, "stall\n");
	_reader(s, o->seconds, &r);
	_reader_row("meter stalled", &r, s);
	_stop(s);
	_direct_row(m, 3);
	_control(o->control, "");
	modbus_meter_destroy(m);
	free(r.lat_ns);
	return 0;
}

/* ------------------------------------------------------ mode: rtu */

/* Line time of one read of n registers: request 8 characters, reply
 * 5 + 2n, then the 3.5-character silence that ends the reply frame. */
static double _rtu_wire_ms(unsigned n, unsigned baud)
{
	double char_ms = 10.0 / baud * 1000.0;	/* 8N1: 10 bits */

	return (8 + 5 + 2.0 * n + 3.5) * char_ms;
}

static void _rtu_case(const opts_t *o, const char *arg)
{
	modbus_meter_config_t mc;
	meter_reading_t rd;
	modbus_meter_t *m;
	uint64_t *lat, t0;
	char *end, msg[128] = "";
	unsigned long regs = strtoul(arg, &end, 10);
	unsigned i, fails = 0;

	if (*end != ',' || regs < 4 || regs > 125)
		_die("--case %s: want REGS,DEVICE with REGS 4..125", arg);
	memset(&mc, 0, sizeof(mc));
	mc.device = end + 1;
	mc.serial = (modbus_serial_t) { o->baud, 'N', 8, 1 };
	mc.unit = 1;
	mc.kind = MB_KIND_INPUT;
	mc.power = (mb_point_t) { true, 0, MB_FLOAT32, MB_ORDER_ABCD, 1.0 };
	mc.energy = (mb_point_t) { true, (uint16_t) (regs - 2), MB_FLOAT32,
				   MB_ORDER_ABCD, 3600000.0 };
	mc.max_regs_per_read = 125;
	mc.share = 1.0;
	m = _meter(&mc);
	if (!(lat = calloc(o->reads, sizeof(*lat))))
		_die("out of memory");
	if (modbus_meter_ops.open(m, se_mono_ns() + PLUGIN_DEADLINE_NS))
		_die("%s: cannot open", mc.device);
	for (i = 0; i < o->reads; i++) {
		t0 = se_mono_ns();
		if (modbus_meter_ops.read(m, &rd, t0 + PLUGIN_DEADLINE_NS,
					  msg, sizeof(msg)))
			fails++;
		lat[i] = se_mono_ns() - t0;
	}
	modbus_meter_ops.close(m);
	printf("| %lu | %u | %u | %.1f ms | %.1f ms | %.1f ms | %.1f ms | "
	       "%.1f ms |\n", regs, o->reads, fails,
	       _rtu_wire_ms((unsigned) regs, o->baud),
	       (double) _pct(lat, o->reads, 0.0) / 1e6,
	       (double) _pct(lat, o->reads, 0.5) / 1e6,
	       (double) _pct(lat, o->reads, 0.99) / 1e6,
	       (double) _pct(lat, o->reads, 1.0) / 1e6);
	modbus_meter_destroy(m);
	free(lat);
}

static int _mode_rtu(const opts_t *o)
{
	unsigned i;

	if (!o->n_cases)
		_die("rtu: give --case REGS,DEVICE");
	printf("One backend read (`modbus_meter_ops.read`, one request of "
	       "REGS input registers) over a socat pty pair, simulator pacing "
	       "%u 8N1, %u reads back to back; line time = (8 + 5 + 2 REGS + "
	       "3.5) characters of 10 bits.\n\n", o->baud, o->reads);
	printf("| registers | reads | failed | line time | min | p50 | p99 | "
	       "max |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < o->n_cases; i++)
		_rtu_case(o, o->cases[i]);
	return 0;
}
