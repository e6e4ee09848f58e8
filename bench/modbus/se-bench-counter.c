/*
 * se-bench-counter - the built-in Modbus models' energy registers as meters
 * in service show them, through the real plugin backend, over a simulated
 * day (issue #19).  Slurm-free.
 *
 *   se-bench-counter [--seconds S] [--jobs N] [--model NAME]...
 *                    [--label TEXT] [--csv PREFIX]
 *
 * The meter is an in-process libmodbus TCP server on 127.0.0.1 (a thread:
 * modbus_mapping_new_start_address over the model's register block,
 * modbus_receive/modbus_reply).  Before each read the bench writes into
 * its registers what the meter in service shows at that simulated instant:
 *   - energy: an integer register floor(reading / unit) (a meter advances
 *     once a whole unit has accumulated), a float32 register the reading
 *     rounded to the nearest float; readings start where meters in service
 *     are (sdm630 20,000 kWh, sdm72d 16,380 kWh so that the run crosses
 *     2^14 kWh where the float's step doubles, em24 23,456.7 kWh, pm5300
 *     45,678.9 kWh);
 *   - power: the load's watts at that instant in the model's own type and
 *     scale (float32 rounded to nearest, integers to the nearest unit).
 * Words are laid out by this file's own encoder (_put_words: the word
 * orders as modbus_codec.h defines them, not the codec's encoder), checked
 * once per case against the plugin's mb_decode().
 *
 * The plugin side is the real one: modbus_meter_create() on
 * tcp://127.0.0.1:PORT with the model's map from mb_models[],
 * modbus_meter_ops.open/.read (so the plugin's request plan and decoding),
 * modbus_meter_counter_spec(), and energy_acc_add_counter() fed exactly as
 * the sampler's _account_locked() feeds it, with the plugin's accumulator
 * settings (1 h ring at 1 s, gap 2.5 s, extrapolation 2 s, MaxPower x
 * share).  Only the clock is simulated: t_ns comes from the bench, so a
 * day of one model runs in a few seconds of real time, and the numbers do
 * not depend on timing.  One read feeds two accumulators, MaxPower at
 * the default (100 kW) and at 3000 W (a node whose real peak is 2,950 W),
 * so both see the same readings.
 *
 * Load: the node's watts, a value every other second, random within
 * +/-30 % of the base, jumps of -50 to +50 % held for a minute now and
 * then, never above 2,950 W, linear in between (its integral is exact);
 * a day at a base of 300 W and a day at 2.5 kW (the same generator as
 * tests/unit/test_modbus_counter.c), the same days for every model.
 * Readings: once a simulated second (0.37 s off the load's knots), a kick
 * at a random instant on a third of the seconds, and a kick 20 ms after
 * each boundary of the measured jobs (a step's start and end kick the
 * sampler).
 * Jobs: N 30 s jobs spread over the day, their starts at all phases of
 * the poll period; a job's figure is energy_acc_energy_between(t0, t0 +
 * 30 s) asked once a regular reading after its end exists (a settled
 * step), against the load's exact integral.
 *
 * A third accumulator takes the power register alone (energy_acc_add_power,
 * the power path): the jobs' error of that path is the floor that a
 * counter's steps cannot improve on between its steps (in the CSV, and
 * in run-counter.sh's comparison table).
 *
 * Prints one markdown table (rows: model x load x MaxPower) and, with
 * --csv PREFIX, writes PREFIX-day.csv (one row per table row) and
 * PREFIX-jobs.csv (one row per job).
 *
 * The same source builds against the code before the fix (commit ead2501,
 * bench/modbus/run-counter.sh): the only difference it needs is keyed on
 * the headers themselves: ENERGY_SAMPLE_DISCIPLINED (energy_acc.h) marks
 * the fixed accumulator, with energy_acc_anomaly(); before it, the CSV's
 * "anomalies" and "disciplined" columns are not available (written -1).
 *
 * One benchmark program in one file, though over 800 lines: the load, the
 * register encodings, the meter peer and the day's accounting all serve
 * the one table it prints.
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <modbus.h>

#include "energy_acc.h"
#include "meter.h"
#include "modbus_codec.h"
#include "modbus_meter.h"
#include "se_log.h"
#include "se_time.h"

/* The one adapter between the two builds (see the top). */
#ifdef ENERGY_SAMPLE_DISCIPLINED
#define HAVE_COUNTER_FIX	1
#else
#define HAVE_COUNTER_FIX	0
#endif

#define NS		1000000000ULL
#define KWH_J		3.6e6
#define PEAK_W		2950.0
#define KNOT_S		2
#define JOB_S		30.0
#define KICK_LAT_S	0.020	/* a boundary's kick reads this much later */
#define READ_PHASE_S	0.37	/* the regular reading, off the load's knots */
#define MIN_SEP_S	0.001	/* readings closer than this: the later one
				 * is skipped (the sampler takes one) */
#define N_MAXP		2
#define N_LOADS		2
#define MAX_MODELS	8

/* The plugin's accumulator settings at its defaults (period 1 s, timeout
 * 1 s): acct_gather_energy_modbus.c _sampler_config() and sampler.c. */
#define ACC_HISTORY	3600		/* HISTORY_NS / period */
#define ACC_GAP_NS	(NS * 3 / 2 + NS)	/* period x 3/2 + deadline */
#define ACC_EXTRAP_NS	(2 * NS)	/* period + timeout */
#define ACC_POWER_WINDOW_NS (NS / 2)	/* period / 2 */

static const double max_powers_w[N_MAXP] = { 100000.0, 3000.0 };
static const double loads_w[N_LOADS] = { 300.0, 2500.0 };

/* ------------------------------------------------------------- helpers */

static void _die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));

static void _die(const char *fmt, ...)
{
	va_list ap;

	fputs("se-bench-counter: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* The backend's errors go to stderr (there should be none). */
static void _log_sink(void *arg, se_log_level_t level, const char *msg)
{
	if (level == SE_LOG_ERROR || level == SE_LOG_INFO)
		fprintf(stderr, "se-bench-counter: %s\n", msg);
}

typedef struct {
	uint64_t s;
} rng_t;

static double _uniform(rng_t *r)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (r->s >> 11) / (double) (1ULL << 53);
}

static int _cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

/* ------------------------------------------------------------- the load */

typedef struct {
	int n;			/* seconds covered: w[0..n] */
	double *w;		/* watts at each whole second */
	double *cum_j;		/* exact integral from 0 to each second */
} load_t;

static void _load_make(load_t *l, double base_w, int seconds, uint64_t seed)
{
	rng_t r = { seed };
	double jump = 1.0;
	int i;

	l->n = seconds + 2;
	l->w = calloc(l->n + 1, sizeof(double));
	l->cum_j = calloc(l->n + 1, sizeof(double));
	if (!l->w || !l->cum_j)
		_die("out of memory");
	for (i = 0; i <= l->n; i++) {
		if (i % 60 == 0)
			jump = _uniform(&r) < 0.3 ? 0.5 + _uniform(&r) : 1.0;
		if (i % KNOT_S == 0 || i == l->n)
			l->w[i] = fmin(PEAK_W, base_w * jump *
					       (0.7 + 0.6 * _uniform(&r)));
		else
			l->w[i] = -1;	/* on the line between knots */
	}
	for (i = 1; i < l->n; i++) {
		if (l->w[i] < 0)
			l->w[i] = (l->w[i - 1] + l->w[i + 1]) / 2;
	}
	for (i = 1; i <= l->n; i++)
		l->cum_j[i] = l->cum_j[i - 1] + (l->w[i - 1] + l->w[i]) / 2.0;
}

static void _load_free(load_t *l)
{
	free(l->w);
	free(l->cum_j);
}

static double _watts(const load_t *l, double t)
{
	int i = (int) t;
	double f = t - i;

	return l->w[i] + (l->w[i + 1] - l->w[i]) * f;
}

/* The exact integral of the load from 0 to t (linear pieces). */
static double _joules(const load_t *l, double t)
{
	int i = (int) t;
	double f = t - i;

	return l->cum_j[i] + l->w[i] * f +
	       (l->w[i + 1] - l->w[i]) * f * f / 2;
}

/* ----------------------------------------------------- register words */

/*
 * The low words x 16 bits of v onto the wire in the given order: A is the
 * most significant byte; abcd = words most significant first, bytes too;
 * cdab = words least significant first; badc = bytes swapped in each
 * word; dcba = both (modbus_codec.h).  Written here, not taken from the
 * codec, so that the bench checks the plugin's decoding.
 */
static void _put_words(uint64_t v, unsigned words, mb_order_t order,
		       uint16_t *out)
{
	bool swap_words = order == MB_ORDER_CDAB || order == MB_ORDER_DCBA;
	bool swap_bytes = order == MB_ORDER_BADC || order == MB_ORDER_DCBA;
	unsigned i;

	for (i = 0; i < words; i++) {
		uint16_t w = (uint16_t) (v >> (16 * (words - 1 - i)));

		if (swap_bytes)
			w = (uint16_t) ((w << 8) | (w >> 8));
		out[swap_words ? words - 1 - i : i] = w;
	}
}

static unsigned _words(mb_type_t type)
{
	switch (type) {
	case MB_INT16:
	case MB_UINT16:
		return 1;
	case MB_UINT64:
	case MB_INT64:
		return 4;
	default:
		return 2;
	}
}

static uint64_t _float_bits(double v)
{
	float f = (float) v;	/* round to nearest */
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* A power register: watts / scale, to nearest, in the register's type. */
static void _power_words(const mb_point_t *p, double watts, uint16_t *out)
{
	double v = watts / p->scale;
	uint64_t raw;

	if (p->type == MB_FLOAT32)
		raw = _float_bits(v);
	else
		raw = (uint64_t) (int64_t) llround(v);	/* two's complement */
	_put_words(raw, _words(p->type), p->order, out);
}

/*
 * An energy register for a reading of e_j joules, as the meter shows it:
 * a float rounded to nearest, an integer the whole units reached (a signed
 * one counts up in its non-negative half, an unsigned one wraps).
 */
static void _energy_words(const mb_point_t *p, double e_j, uint16_t *out)
{
	double units = e_j / p->scale;
	unsigned words = _words(p->type);
	uint64_t raw;

	if (p->type == MB_FLOAT32) {
		raw = _float_bits(units);
	} else {
		raw = (uint64_t) floor(units);
		if (p->type == MB_INT16 || p->type == MB_INT32 ||
		    p->type == MB_INT64)
			raw &= (words == 4) ? INT64_MAX :
			       ((1ULL << (16 * words - 1)) - 1);
	}
	_put_words(raw, words, p->order, out);
}

/* The register's step in J at a reading of e_j (the meter's, not ours). */
static double _register_step_j(const mb_point_t *p, double e_j)
{
	int exp2;

	if (p->type != MB_FLOAT32)
		return p->scale;
	(void) frexp((float) (e_j / p->scale), &exp2);	/* v = m 2^exp2 */
	return ldexp(1.0, exp2 - 24) * p->scale;	/* 24-bit significand */
}

/* "float32 kWh", "int32 0.1 kWh", "int64 Wh" */
static void _register_name(const mb_point_t *p, char *buf, size_t len)
{
	const char *type = mb_type_names[p->type];

	if (fabs(p->scale - KWH_J) < 1e-6)
		snprintf(buf, len, "%s kWh", type);
	else if (fabs(p->scale - 3600.0) < 1e-9)
		snprintf(buf, len, "%s Wh", type);
	else if (fmod(p->scale, 3600.0) == 0.0 || p->scale > 3600.0)
		snprintf(buf, len, "%s %g kWh", type, p->scale / KWH_J);
	else
		snprintf(buf, len, "%s x%g J", type, p->scale);
}

/* ------------------------------------------------------ the meter peer */

typedef struct {
	modbus_t *ctx;
	int lfd;
	int port;
	pthread_t thread;
	pthread_mutex_t lock;	/* guards map and its registers */
	modbus_mapping_t *map;
	volatile int stop;	/* read and written under lock */
	unsigned long requests;
} server_t;

static bool _server_stopping(server_t *sv)
{
	bool stop;

	pthread_mutex_lock(&sv->lock);
	stop = sv->stop;
	pthread_mutex_unlock(&sv->lock);
	return stop;
}

static void *_serve(void *arg)
{
	server_t *sv = arg;
	uint8_t q[MODBUS_TCP_MAX_ADU_LENGTH];
	int n;

	while (!_server_stopping(sv)) {
		if (modbus_tcp_accept(sv->ctx, &sv->lfd) < 0) {
			if (!_server_stopping(sv))
				usleep(10000);
			continue;
		}
		while ((n = modbus_receive(sv->ctx, q)) >= 0) {
			if (!n)
				continue;	/* not for us */
			pthread_mutex_lock(&sv->lock);
			sv->requests++;
			if (sv->map)
				modbus_reply(sv->ctx, q, n, sv->map);
			else
				modbus_reply_exception(sv->ctx, q,
					MODBUS_EXCEPTION_SLAVE_OR_SERVER_FAILURE);
			pthread_mutex_unlock(&sv->lock);
		}
		modbus_close(sv->ctx);	/* the client left */
	}
	return NULL;
}

static void _server_start(server_t *sv)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	memset(sv, 0, sizeof(*sv));
	pthread_mutex_init(&sv->lock, NULL);
	if (!(sv->ctx = modbus_new_tcp("127.0.0.1", 0)))
		_die("modbus_new_tcp: %s", modbus_strerror(errno));
	if ((sv->lfd = modbus_tcp_listen(sv->ctx, 1)) < 0)
		_die("listen on 127.0.0.1: %s", modbus_strerror(errno));
	if (getsockname(sv->lfd, (struct sockaddr *) &sa, &sl))
		_die("getsockname: %s", strerror(errno));
	sv->port = ntohs(sa.sin_port);
	if (pthread_create(&sv->thread, NULL, _serve, sv))
		_die("pthread_create failed");
}

/* Stop the peer; the client must have closed its connection already. */
static void _server_stop(server_t *sv)
{
	pthread_mutex_lock(&sv->lock);
	sv->stop = 1;
	pthread_mutex_unlock(&sv->lock);
	shutdown(sv->lfd, SHUT_RDWR);	/* wakes accept() */
	pthread_join(sv->thread, NULL);
	close(sv->lfd);
	modbus_free(sv->ctx);
	pthread_mutex_destroy(&sv->lock);
}

/* The model's register block (input or holding), its first address. */
static modbus_mapping_t *_model_map(const mb_model_t *mdl, unsigned *start)
{
	const mb_point_t *pw = &mdl->power, *en = &mdl->energy;
	unsigned lo = pw->address < en->address ? pw->address : en->address;
	unsigned hi_p = pw->address + _words(pw->type);
	unsigned hi_e = en->address + _words(en->type);
	unsigned n = (hi_p > hi_e ? hi_p : hi_e) - lo;
	bool in = mdl->kind == MB_KIND_INPUT;
	modbus_mapping_t *map;

	map = modbus_mapping_new_start_address(0, 0, 0, 0,
					       in ? 0 : lo, in ? 0 : n,
					       in ? lo : 0, in ? n : 0);
	if (!map)
		_die("modbus_mapping_new_start_address: %s",
		     modbus_strerror(errno));
	*start = lo;
	return map;
}

static uint16_t *_map_regs(modbus_mapping_t *map, const mb_model_t *mdl,
			   unsigned start, const mb_point_t *p)
{
	uint16_t *tab = mdl->kind == MB_KIND_INPUT ? map->tab_input_registers :
						     map->tab_registers;

	return tab + (p->address - start);
}

/* ---------------------------------------------------------------- run */

typedef struct {
	double start_kwh;
	const char *name;
} start_reading_t;

/* Where each built-in model's meter is read from: in service for years. */
static const start_reading_t start_readings[] = {
	{ 20000.0, "sdm630" },	/* float32 steps of 2^-9 kWh (7.0 kJ) */
	{ 16380.0, "sdm72d" },	/* crosses 2^14 kWh: its step doubles */
	{ 23456.7, "em24" },	/* 0.1 kWh steps: 360 kJ */
	{ 45678.9, "pm5300" },	/* 1 Wh steps: 3.6 kJ */
};

static double _start_kwh(const char *model)
{
	size_t i;

	for (i = 0; i < sizeof(start_readings) / sizeof(start_readings[0]);
	     i++) {
		if (!strcmp(start_readings[i].name, model))
			return start_readings[i].start_kwh;
	}
	return 34567.8;
}

/* One accumulator's account of the day. */
typedef struct {
	energy_acc_t *acc;
	unsigned long accepted, refused, other_rc;
	unsigned long resets, gaps, disciplined;
	long anomalies;			/* -1: not in this build */
	bool have_first;
	uint64_t first_mj;
	double t_first;
	uint64_t raw_first, raw_last;
	double t_last;
	double *job_err;		/* % per job; NAN if not answered */
	double *job_got_j;
	unsigned long job_fail;
} acc_run_t;

typedef struct {
	const char *label;
	int seconds;
	int jobs;
	FILE *csv_day;
	FILE *csv_jobs;
	server_t *sv;
} opts_t;

static double _median(double *v, int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(double), _cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Decode our own words with the plugin's decoder: the layout must hold. */
static void _check_words(const mb_model_t *mdl, double watts, double e_j)
{
	uint16_t w[4];
	double v;

	_power_words(&mdl->power, watts, w);
	if (mb_decode(w, mdl->power.type, mdl->power.order, &v) ||
	    fabs(v * mdl->power.scale - watts) > mdl->power.scale + 1e-3 * watts)
		_die("%s: power words decode to %g W, not %g W", mdl->name,
		     v * mdl->power.scale, watts);
	_energy_words(&mdl->energy, e_j, w);
	if (mb_decode(w, mdl->energy.type, mdl->energy.order, &v) ||
	    fabs(v * mdl->energy.scale - e_j) >
	    _register_step_j(&mdl->energy, e_j))
		_die("%s: energy words decode to %.1f J, not %.1f J",
		     mdl->name, v * mdl->energy.scale, e_j);
}

/* Jobs' signed errors: min, median, max, mean |error| (%), count. */
static void _job_stats(const acc_run_t *r, int jobs, double st[5])
{
	double *errs = calloc(jobs, sizeof(double)), mean = 0;
	int j, n = 0;

	if (!errs)
		_die("out of memory");
	for (j = 0; j < jobs; j++) {
		if (!isnan(r->job_err[j])) {
			errs[n++] = r->job_err[j];
			mean += fabs(r->job_err[j]);
		}
	}
	st[0] = st[1] = st[2] = st[3] = NAN;
	st[4] = n;
	if (n) {
		qsort(errs, n, sizeof(double), _cmp_double);
		st[0] = errs[0];
		st[1] = _median(errs, n);
		st[2] = errs[n - 1];
		st[3] = mean / n;
	}
	free(errs);
}

static void _print_header(void)
{
	printf("| model | energy register | load | MaxPower | register step | day: counted | truth | error | readings refused | resets | 30 s jobs: min | median | max |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

/* One model's simulated day: the meter and its peer, the load, the jobs
 * and the accumulators that follow them. */
typedef struct {
	const opts_t *o;
	const mb_model_t *mdl;
	double base_w, start_j;
	modbus_mapping_t *map;		/* the peer's registers */
	unsigned start;			/* the model's block in map */
	modbus_meter_t *m;
	counter_spec_t spec;
	acc_run_t runs[N_MAXP + 1];	/* + the power register alone */
	double *job_t0, *kicks;		/* kicks: sorted, INFINITY ends */
	unsigned n_kicks, ki;
	int next_job;
	double last_t, t_end;
	unsigned long reads, read_fail;
	rng_t rng;
	load_t load;
} day_t;

/* The meter peer shows this model's block; the plugin's meter reads it. */
static void _day_meter(day_t *d)
{
	const mb_model_t *mdl = d->mdl;
	modbus_meter_config_t mc;
	char dev[64], err[256];

	d->map = _model_map(mdl, &d->start);
	pthread_mutex_lock(&d->o->sv->lock);
	d->o->sv->map = d->map;
	pthread_mutex_unlock(&d->o->sv->lock);

	snprintf(dev, sizeof(dev), "tcp://127.0.0.1:%d", d->o->sv->port);
	memset(&mc, 0, sizeof(mc));
	mc.device = dev;
	mc.unit = 1;
	mc.kind = mdl->kind;
	mc.power = mdl->power;
	mc.energy = mdl->energy;
	mc.max_regs_per_read = mdl->max_regs_per_read;
	mc.share = 1.0;
	if (modbus_meter_create(&mc, &d->m, err, sizeof(err)))
		_die("%s: %s", mdl->name, err);
	memset(&d->spec, 0, sizeof(d->spec));
	if (!modbus_meter_counter_spec(d->m, &d->spec))
		_die("%s: no energy register", mdl->name);
	if (modbus_meter_ops.open(d->m, se_mono_ns() + NS))
		_die("%s: cannot connect to the meter peer", mdl->name);
}

/* Jobs: starts over the day at every phase of the poll period, each
 * boundary kicking a read KICK_LAT_S later. */
static void _day_jobs(day_t *d)
{
	const opts_t *o = d->o;
	int j;

	d->job_t0 = calloc(o->jobs, sizeof(double));
	d->kicks = calloc(2 * o->jobs + 1, sizeof(double));
	if (!d->job_t0 || !d->kicks)
		_die("out of memory");
	for (j = 0; j < o->jobs; j++) {
		double span = o->seconds - 660.0;
		double phase = fmod(0.5 + j * 0.6180339887498949, 1.0);

		d->job_t0[j] = 600.0 + floor(span * j / o->jobs) + phase;
		d->kicks[2 * j] = d->job_t0[j] + KICK_LAT_S;
		d->kicks[2 * j + 1] = d->job_t0[j] + JOB_S + KICK_LAT_S;
	}
	d->n_kicks = 2 * o->jobs;
	d->kicks[d->n_kicks] = INFINITY;
}

/* An accumulator per MaxPower, configured as the plugin's sampler does,
 * and one for the power register alone. */
static void _day_runs(day_t *d)
{
	int mi, j;

	for (mi = 0; mi <= N_MAXP; mi++) {
		energy_acc_config_t cfg = {
			.history = ACC_HISTORY, .gap_ns = ACC_GAP_NS,
			.max_power_mw = (uint64_t) (max_powers_w[mi < N_MAXP ?
							      mi : 0] * 1000.0),
			.max_extrapolate_ns = ACC_EXTRAP_NS,
			.power_window_ns = ACC_POWER_WINDOW_NS,
		};
		acc_run_t *r = &d->runs[mi];

		memset(r, 0, sizeof(*r));
		if (!(r->acc = energy_acc_create(&cfg)))
			_die("energy_acc_create failed");
		r->anomalies = -1;
		r->job_err = calloc(d->o->jobs, sizeof(double));
		r->job_got_j = calloc(d->o->jobs, sizeof(double));
		if (!r->job_err || !r->job_got_j)
			_die("out of memory");
		for (j = 0; j < d->o->jobs; j++)
			r->job_err[j] = r->job_got_j[j] = NAN;
	}
}

/* Jobs settled by second s (a regular reading after their end exists):
 * each accumulator's energy between the boundaries against the truth. */
static void _settle_jobs(day_t *d, int s)
{
	while (d->next_job < d->o->jobs &&
	       d->job_t0[d->next_job] + JOB_S + 1.5 < s) {
		double t0 = d->job_t0[d->next_job], t1 = t0 + JOB_S;
		double truth = _joules(&d->load, t1) - _joules(&d->load, t0);
		int mi;

		for (mi = 0; mi <= N_MAXP; mi++) {
			acc_run_t *r = &d->runs[mi];
			uint64_t mj;

			if (energy_acc_energy_between(r->acc,
					(uint64_t) llround(t0 * NS),
					(uint64_t) llround(t1 * NS), &mj)) {
				r->job_fail++;
				continue;
			}
			r->job_got_j[d->next_job] = mj / 1000.0;
			r->job_err[d->next_job] =
				100.0 * (mj / 1000.0 - truth) / truth;
		}
		d->next_job++;
	}
}

/* A counter reading into one accumulator, as sampler.c's
 * _account_locked() feeds it, and the run's tallies. */
static void _account(acc_run_t *r, const counter_spec_t *spec,
		     const meter_reading_t *rd, double t)
{
	int64_t p = rd->has_power ? (int64_t) rd->power_mw : -1;
	energy_sample_t smp;
	int rc;

	rc = energy_acc_add_counter(r->acc, (uint64_t) llround(t * NS),
				    rd->counter_raw, spec, p);
	if (rc == -ERANGE) {
		r->refused++;
		return;
	} else if (rc) {
		r->other_rc++;
		return;
	}
	r->accepted++;
	energy_acc_last(r->acc, &smp);
	if (smp.flags & ENERGY_SAMPLE_RESET)
		r->resets++;
	if (smp.flags & ENERGY_SAMPLE_GAP)
		r->gaps++;
#if HAVE_COUNTER_FIX
	if (smp.flags & ENERGY_SAMPLE_DISCIPLINED)
		r->disciplined++;
#endif
	if (!r->have_first) {
		r->have_first = true;
		r->first_mj = smp.energy_mj;
		r->t_first = t;
		r->raw_first = rd->counter_raw;
	}
	r->raw_last = rd->counter_raw;
	r->t_last = t;
}

/* The meter's registers at t, read through the plugin's meter, into every
 * accumulator. */
static void _read_at(day_t *d, double t)
{
	const mb_model_t *mdl = d->mdl;
	meter_reading_t rd;
	char msg[256] = "";
	int rc, mi;

	if (t < d->last_t + MIN_SEP_S)
		return;
	d->last_t = t;
	pthread_mutex_lock(&d->o->sv->lock);
	_power_words(&mdl->power, _watts(&d->load, t),
		     _map_regs(d->map, mdl, d->start, &mdl->power));
	_energy_words(&mdl->energy, d->start_j + _joules(&d->load, t),
		      _map_regs(d->map, mdl, d->start, &mdl->energy));
	pthread_mutex_unlock(&d->o->sv->lock);

	d->reads++;
	rc = modbus_meter_ops.read(d->m, &rd, se_mono_ns() + NS, msg,
				   sizeof(msg));
	if (rc || !rd.has_counter) {
		if (d->read_fail++ < 3)
			fprintf(stderr,
				"se-bench-counter: %s: read at %.3f s: %d %s\n",
				mdl->name, t, rc, msg);
		return;
	}
	d->t_end = t;
	/* the reference: the power register alone */
	if (rd.has_power &&
	    !energy_acc_add_power(d->runs[N_MAXP].acc,
				  (uint64_t) llround(t * NS), rd.power_mw))
		d->runs[N_MAXP].accepted++;
	for (mi = 0; mi < N_MAXP; mi++)
		_account(&d->runs[mi], &d->spec, &rd, t);
}

/* Second s's readings in order: the regular one, a third of the time an
 * sstat's, and the kicks of the job boundaries that fall in it. */
static void _second(day_t *d, int s)
{
	double ev[8], u = _uniform(&d->rng), v = _uniform(&d->rng);
	int n_ev = 0, k;

	ev[n_ev++] = s + READ_PHASE_S;
	if (u < 1.0 / 3)
		ev[n_ev++] = s + READ_PHASE_S + 0.05 + 0.9 * v;
	while (d->ki < d->n_kicks && d->kicks[d->ki] < s + 1 + READ_PHASE_S &&
	       n_ev < 8)
		ev[n_ev++] = d->kicks[d->ki++];
	qsort(ev, n_ev, sizeof(double), _cmp_double);
	for (k = 0; k < n_ev; k++)
		_read_at(d, ev[k]);
}

/* The day's count and truth from an accumulator's first reading to the
 * last: counted, truth and the register's own delta (J; NAN if none). */
static void _day_totals(day_t *d, acc_run_t *r, double *counted,
			double *truth, double *reg_j)
{
	uint64_t mj;

	*counted = *truth = *reg_j = NAN;
#if HAVE_COUNTER_FIX
	{
		energy_acc_anomaly_t an;

		energy_acc_anomaly(r->acc, &an);
		r->anomalies = (long) an.count;
	}
#endif
	if (!r->have_first ||
	    energy_acc_energy_at(r->acc, (uint64_t) llround(d->t_end * NS),
				 &mj))
		return;
	*counted = ((double) mj - (double) r->first_mj) / 1000.0;
	*truth = _joules(&d->load, d->t_end) - _joules(&d->load, r->t_first);
	*reg_j = (double) (r->raw_last - r->raw_first) *
		 d->spec.mj_per_unit / 1000.0;
}

/* Every job of run mi, a CSV line each. */
static void _report_jobs(const day_t *d, int mi)
{
	const acc_run_t *r = &d->runs[mi];
	int j;

	for (j = 0; j < d->o->jobs; j++) {
		double t0 = d->job_t0[j];

		fprintf(d->o->csv_jobs,
			"%s,%s,%.0f,%.0f,%d,%.6f,%.3f,%.3f,%.6f,%.6f\n",
			d->o->label, d->mdl->name, d->base_w,
			max_powers_w[mi], j, t0,
			_joules(&d->load, t0 + JOB_S) - _joules(&d->load, t0),
			r->job_got_j[j], r->job_err[j],
			d->runs[N_MAXP].job_err[j]);
	}
}

/* Run mi's table row, its warnings and its CSV lines. */
static void _report(day_t *d, int mi, const double ref[5])
{
	const mb_model_t *mdl = d->mdl;
	acc_run_t *r = &d->runs[mi];
	double counted, truth, reg_j, st[5];
	double step0 = _register_step_j(&mdl->energy, d->start_j);
	double step1 = _register_step_j(&mdl->energy,
				d->start_j + _joules(&d->load, d->t_end));
	char stepbuf[48], regname[64];

	_register_name(&mdl->energy, regname, sizeof(regname));
	_day_totals(d, r, &counted, &truth, &reg_j);
	_job_stats(r, d->o->jobs, st);
	if (step1 != step0)
		snprintf(stepbuf, sizeof(stepbuf), "%.2f -> %.2f kJ",
			 step0 / 1000.0, step1 / 1000.0);
	else
		snprintf(stepbuf, sizeof(stepbuf), "%.2f kJ", step0 / 1000.0);
	printf("| %s | %s from %.1f kWh | %.0f W | %s | %s | %.3f MJ | %.3f MJ | %+.1f kJ (%+.3f %%) | %lu of %lu | %lu | %+.2f %% | %+.3f %% | %+.2f %% |\n",
	       mdl->name, regname, d->start_j / KWH_J, d->base_w,
	       mi == 0 ? "100 kW (default)" : "3000 W",
	       stepbuf, counted / 1e6, truth / 1e6,
	       (counted - truth) / 1000.0,
	       100.0 * (counted - truth) / truth,
	       r->refused, r->refused + r->accepted + r->other_rc,
	       r->resets, st[0], st[1], st[2]);
	if (r->job_fail)
		fprintf(stderr,
			"se-bench-counter: %s MaxPower %.0f W: %lu job(s) not answered\n",
			mdl->name, max_powers_w[mi], r->job_fail);
	if (r->other_rc)
		fprintf(stderr,
			"se-bench-counter: %s MaxPower %.0f W: %lu reading(s) refused as not newer\n",
			mdl->name, max_powers_w[mi], r->other_rc);
	if (d->o->csv_day)
		fprintf(d->o->csv_day,
			"%s,%s,%s,%.1f,%.0f,%.0f,%d,%lu,%lu,%lu,%lu,%lu,%lu,%lu,%ld,%ld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.0f,%.6f,%.6f,%.6f,%.6f\n",
			d->o->label, mdl->name, regname,
			d->start_j / KWH_J, d->base_w, max_powers_w[mi],
			d->o->seconds, d->reads, d->read_fail, r->accepted,
			r->refused, r->other_rc, r->resets, r->gaps,
			HAVE_COUNTER_FIX ? (long) r->disciplined : -1L,
			r->anomalies,
			step0, step1, counted, truth, reg_j,
			counted - truth,
			100.0 * (counted - truth) / truth,
			st[0], st[1], st[2], st[3], st[4],
			ref[0], ref[1], ref[2], ref[3]);
	if (d->o->csv_jobs)
		_report_jobs(d, mi);
}

/* The meter closed, the peer shows nothing, everything freed. */
static void _day_free(day_t *d)
{
	int mi;

	modbus_meter_ops.close(d->m);
	modbus_meter_destroy(d->m);
	pthread_mutex_lock(&d->o->sv->lock);
	d->o->sv->map = NULL;
	pthread_mutex_unlock(&d->o->sv->lock);
	modbus_mapping_free(d->map);
	for (mi = 0; mi <= N_MAXP; mi++) {
		energy_acc_destroy(d->runs[mi].acc);
		free(d->runs[mi].job_err);
		free(d->runs[mi].job_got_j);
	}
	free(d->job_t0);
	free(d->kicks);
	_load_free(&d->load);
}

static void _run_case(const opts_t *o, const mb_model_t *mdl, int li)
{
	day_t d = {
		.o = o, .mdl = mdl, .base_w = loads_w[li],
		.start_j = _start_kwh(mdl->name) * KWH_J, .last_t = -1,
		.rng = { 0x9e3779b97f4a7c15ULL ^ (uint64_t) loads_w[li] },
	};
	uint64_t t_real = se_mono_ns();
	double ref[5];
	int s, mi;

	/* the same day for every model: the registers make the difference */
	_load_make(&d.load, d.base_w, o->seconds,
		   (uint64_t) (d.base_w * 7) + 1);
	_check_words(mdl, 1234.5, d.start_j + 12345.6);
	_day_meter(&d);
	_day_jobs(&d);
	_day_runs(&d);
	for (s = 0; s < o->seconds; s++) {
		_settle_jobs(&d, s);
		_second(&d, s);
	}

	_job_stats(&d.runs[N_MAXP], o->jobs, ref);
	for (mi = 0; mi < N_MAXP; mi++)
		_report(&d, mi, ref);
	fflush(stdout);
	fprintf(stderr,
		"se-bench-counter: %s %s at %.0f W: %lu reads (%lu failed) in %.1f s real time\n",
		o->label, mdl->name, d.base_w, d.reads, d.read_fail,
		(double) (se_mono_ns() - t_real) / NS);
	_day_free(&d);
}

/* ---------------------------------------------------------------- main */

static const struct option long_opts[] = {
	{ "seconds", required_argument, NULL, 's' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "model", required_argument, NULL, 'm' },
	{ "label", required_argument, NULL, 'l' },
	{ "csv", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void _usage(FILE *f)
{
	fprintf(f,
		"usage: se-bench-counter [--seconds S (86400)] [--jobs N (200)]\n"
		"                        [--model NAME]... [--label TEXT] [--csv PREFIX]\n");
}

int main(int argc, char **argv)
{
	opts_t o = { .label = "", .seconds = 86400, .jobs = 200 };
	const char *models[MAX_MODELS], *csv = NULL;
	int n_models = 0, c, i, li;
	const mb_model_t *mdl;
	server_t sv;

	while ((c = getopt_long(argc, argv, "s:j:m:l:c:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			o.seconds = atoi(optarg);
			break;
		case 'j':
			o.jobs = atoi(optarg);
			break;
		case 'm':
			if (n_models == MAX_MODELS)
				_die("too many --model");
			if (!mb_model_find(optarg))
				_die("unknown model %s", optarg);
			models[n_models++] = optarg;
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'c':
			csv = optarg;
			break;
		case 'h':
			_usage(stdout);
			return 0;
		default:
			_usage(stderr);
			return 2;
		}
	}
	if (o.seconds < 1200 || o.jobs < 1 || o.jobs > 4096 ||
	    (o.seconds - 660) / o.jobs < JOB_S + 4)
		_die("--seconds at least 1200 and --jobs 1..4096 that fit in it");
	if (!n_models) {
		for (mdl = mb_models; mdl->name && n_models < MAX_MODELS;
		     mdl++)
			models[n_models++] = mdl->name;
	}
	if (csv) {
		char path[4096];

		snprintf(path, sizeof(path), "%s-day.csv", csv);
		if (!(o.csv_day = fopen(path, "w")))
			_die("%s: %s", path, strerror(errno));
		snprintf(path, sizeof(path), "%s-jobs.csv", csv);
		if (!(o.csv_jobs = fopen(path, "w")))
			_die("%s: %s", path, strerror(errno));
		fprintf(o.csv_day,
			"label,model,register,start_kwh,load_w,max_power_w,seconds,reads,read_failures,accepted,refused,not_newer,resets,gaps,disciplined,anomalies,step_start_j,step_end_j,counted_j,truth_j,register_j,error_j,error_pct,job_min_pct,job_median_pct,job_max_pct,job_mean_abs_pct,jobs,power_only_job_min_pct,power_only_job_median_pct,power_only_job_max_pct,power_only_job_mean_abs_pct\n");
		fprintf(o.csv_jobs,
			"label,model,load_w,max_power_w,job,t0_s,truth_j,counted_j,error_pct,power_only_error_pct\n");
	}
	se_log_set_sink(_log_sink, NULL);
	_server_start(&sv);
	o.sv = &sv;

	_print_header();
	for (i = 0; i < n_models; i++) {
		mdl = mb_model_find(models[i]);
		for (li = 0; li < N_LOADS; li++)
			_run_case(&o, mdl, li);
	}
	_server_stop(&sv);
	if (o.csv_day)
		fclose(o.csv_day);
	if (o.csv_jobs)
		fclose(o.csv_jobs);
	return 0;
}
