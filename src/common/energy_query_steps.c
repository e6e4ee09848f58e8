/*
 * energy_query_steps.c - node mode's running steps for the snapshot
 * (energy_query_steps.h has the model).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "energy_query_steps.h"

typedef struct {
	energy_query_step_t step;	/* ids and GPUs, as last asked */
	uint64_t t0_ns;			/* the step's start */
	uint64_t e0_mj;			/* E(t0), once final */
	bool have_e0;
	bool lost;			/* E(t0) older than the history */
	uint64_t end_ns;		/* its end, 0: running */
	uint64_t final_ns;		/* first listed as final, 0: not yet */
	uint64_t heard_ns;		/* its newest question */
	uint64_t served_mj;		/* the highest total listed: a t0 that
					 * moved later (the step's first poll)
					 * never lowers it (a counter reset) */
} eq_step_t;

struct energy_query_steps {
	eq_step_t *steps;
	unsigned n;
};

energy_query_steps_t *energy_query_steps_new(void)
{
	energy_query_steps_t *t = calloc(1, sizeof(*t));

	if (t && !(t->steps = calloc(ENERGY_SNAPSHOT_STEPS_MAX,
				     sizeof(*t->steps)))) {
		free(t);
		return NULL;
	}
	return t;
}

void energy_query_steps_free(energy_query_steps_t *t)
{
	if (!t)
		return;
	free(t->steps);
	free(t);
}

unsigned energy_query_steps_count(const energy_query_steps_t *t)
{
	return t ? t->n : 0;
}

static void _forget(energy_query_steps_t *t, unsigned i)
{
	t->steps[i] = t->steps[--t->n];
}

/* The entry of job_id.step_id; a new one (evicting the step heard longest
 * ago when full) when create. */
static eq_step_t *_find(energy_query_steps_t *t, uint32_t job_id,
			uint32_t step_id, bool create)
{
	unsigned oldest = 0;

	for (unsigned i = 0; i < t->n; i++) {
		if (t->steps[i].step.job_id == job_id &&
		    t->steps[i].step.step_id == step_id)
			return &t->steps[i];
		if (t->steps[i].heard_ns < t->steps[oldest].heard_ns)
			oldest = i;
	}
	if (!create)
		return NULL;
	if (t->n == ENERGY_SNAPSHOT_STEPS_MAX)
		_forget(t, oldest);
	memset(&t->steps[t->n], 0, sizeof(t->steps[0]));
	return &t->steps[t->n++];
}

/* E(t0) cached once final: a sample at or after t0 exists. */
static void _try_e0(eq_step_t *e, energy_query_steps_at_fn at, void *arg,
		    uint64_t last_sample_ns)
{
	int rc;

	if (e->have_e0 || e->lost || !last_sample_ns ||
	    last_sample_ns < e->t0_ns)
		return;
	/* a sample after t0 exists: E(t0) is known now or never (older
	 * than the history, or before the sampler's first sample: a step
	 * begun before this slurmd) */
	rc = at(arg, e->t0_ns, &e->e0_mj);
	if (!rc)
		e->have_e0 = true;
	else
		e->lost = true;
}

void energy_query_steps_heard(energy_query_steps_t *t,
			      const energy_query_step_t *step, uint64_t t0_ns,
			      uint64_t t1_ns, uint64_t now_ns,
			      energy_query_steps_at_fn at, void *arg,
			      uint64_t last_sample_ns)
{
	eq_step_t *e;

	if (!t)
		return;
	e = _find(t, step->job_id, step->step_id, step->begin);
	if (!e)
		return;		/* not a step's own question: not listed */
	if (step->begin && (e->t0_ns != t0_ns || !e->heard_ns)) {
		/* its start, or a new one (the step bridged a restart) */
		e->t0_ns = t0_ns;
		e->have_e0 = e->lost = false;
	}
	e->step = *step;
	e->heard_ns = now_ns;
	if (step->end && !e->end_ns)
		e->end_ns = t1_ns > e->t0_ns ? t1_ns : e->t0_ns;
	_try_e0(e, at, arg, last_sample_ns);
}

/* The step's GPU part over [t0, t1]: 0 and *mj, or -EAGAIN not known. */
static int _gpu_part(const eq_step_t *e, uint64_t t1_ns,
		     energy_query_gpu_fn gpus, void *gpus_arg, uint64_t *mj)
{
	energy_query_gpu_t g = { 0 };

	*mj = 0;
	if (!gpus || !e->step.gpus_known)
		return 0;
	if (gpus(gpus_arg, &e->step, e->t0_ns, t1_ns, &g))
		return -EAGAIN;
	if (!g.metered)
		return 0;
	if (!g.part || g.e1_mj < g.e0_mj)
		return -EAGAIN;
	*mj = g.e1_mj - g.e0_mj;
	return 0;
}

/* The step's total now: 0 and *out filled, or -errno left out. */
static int _step_total(eq_step_t *e, uint64_t now_ns,
		       uint64_t last_sample_ns, energy_query_steps_at_fn at,
		       void *arg, energy_query_gpu_fn gpus, void *gpus_arg,
		       energy_snapshot_step_t *out)
{
	uint64_t t1 = last_sample_ns, e1 = 0, gpu_mj;
	bool final = e->end_ns && last_sample_ns >= e->end_ns;

	_try_e0(e, at, arg, last_sample_ns);
	memset(out, 0, sizeof(*out));
	out->job_id = e->step.job_id;
	out->step_id = e->step.step_id;
	if (e->lost)
		return -ERANGE;
	if (final)
		t1 = e->end_ns;
	if (e->have_e0) {
		if (at(arg, t1, &e1) || e1 < e->e0_mj)
			return -EAGAIN;
		out->energy_mj = e1 - e->e0_mj;
	} else {
		t1 = e->t0_ns;	/* no sample since its start: 0 so far */
	}
	if (_gpu_part(e, t1, gpus, gpus_arg, &gpu_mj))
		return -EAGAIN;
	out->energy_mj += gpu_mj;
	if (out->energy_mj < e->served_mj)
		out->energy_mj = e->served_mj;
	e->served_mj = out->energy_mj;
	if (e->end_ns)
		out->flags |= ENERGY_SNAPSHOT_STEP_ENDED;
	if (final) {
		out->flags |= ENERGY_SNAPSHOT_STEP_FINAL;
		if (!e->final_ns)
			e->final_ns = now_ns;
	}
	return 0;
}

/* Whether entry e is done with: final and lingered, ended without a
 * total (never listed), or silent too long. */
static bool _expired(const eq_step_t *e, uint64_t now_ns, uint64_t linger_ns)
{
	if (e->final_ns && now_ns - e->final_ns > linger_ns)
		return true;
	if (e->lost && e->end_ns)
		return true;
	return now_ns > e->heard_ns &&
	       now_ns - e->heard_ns > ENERGY_QUERY_STEPS_IDLE_NS;
}

void energy_query_steps_snapshot(energy_query_steps_t *t, uint64_t now_ns,
				 uint64_t last_sample_ns, uint64_t linger_ns,
				 energy_query_steps_at_fn at, void *arg,
				 energy_query_gpu_fn gpus, void *gpus_arg,
				 energy_snapshot_t *out)
{
	uint32_t n = 0;

	out->flags |= ENERGY_SNAPSHOT_NODE_STEPS;
	if (!t)
		return;
	for (unsigned i = 0; i < t->n;) {
		eq_step_t *e = &t->steps[i];

		if (_expired(e, now_ns, linger_ns)) {
			_forget(t, i);
			continue;
		}
		if (n < ENERGY_SNAPSHOT_STEPS_MAX &&
		    !_step_total(e, now_ns, last_sample_ns, at, arg,
				 gpus, gpus_arg, &out->steps[n]))
			n++;
		i++;
	}
	out->n_steps = n;
}
