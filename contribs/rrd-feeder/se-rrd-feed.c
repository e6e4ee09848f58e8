/*
 * se-rrd-feed - write a power trace into RRD files, as a collector would.
 *
 *   se-rrd-feed [options] TRACE SERIES...
 *     SERIES        NAME=COLUMN (file of NAME from trace column COLUMN),
 *                   NAME (same column name), or PREFIX[FIRST-LAST]=COLUMN
 *                   (n[1-1000]=node: 1000 files from one column)
 *   --path TMPL     file of a series, %n = its name (default ./%n.rrd)
 *   --step S        RRD step and update period, seconds (10)
 *   --ds KIND       gauge   DS "watts" GAUGE: the power at each update, as
 *                           collectd's or Ganglia's power readings;
 *                   derive  DS "joules" DERIVE of the cumulative energy, as
 *                           a PDU energy counter polled each step: rrdtool
 *                           then stores the exact mean power of the step;
 *                   both    (default) both data sources in each file.
 *   --epoch T       wall-clock second of trace time 0 (default: start)
 *   --backfill S    first write the rows of the last S seconds, at once
 *   --once          write the backfill (or one row) and exit
 *   --daemon ADDR   update through rrdcached (unix:PATH), as large sites do
 *   --pidfile F     write our pid to F (removed on exit): the wrapper
 *                   rrd-feeder stops us by that pid, never by name
 *   --no-min        DS minimum U instead of 0: negative values and a
 *                   counter going back reach the file as they are (a
 *                   collector that does not filter), for fault tests
 *   --control FILE  faults, re-read before every update (absent: none);
 *                   one "NAME FAULT" line per faulty series:
 *                     NAME nan       the update is U (unknown) in every DS
 *                     NAME watts W   the row reads W watts (gauge W; the
 *                                    counter advances W x step): a
 *                                    negative or absurd reading
 *                     NAME reset     the energy counter restarts from 0
 *                                    (once per appearance of the line)
 *                     NAME wrap B T  the counter is a B-bit register
 *                                    that wraps at trace time T: give
 *                                    the line before the feed starts
 *                                    (its first row sets the offset, so
 *                                    no row jumps); modulo 2^B after
 *                     NAME stop      no update at all (the collector
 *                                    stopped: rows turn unknown)
 *                   Faults change only what is written, never the trace:
 *                   the truth of a job stays the trace's integral.
 *
 * Updates are stamped on step boundaries of the wall clock.  Existing files
 * are kept (their step must match).  SIGTERM / SIGINT end the run cleanly.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rrd.h>
#include <rrd_client.h>

#include "conf.h"
#include "power_trace.h"

#define DS_GAUGE	0x1
#define DS_DERIVE	0x2
#define RRD_DAY_S	86400

/* What the control file says about one series (see the top). */
typedef enum {
	FAULT_NONE = 0, FAULT_NAN, FAULT_WATTS, FAULT_RESET, FAULT_WRAP,
	FAULT_STOP,
} fault_kind_t;

typedef struct {
	char *name;
	char *path;
	int col;
	fault_kind_t fault;	/* this update's */
	double fault_arg;	/* watts, or wrap bits */
	double fault_arg2;	/* wrap: trace time of the wrap */
	bool reset_done;	/* the current reset line was applied */
	bool wrap_set;		/* written modulo 2^wrap_bits from now on */
	unsigned wrap_bits;
	double offset_j;	/* counter = trace joules + offset */
} series_t;

typedef struct {
	const char *tmpl;
	unsigned step_s;
	unsigned ds;
	long epoch_s;
	unsigned backfill_s;
	bool once;
	const char *daemon;
	const char *pidfile;
	const char *control;
	bool no_min;
	power_trace_t *tr;
	series_t *series;
	size_t n_series;
} feed_t;

static volatile sig_atomic_t stopping;

static void _die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));

static void _die(const char *fmt, ...)
{
	va_list ap;

	fputs("se-rrd-feed: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void _on_signal(int sig)
{
	stopping = 1;
}

/* ---------------------------------------------------------- series */

static void _add_one(feed_t *f, const char *name, const char *column)
{
	conf_where_t w = { "se-rrd-feed", "--path", 0 };
	char path[4096], err[256];
	series_t *s;
	int col = power_trace_column(f->tr, column);

	if (col < 0)
		_die("trace has no column \"%s\"", column);
	if (conf_expand(&w, f->tmpl, name, path, sizeof(path), err,
			sizeof(err)))
		_die("%s", err);
	f->series = realloc(f->series, (f->n_series + 1) * sizeof(*s));
	if (!f->series)
		_die("out of memory");
	s = &f->series[f->n_series++];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->path = strdup(path);
	s->col = col;
}

/* NAME, NAME=COLUMN or PREFIX[FIRST-LAST]=COLUMN */
static void _add_series(feed_t *f, const char *arg)
{
	char prefix[256], name[300];
	const char *eq = strchr(arg, '=');
	const char *column = eq ? eq + 1 : arg;
	size_t name_len = eq ? (size_t) (eq - arg) : strlen(arg);
	unsigned first, last;

	if (sscanf(arg, "%255[^[][%u-%u]=", prefix, &first, &last) == 3 &&
	    eq) {
		if (last < first)
			_die("%s: empty range", arg);
		for (unsigned i = first; i <= last; i++) {
			snprintf(name, sizeof(name), "%s%u", prefix, i);
			_add_one(f, name, column);
		}
		return;
	}
	if (!name_len || name_len >= sizeof(name))
		_die("%s: bad series", arg);
	memcpy(name, arg, name_len);
	name[name_len] = '\0';
	_add_one(f, name, column);
}

/* ---------------------------------------------------------- RRD files */

static void _create(const feed_t *f, const series_t *s, long first_s)
{
	char ds_w[64], ds_j[64], rra_fine[64], rra_coarse[64];
	const char *argv[4];
	int argc = 0;

	const char *min = f->no_min ? "U" : "0";

	snprintf(ds_w, sizeof(ds_w), "DS:watts:GAUGE:%u:%s:U", 3 * f->step_s,
		 min);
	snprintf(ds_j, sizeof(ds_j), "DS:joules:DERIVE:%u:%s:U", 3 * f->step_s,
		 min);
	/* a day at the step, a week at 6 steps: a typical collector's RRAs */
	snprintf(rra_fine, sizeof(rra_fine), "RRA:AVERAGE:0.5:1:%u",
		 RRD_DAY_S / f->step_s);
	snprintf(rra_coarse, sizeof(rra_coarse), "RRA:AVERAGE:0.5:6:%u",
		 7 * RRD_DAY_S / (6 * f->step_s));
	if (f->ds & DS_GAUGE)
		argv[argc++] = ds_w;
	if (f->ds & DS_DERIVE)
		argv[argc++] = ds_j;
	argv[argc++] = rra_fine;
	argv[argc++] = rra_coarse;

	rrd_clear_error();
	if (rrd_create_r(s->path, f->step_s, first_s - 1, argc, argv))
		_die("%s: %s", s->path, rrd_get_error());
}

static void _ensure_files(const feed_t *f, long first_s)
{
	for (size_t i = 0; i < f->n_series; i++)
		if (access(f->series[i].path, F_OK))
			_create(f, &f->series[i], first_s);
}

/* ---------------------------------------------------------- faults */

static series_t *_series_named(feed_t *f, const char *name)
{
	for (size_t i = 0; i < f->n_series; i++)
		if (!strcmp(f->series[i].name, name))
			return &f->series[i];
	return NULL;
}

/* Read the control file: each series' fault for this update. */
static void _control_load(feed_t *f)
{
	char line[256], name[128], kind[32];
	FILE *fp;

	for (size_t i = 0; i < f->n_series; i++)
		f->series[i].fault = FAULT_NONE;
	if (!f->control || !(fp = fopen(f->control, "r")))
		return;
	while (fgets(line, sizeof(line), fp)) {
		double arg = 0, arg2 = 0;
		series_t *s;
		int n = sscanf(line, "%127s %31s %lf %lf", name, kind, &arg,
			       &arg2);

		if (n < 2 || name[0] == '#' || !(s = _series_named(f, name)))
			continue;
		s->fault_arg = arg;
		s->fault_arg2 = arg2;
		s->fault = !strcmp(kind, "nan") ? FAULT_NAN :
			   !strcmp(kind, "watts") && n == 3 ? FAULT_WATTS :
			   !strcmp(kind, "reset") ? FAULT_RESET :
			   !strcmp(kind, "wrap") && n == 4 ? FAULT_WRAP :
			   !strcmp(kind, "stop") ? FAULT_STOP : FAULT_NONE;
		if (s->fault == FAULT_NONE)
			fprintf(stderr, "se-rrd-feed: %s: bad line: %s",
				f->control, line);
	}
	fclose(fp);
}

/*
 * The counter written for trace energy joules at this update, after the
 * series' fault: offsets model a meter whose register was cleared, wraps,
 * or counted a wrong power for one row (then goes on from there).
 */
static double _counter_j(const feed_t *f, series_t *s, double joules,
			 double row_j)
{
	if (s->fault != FAULT_RESET)
		s->reset_done = false;
	switch (s->fault) {
	case FAULT_WATTS:
		s->offset_j += s->fault_arg * f->step_s - row_j;
		break;
	case FAULT_RESET:
		if (!s->reset_done)
			s->offset_j = -(joules - row_j);  /* 0 one row ago */
		s->reset_done = true;
		break;
	case FAULT_WRAP:
		if (!s->wrap_set) {
			s->wrap_bits = (unsigned) s->fault_arg;
			s->offset_j = ldexp(1.0, (int) s->wrap_bits) -
				      power_trace_joules(f->tr, s->col, 0,
							 s->fault_arg2);
			s->wrap_set = true;
		}
		break;
	default:
		break;
	}
	joules += s->offset_j;
	if (s->wrap_set)
		joules = fmod(joules, ldexp(1.0, (int) s->wrap_bits));
	return joules;
}

/* One update of series s at wall-clock t_s; errors are reported, not
 * fatal: a collector keeps going when one file is gone. */
static void _update(const feed_t *f, series_t *s, long t_s)
{
	double tt = (double) (t_s - f->epoch_s);
	double watts = power_trace_watts(f->tr, s->col, tt);
	double joules = power_trace_joules(f->tr, s->col, 0, tt);
	double row_j = power_trace_joules(f->tr, s->col, tt - f->step_s, tt);
	char val[128];
	const char *argv[1] = { val };
	int rc, n;

	if (s->fault == FAULT_STOP)
		return;
	joules = _counter_j(f, s, joules, row_j);
	if (s->fault == FAULT_WATTS)
		watts = s->fault_arg;
	n = snprintf(val, sizeof(val), "%ld", t_s);
	if (s->fault == FAULT_NAN) {
		for (unsigned b = DS_GAUGE; b <= DS_DERIVE; b <<= 1)
			if (f->ds & b)
				n += snprintf(val + n, sizeof(val) - n, ":U");
	} else {
		if (f->ds & DS_GAUGE)
			n += snprintf(val + n, sizeof(val) - n, ":%.3f",
				      watts);
		if (f->ds & DS_DERIVE)	/* integers: mJ-exact in J */
			snprintf(val + n, sizeof(val) - n, ":%.0f",
				 round(joules));
	}

	rrd_clear_error();
	rc = f->daemon ? rrdc_update(s->path, 1, argv)
		       : rrd_update_r(s->path, NULL, 1, argv);
	if (rc)
		fprintf(stderr, "se-rrd-feed: %s: update %s: %s\n", s->path,
			val, rrd_get_error());
}

static void _update_all(feed_t *f, long t_s)
{
	_control_load(f);
	for (size_t i = 0; i < f->n_series && !stopping; i++)
		_update(f, &f->series[i], t_s);
}

/* ---------------------------------------------------------- main */

static void _sleep_until(long t_s)
{
	struct timespec ts = { t_s, 0 };

	while (!stopping &&
	       clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void _parse(feed_t *f, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "path", 1, NULL, 'p' }, { "step", 1, NULL, 's' },
		{ "ds", 1, NULL, 'd' }, { "epoch", 1, NULL, 'e' },
		{ "backfill", 1, NULL, 'b' }, { "once", 0, NULL, 'o' },
		{ "daemon", 1, NULL, 'D' }, { "pidfile", 1, NULL, 'P' },
		{ "control", 1, NULL, 'C' }, { "no-min", 0, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': f->tmpl = optarg; break;
		case 's': f->step_s = (unsigned) atoi(optarg); break;
		case 'e': f->epoch_s = atol(optarg); break;
		case 'b': f->backfill_s = (unsigned) atoi(optarg); break;
		case 'o': f->once = true; break;
		case 'D': f->daemon = optarg; break;
		case 'P': f->pidfile = optarg; break;
		case 'C': f->control = optarg; break;
		case 'm': f->no_min = true; break;
		case 'd':
			f->ds = !strcmp(optarg, "gauge") ? DS_GAUGE :
				!strcmp(optarg, "derive") ? DS_DERIVE :
				!strcmp(optarg, "both") ? DS_GAUGE | DS_DERIVE :
				0;
			if (!f->ds)
				_die("--ds %s: gauge, derive or both", optarg);
			break;
		default:
			_die("bad usage (see the comment at the top of "
			     "se-rrd-feed.c)");
		}
	}
	if (!f->step_s || argc - optind < 2)
		_die("usage: se-rrd-feed [options] TRACE SERIES...");
	if (power_trace_load(argv[optind], &f->tr, err, sizeof(err)))
		_die("%s", err);
	for (int i = optind + 1; i < argc; i++)
		_add_series(f, argv[i]);
}

int main(int argc, char **argv)
{
	feed_t f = { .tmpl = "./%n.rrd", .step_s = 10,
		     .ds = DS_GAUGE | DS_DERIVE, .epoch_s = time(NULL) };
	struct sigaction sa = { .sa_handler = _on_signal };
	long t_s, first_s;

	_parse(&f, argc, argv);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (f.daemon && rrdc_connect(f.daemon))
		_die("rrdcached %s: %s", f.daemon, rrd_get_error());
	if (f.pidfile) {
		FILE *fp = fopen(f.pidfile, "w");

		if (!fp || fprintf(fp, "%ld\n", (long) getpid()) < 0 ||
		    fclose(fp))
			_die("%s: %s", f.pidfile, strerror(errno));
	}

	t_s = time(NULL) / f.step_s * f.step_s;
	first_s = t_s - (long) f.backfill_s;
	_ensure_files(&f, first_s);
	for (long b = first_s; b < t_s && !stopping; b += f.step_s)
		_update_all(&f, b);
	_update_all(&f, t_s);
	while (!f.once && !stopping) {
		t_s += f.step_s;
		_sleep_until(t_s);
		if (!stopping)
			_update_all(&f, t_s);
	}

	if (f.daemon)
		rrdc_disconnect();
	if (f.pidfile)
		unlink(f.pidfile);
	for (size_t i = 0; i < f.n_series; i++) {
		free(f.series[i].name);
		free(f.series[i].path);
	}
	free(f.series);
	power_trace_free(f.tr);
	return 0;
}
