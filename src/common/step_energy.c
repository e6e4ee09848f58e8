/*
 * step_energy.c - a step's energy as slurmstepd keeps it (step_energy.h):
 * the decisions of its polls, refreshes and settle over one explicit
 * state, with no clock, no I/O and no Slurm.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sampler.h"
#include "step_energy.h"

/* ------------------------------------------------------------ units */

uint64_t step_energy_mj_to_j(uint64_t energy_mj)
{
	return (energy_mj + 500) / 1000;
}

uint32_t step_energy_mw_to_w(uint64_t power_mw)
{
	uint64_t w = (power_mw + 500) / 1000;

	return (w >= STEP_WATTS_NO_VAL) ? STEP_WATTS_NO_VAL - 1 : (uint32_t) w;
}

/* mJ/ns = 1e6 W */
uint32_t step_energy_avg_w(uint64_t energy_mj, uint64_t t_ns)
{
	if (!t_ns)
		return 0;
	return step_energy_mw_to_w((uint64_t) ((double) energy_mj * 1e9 /
					       (double) t_ns));
}

/* ------------------------------------------------------ the instants */

uint64_t step_energy_t0(const step_energy_t *s)
{
	return s->first_poll_ns ? s->first_poll_ns : s->start_ns;
}

void step_energy_start(step_energy_t *s, uint64_t now_ns, uint64_t now_wall_ns)
{
	s->start_ns = now_ns;
	s->start_wall_ns = now_wall_ns;
}

/* ------------------------------------------------------------ polls */

step_poll_t step_energy_mark_poll(step_energy_t *s, const step_poll_facts_t *f,
				  bool *first)
{
	*first = false;
	if (f->ending)
		return STEP_POLL_UNMARKED;
	if (s->asking && !s->settled &&
	    f->now_ns - s->question.t1_ns < STEP_POLL_SHARE_NS)
		return STEP_POLL_SAME_QUESTION;
	if (s->poll_answered && !s->settled &&
	    f->now_ns - s->poll_answer_ns < STEP_POLL_SHARE_NS)
		return STEP_POLL_SAME_ANSWER;
	s->end_wall_ns = f->now_wall_ns;
	s->end_ns = f->now_ns;
	s->poll_answered = false;
	if (!s->energy_query_path[0] || s->settled || f->share_mode)
		return STEP_POLL_NO_QUESTION;
	if (!s->first_poll_ns && f->tasks_started) {
		s->first_poll_ns = s->end_ns;
		*first = true;
	}
	return STEP_POLL_QUESTION;
}

step_poll_question_t step_energy_poll_question(bool first, bool held)
{
	step_poll_question_t q = {
		.send = first || held,
		.how = held ? ENERGY_QUERY_HOLD : 0,
		.timeout_ns = held ? LIVE_QUERY_TIMEOUT_NS :
			      LIVE_POLL_QUERY_TIMEOUT_NS,
	};

	return q;
}

bool step_energy_settle_expected(const step_energy_t *s)
{
	return !s->settle_conf_no || s->settle_spank_listed;
}

/* ---------------------------------------------------- the answers */

void step_energy_query_begin(step_energy_t *s)
{
	if (s->have_e0 && s->e0_t_ns != step_energy_t0(s))
		s->have_e0 = false;
	s->queries++;
}

void step_energy_query_answered(step_energy_t *s,
				const energy_query_answer_t *a, uint64_t t1_ns)
{
	if (a->deadline_ns)
		s->read_deadline_ns = a->deadline_ns;
	if (!s->have_e0 && a->complete0) {
		s->have_e0 = true;
		s->e0_mj = a->e0_mj;
		s->e0_gen = a->generation;
		s->e0_t_ns = step_energy_t0(s);
	}
	step_energy_account_gpu_node(s, a, t1_ns);
}

step_account_t step_energy_account_node(step_energy_t *s,
					const energy_carry_answer_t *a,
					time_t poll_time)
{
	energy_carry_step_t v = {
		.have_base = s->have_base,
		.start_ns = s->start_ns,
		.last_ns = s->last_ns,
		.last_node_j = s->last_node_j,
		.last_watts = s->last_watts,
		.started_s = s->slurmd_started,
	};
	step_account_t r = { .before_node_j = s->last_node_j };

	r.add_j = energy_carry_step_j(&v, a, &r.how);
	s->prev_step_j = s->step_j;
	switch (r.how) {
	case ENERGY_CARRY_FIRST:
		/* normally as the step starts; if slurmd had no sample then,
		 * the time since the start is filled at the power now */
		s->have_base = true;
		s->step_j = r.add_j;
		break;
	case ENERGY_CARRY_ADVANCE:
		s->step_j += r.add_j;
		break;
	case ENERGY_CARRY_BACKWARDS:
	case ENERGY_CARRY_RESTARTED:
		s->step_j += r.add_j;
		/* each way of telling a restart starts again from here: the
		 * other one's last id is from before it */
		s->slurmd_started = 0;
		s->total_id = 0;
		break;
	}
	s->last_node_j = a->node_j;
	s->last_watts = a->watts;
	s->last_ns = a->t_ns;
	s->poll_time = poll_time;
	if (a->started_s)
		s->slurmd_started = a->started_s;
	return r;
}

int step_energy_account_total(step_energy_t *s,
			      const energy_query_answer_t *a, uint64_t now_ns,
			      time_t poll_time_s, step_account_t *acct)
{
	energy_carry_answer_t node = {
		.t_ns = now_ns,
		.node_j = a->total_mj / 1000,
		.watts = step_energy_mw_to_w(a->total_power_mw),
		/* a query's total says a restart by its id, not a time */
		.started_s = 0,
	};

	if (!a->total)
		return -ENODATA;
	node.restarted = s->total_id && a->total_id != s->total_id;
	*acct = step_energy_account_node(s, &node, poll_time_s);
	s->total_id = a->total_id;
	return 0;
}

int step_energy_collected(step_energy_t *s, const energy_query_answer_t *a,
			  uint64_t t1_ns, time_t poll_time_s,
			  step_account_t *acct)
{
	int rc;

	step_energy_query_answered(s, a, t1_ns);
	/* the total as of the question's instant, when slurmd read it */
	rc = step_energy_account_total(s, a, t1_ns, poll_time_s, acct);
	if (t1_ns == s->end_ns) {
		s->poll_answered = true;
		s->poll_answer = *a;
		s->poll_answer_ns = t1_ns;
	}
	return rc;
}

void step_energy_poll_answered(step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t now_ns)
{
	s->poll_answered = true;
	s->poll_answer = *a;
	s->poll_answer_ns = now_ns;
}

/* The step's GPU part is now part_mj, up to t_ns; its power over the
 * interval since the last one (kept when the instant did not move). */
static void _gpu_part(step_energy_t *s, uint64_t part_mj, uint64_t t_ns)
{
	uint64_t t0 = step_energy_t0(s);

	if (s->have_gpu_part && t_ns > s->gpu_t_ns)
		s->gpu_watts = step_energy_avg_w(part_mj > s->gpu_part_mj ?
						 part_mj - s->gpu_part_mj : 0,
						 t_ns - s->gpu_t_ns);
	else if (!s->have_gpu_part && t_ns > t0)
		/* the first: its power since the step's start */
		s->gpu_watts = step_energy_avg_w(part_mj, t_ns - t0);
	s->have_gpu_part = true;
	s->gpu_part_mj = part_mj;
	s->gpu_t_ns = t_ns;
}

/*
 * Share mode: slurmd's charge of the step's GPUs so far, never decreasing
 * and carried over a restart like the share.  A version-3 slurmd, or one
 * not metering GPUs, sends none: the part stays as it was.
 */
static void _account_gpu_share(step_energy_t *s, const energy_query_answer_t *a)
{
	bool restarted;

	if (!a->gpu.part)
		return;
	s->gpu_share = energy_carry_share(&s->gpu_share, a->generation,
					  a->gpu.part_mj, &restarted);
	_gpu_part(s, s->gpu_share.share_mj, a->share_last_ns);
}

void step_energy_account_gpu_node(step_energy_t *s,
				  const energy_query_answer_t *a,
				  uint64_t t1_ns)
{
	uint64_t e0_mj = a->gpu.e0_mj, t0 = step_energy_t0(s);

	if (!a->gpu.part)
		return;
	if (s->have_gpu_e0 && s->gpu_e0_t_ns != t0)
		s->have_gpu_e0 = false;
	if (!s->have_gpu_e0 &&
	    (a->complete0 || t1_ns >= t0 + STEP_GPU_E0_FINAL_NS)) {
		s->have_gpu_e0 = true;
		s->gpu_e0_mj = a->gpu.e0_mj;
		s->gpu_e0_gen = a->generation;
		s->gpu_e0_t_ns = t0;
	}
	if (s->have_gpu_e0) {
		if (a->generation != s->gpu_e0_gen)
			return;
		e0_mj = s->gpu_e0_mj;
	}
	if (a->gpu.e1_mj >= e0_mj)
		_gpu_part(s, a->gpu.e1_mj - e0_mj, t1_ns);
}

bool step_energy_account_share(step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t now_ns,
			       time_t poll_time_s)
{
	uint64_t prev_mj = s->share.share_mj, prev_t = s->share_t_ns;
	bool restarted;

	s->share = energy_carry_share(&s->share, a->generation, a->share_mj,
				      &restarted);
	s->prev_step_j = s->step_j;
	s->step_j = step_energy_mj_to_j(s->share.share_mj);
	if (a->share_last_ns > prev_t && prev_t)
		s->last_watts = step_energy_avg_w(s->share.share_mj - prev_mj,
						  a->share_last_ns - prev_t);
	_account_gpu_share(s, a);
	s->share_t_ns = a->share_last_ns;
	s->poll_time = poll_time_s;
	s->have_base = true;
	s->last_ns = now_ns;
	return restarted;
}

/* ------------------------------------------- refresh, and the RPC */

step_refresh_t step_energy_refresh(const step_energy_t *s, bool share_mode)
{
	if (s->settled)
		return STEP_REFRESH_NONE;
	if (share_mode)
		return STEP_REFRESH_SHARE;
	if (s->energy_query_path[0])
		return STEP_REFRESH_SOCKET;
	return STEP_REFRESH_RPC;
}

bool step_energy_stale(const step_energy_t *s, uint64_t now_ns)
{
	return now_ns - s->last_ns >= STEP_REFRESH_NS;
}

bool step_energy_profile_asks(const step_energy_t *s, uint64_t now_ns)
{
	return !s->last_ns || now_ns - s->last_ns >= STEP_PROFILE_FRESH_NS;
}

bool step_energy_rpc_failed(step_energy_t *s, uint64_t now_ns,
			    uint64_t *failing_ns)
{
	if (!s->rpc_fail_ns)
		s->rpc_fail_ns = now_ns;
	*failing_ns = now_ns - s->rpc_fail_ns;
	return *failing_ns < STEP_RPC_GRACE_NS;
}

/* ------------------------------------------------- what Slurm gets */

bool step_energy_report(const step_energy_t *s, uint64_t now_ns,
			step_report_t *r)
{
	memset(r, 0, sizeof(*r));
	if (!s->have_base)
		return false;
	r->consumed_j = s->step_j;
	r->previous_j = s->prev_step_j;
	r->base_j = s->step_j - s->prev_step_j;
	r->current_watts = s->last_watts;
	if (now_ns - s->start_ns >= SE_NS_PER_SEC)
		r->ave_watts = step_energy_avg_w(s->step_j * 1000,
						 s->last_ns - s->start_ns);
	else
		r->ave_watts = s->last_watts;
	r->poll_time = s->poll_time;
	return true;
}

/* ------------------------------------------------------- the settle */

const char *step_energy_settle_refused(const step_energy_t *s,
				       const step_settle_facts_t *f)
{
	if (!f->in_stepd)
		return "not in slurmstepd";
	if (!f->have_job)
		return "no step record";
	if (s->settled)
		return "already settled";
	if (s->settle_tried)
		return "a settle already ran for this step";
	if (f->share_mode)
		return s->energy_query_path[0] ? NULL :
		       "no energy query socket for this node";
	if (f->window_source) {
		if (s->conf_bad)
			return "acct_gather.conf was refused in this step";
		if (!s->start_wall_ns)
			return "no start";
		if (f->ends_job)
			return "batch, extern or interactive step";
		return NULL;
	}
	if (!s->energy_query_path[0])
		return "no energy query socket for this node";
	return NULL;
}

uint32_t step_energy_settled(step_energy_t *s, uint64_t joules, uint64_t t0_ns,
			     uint64_t t1_ns)
{
	s->prev_step_j = s->step_j;
	s->step_j = joules;
	s->settled = true;
	return step_energy_avg_w(joules * 1000, t1_ns - t0_ns);
}

uint64_t step_energy_settle_pause(uint64_t *pause_ns, uint64_t limit_ns,
				  uint64_t now_ns)
{
	uint64_t wait = *pause_ns;

	if (now_ns + LIVE_RETRY_NS >= limit_ns)
		return 0;
	if (wait > limit_ns - LIVE_RETRY_NS - now_ns)
		wait = limit_ns - LIVE_RETRY_NS - now_ns;
	*pause_ns = *pause_ns * 2 < LIVE_RETRY_MAX_NS ? *pause_ns * 2 :
		    LIVE_RETRY_MAX_NS;
	return wait;
}

uint64_t step_energy_settle_read_limit(uint64_t begin_ns,
				       const energy_query_answer_t *a,
				       uint64_t limit_ns)
{
	uint64_t read_limit = begin_ns +
			      sampler_reach_ns(a->period_ns, a->deadline_ns) +
			      LIVE_MARGIN_NS;

	return read_limit < limit_ns ? read_limit : limit_ns;
}

bool step_energy_meter_is_slow(const step_energy_t *s)
{
	return !s->read_deadline_ns ||
	       s->read_deadline_ns > STEP_FINI_FAST_READ_NS;
}

bool step_energy_fini_leaves_to_spank(const step_energy_t *s,
				      bool srun_told_first)
{
	if (!s->settle_spank_listed)
		return false;
	return srun_told_first || step_energy_meter_is_slow(s);
}

uint64_t step_energy_settle_limit(const step_energy_t *s, uint64_t t1_ns,
				  uint64_t begin_ns, uint64_t limit_ns)
{
	uint64_t fini_ns = t1_ns + STEP_FINI_WAIT_NS;

	if (!s->settle_in_fini || !step_energy_meter_is_slow(s))
		return limit_ns;	/* the SPANK settle's, or a fast meter */
	/* fini() came late: what slurmd holds for it is read, not waited */
	if (fini_ns < begin_ns + LIVE_RETRY_NS)
		fini_ns = begin_ns + LIVE_RETRY_NS;
	return fini_ns < limit_ns ? fini_ns : limit_ns;
}

bool step_energy_settle_holds(uint64_t limit_ns, uint64_t now_ns)
{
	return limit_ns > now_ns && limit_ns - now_ns >= LIVE_QUERY_TIMEOUT_NS;
}

uint64_t step_energy_live_t1(const step_energy_t *s, uint64_t now_ns)
{
	return s->end_ns > step_energy_t0(s) ? s->end_ns : now_ns;
}

uint64_t step_energy_live_read_due(const step_energy_t *s, uint64_t t1_ns)
{
	if (t1_ns == s->end_ns && s->poll_answered && s->poll_answer.kicked)
		return s->end_ns + s->poll_answer.deadline_ns;
	return 0;
}

const char *step_energy_live_verdict(const step_energy_t *s,
				     const energy_query_answer_t *a,
				     bool *done)
{
	*done = true;
	if (s->have_e0 && a->generation != s->e0_gen)
		return "slurmd's sampler restarted between the step's start and end (slurmd restart or reconfigure)";
	if (!s->have_e0 && a->rc0 == -ERANGE)
		return "the step's start is older than slurmd's history and was not fetched in time";
	/* E(t0) unknown while a reading at or after t0 exists: t0 lies
	 * before the sampler's first reading ever (the meter was not up yet),
	 * and no later reading can tell it */
	if (!s->have_e0 && a->rc0 == -ENODATA &&
	    a->last_sample_ns >= step_energy_t0(s))
		return "the step began before the meter's first reading (the meter was not up yet)";
	if (s->have_e0 && a->complete1 && a->e1_mj < s->e0_mj)
		return "energy at the end below the start";
	if (s->have_e0 && a->complete1)
		return NULL;
	*done = false;
	return "no reading after the step's boundaries in time";
}

bool step_energy_live_held_answer(const step_energy_t *s, uint64_t t1_ns,
				  energy_query_answer_t *a, const char **why)
{
	bool done;

	if (!s->poll_answered || t1_ns != s->end_ns)
		return false;
	*a = s->poll_answer;
	*why = step_energy_live_verdict(s, a, &done);
	return !*why;
}

bool step_energy_live_outage(const step_energy_t *s,
			     const energy_query_answer_t *a, uint64_t t1_ns,
			     step_outage_t *o)
{
	uint64_t t0 = step_energy_t0(s), reach;
	bool done;

	memset(o, 0, sizeof(*o));
	/* only an answer that lacks the reading after t1 (not another
	 * sampler's, nor a start older than the history: done then) */
	(void) step_energy_live_verdict(s, a, &done);
	if (done || a->complete1 || t1_ns <= t0)
		return false;
	reach = a->last_sample_ns +
		sampler_reach_ns(a->period_ns, a->deadline_ns);
	if (a->last_sample_ns && reach >= t1_ns)
		return false;	/* the reading after t1 is merely late */
	o->step_ns = t1_ns - t0;
	o->silent_ns = a->last_sample_ns ? t1_ns - a->last_sample_ns :
		       o->step_ns;
	o->unknown_ns = a->last_sample_ns && reach > t0 ? t1_ns - reach :
			o->step_ns;
	return true;
}

bool step_energy_settle_waits_outage(const step_energy_t *s,
				     const energy_query_answer_t *a,
				     uint64_t t1_ns, step_outage_t *o)
{
	return step_energy_live_outage(s, a, t1_ns, o) && s->settle_tried &&
	       !s->settle_in_fini;
}

bool step_energy_live_estimate(const step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t t1_ns,
			       step_estimate_t *e)
{
	uint64_t e0_mj;
	bool done;

	memset(e, 0, sizeof(*e));
	if (!step_energy_live_verdict(s, a, &done) || done)
		return false;	/* final, or a reason no wait changes */
	if (a->rc1 || a->last_sample_ns < step_energy_t0(s) ||
	    a->last_sample_ns > t1_ns ||
	    a->last_sample_ns + sampler_reach_ns(a->period_ns,
						 a->deadline_ns) < t1_ns)
		return false;	/* no reading, or an outage: not guessed */
	if (s->have_e0)
		e0_mj = s->e0_mj;
	else if (!a->rc0)
		e0_mj = a->e0_mj;
	else
		return false;
	if (a->e1_mj < e0_mj)
		return false;
	e->joules = step_energy_mj_to_j(a->e1_mj - e0_mj);
	e->span_ns = t1_ns - a->last_sample_ns;
	e->watts = step_energy_mw_to_w(a->total_power_mw);
	return true;
}

uint64_t step_energy_live_joules(const step_energy_t *s,
				 const energy_query_answer_t *a)
{
	return step_energy_mj_to_j(a->e1_mj - s->e0_mj);
}

uint64_t step_energy_share_t1(const step_energy_t *s, uint64_t now_ns)
{
	return s->end_ns > s->start_ns ? s->end_ns : now_ns;
}

step_window_t step_energy_window(const step_energy_t *s, uint64_t now_wall_ns)
{
	step_window_t w = { .t0_wall_ns = s->start_wall_ns };
	uint64_t t0_mono = s->start_ns, t1_mono = s->end_ns;

	if (!t1_mono || t1_mono < t0_mono) {
		w.t1_wall_ns = s->end_wall_ns > s->start_wall_ns ?
			       s->end_wall_ns : now_wall_ns;
		return w;
	}
	w.stepped_ns = (int64_t) (s->end_wall_ns - s->start_wall_ns) -
		       (int64_t) (t1_mono - t0_mono);
	w.clock_stepped = w.stepped_ns > (int64_t) SE_NS_PER_SEC ||
			  w.stepped_ns < -(int64_t) SE_NS_PER_SEC;
	w.t1_wall_ns = s->start_wall_ns + (t1_mono - t0_mono);
	return w;
}

uint64_t step_energy_window_wait(int rc, bool complete, uint64_t now_ns,
				 uint64_t deadline_ns)
{
	if ((!rc && complete) || now_ns >= deadline_ns)
		return 0;
	return deadline_ns - now_ns < SETTLE_POLL_NS ? deadline_ns - now_ns :
	       SETTLE_POLL_NS;
}

/* ------------------------------------------------------ the GPU part */

void step_energy_gpus_fill(const step_energy_t *s, energy_query_step_t *q)
{
	q->gpus_known = s->gpus_known;
	if (!q->gpus_known)
		return;
	memcpy(q->step_minors, s->gpu_step_minors, sizeof(q->step_minors));
	memcpy(q->job_minors, s->gpu_job_minors, sizeof(q->job_minors));
}

void step_energy_minors_str(const uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			    char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ENERGY_QUERY_MINORS_MAX && n < len; i++) {
		int w;

		if (!energy_query_minors_has(set, i))
			continue;
		w = snprintf(buf + n, len - n, "%s%u", n ? "," : "", i);
		if (w < 0)
			break;
		n += w;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

void step_energy_gpus_str(const step_energy_t *s, char *buf, size_t len)
{
	if (!s->gpus_known) {
		snprintf(buf, len, "unknown");
		return;
	}
	step_energy_minors_str(s->gpus_step_level ? s->gpu_step_minors :
			       s->gpu_job_minors, buf, len);
}
