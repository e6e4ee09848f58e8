/*
 * exp_render.c - one snapshot of slurmd's energy as an exposition:
 * OpenMetrics 1.0 text, or Prometheus' text format 0.0.4 for a scraper
 * that does not ask for OpenMetrics.
 *
 * The names are fixed (contribs/prometheus' rules and dashboard use them);
 * every series carries node="<NodeName>".  Units stay exact: slurmd counts
 * mW and mJ, printed as W and J with three decimals, never through a
 * double.  The meter's state is typed gauge, not OpenMetrics' stateset:
 * a stateset's label must be named after its metric, and the rules read
 * state="ok|stale|failed" in both formats.
 *
 * Nothing is remembered between scrapes: a series is there when slurmd's
 * answer has it (a job's series end with the job), and nothing is shown
 * from a slurmd that did not answer (slurmd_up 0, nothing stale as fresh).
 */
#define _GNU_SOURCE	/* strcasestr, asprintf */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cg_cpu.h"
#include "exporter.h"

/* ------------------------------------------------------------- text */

void exp_text_free(exp_text_t *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

void exp_text_printf(exp_text_t *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = t->cap - t->len;

		if (t->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t) n < room) {
			t->len += n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap - t->len <= (size_t) n)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b) {
			t->failed = true;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
}

/* A label value escaped as both formats want (\\, \", \n). */
static void _put_escaped(exp_text_t *t, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\')
			exp_text_printf(t, "\\\\");
		else if (*v == '"')
			exp_text_printf(t, "\\\"");
		else if (*v == '\n')
			exp_text_printf(t, "\\n");
		else
			exp_text_printf(t, "%c", *v);
	}
}

/* ------------------------------------------------------------ formats */

exp_format_t exp_format_for_accept(const char *accept)
{
	/* Prometheus asks "application/openmetrics-text;version=1.0.0,...
	 * text/plain;version=0.0.4;q=0.5,...": OpenMetrics whenever it is
	 * listed with a weight above zero. */
	const char *p = accept ? strcasestr(accept, "application/openmetrics-text") : NULL;
	const char *end, *q;

	if (!p)
		return EXP_FORMAT_PROMETHEUS;
	end = strchr(p, ',');
	q = strstr(p, "q=");
	if (q && (!end || q < end) && strtod(q + 2, NULL) <= 0.0)
		return EXP_FORMAT_PROMETHEUS;
	return EXP_FORMAT_OPENMETRICS;
}

const char *exp_content_type(exp_format_t f)
{
	return f == EXP_FORMAT_OPENMETRICS ?
	       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	       "text/plain; version=0.0.4; charset=utf-8";
}

/* ------------------------------------------------------------ state */

exp_meter_state_t exp_meter_state(const energy_snapshot_t *s)
{
	uint64_t stale_after = 2 * s->period_ns + s->deadline_ns;

	if (s->meter_state == ENERGY_SNAPSHOT_METER_FAILING)
		return EXP_METER_FAILED;
	if (!s->last_sample_ns || s->meter_state != ENERGY_SNAPSHOT_METER_OK)
		return EXP_METER_STALE;
	if (s->now_ns > s->last_sample_ns &&
	    s->now_ns - s->last_sample_ns > stale_after)
		return EXP_METER_STALE;
	return EXP_METER_OK;
}

const char *exp_step_name(uint32_t step_id, char *buf, size_t len)
{
	switch (step_id) {
	case CG_STEP_BATCH:
		return "batch";
	case CG_STEP_EXTERN:
		return "extern";
	case CG_STEP_INTERACTIVE:
		return "interactive";
	default:
		snprintf(buf, len, "%" PRIu32, step_id);
		return buf;
	}
}

/* ------------------------------------------------------------ families */

typedef struct {
	const char *name;	/* the family (a counter's without _total) */
	const char *type;	/* gauge | counter */
	const char *unit;	/* OpenMetrics' UNIT, NULL: none */
	const char *help;
} exp_family_t;

static const exp_family_t F_POWER = {
	"slurm_energy_node_power_watts", "gauge", "watts",
	"Node power at slurmd's newest meter sample."
};
static const exp_family_t F_ENERGY = {
	"slurm_energy_node_energy_joules", "counter", "joules",
	"Node energy: slurmd's total (what Slurm's energy RPC answers); counts from zero when slurmd restarts."
};
static const exp_family_t F_MAX = {
	"slurm_energy_node_max_watts", "gauge", "watts",
	"The node's configured maximum power."
};
static const exp_family_t F_STATE = {
	"slurm_energy_meter_state", "gauge", NULL,
	"The node meter's state: 1 for the current one of ok, stale, failed."
};
static const exp_family_t F_AGE = {
	"slurm_energy_meter_last_sample_age_seconds", "gauge", "seconds",
	"Time since slurmd's newest meter sample."
};
static const exp_family_t F_GPU_POWER = {
	"slurm_energy_gpu_power_watts", "gauge", "watts",
	"GPU power at its newest reading."
};
static const exp_family_t F_GPU_ENERGY = {
	"slurm_energy_gpu_energy_joules", "counter", "joules",
	"GPU energy: slurmd's total for it at its newest reading, on the GPU counter's scale, times EnergyGPUFactor."
};
static const exp_family_t F_JOB = {
	"slurm_energy_job_energy_joules", "counter", "joules",
	"Energy charged to a running job step so far, by the split that goes into sacct."
};
static const exp_family_t F_UP = {
	"slurm_energy_exporter_slurmd_up", "gauge", NULL,
	"Whether slurmd answered this scrape's energy query."
};
static const exp_family_t F_SCRAPE = {
	"slurm_energy_exporter_scrape_duration_seconds", "gauge", "seconds",
	"Time this scrape took to ask slurmd and look up job labels."
};

static bool _om(const exp_scrape_t *sc)
{
	return sc->format == EXP_FORMAT_OPENMETRICS;
}

static bool _counter(const exp_family_t *f)
{
	return !strcmp(f->type, "counter");
}

/* The family's header: OpenMetrics names a counter's family without
 * _total and has UNIT; the 0.0.4 format names the sample. */
static void _family(const exp_scrape_t *sc, exp_text_t *t,
		    const exp_family_t *f)
{
	const char *sfx = !_om(sc) && _counter(f) ? "_total" : "";

	exp_text_printf(t, "# TYPE %s%s %s\n", f->name, sfx, f->type);
	if (_om(sc) && f->unit)
		exp_text_printf(t, "# UNIT %s %s\n", f->name, f->unit);
	exp_text_printf(t, "# HELP %s%s %s\n", f->name, sfx, f->help);
}

/* The start of a sample: its name and the node label. */
static void _sample(const exp_scrape_t *sc, exp_text_t *t,
		    const exp_family_t *f, const char *suffix)
{
	exp_text_printf(t, "%s%s{node=\"", f->name,
			suffix ? suffix : (_counter(f) ? "_total" : ""));
	_put_escaped(t, sc->node);
	exp_text_printf(t, "\"");
}

/* milli-units as units, exactly: 1234567 -> 1234.567 */
static void _milli(exp_text_t *t, uint64_t m)
{
	exp_text_printf(t, "} %" PRIu64 ".%03u\n", m / 1000,
			(unsigned) (m % 1000));
}

static void _integer(exp_text_t *t, uint64_t v)
{
	exp_text_printf(t, "} %" PRIu64 "\n", v);
}

/* ------------------------------------------------------------ node */

static void _render_node(const exp_scrape_t *sc, exp_text_t *t)
{
	const energy_snapshot_t *s = sc->snap;
	static const char *const names[] = { "ok", "stale", "failed" };
	exp_meter_state_t st;

	if (s->meter_state == ENERGY_SNAPSHOT_METER_NONE)
		return;	/* no meter: no reading of it */
	if (s->last_sample_ns) {
		_family(sc, t, &F_POWER);
		_sample(sc, t, &F_POWER, NULL);
		_milli(t, s->power_mw);
	}
	if (s->flags & ENERGY_SNAPSHOT_TOTAL) {
		_family(sc, t, &F_ENERGY);
		_sample(sc, t, &F_ENERGY, NULL);
		_milli(t, s->total_mj);
		if (_om(sc) && s->total_start_wall_ns) {
			_sample(sc, t, &F_ENERGY, "_created");
			_milli(t, s->total_start_wall_ns / 1000000);
		}
	}
	if (s->flags & ENERGY_SNAPSHOT_MAX) {
		_family(sc, t, &F_MAX);
		_sample(sc, t, &F_MAX, NULL);
		_milli(t, s->max_power_mw);
	}
	st = exp_meter_state(s);
	_family(sc, t, &F_STATE);
	for (unsigned i = 0; i < 3; i++) {
		_sample(sc, t, &F_STATE, NULL);
		exp_text_printf(t, ",state=\"%s\"", names[i]);
		_integer(t, st == (exp_meter_state_t) i);
	}
	if (s->last_sample_ns) {
		_family(sc, t, &F_AGE);
		_sample(sc, t, &F_AGE, NULL);
		_milli(t, s->now_ns > s->last_sample_ns ?
			  (s->now_ns - s->last_sample_ns) / 1000000 : 0);
	}
}

static void _render_gpus(const exp_scrape_t *sc, exp_text_t *t)
{
	const energy_snapshot_t *s = sc->snap;
	uint32_t n = s->n_gpus < ENERGY_SNAPSHOT_GPUS_MAX ?
		     s->n_gpus : ENERGY_SNAPSHOT_GPUS_MAX;
	bool any = false;

	for (uint32_t i = 0; i < n; i++)
		any |= s->gpus[i].flags & ENERGY_SNAPSHOT_GPU_VALID;
	if (!any)
		return;
	_family(sc, t, &F_GPU_POWER);
	for (uint32_t i = 0; i < n; i++) {
		if (!(s->gpus[i].flags & ENERGY_SNAPSHOT_GPU_VALID))
			continue;
		_sample(sc, t, &F_GPU_POWER, NULL);
		exp_text_printf(t, ",gpu=\"%" PRIu32 "\"", s->gpus[i].minor);
		_milli(t, s->gpus[i].power_mw);
	}
	_family(sc, t, &F_GPU_ENERGY);
	for (uint32_t i = 0; i < n; i++) {
		if (!(s->gpus[i].flags & ENERGY_SNAPSHOT_GPU_VALID))
			continue;
		_sample(sc, t, &F_GPU_ENERGY, NULL);
		exp_text_printf(t, ",gpu=\"%" PRIu32 "\"", s->gpus[i].minor);
		_milli(t, s->gpus[i].energy_mj);
	}
}

/* One step's sample; false when its job's labels are not known. */
static bool _render_step(const exp_scrape_t *sc, exp_text_t *t,
			 const energy_snapshot_step_t *st)
{
	exp_job_labels_t lab = { 0 };
	char num[16];

	if (!sc->labels || !sc->labels(sc->labels_arg, st->job_id, &lab))
		return false;
	_sample(sc, t, &F_JOB, NULL);
	exp_text_printf(t, ",jobid=\"%" PRIu32 "\",step=\"%s\",user=\"",
			st->job_id, exp_step_name(st->step_id, num,
						  sizeof(num)));
	_put_escaped(t, lab.user);
	exp_text_printf(t, "\",account=\"");
	_put_escaped(t, lab.account);
	exp_text_printf(t, "\",partition=\"");
	_put_escaped(t, lab.partition);
	exp_text_printf(t, "\"");
	_milli(t, st->energy_mj);
	return true;
}

static size_t _render_jobs(const exp_scrape_t *sc, exp_text_t *t)
{
	const energy_snapshot_t *s = sc->snap;
	uint32_t n = s->n_steps < ENERGY_SNAPSHOT_STEPS_MAX ?
		     s->n_steps : ENERGY_SNAPSHOT_STEPS_MAX;
	size_t left_out = 0;

	/* share mode's split, or node mode's steps (the node counter's
	 * increase since each step's start) */
	if (!(s->flags & (ENERGY_SNAPSHOT_SHARE | ENERGY_SNAPSHOT_NODE_STEPS)))
		return 0;
	_family(sc, t, &F_JOB);
	for (uint32_t i = 0; i < n; i++)
		left_out += !_render_step(sc, t, &s->steps[i]);
	return left_out;
}

size_t exp_render(const exp_scrape_t *sc, exp_text_t *t)
{
	size_t left_out = 0;

	if (sc->snap) {
		_render_node(sc, t);
		_render_gpus(sc, t);
		left_out = _render_jobs(sc, t);
	}
	_family(sc, t, &F_UP);
	_sample(sc, t, &F_UP, NULL);
	_integer(t, sc->snap != NULL);
	_family(sc, t, &F_SCRAPE);
	_sample(sc, t, &F_SCRAPE, NULL);
	exp_text_printf(t, "} %.6f\n", sc->scrape_seconds);
	if (_om(sc))
		exp_text_printf(t, "# EOF\n");
	return left_out;
}
