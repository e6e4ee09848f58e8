/*
 * bmc_sim_feeder.c - play a power trace into ipmi_sim's polled sensor files.
 *
 *   bmc-sim-feeder --trace FILE --column NAME --epoch SECONDS
 *                  [--period-ms MS] [--step-w W] --out PATH:SHARE ...
 *
 * Every period (default 100 ms) each PATH gets SHARE x the trace's watts at
 * (wall clock - epoch), as an ASCII integer, written to a temporary file
 * and renamed over PATH so that ipmi_sim never reads half a number.  With
 * --step-w M (the sensor's SDR multiplier, "div=M" in the .emu file) the
 * value is rounded to the nearest multiple of M, so the sensor's 8-bit
 * reading is round-to-nearest: error at most M/2 W per sensor, no bias.
 * Runs until SIGTERM or SIGINT.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "power_trace.h"

#define FEEDER_MAX_OUT	8

typedef struct {
	const char *path;
	double share;
} feeder_out_t;

typedef struct {
	const char *trace_path;
	const char *column;
	double epoch_s;
	long period_ms;
	double step_w;
	feeder_out_t out[FEEDER_MAX_OUT];
	int n_out;
} feeder_opts_t;

static volatile sig_atomic_t _stop;

static void _on_signal(int sig)
{
	_stop = 1;
}

static void _usage(void)
{
	fprintf(stderr, "usage: bmc-sim-feeder --trace FILE --column NAME "
		"--epoch SECONDS [--period-ms MS] [--step-w W] "
		"--out PATH:SHARE ...\n");
	exit(2);
}

static int _add_out(feeder_opts_t *o, char *arg)
{
	char *colon = strrchr(arg, ':'), *end;

	if (!colon || o->n_out == FEEDER_MAX_OUT)
		return -EINVAL;
	*colon = '\0';
	o->out[o->n_out].path = arg;
	o->out[o->n_out].share = strtod(colon + 1, &end);
	if (*end || !(o->out[o->n_out].share >= 0))
		return -EINVAL;
	o->n_out++;
	return 0;
}

static void _parse(feeder_opts_t *o, int argc, char **argv)
{
	int i;

	o->period_ms = 100;
	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i];
		char *v = argv[i + 1];

		if (!strcmp(k, "--trace"))
			o->trace_path = v;
		else if (!strcmp(k, "--column"))
			o->column = v;
		else if (!strcmp(k, "--epoch"))
			o->epoch_s = atof(v);
		else if (!strcmp(k, "--period-ms"))
			o->period_ms = atol(v);
		else if (!strcmp(k, "--step-w"))
			o->step_w = atof(v);
		else if (strcmp(k, "--out") || _add_out(o, v))
			_usage();
	}
	if (i != argc || !o->trace_path || !o->column || !o->n_out ||
	    o->period_ms <= 0)
		_usage();
}

static double _wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write "value\n" to path through path.tmp + rename. */
static int _write_atomic(const char *path, long value)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return -errno;
	fprintf(f, "%ld\n", value);
	if (fclose(f))
		return -errno;
	return rename(tmp, path) ? -errno : 0;
}

static long _quantise(double w, double step_w)
{
	if (w < 0)
		w = 0;
	if (step_w > 0)
		return lround(round(w / step_w) * step_w);
	return lround(w);
}

static void _play(const feeder_opts_t *o, const power_trace_t *tr, int col)
{
	struct timespec nap = {
		.tv_sec = o->period_ms / 1000,
		.tv_nsec = o->period_ms % 1000 * 1000000L,
	};
	int i;

	while (!_stop) {
		double w = power_trace_watts(tr, col, _wall_s() - o->epoch_s);

		for (i = 0; i < o->n_out; i++) {
			int rc = _write_atomic(o->out[i].path,
					       _quantise(w * o->out[i].share,
							 o->step_w));
			if (rc)
				fprintf(stderr, "bmc-sim-feeder: %s: %s\n",
					o->out[i].path, strerror(-rc));
		}
		nanosleep(&nap, NULL);
	}
}

int main(int argc, char **argv)
{
	feeder_opts_t o = { 0 };
	power_trace_t *tr;
	char err[512];
	int col, rc;

	_parse(&o, argc, argv);
	if ((rc = power_trace_load(o.trace_path, &tr, err, sizeof(err)))) {
		fprintf(stderr, "bmc-sim-feeder: %s\n", err);
		return 1;
	}
	if ((col = power_trace_column(tr, o.column)) < 0) {
		fprintf(stderr, "bmc-sim-feeder: %s: no column '%s'\n",
			o.trace_path, o.column);
		return 1;
	}
	signal(SIGTERM, _on_signal);
	signal(SIGINT, _on_signal);
	_play(&o, tr, col);
	power_trace_free(tr);
	return 0;
}
