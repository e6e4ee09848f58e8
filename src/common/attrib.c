/*
 * attrib.c - a shared node's measured energy split among its jobs and steps.
 *
 * See attrib.h for the model.  Jobs and steps live in small arrays searched
 * linearly: a node holds tens of them, and a split is a few passes over
 * them (bench/attrib measures it at 128 steps).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "se_time.h"
#include "se_array.h"

#define ATTRIB_RETAIN_NS	(600 * SE_NS_PER_SEC)
/* how long a new step's GPUs are waited for (attrib.h, 1.) */
#define ATTRIB_GPU_WAIT_NS	(5 * SE_NS_PER_SEC)
#define IDLE_RING		64
#define IDLE_MIN_SAMPLES	3
/* Slurm's SLURM_MAX_NORMAL_STEP_ID: above it, the named steps (cg_cpu.h) */
#define AT_MAX_SRUN_STEP	0xfffffff0u

typedef struct {
	uint32_t step_id;
	bool seen;		/* in the last scan */
	bool was_seen;		/* in the scan before (for this interval) */
	bool ever_seen;
	bool closed;		/* registered, never seen: its one interval
				 * after its end was split */
	uint64_t last_cpu_ns;
	uint64_t delta_ns;	/* CPU time in this interval */
	uint64_t begin_ns, end_ns; /* registered by its slurmstepd, 0: not */
	uint64_t share_mj;
	uint64_t gpu_mj;	/* its GPUs' part of share_mj */
	uint64_t step_gpus;	/* GPU masks told by attrib_step_gpus */
	uint64_t job_gpus;
	bool gpus_unknown;	/* ... which said it could not tell */
} at_step_t;

typedef struct {
	uint32_t job_id;
	bool seen, was_seen;
	uint64_t last_cpu_ns;
	uint64_t delta_ns;
	uint32_t ncpus_cg;	/* from its cpuset */
	uint32_t ncpus_reg;	/* from its steps' registration */
	uint64_t share_mj;
	uint64_t gpu_mj;	/* its GPUs' part of share_mj */
	uint64_t last_present_ns;
	at_step_t *steps;
	size_t n, cap;
	/* this interval */
	uint64_t present_ns;	/* time present in the interval */
	uint64_t past_ns;	/* ... in a held span, while it is given */
	uint64_t part_mj;	/* its idle + CPU part, to its steps */
	uint64_t job_gpus;	/* its steps' job masks */
} at_job_t;

struct attrib {
	attrib_params_t p;
	bool started;
	uint64_t t_ns, energy_mj;	/* the previous sample */
	bool have_root;
	uint64_t root_cpu_ns;
	uint64_t measured_mj, charged_mj, unattributed_mj;
	unsigned long intervals;
	uint64_t gpu_raw_mj, gpu_charged_mj, gpu_unowned_mj, gpu_to_rest_mj;
	uint64_t gpu_clipped_mj;
	unsigned long gpu_clipped_intervals, gpu_out_intervals;
	/* GPU energy nobody was known to hold while a new step's GPUs were
	 * not told yet (attrib.h, 1.): per GPU, over [t0, t1] */
	struct { uint64_t mj, t0, t1; } held[ATTRIB_MAX_GPUS];
	uint64_t gpu_held_mj;
	bool past;	/* the holders of a held span are being found */
	at_job_t *jobs;
	size_t n, cap;
	uint64_t idle_ring[IDLE_RING];	/* mW of job-free intervals */
	size_t idle_n, idle_pos;
	uint64_t *w;			/* scratch weights and results */
	uint64_t *out;
	size_t w_cap;
	/* this interval */
	uint64_t t0, dt, e;
	uint32_t node_cpus;
	bool any_job;
};

/* This interval's GPU part. */
typedef struct {
	uint64_t taken_mj;	/* out of the node's: to holders or nobody */
	uint64_t rest_mj;	/* of the taken, back to this interval's rest */
	uint64_t read_mj;	/* the GPUs read, after a cut (idle learning) */
	bool cut;
} at_gpu_part_t;

/* ------------------------------------------------------------ apportion */

typedef struct {
	uint64_t rem;		/* remainder numerator */
	size_t i;
} at_rem_t;

static int _rem_cmp(const void *x, const void *y)
{
	const at_rem_t *a = x, *b = y;

	if (a->rem != b->rem)
		return a->rem > b->rem ? -1 : 1;
	return a->i < b->i ? -1 : (a->i > b->i);
}

bool attrib_apportion(uint64_t total, const uint64_t *w, size_t n,
		      uint64_t *out)
{
	unsigned __int128 sum = 0;
	uint64_t given = 0, left;
	at_rem_t *r;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += w[i];
		out[i] = 0;
	}
	if (!sum)
		return false;
	r = malloc(n * sizeof(*r));
	for (i = 0; i < n; i++) {
		unsigned __int128 x = (unsigned __int128) total * w[i];

		out[i] = (uint64_t) (x / sum);
		given += out[i];
		/* remainder / sum < 1: scaled to 64 bits for ordering */
		if (r)
			r[i] = (at_rem_t) { .rem = (uint64_t) (
				((x % sum) << 32) / sum), .i = i };
	}
	left = total - given;		/* < n */
	if (r)
		qsort(r, n, sizeof(*r), _rem_cmp);
	for (i = 0; i < left; i++)
		out[r ? r[i].i : i]++;
	free(r);
	return true;
}

/* ------------------------------------------------------------ tables */

static at_job_t *_job(attrib_t *a, uint32_t job_id, bool create)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->jobs[i].job_id == job_id)
			return &a->jobs[i];
	if (!create)
		return NULL;
	if (se_array_room(&a->jobs, a->n, &a->cap, sizeof(a->jobs[0]), 16))
		return NULL;
	memset(&a->jobs[a->n], 0, sizeof(a->jobs[0]));
	a->jobs[a->n].job_id = job_id;
	return &a->jobs[a->n++];
}

static at_step_t *_step(at_job_t *j, uint32_t step_id, bool create)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->steps[i].step_id == step_id)
			return &j->steps[i];
	if (!create)
		return NULL;
	if (se_array_room(&j->steps, j->n, &j->cap, sizeof(j->steps[0]), 4))
		return NULL;
	memset(&j->steps[j->n], 0, sizeof(j->steps[0]));
	j->steps[j->n].step_id = step_id;
	return &j->steps[j->n++];
}

/* Scratch arrays of n weights and results. */
static int _scratch(attrib_t *a, size_t n)
{
	if (n <= a->w_cap)
		return 0;
	free(a->w);
	free(a->out);
	a->w = calloc(n, sizeof(*a->w));
	a->out = calloc(n, sizeof(*a->out));
	a->w_cap = (a->w && a->out) ? n : 0;
	return a->w_cap ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ the scan */

/* CPU time since the last scan of a cgroup that was (not) there then. */
static uint64_t _delta(bool was_there, uint64_t last, uint64_t now)
{
	if (!was_there || now < last)	/* new (or made again): from 0 */
		return now;
	return now - last;
}

/* Take the scan: every job's and step's CPU time in the interval. */
static int _take_scan(attrib_t *a, const cg_scan_t *scan)
{
	for (size_t i = 0; i < a->n; i++) {
		at_job_t *j = &a->jobs[i];

		j->was_seen = j->seen;
		j->seen = false;
		j->delta_ns = 0;
		for (size_t k = 0; k < j->n; k++) {
			j->steps[k].was_seen = j->steps[k].seen;
			j->steps[k].seen = false;
			j->steps[k].delta_ns = 0;
		}
	}
	for (size_t i = 0; scan && i < scan->n; i++) {
		const cg_entry_t *e = &scan->e[i];
		at_job_t *j = _job(a, e->job_id, true);
		at_step_t *s;

		if (!j)
			return -ENOMEM;
		if (e->step_id == CG_JOB_LEVEL) {
			j->delta_ns = _delta(j->was_seen, j->last_cpu_ns,
					     e->cpu_ns);
			j->last_cpu_ns = e->cpu_ns;
			j->seen = true;
			if (e->ncpus)
				j->ncpus_cg = e->ncpus;
			continue;
		}
		if (!(s = _step(j, e->step_id, true)))
			return -ENOMEM;
		s->delta_ns = _delta(s->was_seen, s->last_cpu_ns, e->cpu_ns);
		s->last_cpu_ns = e->cpu_ns;
		s->seen = s->ever_seen = true;
	}
	return 0;
}

/* A step that ended since the last sample without a last reading. */
static bool _step_vanished(const at_step_t *s)
{
	return !s->seen && (s->was_seen || (s->begin_ns && !s->ever_seen &&
					    s->end_ns && !s->closed));
}

/* A step that took part in the interval [t0, t1]. */
static bool _step_present(const at_step_t *s, uint64_t t0, uint64_t t1)
{
	if (s->seen || s->was_seen)
		return true;
	if (s->ever_seen || s->closed)
		return false;	/* its cgroup came and went: over */
	return s->begin_ns && s->begin_ns <= t1 &&
	       (!s->end_ns || s->end_ns >= t0);
}

/*
 * When the job ended: its extern step's registered end (the extern step
 * spans the allocation; its cgroup, and the job's, may linger a moment
 * after it), 0 when not known.
 */
static uint64_t _job_end_ns(const at_job_t *j)
{
	for (size_t k = 0; k < j->n; k++)
		if (j->steps[k].step_id == CG_STEP_EXTERN)
			return j->steps[k].end_ns;
	return 0;
}

/*
 * A job's time in [t0, t1]: the whole interval when its cgroup was there
 * at both ends; else bounded by its steps' registered begin and end; never
 * past its extern step's end.  A job whose cgroup appears at t1 before any
 * of its steps registered a begin was made just before t1: its slurmstepd
 * registers the step as it starts, so a scan can only beat it by the
 * moments between the cgroup's mkdir and that message.  It was there from
 * t1, not t0 (counting from t0 charged an exclusive 20 s job a whole
 * interval of idle more, 2 %, on a loaded host).
 */
static uint64_t _job_present_ns(const at_job_t *j, uint64_t t0, uint64_t t1)
{
	uint64_t begin = 0, end = 0, job_end = _job_end_ns(j);
	bool any = j->seen || j->was_seen, open_end = false;

	for (size_t k = 0; k < j->n; k++) {
		const at_step_t *s = &j->steps[k];

		if (!_step_present(s, t0, t1))
			continue;
		any = true;
		if (s->begin_ns && (!begin || s->begin_ns < begin))
			begin = s->begin_ns;
		if (!s->end_ns || s->seen)
			open_end = true;
		else if (s->end_ns > end)
			end = s->end_ns;
	}
	if (!any)
		return 0;
	if (!begin && !j->was_seen)
		begin = t1;	/* new, not registered yet: see above */
	else if (j->was_seen || !begin || begin < t0)
		begin = t0;
	if (j->seen || open_end || !end || end > t1)
		end = t1;
	if (job_end && job_end < end)
		end = job_end;
	return end > begin ? end - begin : 0;
}

/* Unexplained CPU time of a parent goes to its children that vanished. */
static void _vanished_jobs(attrib_t *a, const cg_scan_t *scan)
{
	uint64_t root_delta, seen = 0;
	size_t gone = 0;

	if (!scan || !scan->have_root)
		return;
	root_delta = _delta(a->have_root, a->root_cpu_ns, scan->root_cpu_ns);
	a->have_root = true;
	a->root_cpu_ns = scan->root_cpu_ns;
	for (size_t i = 0; i < a->n; i++) {
		seen += a->jobs[i].delta_ns;
		gone += !a->jobs[i].seen && a->jobs[i].was_seen;
	}
	if (!gone || root_delta <= seen)
		return;
	for (size_t i = 0; i < a->n; i++)
		if (!a->jobs[i].seen && a->jobs[i].was_seen)
			a->jobs[i].delta_ns = (root_delta - seen) / gone;
}

static void _vanished_steps(at_job_t *j)
{
	uint64_t seen = 0;
	size_t gone = 0;

	for (size_t k = 0; k < j->n; k++) {
		seen += j->steps[k].delta_ns;
		gone += _step_vanished(&j->steps[k]);
	}
	if (!gone || j->delta_ns <= seen)
		return;
	for (size_t k = 0; k < j->n; k++)
		if (_step_vanished(&j->steps[k]))
			j->steps[k].delta_ns = (j->delta_ns - seen) / gone;
}

/* ------------------------------------------------------------ idle */

static int _u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *) x, b = *(const uint64_t *) y;

	return a < b ? -1 : a > b;
}

/* Idle power in use: configured, or the median of job-free intervals. */
static uint64_t _idle_mw(const attrib_t *a, bool *learned)
{
	uint64_t v[IDLE_RING];

	*learned = false;
	if (a->p.idle_set)
		return a->p.idle_mw;
	if (a->idle_n < IDLE_MIN_SAMPLES)
		return 0;
	memcpy(v, a->idle_ring, a->idle_n * sizeof(v[0]));
	qsort(v, a->idle_n, sizeof(v[0]), _u64_cmp);
	*learned = true;
	return v[a->idle_n / 2];
}

static void _learn_idle(attrib_t *a, uint64_t e_mj, uint64_t dt_ns)
{
	if (!dt_ns)
		return;
	a->idle_ring[a->idle_pos] = (uint64_t) ((unsigned __int128) e_mj *
						SE_NS_PER_SEC / dt_ns);
	a->idle_pos = (a->idle_pos + 1) % IDLE_RING;
	if (a->idle_n < IDLE_RING)
		a->idle_n++;
}

/* ------------------------------------------------------------ split */

static uint32_t _ncpus(const at_job_t *j)
{
	return j->ncpus_reg ? j->ncpus_reg : j->ncpus_cg;
}

/* The node's CPUs, 0 unknown. */
static uint32_t _node_cpus(const attrib_t *a, const cg_scan_t *scan)
{
	if (a->p.node_cpus)
		return a->p.node_cpus;
	return scan ? scan->root_ncpus : 0;
}

/*
 * Weights of the jobs by allocated CPUs x time present, and of the
 * unallocated CPUs (last entry, when unallocated is wanted and every
 * present job's CPUs are known).  Returns whether any job was present.
 */
static bool _presence_weights(attrib_t *a, uint32_t node_cpus, uint64_t dt,
			      bool unallocated)
{
	bool known = node_cpus > 0, any = false;
	unsigned __int128 used = 0;

	for (size_t i = 0; i < a->n; i++)
		if (a->jobs[i].present_ns) {
			any = true;
			known = known && _ncpus(&a->jobs[i]);
		}
	for (size_t i = 0; i < a->n; i++) {
		const at_job_t *j = &a->jobs[i];

		a->w[i] = known ? _ncpus(j) * j->present_ns : j->present_ns;
		used += a->w[i];
	}
	a->w[a->n] = 0;
	if (unallocated && known &&
	    (unsigned __int128) node_cpus * dt > used)
		a->w[a->n] = (uint64_t) ((unsigned __int128) node_cpus * dt -
					 used);
	if (!any && unallocated)
		a->w[a->n] = 1;
	return any;
}

/* Give part[i] to job i (its steps later); the last entry unattributed. */
static void _give(attrib_t *a, const uint64_t *part)
{
	for (size_t i = 0; i < a->n; i++)
		a->jobs[i].part_mj += part[i];
	a->unattributed_mj += part[a->n];
}

/* ------------------------------------------------------------ GPUs */

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
 * job's own figure), to its step. */
static void _give_gpu(attrib_t *a, at_job_t *j, at_step_t *s, uint64_t mj)
{
	j->share_mj += mj;
	j->gpu_mj += mj;
	a->charged_mj += mj;
	a->gpu_charged_mj += mj;
	if (s && s->step_id != CG_STEP_EXTERN) {
		s->share_mj += mj;
		s->gpu_mj += mj;
	}
}

/* GPUs cut and counted: the totals' and the interval's GPU figures. */
static void _count_gpus(attrib_t *a, at_gpu_part_t *gp, uint64_t clipped,
			size_t n)
{
	gp->cut = clipped != 0;
	a->gpu_clipped_mj += clipped;
	a->gpu_clipped_intervals += gp->cut;
	for (size_t i = 0; i < n; i++)
		gp->read_mj += a->w[i];
}

/* The callers' owners (attrib_interval): the owner's job, its step if
 * known; an owner whose job is not known is nobody. */
static void _split_owned_gpus(attrib_t *a, const attrib_gpu_t *g, size_t n,
			      at_gpu_part_t *gp)
{
	for (size_t i = 0; i < n; i++) {
		a->w[i] = g[i].energy_mj;
		a->gpu_raw_mj += g[i].energy_mj;
	}
	_count_gpus(a, gp, _cut_gpus(a, a->e, a->w, n), n);
	for (size_t i = 0; i < n; i++) {
		at_job_t *j = g[i].owned ? _job(a, g[i].job_id, false) : NULL;
		at_step_t *s = j ? _step(j, g[i].step_id, false) : NULL;

		gp->taken_mj += a->w[i];
		if (j) {
			_give_gpu(a, j, s, a->w[i]);
			continue;
		}
		a->unattributed_mj += a->w[i];
		a->gpu_unowned_mj += a->w[i];
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
			if (!_step_present(s, a->t0, t1))
				continue;
			*unknown |= s->gpus_unknown;
		}
	}
}

/* A step's time in [t0, t1], bounded as _job_present_ns bounds a job's:
 * from t0 when its cgroup was there then, to t1 when it is there now. */
static uint64_t _step_present_ns(const at_step_t *s, uint64_t t0,
				 uint64_t t1)
{
	uint64_t begin, end;

	if (!_step_present(s, t0, t1))
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
			      !_step_present(s, a->t0, a->t0 + a->dt))
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
	a->gpu_held_mj += mj;
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
		a->gpu_to_rest_mj += mj;
		return;
	}
	a->unattributed_mj += mj;
	a->gpu_unowned_mj += mj;
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

	for (size_t i = 0; a->gpu_held_mj && i < ATTRIB_MAX_GPUS; i++) {
		uint64_t left;

		if (!a->held[i].mj ||
		    (pending && t1 - a->held[i].t0 < ATTRIB_GPU_WAIT_NS))
			continue;
		left = _give_held_span(a, i);
		_give_nobody(a, gp, left, unknown);
		a->gpu_held_mj -= a->held[i].mj;
		a->held[i].mj = 0;
	}
}

/* The GPUs read (attrib_interval_gpus) to the holders the steps' masks
 * give; an unread GPU stays in the node's energy. */
static void _split_read_gpus(attrib_t *a, const attrib_gpu_energy_t *g,
			     size_t n, at_gpu_part_t *gp)
{
	bool unknown, out = false, pending = _gpus_pending(a);

	_gpu_masks(a, &unknown);
	_release_held(a, pending, unknown, gp);
	for (size_t i = 0; i < n; i++) {
		a->w[i] = g[i].valid ? g[i].energy_mj : 0;
		if (g[i].valid)
			a->gpu_raw_mj += g[i].raw_mj;
		out |= !g[i].valid;
	}
	a->gpu_out_intervals += out;
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

/* The idle part: by allocated CPUs x presence, or unattributed. */
static void _split_idle(attrib_t *a, uint64_t idle, uint32_t node_cpus,
			uint64_t dt)
{
	if (a->p.idle == ATTRIB_IDLE_NONE) {
		a->unattributed_mj += idle;
		return;
	}
	_presence_weights(a, node_cpus, dt, true);
	attrib_apportion(idle, a->w, a->n + 1, a->out);
	_give(a, a->out);
}

/* The rest: by CPU time; none used: by presence; nobody: unattributed. */
static void _split_rest(attrib_t *a, uint64_t rest, uint32_t node_cpus,
			uint64_t t0, uint64_t dt)
{
	uint64_t any = 0;

	for (size_t i = 0; i < a->n; i++) {
		const at_job_t *j = &a->jobs[i];
		uint64_t end = _job_end_ns(j);

		/* a job over before the interval: its leftovers are not its */
		a->w[i] = (end && end <= t0) ? 0 : j->delta_ns;
		any |= a->w[i];
	}
	a->w[a->n] = 0;
	if (!any && !_presence_weights(a, node_cpus, dt, false)) {
		a->unattributed_mj += rest;
		return;
	}
	attrib_apportion(rest, a->w, a->n + 1, a->out);
	_give(a, a->out);
}

/* A job's part to its steps (not extern) by their CPU time. */
static void _split_job(attrib_t *a, at_job_t *j, uint64_t t0, uint64_t t1)
{
	bool by_cpu = false, any = false;
	uint64_t *w = a->w, *out = a->out;

	j->share_mj += j->part_mj;
	a->charged_mj += j->part_mj;
	if (!j->part_mj || !j->n)
		goto done;
	for (size_t k = 0; k < j->n; k++) {
		const at_step_t *s = &j->steps[k];

		w[k] = 0;
		if (s->step_id == CG_STEP_EXTERN ||
		    !_step_present(s, t0, t1))
			continue;
		any = true;
		w[k] = s->delta_ns;
		by_cpu |= w[k] != 0;
	}
	if (!any)
		goto done;	/* the job's own (extern) figure only */
	if (!by_cpu)
		for (size_t k = 0; k < j->n; k++)
			w[k] = j->steps[k].step_id != CG_STEP_EXTERN &&
			       _step_present(&j->steps[k], t0, t1);
	attrib_apportion(j->part_mj, w, j->n, out);
	for (size_t k = 0; k < j->n; k++)
		j->steps[k].share_mj += out[k];
done:
	j->part_mj = 0;
}

/* Forget jobs gone long ago, and steps that ended with their job kept. */
static void _retire(attrib_t *a, uint64_t t)
{
	uint64_t keep = a->p.retain_ns ? a->p.retain_ns : ATTRIB_RETAIN_NS;

	for (size_t i = 0; i < a->n;) {
		at_job_t *j = &a->jobs[i];

		if (j->present_ns || j->seen)
			j->last_present_ns = t;
		else if (!j->last_present_ns)
			j->last_present_ns = t;	/* registered, not begun */
		if (t - j->last_present_ns <= keep) {
			i++;
			continue;
		}
		free(j->steps);
		a->jobs[i] = a->jobs[--a->n];
	}
}

static size_t _max_steps(const attrib_t *a)
{
	size_t m = 0;

	for (size_t i = 0; i < a->n; i++)
		if (a->jobs[i].n > m)
			m = a->jobs[i].n;
	return m;
}

/* ------------------------------------------------------------ public */

attrib_t *attrib_new(const attrib_params_t *p)
{
	attrib_t *a = calloc(1, sizeof(*a));

	if (a)
		a->p = *p;
	return a;
}

void attrib_free(attrib_t *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->jobs[i].steps);
	free(a->jobs);
	free(a->w);
	free(a->out);
	free(a);
}

/*
 * An interval's start: the scan taken, the baselines, the interval's
 * figures (a->t0, dt, e), scratch for n_gpus.  *split false: nothing to
 * split (first sample, or time or energy went back: rc -EINVAL).
 */
static int _interval_open(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
			  const cg_scan_t *scan, size_t n_gpus, bool *split)
{
	size_t need;
	int rc;

	*split = false;
	if ((rc = _take_scan(a, scan)))
		return rc;
	if (a->started && (t_ns < a->t_ns || energy_mj < a->energy_mj)) {
		a->started = false;
		rc = -EINVAL;
	}
	if (!a->started) {
		/* Baselines only: the scan taken above holds each cgroup's
		 * CPU time so far, which is no interval's. */
		a->started = true;
		a->t_ns = t_ns;
		a->energy_mj = energy_mj;
		a->have_root = scan && scan->have_root;
		a->root_cpu_ns = scan ? scan->root_cpu_ns : 0;
		return rc;
	}
	/* the scan may have added jobs and steps */
	need = (a->n > _max_steps(a) ? a->n : _max_steps(a)) + 1;
	if ((rc = _scratch(a, need > n_gpus ? need : n_gpus)))
		return rc;
	a->t0 = a->t_ns;
	a->dt = t_ns - a->t_ns;
	a->e = energy_mj - a->energy_mj;
	a->node_cpus = _node_cpus(a, scan);
	a->any_job = false;
	_vanished_jobs(a, scan);
	for (size_t i = 0; i < a->n; i++) {
		_vanished_steps(&a->jobs[i]);
		a->jobs[i].present_ns = _job_present_ns(&a->jobs[i], a->t0,
							t_ns);
		a->jobs[i].part_mj = 0;
		a->any_job |= a->jobs[i].present_ns != 0;
	}
	a->measured_mj += a->e;
	*split = true;
	return 0;
}

/* After the GPU part: the idle part, the rest, the jobs' parts to their
 * steps, idle learning, the new baselines. */
static void _interval_close(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
			    const at_gpu_part_t *gp)
{
	uint64_t left = a->e - gp->taken_mj + gp->rest_mj, idle;
	bool learned;

	idle = (uint64_t) ((unsigned __int128) _idle_mw(a, &learned) * a->dt /
			   SE_NS_PER_SEC);
	if (idle > left)
		idle = left;
	_split_idle(a, idle, a->node_cpus, a->dt);
	_split_rest(a, left - idle, a->node_cpus, a->t0, a->dt);
	for (size_t i = 0; i < a->n; i++) {
		_split_job(a, &a->jobs[i], a->t0, t_ns);
		for (size_t k = 0; k < a->jobs[i].n; k++)
			if (_step_vanished(&a->jobs[i].steps[k]))
				a->jobs[i].steps[k].closed = true;
	}
	/* the node without its GPUs; a cut interval tells nothing of it */
	if (!a->any_job && !gp->cut)
		_learn_idle(a, a->e - gp->read_mj, a->dt);

	a->intervals++;
	a->t_ns = t_ns;
	a->energy_mj = energy_mj;
	_retire(a, t_ns);
}

int attrib_interval(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
		    const cg_scan_t *scan, const attrib_gpu_t *gpus,
		    size_t n_gpus)
{
	at_gpu_part_t gp = { 0 };
	bool split;
	int rc = _interval_open(a, t_ns, energy_mj, scan, n_gpus, &split);

	if (!split)
		return rc;
	_split_owned_gpus(a, gpus, n_gpus, &gp);
	_interval_close(a, t_ns, energy_mj, &gp);
	return 0;
}

int attrib_interval_gpus(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
			 const cg_scan_t *scan, const attrib_gpu_energy_t *g,
			 size_t n)
{
	at_gpu_part_t gp = { 0 };
	bool split;
	int rc;

	if (n > ATTRIB_MAX_GPUS)
		return -EINVAL;
	rc = _interval_open(a, t_ns, energy_mj, scan, n, &split);
	if (!split)
		return rc;
	_split_read_gpus(a, g, n, &gp);
	_interval_close(a, t_ns, energy_mj, &gp);
	return gp.cut ? ATTRIB_GPUS_CUT : 0;
}

void attrib_rebase(attrib_t *a)
{
	a->started = false;
}

int attrib_step_begin(attrib_t *a, uint32_t job_id, uint32_t step_id,
		      uint64_t t_ns, uint32_t ncpus)
{
	at_job_t *j = _job(a, job_id, true);
	at_step_t *s = j ? _step(j, step_id, true) : NULL;

	if (!s)
		return -ENOMEM;
	if (!s->begin_ns || t_ns < s->begin_ns)
		s->begin_ns = t_ns;
	if (ncpus > j->ncpus_reg)
		j->ncpus_reg = ncpus;
	return 0;
}

int attrib_step_end(attrib_t *a, uint32_t job_id, uint32_t step_id,
		    uint64_t t_ns)
{
	at_job_t *j = _job(a, job_id, false);
	at_step_t *s = j ? _step(j, step_id, false) : NULL;

	if (!s)
		return -ENOENT;
	if (t_ns > s->end_ns)
		s->end_ns = t_ns;
	return 0;
}

int attrib_step_gpus(attrib_t *a, uint32_t job_id, uint32_t step_id,
		     uint64_t step_mask, uint64_t job_mask, bool known)
{
	at_job_t *j = _job(a, job_id, true);
	at_step_t *s = j ? _step(j, step_id, true) : NULL;

	if (!s)
		return -ENOMEM;
	s->step_gpus = known ? step_mask : 0;
	s->job_gpus = known ? job_mask : 0;
	s->gpus_unknown = !known;
	return 0;
}

int attrib_step_share(const attrib_t *a, uint32_t job_id, uint32_t step_id,
		      attrib_step_share_t *out)
{
	at_job_t *j = _job((attrib_t *) a, job_id, false);
	at_step_t *s;

	out->last_ns = a->started ? a->t_ns : 0;
	if (!j)
		return -ENOENT;
	if (step_id == CG_STEP_EXTERN) {
		out->share_mj = j->share_mj;
		out->gpu_mj = j->gpu_mj;
		return 0;
	}
	if (!(s = _step(j, step_id, false)))
		return -ENOENT;
	out->share_mj = s->share_mj;
	out->gpu_mj = s->gpu_mj;
	return 0;
}

int attrib_share(const attrib_t *a, uint32_t job_id, uint32_t step_id,
		 uint64_t *share_mj, uint64_t *last_ns)
{
	attrib_step_share_t sh;
	int rc = attrib_step_share(a, job_id, step_id, &sh);

	*last_ns = sh.last_ns;
	if (!rc)
		*share_mj = sh.share_mj;
	return rc;
}

void attrib_totals(const attrib_t *a, attrib_totals_t *out)
{
	memset(out, 0, sizeof(*out));
	out->measured_mj = a->measured_mj;
	out->charged_mj = a->charged_mj;
	out->unattributed_mj = a->unattributed_mj;
	out->idle_mw = _idle_mw(a, &out->idle_learned);
	out->intervals = a->intervals;
	out->jobs = a->n;
	out->gpu_raw_mj = a->gpu_raw_mj;
	out->gpu_charged_mj = a->gpu_charged_mj;
	out->gpu_unowned_mj = a->gpu_unowned_mj;
	out->gpu_to_rest_mj = a->gpu_to_rest_mj;
	out->gpu_clipped_mj = a->gpu_clipped_mj;
	out->gpu_held_mj = a->gpu_held_mj;
	out->gpu_clipped_intervals = a->gpu_clipped_intervals;
	out->gpu_out_intervals = a->gpu_out_intervals;
}
