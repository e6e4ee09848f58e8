/*
 * attrib.c - a shared node's measured energy split among its jobs and
 * steps: the public API (attrib.h, which states the model), an interval's
 * order, and its idle and CPU split.
 *
 * An interval: the scan taken and each job's presence (_interval_open);
 * the GPUs' part taken first (attrib_gpus.c); then of what is left, the
 * idle part (idle power x interval, at most what is left) by allocated
 * CPUs x presence, the rest by the jobs' CPU time (by presence when none
 * used any); each job's part to its steps by their CPU time
 * (_interval_close).  The files below it: attrib_priv.h.
 *
 * Invariants:
 *  - Conserved: every mJ measured (the meter's cumulative difference, so
 *    an outage only lengthens the next interval) is charged to a job or
 *    unattributed: charged + unattributed == measured to the mJ, plus the
 *    GPU energy held for a new step (attrib_gpus.c); a step's share is a
 *    split of its job's, never more.
 *  - Clipped: the idle part at what the GPUs left; the GPUs at the
 *    node's meter (attrib_gpus.c).  A vanished job's or step's CPU time,
 *    its parent's unexplained delta, is never more than that delta.
 *  - The remainder: every split is by largest remainders
 *    (attrib_apportion), so no mJ is lost to rounding; what no job can
 *    take (unallocated CPUs' idle, EnergyIdle=none, no job present) is
 *    unattributed.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attrib_priv.h"
#include "se_time.h"

#define ATTRIB_RETAIN_NS	(600 * SE_NS_PER_SEC)
#define IDLE_MIN_SAMPLES	3

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
		at_job_t *j = attrib_find_job(a, e->job_id, true);
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
		if (!(s = attrib_find_step(j, e->step_id, true)))
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

		if (!attrib_step_present(s, t0, t1))
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
	a->tot.unattributed_mj += part[a->n];
}

/* The idle part: by allocated CPUs x presence, or unattributed. */
static void _split_idle(attrib_t *a, uint64_t idle, uint32_t node_cpus,
			uint64_t dt)
{
	if (a->p.idle == ATTRIB_IDLE_NONE) {
		a->tot.unattributed_mj += idle;
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
		a->tot.unattributed_mj += rest;
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
	a->tot.charged_mj += j->part_mj;
	if (!j->part_mj || !j->n)
		goto done;
	for (size_t k = 0; k < j->n; k++) {
		const at_step_t *s = &j->steps[k];

		w[k] = 0;
		if (s->step_id == CG_STEP_EXTERN ||
		    !attrib_step_present(s, t0, t1))
			continue;
		any = true;
		w[k] = s->delta_ns;
		by_cpu |= w[k] != 0;
	}
	if (!any)
		goto done;	/* the job's own (extern) total only */
	if (!by_cpu)
		for (size_t k = 0; k < j->n; k++)
			w[k] = j->steps[k].step_id != CG_STEP_EXTERN &&
			       attrib_step_present(&j->steps[k], t0, t1);
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
 * numbers (a->t0, dt, e), scratch for n_gpus.  *split false: nothing to
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
	if ((rc = attrib_scratch(a, need > n_gpus ? need : n_gpus)))
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
	a->tot.measured_mj += a->e;
	*split = true;
	return 0;
}

/* Step s's share so far: the extern step's is its job's (as
 * attrib_step_share answers it). */
static uint64_t _step_share_mj(const at_job_t *j, const at_step_t *s)
{
	return s->step_id == CG_STEP_EXTERN ? j->share_mj : s->share_mj;
}

/*
 * A step whose end this split passed: its share now is the one its
 * settle reads (its held question is answered at this split), kept for
 * attrib_running_steps.  Later splits may still give it a part (the CPU
 * time its vanished cgroup left in its job's), which no settle sees.
 */
static void _step_settled(const at_job_t *j, at_step_t *s, uint64_t t_ns)
{
	if (s->final_set || !s->end_ns || t_ns < s->end_ns)
		return;
	s->final_set = true;
	s->final_mj = _step_share_mj(j, s);
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
		for (size_t k = 0; k < a->jobs[i].n; k++) {
			if (_step_vanished(&a->jobs[i].steps[k]))
				a->jobs[i].steps[k].closed = true;
			_step_settled(&a->jobs[i], &a->jobs[i].steps[k], t_ns);
		}
	}
	/* the node without its GPUs; a cut interval tells nothing of it */
	if (!a->any_job && !gp->cut)
		_learn_idle(a, a->e - gp->read_mj, a->dt);

	a->tot.intervals++;
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
	attrib_gpus_split_owned(a, gpus, n_gpus, &gp);
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
	attrib_gpus_split_read(a, g, n, &gp);
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
	at_job_t *j = attrib_find_job(a, job_id, true);
	at_step_t *s = j ? attrib_find_step(j, step_id, true) : NULL;

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
	at_job_t *j = attrib_find_job(a, job_id, false);
	at_step_t *s = j ? attrib_find_step(j, step_id, false) : NULL;

	if (!s)
		return -ENOENT;
	if (t_ns > s->end_ns)
		s->end_ns = t_ns;
	s->end_told_ns = a->started ? a->t_ns : 0;
	/* told after a split passed it: the settle reads the share now */
	if (a->started && a->tot.intervals)
		_step_settled(j, s, a->t_ns);
	return 0;
}

int attrib_step_gpus(attrib_t *a, uint32_t job_id, uint32_t step_id,
		     uint64_t step_mask, uint64_t job_mask, bool known)
{
	at_job_t *j = attrib_find_job(a, job_id, true);
	at_step_t *s = j ? attrib_find_step(j, step_id, true) : NULL;

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
	at_job_t *j = attrib_find_job((attrib_t *) a, job_id, false);
	at_step_t *s;

	out->last_ns = a->started ? a->t_ns : 0;
	if (!j)
		return -ENOENT;
	if (step_id == CG_STEP_EXTERN) {
		out->share_mj = j->share_mj;
		out->gpu_mj = j->gpu_mj;
		return 0;
	}
	if (!(s = attrib_find_step(j, step_id, false)))
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

/*
 * Whether step s is listed by attrib_running_steps: until the split after
 * its end (a->t0 is the latest interval's start), so that its final share
 * is listed for one interval, and linger_ns more; an end told after the
 * split passed it, from when it was told.  A registered step whose cgroup
 * went first waits for its end (its slurmstepd tells it as it settles:
 * the share it settles on is split up to that end); one never registered
 * leaves after the interval that gave it its last part.
 */
static bool _step_running(const attrib_t *a, const at_step_t *s,
			  uint64_t linger_ns)
{
	if (s->end_ns)
		return !a->tot.intervals ||
		       a->t0 < (s->end_ns > s->end_told_ns ? s->end_ns :
							      s->end_told_ns) +
			       linger_ns;
	return s->seen || s->was_seen || s->begin_ns;
}

/* Whether s's share is final: the split has passed its end. */
static bool _step_final(const attrib_t *a, const at_step_t *s)
{
	if (s->end_ns)
		return a->tot.intervals && a->t_ns >= s->end_ns;
	return !s->seen && s->ever_seen && !s->begin_ns;
}

size_t attrib_running_steps(const attrib_t *a, attrib_step_row_t *out,
			    size_t max, uint64_t linger_ns)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++) {
		const at_job_t *j = &a->jobs[i];

		for (size_t k = 0; k < j->n; k++) {
			const at_step_t *s = &j->steps[k];

			if (!_step_running(a, s, linger_ns))
				continue;
			if (n < max)
				out[n] = (attrib_step_row_t) {
					.job_id = j->job_id,
					.step_id = s->step_id,
					.ended = s->end_ns != 0 ||
						 (!s->seen && s->ever_seen),
					.final = _step_final(a, s),
					.share_mj = s->final_set ? s->final_mj :
						    _step_share_mj(j, s),
				};
			n++;
		}
	}
	return n;
}

void attrib_totals(const attrib_t *a, attrib_totals_t *out)
{
	*out = a->tot;
	out->idle_mw = _idle_mw(a, &out->idle_learned);
	out->jobs = a->n;
}
