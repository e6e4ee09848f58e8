/*
 * attrib_gpus.c - the GPUs' part of a shared node's interval (attrib.h, 1.),
 * taken first, before the idle and CPU split of attrib.c.
 *
 * Model: each GPU's energy in the interval goes to who held it, in
 * proportion to the time each held it: a srun step whose own mask has the
 * GPU (rule 1), then for the time left the job's own holder, its batch or
 * interactive step, else the job alone (rule 2).  The holders come from
 * the caller (attrib_interval) or from the masks the steps told
 * (attrib_interval_gpus).
 *
 * Invariants:
 *  - Conserved: every mJ of a GPU read is given to a job (charged), or is
 *    unattributed, or goes back to this interval's rest (rest_mj, split by
 *    CPU time in attrib.c), or is held: so charged + unattributed ==
 *    measured to the mJ, plus gpu_held_mj while a span is held.  A
 *    holder's part is rounded, never past what is left of the GPU's mJ; the
 *    roundings' remainder goes to the first holder when nobody's time is
 *    left unowned, else it is unowned.
 *  - Clipped: GPUs together above the node's meter in the interval are cut
 *    in proportion to fit (attrib_apportion), the cut counted in
 *    gpu_clipped_mj and gpu_clipped_intervals; a cut interval teaches
 *    nothing of the idle power.  The node's meter is never exceeded.
 *  - The remainder, the time nobody held a GPU: unattributed
 *    (gpu_unowned_mj), or, while a present step could not tell its GPUs,
 *    to the interval's rest (gpu_to_rest_mj).  While a step begun less
 *    than ATTRIB_GPU_WAIT_NS ago has not told them yet, it is held per GPU
 *    over a span [t0, t1] and released, at most that long after, to the
 *    holders the masks then give over the span, by the steps' registered
 *    begin and end.  A GPU that could not be read stays in the node's
 *    energy (split by CPU time), counted in gpu_out_intervals.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <string.h>

#include "attrib_priv.h"
#include "se_time.h"

/* how long a new step's GPUs are waited for (attrib.h, 1.) */
#define ATTRIB_GPU_WAIT_NS	(5 * SE_NS_PER_SEC)
/* Slurm's SLURM_MAX_NORMAL_STEP_ID: above it, the named steps (cg_cpu.h) */
#define AT_MAX_SRUN_STEP	0xfffffff0u

/*
 * The GPUs' charged energies g[0..n-1], in place, cut in proportion when
 * together above the node's e (the meter sees the GPUs too: more than it
 * is a factor set too high or a lag).  Returns the energy cut.
 */
static uint64_t _cut_gpus(attrib_t *a, uint64_t e, uint64_t *g, size_t n)
{
	unsigned __int128 sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += g[i];
	if (sum <= e)
		return 0;
	attrib_apportion(e, g, n, a->out);
	memcpy(g, a->out, n * sizeof(*g));
	return sum - e > UINT64_MAX ? UINT64_MAX : (uint64_t) (sum - e);
}

/* Charge a GPU's energy to its job and, unless it is the extern step (the
 * job's own total), to its step. */
static void _give_gpu(attrib_t *a, at_job_t *j, at_step_t *s, uint64_t mj)
{
	j->share_mj += mj;
	j->gpu_mj += mj;
	a->tot.charged_mj += mj;
	a->tot.gpu_charged_mj += mj;
	if (s && s->step_id != CG_STEP_EXTERN) {
		s->share_mj += mj;
		s->gpu_mj += mj;
	}
}

/* GPUs cut and counted: the totals' and the interval's GPU energy. */
static void _count_gpus(attrib_t *a, at_gpu_part_t *gp, uint64_t clipped,
			size_t n)
{
	gp->cut = clipped != 0;
	a->tot.gpu_clipped_mj += clipped;
	a->tot.gpu_clipped_intervals += gp->cut;
	for (size_t i = 0; i < n; i++)
		gp->read_mj += a->w[i];
}

/* The callers' owners (attrib_interval): the owner's job, its step if
 * known; an owner whose job is not known is nobody. */
void attrib_gpus_split_owned(attrib_t *a, const attrib_gpu_t *g, size_t n,
			     at_gpu_part_t *gp)
{
	for (size_t i = 0; i < n; i++) {
		a->w[i] = g[i].energy_mj;
		a->tot.gpu_raw_mj += g[i].energy_mj;
	}
	_count_gpus(a, gp, _cut_gpus(a, a->e, a->w, n), n);
	for (size_t i = 0; i < n; i++) {
		at_job_t *j = g[i].owned ?
			      attrib_find_job(a, g[i].job_id, false) : NULL;
		at_step_t *s = j ?
			       attrib_find_step(j, g[i].step_id, false) : NULL;

		gp->taken_mj += a->w[i];
		if (j) {
			_give_gpu(a, j, s, a->w[i]);
			continue;
		}
		a->tot.unattributed_mj += a->w[i];
		a->tot.gpu_unowned_mj += a->w[i];
	}
}

static bool _is_srun_step(uint32_t step_id)
{
	return step_id <= AT_MAX_SRUN_STEP;
}

/*
 * Before the owners: each job's GPUs (its steps' job masks), and whether a
 * present step could not tell its GPUs.
 */
static void _gpu_masks(attrib_t *a, bool *unknown)
{
	uint64_t t1 = a->t0 + a->dt;

	*unknown = false;
	for (size_t i = 0; i < a->n; i++) {
		at_job_t *j = &a->jobs[i];

		j->job_gpus = 0;
		for (size_t k = 0; k < j->n; k++) {
			const at_step_t *s = &j->steps[k];

			j->job_gpus |= s->job_gpus;
			if (!attrib_step_present(s, a->t0, t1))
				continue;
			*unknown |= s->gpus_unknown;
		}
	}
}

/* A step's time in [t0, t1], bounded as _job_present_ns (attrib.c) bounds
 * a job's: from t0 when its cgroup was there then, to t1 when it is there
 * now. */
static uint64_t _step_present_ns(const at_step_t *s, uint64_t t0,
				 uint64_t t1)
{
	uint64_t begin, end;

	if (!attrib_step_present(s, t0, t1))
		return 0;
	begin = (s->was_seen || !s->begin_ns || s->begin_ns < t0) ?
		t0 : s->begin_ns;
	end = (s->seen || !s->end_ns || s->end_ns > t1) ? t1 : s->end_ns;
	return end > begin ? end - begin : 0;
}

/* A step's time in a held span [t0, t1] (a->past), from *begin: by its
 * registered begin and end alone, the scans' flags being the present
 * interval's. */
static uint64_t _step_past(const at_step_t *s, uint64_t t0, uint64_t t1,
			   uint64_t *begin)
{
	uint64_t end;

	if (!s->begin_ns || s->begin_ns >= t1 ||
	    (s->end_ns && s->end_ns <= t0))
		return 0;
	*begin = s->begin_ns > t0 ? s->begin_ns : t0;
	end = (s->end_ns && s->end_ns < t1) ? s->end_ns : t1;
	return end - *begin;
}

static uint64_t _step_past_ns(const at_step_t *s, uint64_t t0, uint64_t t1)
{
	uint64_t begin;

	return _step_past(s, t0, t1, &begin);
}

/* A job's time in a held span: from its first step's begin in it to its
 * last step's end. */
static uint64_t _job_past_ns(const at_job_t *j, uint64_t t0, uint64_t t1)
{
	uint64_t begin = 0, end = 0;

	for (size_t k = 0; k < j->n; k++) {
		uint64_t b, ns = _step_past(&j->steps[k], t0, t1, &b);

		if (!ns)
			continue;
		if (!end || b < begin)
			begin = b;
		if (b + ns > end)
			end = b + ns;
	}
	return end - begin;
}

/* A step's time in the interval, or in the held span being given. */
static uint64_t _step_held_ns(const attrib_t *a, const at_step_t *s)
{
	uint64_t t1 = a->t0 + a->dt;

	return a->past ? _step_past_ns(s, a->t0, t1) :
			 _step_present_ns(s, a->t0, t1);
}

/* Rule 1: a srun step whose own GPUs hold bit: its time in the interval. */
static uint64_t _srun_holds_ns(const attrib_t *a, const at_step_t *s,
			       uint64_t bit)
{
	if (!(s->step_gpus & bit) || !_is_srun_step(s->step_id))
		return 0;
	return _step_held_ns(a, s);
}

/* Rule 2: who in a job holds its job-wide GPUs: its batch step, else its
 * interactive step, if present; else nobody but the job (NULL). */
static at_step_t *_job_holder(const attrib_t *a, at_job_t *j)
{
	at_step_t *interactive = NULL;

	for (size_t k = 0; k < j->n; k++) {
		at_step_t *s = &j->steps[k];

		if (a->past ? !_step_held_ns(a, s) :
			      !attrib_step_present(s, a->t0, a->t0 + a->dt))
			continue;
		if (s->step_id == CG_STEP_BATCH)
			return s;
		if (s->step_id == CG_STEP_INTERACTIVE)
			interactive = s;
	}
	return interactive;
}

/* The givings of one GPU's interval energy: mj over d ns of holding; the
 * roundings' remainder goes to the first holder when nobody's time is left
 * unowned (the lower index first, as attrib_apportion). */
typedef struct {
	uint64_t mj, d, given;
	uint64_t job_num, job_den;	/* the jobs' share of their time */
	at_job_t *first_job;
	at_step_t *first_step;
} at_gpu_give_t;

static void _give_held(attrib_t *a, at_gpu_give_t *gv, at_job_t *j,
		       at_step_t *s, uint64_t ns)
{
	/* rounded, never past mj: a holder present to the nanosecond but
	 * one is not a millijoule short */
	uint64_t part = (uint64_t) (((unsigned __int128) gv->mj * ns +
				     gv->d / 2) / gv->d);

	if (part > gv->mj - gv->given)
		part = gv->mj - gv->given;
	if (!gv->first_job) {
		gv->first_job = j;
		gv->first_step = s;
	}
	_give_gpu(a, j, s, part);
	gv->given += part;
}

/*
 * Who held GPU bit in job j over the interval, and for how long: its srun
 * steps holding it (rule 1), each for its time; the job's own holder
 * (rule 2) for the job's time those steps do not cover.  With gv, each is
 * given its part, the job's own holder over the time the srun steps of all
 * jobs left (gv->job_num / job_den of it).
 */
static void _job_gpu_time(attrib_t *a, at_job_t *j, uint64_t bit,
			  uint64_t *srun_ns, uint64_t *job_ns,
			  at_gpu_give_t *gv)
{
	uint64_t mine = 0, rest = 0;
	uint64_t present = a->past ? j->past_ns : j->present_ns;

	for (size_t m = 0; m < j->n; m++) {
		uint64_t ns = _srun_holds_ns(a, &j->steps[m], bit);

		mine += ns;
		if (gv && ns)
			_give_held(a, gv, j, &j->steps[m], ns);
	}
	if ((j->job_gpus & bit) && present > mine)
		rest = present - mine;
	if (gv && rest)
		_give_held(a, gv, j, _job_holder(a, j),
			   (uint64_t) ((unsigned __int128) rest *
				       gv->job_num / gv->job_den));
	*srun_ns += mine;
	*job_ns += rest;
}

/*
 * GPU bit's energy mj over the interval to who held it, in proportion to
 * the time each held it (3.4): srun steps first, for their time (holders
 * that overlap, --overlap steps or shared GPUs, split by their times);
 * then the jobs' own holders over the time left.  A holder present for a
 * part of the interval (a step that began or ended in it) gets that part,
 * not the interval's whole GPU energy.  Returns the energy of the time
 * nobody held it: unowned.
 */
static uint64_t _give_to_holders(attrib_t *a, uint64_t bit, uint64_t mj)
{
	at_gpu_give_t gv = { .mj = mj, .job_num = 1, .job_den = 1 };
	uint64_t srun = 0, job = 0, left;

	for (size_t i = 0; i < a->n; i++)
		_job_gpu_time(a, &a->jobs[i], bit, &srun, &job, NULL);
	if (!(srun + job) || !mj)
		return mj;
	gv.d = srun > a->dt ? srun : a->dt;
	left = gv.d - srun;
	if (job > left) {	/* the jobs share the time left */
		gv.job_num = left;
		gv.job_den = job;
	}
	for (size_t i = 0; i < a->n; i++) {
		uint64_t again_srun = 0, again_job = 0;

		_job_gpu_time(a, &a->jobs[i], bit, &again_srun, &again_job,
			      &gv);
	}
	if (srun + job >= gv.d && gv.given < mj && gv.first_job) {
		_give_gpu(a, gv.first_job, gv.first_step, mj - gv.given);
		gv.given = mj;
	}
	return mj - gv.given;
}

/*
 * A new step whose GPUs are not told yet (attrib.h, 1.): one that said it
 * could not tell them, present by t1, not ended, begun less than
 * ATTRIB_GPU_WAIT_NS before t1.
 */
static bool _gpus_pending(const attrib_t *a)
{
	uint64_t t1 = a->t0 + a->dt;

	for (size_t i = 0; i < a->n; i++)
		for (size_t k = 0; k < a->jobs[i].n; k++) {
			const at_step_t *s = &a->jobs[i].steps[k];

			if (s->gpus_unknown && s->begin_ns &&
			    s->begin_ns <= t1 && !s->end_ns &&
			    t1 - s->begin_ns < ATTRIB_GPU_WAIT_NS)
				return true;
		}
	return false;
}

/* Hold GPU i's unowned mj of this interval for a new step's GPUs. */
static void _hold_gpu(attrib_t *a, size_t i, uint64_t mj)
{
	if (!a->held[i].mj)
		a->held[i].t0 = a->t0;
	a->held[i].t1 = a->t0 + a->dt;
	a->held[i].mj += mj;
	a->tot.gpu_held_mj += mj;
}

/* GPU i's held energy to who held it over the held span, as the masks
 * say now; returns what nobody held. */
static uint64_t _give_held_span(attrib_t *a, size_t i)
{
	uint64_t t0 = a->t0, dt = a->dt, left;

	for (size_t k = 0; k < a->n; k++)
		a->jobs[k].past_ns = _job_past_ns(&a->jobs[k], a->held[i].t0,
						  a->held[i].t1);
	a->t0 = a->held[i].t0;
	a->dt = a->held[i].t1 - a->held[i].t0;
	a->past = true;
	left = _give_to_holders(a, 1ULL << i, a->held[i].mj);
	a->past = false;
	a->t0 = t0;
	a->dt = dt;
	return left;
}

/*
 * GPU energy nobody held: unattributed, or, while a present step could not
 * tell its GPUs, maybe that step's: to this interval's rest (by CPU time).
 */
static void _give_nobody(attrib_t *a, at_gpu_part_t *gp, uint64_t mj,
			 bool unknown)
{
	if (unknown) {
		gp->rest_mj += mj;
		a->tot.gpu_to_rest_mj += mj;
		return;
	}
	a->tot.unattributed_mj += mj;
	a->tot.gpu_unowned_mj += mj;
}

/*
 * The held energy given, once no new step's GPUs are pending or the span
 * reached ATTRIB_GPU_WAIT_NS: to its holders, what nobody held as
 * _give_nobody says (as it would have gone without the hold).
 */
static void _release_held(attrib_t *a, bool pending, bool unknown,
			  at_gpu_part_t *gp)
{
	uint64_t t1 = a->t0 + a->dt;

	for (size_t i = 0; a->tot.gpu_held_mj && i < ATTRIB_MAX_GPUS; i++) {
		uint64_t left;

		if (!a->held[i].mj ||
		    (pending && t1 - a->held[i].t0 < ATTRIB_GPU_WAIT_NS))
			continue;
		left = _give_held_span(a, i);
		_give_nobody(a, gp, left, unknown);
		a->tot.gpu_held_mj -= a->held[i].mj;
		a->held[i].mj = 0;
	}
}

/* The GPUs read (attrib_interval_gpus) to the holders the steps' masks
 * give; an unread GPU stays in the node's energy. */
void attrib_gpus_split_read(attrib_t *a, const attrib_gpu_energy_t *g,
			    size_t n, at_gpu_part_t *gp)
{
	bool unknown, out = false, pending = _gpus_pending(a);

	_gpu_masks(a, &unknown);
	_release_held(a, pending, unknown, gp);
	for (size_t i = 0; i < n; i++) {
		a->w[i] = g[i].valid ? g[i].energy_mj : 0;
		if (g[i].valid)
			a->tot.gpu_raw_mj += g[i].raw_mj;
		out |= !g[i].valid;
	}
	a->tot.gpu_out_intervals += out;
	_count_gpus(a, gp, _cut_gpus(a, a->e, a->w, n), n);
	for (size_t i = 0; i < n; i++) {
		uint64_t unowned;

		if (!g[i].valid)
			continue;	/* in the node's energy, by CPU time */
		unowned = _give_to_holders(a, 1ULL << i, a->w[i]);
		gp->taken_mj += a->w[i];
		if (unowned && unknown && pending)	/* the new step's? */
			_hold_gpu(a, i, unowned);
		else if (unowned)
			_give_nobody(a, gp, unowned, unknown);
	}
}
