/*
 * se_energy_settle.c - the settle: at a step's end, its energy over its
 * own window instead of the running total (se_energy_step_settle,
 * se_energy.h).
 *
 * Run in slurmstepd from the plugin's own fini() (se_settle_at_fini), which
 * every release calls at a step's end after its last task's accounting
 * poll and before the step's completion is sent (acct_gather_profile_fini
 * in job_manager() and the extern step's path; doc/design-settle-in-
 * plugin.md has the call order of each release), or, when it is listed,
 * by the SPANK plugin spank_energy_settle.so (src/acct_gather_energy/
 * settle/, found with dlsym()) from slurm_spank_exit, later in the same
 * stretch.  By then jobacct_gather has stopped polling: the step's state
 * is what se_energy_step.c left.  What is set here goes into
 * job->jobacct, which slurmstepd sends to slurmctld as the step's TRES
 * energy.  Inside fini() Slurm holds the profile's and the energy
 * plugins' context locks: nothing here calls acct_gather_*_g_*().
 *
 * Three ways, by source:
 *  window  (window_energy: RRD rows) the source's own history over the
 *          step's wall-clock window, once its rows cover the end;
 *  live    E(t1) - E(t0) from slurmd's sampler history through the energy
 *          query socket, once a reading after t1 exists;
 *  share   (EnergyAttribution=share) the step's share, once slurmd has
 *          split an interval that ends after the step's end.
 * The live and share settles wait through one loop (_settle_ask_until).
 * Each decision (refused or not, the held answer taken, an answer final,
 * how long to pause, the window's instants) is the Slurm-free unit's
 * (src/common/step_energy.h); this file asks, waits and stores.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "se_energy_int.h"

/*
 * When srun's allocation ends while a step settles, slurmd asks the step to
 * terminate, which starts slurmstepd's step_terminate_monitor: a step still
 * there after UnkillableStepTimeout drains the node ("Kill task failed").
 * The settle ends this long before that.
 */
#define SETTLE_UNKILLABLE_MARGIN_S	10

/* The settle's pauses and margins are the unit's (step_energy.h). */
_Static_assert(LIVE_QUERY_TIMEOUT_NS >
	       ENERGY_QUERY_SERVER_HOLD_MAX_NS + 50 * SE_NS_PER_MS,
	       "a held settle query must outlast the server's hold");

/*
 * One question of a live or share settle's wait (se_state_lock held): 0,
 * with *done set when the answer in *a is final, or -errno; *outage set
 * when the wait goes on to its own bound for a meter in an outage
 * (step_energy_settle_waits_outage) instead of one read.
 */
typedef int (*settle_ask_fn)(void *arg, energy_query_answer_t *a, bool *done,
			     bool *outage);

/* Steps whose end is the job's own: a wait there delays the job. */
static bool _step_ends_job(const stepd_step_rec_t *job)
{
	return job->batch || job->step_id.step_id == SLURM_BATCH_SCRIPT ||
	       job->step_id.step_id == SLURM_EXTERN_CONT ||
	       job->step_id.step_id == SLURM_INTERACTIVE_STEP;
}

/* max_wait, kept clear of UnkillableStepTimeout (see the margin above). */
static unsigned _settle_cap(unsigned max_wait_s)
{
	uint16_t unkillable = slurm_conf.unkillable_timeout;
	unsigned cap = unkillable > SETTLE_UNKILLABLE_MARGIN_S ?
		       unkillable - SETTLE_UNKILLABLE_MARGIN_S : 0;

	if (max_wait_s <= cap)
		return max_wait_s;
	info("%s: settle max_wait=%u s cut to %u s: a step still there after UnkillableStepTimeout=%u s would drain the node",
	     plugin_type, max_wait_s, cap, unkillable);
	return cap;
}

/*
 * The wait of a live or share settle that began at begin_ns: ask until the
 * answer is final, a question fails, or limit_ns (the SPANK max_wait, cut
 * clear of UnkillableStepTimeout) passes; the first answer brings the
 * limit in to the sampler's period + deadline + LIVE_MARGIN_NS, so the
 * wait is about one read, except while an answer says the meter is in an
 * outage and the settle runs after srun was told (the SPANK plugin's):
 * then up to limit_ns, for the readings that bracket the step's end.  Called and returns with se_state_lock held,
 * released while it sleeps (jobacct_gather has stopped polling: the lock
 * costs no one).  0 with the last answer in *a (final or not), or ask's
 * -errno.
 */
static int _settle_ask_until(settle_ask_fn ask, void *arg, uint64_t begin_ns,
			     uint64_t limit_ns, energy_query_answer_t *a)
{
	uint64_t pause = LIVE_FIRST_PAUSE_NS, wait, read_limit = limit_ns;
	bool done = false, outage = false;
	int rc;

	for (bool first = true;; first = false) {
		if ((rc = ask(arg, a, &done, &outage)))
			return rc;
		if (first)
			read_limit = step_energy_settle_read_limit(begin_ns, a,
								   limit_ns);
		if (done || !(wait = step_energy_settle_pause(&pause,
				outage ? limit_ns : read_limit,
				se_mono_ns())))
			return 0;
		slurm_mutex_unlock(&se_state_lock);
		se_sleep_ns(wait);
		slurm_mutex_lock(&se_state_lock);
	}
}

/* The step's final energy into what slurmstepd sends to slurmctld. */
static void _settle_store(stepd_step_rec_t *job, uint64_t joules,
			  uint64_t t0_ns, uint64_t t1_ns)
{
	jobacctinfo_t *ja = job->jobacct;
	uint32_t ave = step_energy_settled(&se_step, joules, t0_ns, t1_ns);

	if (!ja)
		return;
	ja->energy.consumed_energy = joules;
	ja->energy.ave_watts = ave;
	if (ja->tres_count > SE_TRES_ARRAY_ENERGY) {
		ja->tres_usage_in_tot[SE_TRES_ARRAY_ENERGY] = joules;
		ja->tres_usage_out_tot[SE_TRES_ARRAY_ENERGY] = ave;
	}
}

/*
 * An unsettled step whose end poll's answer came only now (its question
 * was not waited for, se_energy_step.c): the running total it brought
 * replaces the one Slurm took at that poll, a poll period older.
 */
static void _settle_keep_running(stepd_step_rec_t *job)
{
	jobacctinfo_t *ja = job->jobacct;

	if (!ja || !se_step.have_base)
		return;
	ja->energy.consumed_energy = se_step.step_j;
	if (ja->tres_count > SE_TRES_ARRAY_ENERGY)
		ja->tres_usage_in_tot[SE_TRES_ARRAY_ENERGY] = se_step.step_j;
}

/*
 * With DebugFlags=Energy, how much of the step's settled energy its GPUs
 * were (slurmd's GPU part: share mode its charge, node mode F x the GPUs'
 * energy over the step; the last answer's for a window settle).  Nothing
 * when slurmd sent none (no GPUs metered, a version-3 slurmd).
 */
static void _settle_gpu_note(stepd_step_rec_t *job, uint64_t joules)
{
	char id[64], minors[256];

	if (!se_step.have_gpu_part ||
	    !(slurm_conf.debug_flags & DEBUG_FLAG_ENERGY))
		return;
	log_build_step_id_str(&job->step_id, id, sizeof(id),
			      STEP_ID_FLAG_NO_PREFIX);
	step_energy_gpus_str(&se_step, minors, sizeof(minors));
	log_flag(ENERGY, "%s: step %s: %"PRIu64" J, of which %"PRIu64" J its GPUs' (minors %s)",
		 plugin_type, id, joules, (se_step.gpu_part_mj + 500) / 1000,
		 minors);
}

/* A live settle's question: E(t0) and E(t1), held until the reading after
 * t1 is in, kicking it unless the read the step's last poll kicked for t1
 * may still be on its way (until read_due_ns): a kick during a read makes
 * the sampler read again right after it, a meter transaction per step for
 * nothing (slurmd kicks once itself if that read does not cover t1). */
typedef struct {
	uint64_t t1_ns;
	uint64_t limit_ns;	/* the wait's limit: a question held past it
				 * is asked unheld (step_energy_settle_holds) */
	uint64_t read_due_ns;	/* 0: no read in flight for t1 */
	const char *why;	/* the last answer's verdict
				 * (step_energy_live_verdict) */
	bool outage;		/* an answer said an outage over t1 ... */
	step_outage_t first_outage; /* ... the first such */
} live_ask_t;

static int _live_ask(void *arg, energy_query_answer_t *a, bool *done,
		     bool *outage)
{
	live_ask_t *q = arg;
	step_outage_t o;
	uint64_t now = se_mono_ns();
	bool kick = now >= q->read_due_ns;
	bool hold = step_energy_settle_holds(q->limit_ns, now);
	int rc = se_step_query(q->t1_ns, (hold ? ENERGY_QUERY_HOLD : 0) |
			       (kick ? 0 : ENERGY_QUERY_NO_KICK),
			       hold ? LIVE_QUERY_TIMEOUT_NS :
			       LIVE_POLL_QUERY_TIMEOUT_NS, a);

	if (!rc) {
		q->why = step_energy_live_verdict(&se_step, a, done);
		*outage = step_energy_settle_waits_outage(&se_step, a,
							  q->t1_ns, &o);
		if (*outage && !q->outage) {
			q->outage = true;
			q->first_outage = o;
		}
	}
	return rc;
}

/*
 * A step whose end lies in a meter outage keeps its running total, which
 * misses the outage's part of the step (step_energy_live_outage): said at
 * error level as a lower bound, with the span, since Slurm's record has no
 * way to mark it.  The outage's energy goes to the node's total when the
 * meter returns.
 */
static void _settle_outage_note(stepd_step_rec_t *job,
				const step_outage_t *o, uint64_t running_j)
{
	char id[64];

	log_build_step_id_str(&job->step_id, id, sizeof(id),
			      STEP_ID_FLAG_NO_PREFIX);
	error("%s: step %s: energy not known: the meter has not been read for the last %.1f s of the step's %.1f s (%.1f s past the sampler's reach, not in the total); keeping the running total %"PRIu64" J, a lower bound",
	      plugin_type, id, (double) o->silent_ns / 1e9,
	      (double) o->step_ns / 1e9, (double) o->unknown_ns / 1e9,
	      running_j);
}

/*
 * A step whose end lay in a meter outage, settled once the meter returned
 * (the SPANK settle's wait): E(t1) is filled between the readings that
 * bracket it, an estimate of the power over the gap (exact in total on a
 * counter meter, not in its split at t1).  Said at info level.
 */
static void _settle_filled_note(stepd_step_rec_t *job, const step_outage_t *o,
				uint64_t after_ns, uint64_t joules,
				uint64_t running_j)
{
	char id[64];

	log_build_step_id_str(&job->step_id, id, sizeof(id),
			      STEP_ID_FLAG_NO_PREFIX);
	info("%s: step %s: its end lay in a meter outage: energy at the end filled between the readings %.1f s before and %.1f s after it (an estimate over that gap); %"PRIu64" J (running total %"PRIu64" J)",
	     plugin_type, id, (double) o->silent_ns / 1e9,
	     (double) after_ns / 1e9, joules, running_j);
}

/*
 * A step whose end came before the meter's reading after it, fini()'s wait
 * being bounded (STEP_FINI_WAIT_NS, a slow meter): its end settled from
 * the newest reading carried at its power (step_energy_live_estimate).
 * Said once, at info level: the total is an estimate over that span.
 */
static void _settle_estimate_note(stepd_step_rec_t *job,
				  const step_estimate_t *e, uint64_t waited_ns,
				  uint64_t running_j)
{
	char id[64];

	log_build_step_id_str(&job->step_id, id, sizeof(id),
			      STEP_ID_FLAG_NO_PREFIX);
	info("%s: step %s: the meter's reading after the step's end was not in %.3f s after it; its end is estimated from the reading %.3f s before it, carried at its %u W: %"PRIu64" J (running total %"PRIu64" J)",
	     plugin_type, id, (double) waited_ns / 1e9,
	     (double) e->span_ns / 1e9, e->watts, e->joules, running_j);
}

/*
 * The live settle: E(t1) - E(t0) from slurmd's sampler history once a
 * reading after t1 exists.  Normally the step's last poll's answer, held
 * by slurmd, already says it (step_energy_live_held_answer); else the
 * query kicks that reading (normally on its way: each accounting poll
 * kicked one), so the wait is one read.  In fini(), for a slow meter
 * (step_energy_settle_limit), the wait ends 10 ms after the step's end
 * and the end is estimated (step_energy_live_estimate): srun is not held
 * for a BMC's seconds.
 */
static int _settle_live(stepd_step_rec_t *job, unsigned max_wait_s)
{
	uint64_t begin = se_mono_ns(), limit, t0, joules, running_j;
	live_ask_t q = { 0 };
	energy_query_answer_t a = { 0 };
	step_outage_t outage;
	step_estimate_t est;
	unsigned asked;
	bool collected;
	int rc;

	limit = begin + _settle_cap(max_wait_s) * SE_NS_PER_SEC;
	slurm_mutex_lock(&se_state_lock);
	q.t1_ns = step_energy_live_t1(&se_step, se_mono_ns());
	/* fini()'s wait holds srun: a slow meter's end is estimated */
	limit = step_energy_settle_limit(&se_step, q.t1_ns, begin, limit);
	q.limit_ns = limit;
	/* the tasks' end poll's question, normally answered by now */
	collected = !se_step_collect_by(limit, &a);
	asked = se_step.queries;
	t0 = step_energy_t0(&se_step);
	q.read_due_ns = step_energy_live_read_due(&se_step, q.t1_ns);
	running_j = se_step.step_j;
	/* the held answer: the end poll's, final, asks nothing more */
	if (!step_energy_live_held_answer(&se_step, q.t1_ns, &a, &q.why))
		rc = _settle_ask_until(_live_ask, &q, begin, limit, &a);
	else
		rc = 0;
	if (!rc && q.why && step_energy_live_outage(&se_step, &a, q.t1_ns,
						    &outage)) {
		if (collected)
			_settle_keep_running(job);
		slurm_mutex_unlock(&se_state_lock);
		_settle_outage_note(job, &outage, running_j);
		return -ETIMEDOUT;
	}
	if (!rc && q.why && step_energy_live_estimate(&se_step, &a, q.t1_ns,
						      &est)) {
		_settle_store(job, est.joules, t0, q.t1_ns);
		_settle_gpu_note(job, est.joules);
		slurm_mutex_unlock(&se_state_lock);
		_settle_estimate_note(job, &est, se_mono_ns() - q.t1_ns,
				      running_j);
		return 0;
	}
	if (rc || q.why) {
		if (collected)
			_settle_keep_running(job);
		slurm_mutex_unlock(&se_state_lock);
		info("%s: step energy not settled: %s%s; keeping the running total %"PRIu64" J",
		     plugin_type, rc ? "energy query to slurmd failed: " : q.why,
		     rc ? strerror(-rc) : "", running_j);
		return rc ? rc : -ETIMEDOUT;
	}
	joules = step_energy_live_joules(&se_step, &a);
	_settle_store(job, joules, t0, q.t1_ns);
	_settle_gpu_note(job, joules);
	slurm_mutex_unlock(&se_state_lock);
	if (q.outage)
		_settle_filled_note(job, &q.first_outage,
				    a.last_sample_ns - q.t1_ns, joules,
				    running_j);
	log_flag(ENERGY, "%s: step energy settled: %"PRIu64" J over %.3f s from the tasks' start (%.3f s after the step's) (running total %"PRIu64" J, %u energy RPCs, %u queries), reading after the end %.3f s after it, settled in %.3f s (%u queries)",
		 plugin_type, joules, (double) (q.t1_ns - t0) / 1e9,
		 (double) (t0 - se_step.start_ns) / 1e9, running_j,
		 se_step.rpcs, asked,
		 (double) (a.last_sample_ns - q.t1_ns) / 1e9,
		 (double) (se_mono_ns() - begin) / 1e9,
		 se_step.queries - asked);
	return 0;
}

/* A share settle's question: the share up to t1, the step's end told. */
static int _share_ask(void *arg, energy_query_answer_t *a, bool *done,
		      bool *outage)
{
	uint64_t t1_ns = *(const uint64_t *) arg;
	int rc = se_step_share(t1_ns, true, ENERGY_QUERY_HOLD,
			       LIVE_QUERY_TIMEOUT_NS, a);

	*outage = false;
	if (!rc)
		*done = a->share_last_ns >= t1_ns;
	return rc;
}

/*
 * The share settle (EnergyAttribution=share): the step's share once slurmd
 * has split an interval that ends after the step's end (t1, told to
 * slurmd, which kicks that reading).  The wait is one read, bounded like
 * the live settle's.
 */
static int _settle_share(stepd_step_rec_t *job, unsigned max_wait_s)
{
	uint64_t begin = se_mono_ns(), limit, t1, running_j;
	energy_query_answer_t a = { 0 };
	int rc;

	limit = begin + _settle_cap(max_wait_s) * SE_NS_PER_SEC;
	slurm_mutex_lock(&se_state_lock);
	t1 = step_energy_share_t1(&se_step, se_mono_ns());
	running_j = se_step.step_j;
	rc = _settle_ask_until(_share_ask, &t1, begin, limit, &a);
	if (rc || a.share_last_ns < t1) {
		slurm_mutex_unlock(&se_state_lock);
		info("%s: step share not settled: %s%s; keeping the running share %"PRIu64" J",
		     plugin_type, rc ? "share query to slurmd failed: " :
		     "no split after the step's end in time",
		     rc ? strerror(-rc) : "", running_j);
		return rc ? rc : -ETIMEDOUT;
	}
	_settle_store(job, se_step.step_j, se_step.start_ns, t1);
	_settle_gpu_note(job, se_step.step_j);
	slurm_mutex_unlock(&se_state_lock);
	log_flag(ENERGY, "%s: step share settled: %"PRIu64" J (running total %"PRIu64" J), split %.3f s after the end, settled in %.3f s",
		 plugin_type, se_step.step_j, running_j,
		 (double) (a.share_last_ns - t1) / 1e9,
		 (double) (se_mono_ns() - begin) / 1e9);
	return 0;
}

/* Ask the source until its data covers [t0, t1] or the deadline passes. */
static int _settle_wait(se_energy_window_fn window, uint64_t t0_ns,
			uint64_t t1_ns, unsigned max_wait_s,
			uint64_t *energy_mj, bool *complete, char *msg,
			size_t msg_len)
{
	uint64_t deadline = se_mono_ns() + max_wait_s * SE_NS_PER_SEC, wait;
	int rc;

	for (;;) {
		rc = window(se_energy_node_name(), t0_ns, t1_ns, energy_mj,
			    complete, msg, msg_len);
		wait = step_energy_window_wait(rc, *complete, se_mono_ns(),
					       deadline);
		if (!wait)
			return rc;
		se_sleep_ns(wait);
	}
}

/* The window settle: the source's own history (RRD rows) over the step. */
static int _settle_window(stepd_step_rec_t *job, se_energy_window_fn window,
			  unsigned max_wait_s)
{
	uint64_t t0_ns, t1_ns, energy_mj = 0, running_j, begin = se_mono_ns();
	char msg[512] = "";
	bool complete = false;
	step_window_t w;
	int rc;

	slurm_mutex_lock(&se_state_lock);
	/* its length is the step's monotonic one, placed from the start's
	 * wall time (see acct_gather_energy_rrd(5), FAULTS) */
	w = step_energy_window(&se_step, se_wall_ns());
	running_j = se_step.step_j;
	slurm_mutex_unlock(&se_state_lock);
	t0_ns = w.t0_wall_ns;
	t1_ns = w.t1_wall_ns;
	if (w.clock_stepped)
		info("%s: the node's wall clock stepped by %+.1f s while the step ran; its energy window keeps the step's own length (%.1f s) from its start",
		     plugin_type, (double) w.stepped_ns / 1e9,
		     (double) (t1_ns - t0_ns) / 1e9);
	max_wait_s = _settle_cap(max_wait_s);

	/* No lock while waiting: jobacct_gather has stopped polling. */
	rc = _settle_wait(window, t0_ns, t1_ns, max_wait_s, &energy_mj,
			  &complete, msg, sizeof(msg));
	if (rc) {
		error("%s: step energy not settled: %s; keeping the running total %"PRIu64" J",
		      plugin_type, msg, running_j);
		return rc;
	}
	if (!complete)
		info("%s: the data did not cover the step's window after %u s; ends held at the nearest row (%"PRIu64" J, running total %"PRIu64" J)",
		     plugin_type, max_wait_s, step_energy_mj_to_j(energy_mj),
		     running_j);

	slurm_mutex_lock(&se_state_lock);
	_settle_store(job, step_energy_mj_to_j(energy_mj), t0_ns, t1_ns);
	_settle_gpu_note(job, step_energy_mj_to_j(energy_mj));
	slurm_mutex_unlock(&se_state_lock);
	log_flag(ENERGY, "%s: step energy settled: %"PRIu64" J over %.3f s (running total %"PRIu64" J), data %s after %.1f s",
		 plugin_type, step_energy_mj_to_j(energy_mj),
		 (double) (t1_ns - t0_ns) / 1e9, running_j,
		 complete ? "complete" : "incomplete",
		 (double) (se_mono_ns() - begin) / 1e9);
	return 0;
}

/*
 * Which steps settle, and why none else.  A window source waits up to
 * max_wait for rows: not for steps whose end is the job's own.  A live
 * source waits at most one read (period + deadline): every step settles,
 * batch and extern included (under PrologFlags=Contain the extern step's
 * total is the job's line in sacct).
 */
const char *se_settle_refused(void)
{
	step_settle_facts_t f = {
		.in_stepd = se_role == ROLE_STEPD,
		.have_job = se_step_job != NULL,
		.share_mode = se_share_mode(),
		.window_source = se_energy_plugin.window_energy != NULL,
		.ends_job = se_step_job && _step_ends_job(se_step_job),
	};

	return step_energy_settle_refused(&se_step, &f);
}

/* EnergySettle=no (acct_gather.conf): no settle in fini(), nor one to
 * come for the step's last poll (step_energy_settle_expected). */
void se_settle_conf_note(const settle_conf_t *settle)
{
	se_step.settle_conf_no = settle->in_plugin == SETTLE_IN_PLUGIN_NO;
}

/* spank_energy_settle.so is listed in plugstack.conf (its spank_init). */
int se_energy_settle_spank_present(void)
{
	se_step.settle_spank_listed = true;
	return 0;
}

/* The settle itself, once per step: 0, 1 (nothing to do) or -errno. */
static int _settle(unsigned max_wait_s, bool in_fini)
{
	se_energy_window_fn window = se_energy_plugin.window_energy;
	stepd_step_rec_t *job;
	const char *why;

	slurm_mutex_lock(&se_state_lock);
	job = se_step_job;
	why = se_settle_refused();
	if (!why) {
		se_step.settle_tried = true;
		se_step.settle_in_fini = in_fini;
	}
	slurm_mutex_unlock(&se_state_lock);
	if (why) {
		log_flag(ENERGY, "%s: no settle for this step (%s)",
			 plugin_type, why);
		return 1;
	}
	if (se_share_mode())
		return _settle_share(job, max_wait_s);
	if (window)
		return _settle_window(job, window, max_wait_s);
	return _settle_live(job, max_wait_s);
}

/*
 * Slurm tells srun the tasks ended before slurm_spank_exit up to 25.11;
 * 26.05 tells it after the step's completion (mgr.c), so after both.
 */
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(26, 5, 0)
#define SRUN_TOLD_BEFORE_SPANK_EXIT	true
#else
#define SRUN_TOLD_BEFORE_SPANK_EXIT	false
#endif

/*
 * Why fini() does not settle this step, or NULL when it does.  A listed
 * SPANK settle is left the step when its wait holds no user (up to 25.11)
 * or when only it waits for a slow meter's reading after the end (26.05,
 * where srun waits either way): step_energy_fini_leaves_to_spank.
 */
static const char *_fini_leaves(const settle_conf_t *settle)
{
	if (settle->in_plugin == SETTLE_IN_PLUGIN_NO)
		return "EnergySettle=no";
	if (!se_step_job || se_step_job->state < SLURMSTEPD_STEP_ENDING)
		return "the step is not ending";
	if (step_energy_fini_leaves_to_spank(&se_step,
					     SRUN_TOLD_BEFORE_SPANK_EXIT))
		return "left to spank_energy_settle.so in plugstack.conf";
	return NULL;
}

void se_settle_at_fini(const settle_conf_t *settle)
{
	const char *why;
	uint64_t running_j;

	if (se_role != ROLE_STEPD)
		return;
	slurm_mutex_lock(&se_state_lock);
	why = se_settle_refused();
	if (!why)
		why = _fini_leaves(settle);
	running_j = se_step.step_j;
	slurm_mutex_unlock(&se_state_lock);
	if (why) {
		log_flag(ENERGY, "%s: fini: no settle for this step (%s); the step's energy so far: %"PRIu64" J",
			 plugin_type, why, running_j);
		return;
	}
	(void) _settle(settle->max_wait_s, true);
}

int se_energy_step_settle(unsigned max_wait_s)
{
	bool by_fini;

	slurm_mutex_lock(&se_state_lock);
	by_fini = se_step.settle_tried && se_step.settle_in_fini;
	slurm_mutex_unlock(&se_state_lock);
	if (by_fini) {
		log_flag(ENERGY, "%s: the step was settled by the energy plugin at its end; spank_energy_settle.so is not needed",
			 plugin_type);
		return 1;
	}
	return _settle(max_wait_s, false);
}
