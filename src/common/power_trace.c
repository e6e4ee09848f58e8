/*
 * power_trace.c - load a power trace and integrate it exactly.
 *
 * Power is piecewise linear in time, so its integral is exact: a trapezoid
 * per whole segment, and a quadratic for a partial one.  Integrals from the
 * first row are precomputed per row, so any [t0, t1] costs two binary
 * searches.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "power_trace.h"

#define TRACE_SEPS	" \t\r\n"

struct power_trace {
	int ncol;
	char **names;		/* ncol column names */
	size_t nrows;
	size_t cap;
	double *t;		/* nrows times, seconds, non-decreasing */
	double *w;		/* nrows x ncol watts, row-major */
	double *cum;		/* nrows x ncol joules from t[0] to t[i] */
	double period;		/* @repeat period in seconds; 0: none */
};

/* Parser state, for messages that name the file and line. */
typedef struct {
	const char *path;
	unsigned line;
	char *err;
	size_t err_len;
	power_trace_t *tr;
	bool have_header;
} trace_parse_t;

static int _fail(trace_parse_t *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int _fail(trace_parse_t *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->err_len)
		return -EINVAL;
	if (p->line)
		n = snprintf(p->err, p->err_len, "%s:%u: ", p->path, p->line);
	else
		n = snprintf(p->err, p->err_len, "%s: ", p->path);
	if (n >= 0 && (size_t) n < p->err_len) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->err_len - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A whole token as a finite number. */
static bool _number(const char *tok, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(tok, &end);
	return end != tok && !*end && !errno && isfinite(*out);
}

/* ------------------------------------------------------------ parsing */

static int _parse_directive(trace_parse_t *p, char *line)
{
	char *name = strtok(line, TRACE_SEPS);
	char *val = strtok(NULL, TRACE_SEPS);
	double period;

	if (strcmp(name, "@repeat"))
		return _fail(p, "unknown directive '%s' (known: @repeat)",
			     name);
	if (p->have_header)
		return _fail(p, "@repeat must come before the header");
	if (p->tr->period > 0)
		return _fail(p, "@repeat given twice");
	if (!val || strtok(NULL, TRACE_SEPS))
		return _fail(p, "expected '@repeat SECONDS'");
	if (!_number(val, &period) || period <= 0)
		return _fail(p, "@repeat '%s': not a positive number of seconds",
			     val);
	if (period > POWER_TRACE_MAX_S)
		return _fail(p, "@repeat '%s': longer than %g seconds", val,
			     POWER_TRACE_MAX_S);
	p->tr->period = period;
	return 0;
}

static int _parse_header(trace_parse_t *p, char *line)
{
	power_trace_t *tr = p->tr;
	char *tok = strtok(line, TRACE_SEPS);

	if (strcmp(tok, "time"))
		return _fail(p, "expected the header 'time NAME...' before any row, got '%s'",
			     tok);
	while ((tok = strtok(NULL, TRACE_SEPS))) {
		char **names;

		if (power_trace_column(tr, tok) >= 0)
			return _fail(p, "column '%s' named twice", tok);
		names = realloc(tr->names, (tr->ncol + 1) * sizeof(*names));
		if (!names)
			return -ENOMEM;
		tr->names = names;
		if (!(tr->names[tr->ncol] = strdup(tok)))
			return -ENOMEM;
		tr->ncol++;
	}
	if (!tr->ncol)
		return _fail(p, "the header names no column after 'time'");
	p->have_header = true;
	return 0;
}

static int _grow(power_trace_t *tr)
{
	size_t cap = tr->cap ? tr->cap * 2 : 64;
	double *t, *w;

	if (tr->nrows < tr->cap)
		return 0;
	if (!(t = realloc(tr->t, cap * sizeof(*t))))
		return -ENOMEM;
	tr->t = t;
	if (!(w = realloc(tr->w, cap * tr->ncol * sizeof(*w))))
		return -ENOMEM;
	tr->w = w;
	tr->cap = cap;
	return 0;
}

static int _check_time(trace_parse_t *p, const char *tok, double t)
{
	const power_trace_t *tr = p->tr;
	size_t n = tr->nrows;

	if (n && t < tr->t[n - 1])
		return _fail(p, "time '%s' goes back (previous row: %g)", tok,
			     tr->t[n - 1]);
	if (n >= 2 && t == tr->t[n - 1] && t == tr->t[n - 2])
		return _fail(p, "time '%s' given a third time (a step is two rows)",
			     tok);
	if (tr->period > 0 && (t < 0 || t > tr->period))
		return _fail(p, "time '%s' outside the @repeat period [0, %g]",
			     tok, tr->period);
	return 0;
}

static int _parse_row(trace_parse_t *p, char *line)
{
	power_trace_t *tr = p->tr;
	char *tok = strtok(line, TRACE_SEPS);
	double t, *w;
	int col, rc;

	if (!_number(tok, &t))
		return _fail(p, "time '%s' is not a number", tok);
	if (fabs(t) > POWER_TRACE_MAX_S)
		return _fail(p, "time '%s' beyond +/-%g seconds", tok,
			     POWER_TRACE_MAX_S);
	if ((rc = _check_time(p, tok, t)) || (rc = _grow(tr)))
		return rc;

	w = &tr->w[tr->nrows * tr->ncol];
	for (col = 0; col < tr->ncol; col++) {
		if (!(tok = strtok(NULL, TRACE_SEPS)))
			return _fail(p, "expected %d watt values after the time, got %d",
				     tr->ncol, col);
		if (!_number(tok, &w[col]))
			return _fail(p, "column %s: '%s' is not a number of watts",
				     tr->names[col], tok);
		if (w[col] < 0)
			return _fail(p, "column %s: '%s' watts is negative",
				     tr->names[col], tok);
		if (w[col] > POWER_TRACE_MAX_W)
			return _fail(p, "column %s: '%s' watts is above %g",
				     tr->names[col], tok, POWER_TRACE_MAX_W);
	}
	if ((tok = strtok(NULL, TRACE_SEPS)))
		return _fail(p, "more than %d watt values: '%s'", tr->ncol,
			     tok);
	tr->t[tr->nrows++] = t;
	return 0;
}

/* One line: comments (from '#') and blank lines are skipped. */
static int _parse_line(trace_parse_t *p, char *line)
{
	char *hash = strchr(line, '#');

	if (hash)
		*hash = '\0';
	line += strspn(line, TRACE_SEPS);
	if (!*line)
		return 0;
	if (*line == '@')
		return _parse_directive(p, line);
	if (!p->have_header)
		return _parse_header(p, line);
	return _parse_row(p, line);
}

static int _precompute(power_trace_t *tr)
{
	size_t i;
	int c;

	if (!(tr->cum = calloc(tr->nrows * tr->ncol, sizeof(*tr->cum))))
		return -ENOMEM;
	for (i = 1; i < tr->nrows; i++) {
		double dt = tr->t[i] - tr->t[i - 1];

		for (c = 0; c < tr->ncol; c++) {
			const double *w = tr->w;
			size_t a = (i - 1) * tr->ncol + c, b = i * tr->ncol + c;

			tr->cum[b] = tr->cum[a] + (w[a] + w[b]) / 2 * dt;
		}
	}
	return 0;
}

static int _parse_file(trace_parse_t *p, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	while (!rc && getline(&line, &cap, f) >= 0) {
		p->line++;
		rc = _parse_line(p, line);
	}
	free(line);
	if (rc)
		return rc;
	p->line = 0;	/* what follows is about the whole file */
	if (ferror(f))
		return _fail(p, "read error");
	if (!p->tr->nrows)
		return _fail(p, "no rows (a trace needs 'time NAME...' and at least one row)");
	return _precompute(p->tr);
}

int power_trace_load(const char *path, power_trace_t **out, char *err,
		     size_t err_len)
{
	trace_parse_t p = { .path = path, .err = err, .err_len = err_len };
	FILE *f;
	int rc;

	*out = NULL;
	if (!(f = conf_open_read(path, &rc, err, err_len)))
		return rc;
	if (!(p.tr = calloc(1, sizeof(*p.tr)))) {
		fclose(f);
		return -ENOMEM;
	}
	rc = _parse_file(&p, f);
	fclose(f);
	if (rc == -ENOMEM && err && err_len)
		snprintf(err, err_len, "%s: %s", path, strerror(ENOMEM));
	if (rc) {
		power_trace_free(p.tr);
		return rc;
	}
	*out = p.tr;
	return 0;
}

void power_trace_free(power_trace_t *tr)
{
	int c;

	if (!tr)
		return;
	for (c = 0; c < tr->ncol; c++)
		free(tr->names[c]);
	free(tr->names);
	free(tr->t);
	free(tr->w);
	free(tr->cum);
	free(tr);
}

/* -------------------------------------------------------------- lookup */

int power_trace_column(const power_trace_t *tr, const char *name)
{
	int c;

	for (c = 0; c < tr->ncol; c++)
		if (!strcmp(tr->names[c], name))
			return c;
	return -1;
}

int power_trace_columns(const power_trace_t *tr)
{
	return tr->ncol;
}

const char *power_trace_column_name(const power_trace_t *tr, int col)
{
	if (col < 0 || col >= tr->ncol)
		return NULL;
	return tr->names[col];
}

/*
 * The last row with t[i] <= x (so at a step, the right-hand row), or -1
 * when x is before the first row.
 */
static long _row_at(const power_trace_t *tr, double x)
{
	size_t lo = 0, hi = tr->nrows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tr->t[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long) lo - 1;
}

static double _w(const power_trace_t *tr, size_t row, int col)
{
	return tr->w[row * tr->ncol + col];
}

/* Watts of the non-repeating trace at x. */
static double _base_watts(const power_trace_t *tr, int col, double x)
{
	long i = _row_at(tr, x);
	double w0, w1, span;

	if (i < 0)
		return _w(tr, 0, col);
	if ((size_t) i == tr->nrows - 1)
		return _w(tr, i, col);
	w0 = _w(tr, i, col);
	w1 = _w(tr, i + 1, col);
	span = tr->t[i + 1] - tr->t[i];
	return w0 + (w1 - w0) * (x - tr->t[i]) / span;
}

/* Joules of the non-repeating trace from t[0] to x (negative before). */
static double _base_joules(const power_trace_t *tr, int col, double x)
{
	long i = _row_at(tr, x);
	double w0, w1, span, d;

	if (i < 0)
		return (x - tr->t[0]) * _w(tr, 0, col);
	d = x - tr->t[i];
	w0 = _w(tr, i, col);
	if ((size_t) i == tr->nrows - 1)
		return tr->cum[i * tr->ncol + col] + d * w0;
	w1 = _w(tr, i + 1, col);
	span = tr->t[i + 1] - tr->t[i];
	return tr->cum[i * tr->ncol + col] + w0 * d +
	       (w1 - w0) * d * d / (2 * span);
}

/* Joules from time 0 to x (x may be negative), with @repeat. */
static double _joules_from_zero(const power_trace_t *tr, int col, double x)
{
	double per, k, r;

	if (tr->period <= 0)
		return _base_joules(tr, col, x) - _base_joules(tr, col, 0);
	per = _base_joules(tr, col, tr->period) - _base_joules(tr, col, 0);
	k = floor(x / tr->period);
	r = x - k * tr->period;
	return k * per + _base_joules(tr, col, r) - _base_joules(tr, col, 0);
}

double power_trace_watts(const power_trace_t *tr, int col, double t)
{
	if (col < 0 || col >= tr->ncol)
		return NAN;
	if (tr->period > 0)
		t -= floor(t / tr->period) * tr->period;
	return _base_watts(tr, col, t);
}

double power_trace_joules(const power_trace_t *tr, int col, double t0,
			  double t1)
{
	if (col < 0 || col >= tr->ncol)
		return NAN;
	return _joules_from_zero(tr, col, t1) - _joules_from_zero(tr, col, t0);
}

/*
 * Integral over [a, b] of min(line, cap), the line going from wa at a to
 * wb at b: a trapezoid, the cap's rectangle, or both, split where the
 * line crosses the cap.
 */
static double _capped_piece(double a, double wa, double b, double wb,
			    double cap)
{
	double x;

	if (b <= a)
		return 0.0;
	if (wa <= cap && wb <= cap)
		return (b - a) * (wa + wb) / 2;
	if (wa >= cap && wb >= cap)
		return (b - a) * cap;
	x = a + (b - a) * (cap - wa) / (wb - wa);
	if (wa < cap)
		return (x - a) * (wa + cap) / 2 + (b - x) * cap;
	return (x - a) * cap + (b - x) * (cap + wb) / 2;
}

/* Integral of min(P, cap) of the non-repeating trace over [a, b], a row
 * interval (or the flat ends) at a time. */
static double _base_capped(const power_trace_t *tr, int col, double a,
			   double b, double cap)
{
	double total = 0.0, x = a;

	while (x < b) {
		long i = _row_at(tr, x);	/* t[i] <= x < t[i + 1] */
		double end, wa, wb;

		if (i < 0) {
			end = fmin(b, tr->t[0]);
			wa = wb = _w(tr, 0, col);
		} else if ((size_t) i == tr->nrows - 1) {
			end = b;
			wa = wb = _w(tr, i, col);
		} else {
			end = fmin(b, tr->t[i + 1]);
			wa = _base_watts(tr, col, x);
			wb = _w(tr, i, col) + (_w(tr, i + 1, col) -
					       _w(tr, i, col)) *
				(end - tr->t[i]) / (tr->t[i + 1] - tr->t[i]);
		}
		total += _capped_piece(x, wa, end, wb, cap);
		x = end;
	}
	return total;
}

double power_trace_joules_capped(const power_trace_t *tr, int col, double t0,
				 double t1, double cap_w)
{
	double total = 0.0, x, k;

	if (col < 0 || col >= tr->ncol || isnan(cap_w))
		return NAN;
	if (t1 < t0)
		return -power_trace_joules_capped(tr, col, t1, t0, cap_w);
	if (cap_w < 0)
		cap_w = 0;
	if (tr->period <= 0)
		return _base_capped(tr, col, t0, t1, cap_w);
	/* period by period, each folded onto [0, P] */
	for (x = t0, k = floor(t0 / tr->period); x < t1; k += 1) {
		double start = k * tr->period;
		double end = fmin(t1, start + tr->period);

		if (end > x)
			total += _base_capped(tr, col, x - start, end - start,
					      cap_w);
		x = fmax(x, end);
	}
	return total;
}
