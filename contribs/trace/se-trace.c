/*
 * se-trace - the simulators' implementation of the power-trace semantics
 * (src/common/power_trace.c), for scripts; the tests' truth uses a second
 * one, contribs/python/selab/trace.py.
 *
 *   se-trace joules FILE COLUMN T0 T1   true energy (J) over [T0, T1] s
 *   se-trace watts FILE COLUMN T        power (W) at trace time T s
 *   se-trace capped FILE COLUMN T0 T1 CAP_W
 *                                       energy (J) of min(power, CAP_W)
 *   se-trace columns FILE               column names, one per line
 *
 * Exit status: 0 success, 2 bad usage or input (message on stderr naming
 * the file and line), 1 out of memory or I/O trouble.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "power_trace.h"

#define EXIT_BAD_INPUT	2

static const char *const usage =
	"usage: se-trace joules FILE COLUMN T0 T1\n"
	"       se-trace watts FILE COLUMN T\n"
	"       se-trace capped FILE COLUMN T0 T1 CAP_W\n"
	"       se-trace series FILE COLUMN T0 T1 STEP\n"
	"       se-trace columns FILE\n";

static void _die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void _die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("se-trace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static double _seconds(const char *what, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		_die(EXIT_BAD_INPUT, "%s '%s' is not a number of seconds",
		     what, s);
	return v;
}

/* CAP_W: watts >= 0. */
static double _watts_arg(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < 0)
		_die(EXIT_BAD_INPUT, "CAP_W '%s' is not a number of watts >= 0",
		     s);
	return v;
}

static power_trace_t *_load(const char *path)
{
	power_trace_t *tr;
	char err[512];
	int rc;

	if ((rc = power_trace_load(path, &tr, err, sizeof(err))))
		_die(rc == -ENOMEM ? EXIT_FAILURE : EXIT_BAD_INPUT, "%s", err);
	return tr;
}

static int _column(const power_trace_t *tr, const char *path,
		   const char *name)
{
	int col = power_trace_column(tr, name);
	int c;

	if (col >= 0)
		return col;
	fprintf(stderr, "se-trace: %s: no column '%s' (columns:", path, name);
	for (c = 0; c < power_trace_columns(tr); c++)
		fprintf(stderr, " %s", power_trace_column_name(tr, c));
	fputs(")\n", stderr);
	exit(EXIT_BAD_INPUT);
}

static void _print(double v)
{
	if (printf("%.3f\n", v) < 0 || fflush(stdout))
		_die(EXIT_FAILURE, "write error: %s", strerror(errno));
}

/* "t watts" lines from t0 to t1 every step seconds, for plots. */
static void _series(const power_trace_t *tr, int col, double t0, double t1,
		    double step)
{
	unsigned long i, n;

	if (!(step > 0) || t1 < t0)
		_die(EXIT_BAD_INPUT, "series needs T0 <= T1 and STEP > 0");
	n = (unsigned long)((t1 - t0) / step);
	for (i = 0; i <= n; i++) {
		double t = t0 + (double)i * step;

		printf("%.6f %.3f\n", t, power_trace_watts(tr, col, t));
	}
	if (fflush(stdout))
		_die(EXIT_FAILURE, "write error: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	power_trace_t *tr;
	double t0, t1;
	int c;

	if (!strcmp(cmd, "columns") && argc == 3) {
		tr = _load(argv[2]);
		for (c = 0; c < power_trace_columns(tr); c++)
			printf("%s\n", power_trace_column_name(tr, c));
	} else if (!strcmp(cmd, "watts") && argc == 5) {
		t0 = _seconds("T", argv[4]);
		tr = _load(argv[2]);
		_print(power_trace_watts(tr, _column(tr, argv[2], argv[3]),
					 t0));
	} else if (!strcmp(cmd, "joules") && argc == 6) {
		t0 = _seconds("T0", argv[4]);
		t1 = _seconds("T1", argv[5]);
		if (t1 < t0)
			_die(EXIT_BAD_INPUT, "T1 %s is before T0 %s",
			     argv[5], argv[4]);
		tr = _load(argv[2]);
		_print(power_trace_joules(tr, _column(tr, argv[2], argv[3]),
					  t0, t1));
	} else if (!strcmp(cmd, "capped") && argc == 7) {
		double cap = _watts_arg(argv[6]);

		t0 = _seconds("T0", argv[4]);
		t1 = _seconds("T1", argv[5]);
		if (t1 < t0)
			_die(EXIT_BAD_INPUT, "T1 %s is before T0 %s",
			     argv[5], argv[4]);
		tr = _load(argv[2]);
		_print(power_trace_joules_capped(
			tr, _column(tr, argv[2], argv[3]), t0, t1, cap));
	} else if (!strcmp(cmd, "series") && argc == 7) {
		t0 = _seconds("T0", argv[4]);
		t1 = _seconds("T1", argv[5]);
		tr = _load(argv[2]);
		_series(tr, _column(tr, argv[2], argv[3]), t0, t1,
			_seconds("STEP", argv[6]));
	} else {
		fputs(usage, stderr);
		return EXIT_BAD_INPUT;
	}
	power_trace_free(tr);
	return 0;
}
