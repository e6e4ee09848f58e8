/*
 * se_energy_step.c - slurmstepd's side of the energy glue: the step's
 * running total, its energy relative to its start (se_energy.h).  What
 * Slurm 22.05 asks a slurmstepd, and so what each answer must be (src/
 * paths are Slurm's):
 *
 *  jobacct_gather/common/common_jag.c:_get_precs/_get_process_data()
 *	(slurmstepd, every JobAcctGatherFrequency and at task exit)
 *	get_sum(NODE_ENERGY_UP, &jobacct->energy), or NODE_ENERGY when energy
 *	profiling runs; consumed_energy becomes the step's TRES energy (J),
 *	current_watts its power.  With one plugin, get_sum hands our function
 *	jobacct->energy itself; with several it sums those that return
 *	SLURM_SUCCESS and are not NO_VAL64.
 *  slurm_jobacct_gather.c:jobacctinfo_aggregate() turns the total NO_VAL64
 *	as soon as one node says NO_VAL64: a step never reports NO_VAL64.
 *  slurm_acct_gather_energy.c:_watch_node()  (slurmstepd, profiling)
 *	set_data(ENERGY_DATA_PROFILE, &delta) at the profile frequency.
 *  slurmstepd.c, before job_manager()  set_data(ENERGY_DATA_STEP_PTR).
 *
 * The node total comes from slurmd's energy query socket (energy_query.h:
 * tens of microseconds, and each boundary of the step kicks a meter
 * reading), or, when there is none or it cannot answer, from Slurm's
 * energy RPC (slurm_get_node_energy(): a munge credential each way).  In
 * share mode the same socket answers the step's share instead.  A slurmd
 * that restarted is bridged (energy_carry.h): the step's energy never
 * decreases.
 *
 * What each call does (which instant a poll marks, whether it asks and
 * how, what an answer changes, when to fall back to the RPC) is decided
 * by the Slurm-free unit src/common/step_energy.h over se_step; this file
 * gathers Slurm's data for it, makes the calls and says what happened.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "se_energy_int.h"

/* At most this many RPC failure messages per minute from one step. */
#define STEP_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define STEP_LOG_BURST		3

/* the step's Energy profile dataset, -1: none */
static int dataset_id = -1;
/* the RPC failure messages' rate */
static se_ratelimit_t rpc_log_rate;

/* What an answer of slurmd's node total did, said where it matters. */
static void _step_accounted(const step_account_t *r, uint64_t now_ns)
{
	switch (r->how) {
	case ENERGY_CARRY_FIRST:
		/* normally it comes as the step starts */
		if (now_ns - se_step.start_ns > STEP_LATE_FIRST_NS)
			info("%s: first node energy %.1f s after the step started; the %"PRIu64" J before it are estimated from the power now (%u W)",
			     plugin_type,
			     (double) (now_ns - se_step.start_ns) / 1e9,
			     r->add_j, se_step.last_watts);
		break;
	case ENERGY_CARRY_ADVANCE:
		break;
	case ENERGY_CARRY_BACKWARDS:
	case ENERGY_CARRY_RESTARTED:
		info("%s: node energy went from %"PRIu64" J to %"PRIu64" J%s (slurmd restarted?); %"PRIu64" J bridged",
		     plugin_type, r->before_node_j, se_step.last_node_j,
		     r->how == ENERGY_CARRY_RESTARTED ?
		     ", slurmd's start time changed" : "", r->add_j);
		break;
	}
}

/*
 * Account one answer of slurmd (node energy e at monotonic now_ns), from
 * its RPC.
 */
static void _step_account(const acct_gather_energy_t *e, uint64_t now_ns)
{
	energy_carry_answer_t a = {
		.t_ns = now_ns,
		.node_j = e->consumed_energy,
		.watts = (e->current_watts == NO_VAL) ? 0 : e->current_watts,
		.started_s = se_energy_start_time(e),
	};
	step_account_t r = step_energy_account_node(&se_step, &a,
						    e->poll_time);

	_step_accounted(&r, now_ns);
}

/* The step as a query names it, with its GPUs; false before its record
 * is known. */
static bool _step_ids(energy_query_step_t *q)
{
	stepd_step_rec_t *job = se_step_job;

	if (!job)
		return false;
	memset(q, 0, sizeof(*q));
	q->job_id = job->step_id.job_id;
	q->step_id = job->step_id.step_id;
	q->ncpus = job->cpus;
	q->begin = true;	/* at se_step.start_ns: also after a restart */
	se_step_gpus_fill(q);
	return true;
}

/*
 * A share answer: the step's energy follows it, never decreasing.  A
 * slurmd restarted since the last answer (another generation, a lower
 * total) counts shares from zero again: what it counted before is kept
 * as a base (energy_carry_share).
 */
static void _step_account_share(const energy_query_answer_t *a, uint64_t now_ns)
{
	if (step_energy_account_share(&se_step, a, now_ns,
				      _mono_to_wall_s(a->share_last_ns)))
		info("%s: slurmd restarted: its shares count again from here (%"PRIu64" mJ kept)",
		     plugin_type, se_step.share.base_mj);
}

int se_step_share(uint64_t t1_ns, bool end, unsigned how,
		  uint64_t timeout_ns, energy_query_answer_t *a)
{
	energy_query_step_t q;
	int rc;

	if (!se_step.energy_query_path[0] || !_step_ids(&q))
		return -ENOENT;
	q.end = end;
	rc = energy_query_ask(se_step.energy_query_path, se_step.start_ns,
			      t1_ns > se_step.start_ns ? t1_ns : se_step.start_ns,
			      &q, how, timeout_ns, a);
	if (!rc && !a->share)
		rc = -EPROTO;	/* slurmd is not in share mode */
	if (!rc)
		rc = a->share_rc;	/* -ENOENT: slurmd does not know it */
	if (rc != se_step.energy_query_rc)
		log_flag(ENERGY, "%s: share query %s: %s", plugin_type,
			 se_step.energy_query_path, rc ? strerror(-rc) : "answering");
	se_step.energy_query_rc = rc;
	if (!rc)
		_step_account_share(a, se_mono_ns());
	return rc;
}

static int _step_fill(acct_gather_energy_t *e)
{
	step_report_t r;

	memset(e, 0, sizeof(*e));
	if (!step_energy_report(&se_step, se_mono_ns(), &r)) {
		/*
		 * No data yet: 0 J so far, but flagged as an error so that a
		 * sum over several plugins skips it; never NO_VAL64, which
		 * would wipe the step's total over all its nodes.
		 */
		if (!se_step.warned_no_data && !se_step.asking) {
			se_step.warned_no_data = true;
			info("%s: no energy from slurmd yet for this step",
			     plugin_type);
		}
		return SLURM_ERROR;
	}
	e->consumed_energy = r.consumed_j;
	e->previous_consumed_energy = r.previous_j;
	e->base_consumed_energy = r.base_j;
	e->current_watts = r.current_watts;
	e->ave_watts = r.ave_watts;
	e->poll_time = r.poll_time;
	return SLURM_SUCCESS;
}

/*
 * A profile sample's time: the node total's.  A window source's total
 * is its newest row, up to a row step old, while its GPU part is the
 * GPUs' up to now: its samples are stamped when taken, so that GPUPower
 * integrates over the seconds it was drawn in (Power is then the newest
 * row's, as before, at that instant).
 */
static time_t _step_profile_time(void)
{
	if (se_step.gpu_query_path[0])
		return time(NULL);
	return se_step.poll_time;
}

/* A sample of the step's power into its Energy profile dataset. */
static void _step_profile_add(void)
{
	acct_gather_profile_dataset_t dataset[] = {
		{ "Power", PROFILE_FIELD_UINT64 },
		{ "GPUPower", PROFILE_FIELD_UINT64 },
		{ NULL, PROFILE_FIELD_NOT_SET },
	};
	uint32_t profile_opt = 0;
	uint64_t power_w[2];

	acct_gather_profile_g_get(ACCT_GATHER_PROFILE_RUNNING, &profile_opt);
	if (!(profile_opt & ACCT_GATHER_PROFILE_ENERGY) || !se_step.have_base)
		return;
	if (dataset_id < 0) {
		dataset_id = acct_gather_profile_g_create_dataset(
			"Energy", NO_PARENT, dataset);
		if (dataset_id < 0) {
			error("%s: cannot create the Energy profile dataset",
			      plugin_type);
			return;
		}
	}
	/* the step's GPU part is in Power too: GPUPower shows how much */
	power_w[0] = se_step.last_watts;
	power_w[1] = se_step.gpu_watts;
	acct_gather_profile_g_add_sample_data(dataset_id, power_w,
					      _step_profile_time());
}

/*
 * Every task of the step on this node has been reaped: the poll
 * jobacct_gather makes as the last one is removed (mgr.c's
 * _wait_for_any_task: wait3(), then jobacct_gather_remove_task(), then
 * the task marked exited).  A pid gone (ESRCH) is a task reaped; a pid
 * reused meanwhile only makes this false, and the settle asks as before.
 */
static bool _step_tasks_reaped(void)
{
	stepd_step_rec_t *job = se_step_job;

	if (!job || !job->task || !job->node_tasks)
		return false;
	for (uint32_t i = 0; i < job->node_tasks; i++) {
		if (!job->task[i] || job->task[i]->pid <= 0)
			return false;
		if (!job->task[i]->exited &&
		    (kill(job->task[i]->pid, 0) == 0 || errno != ESRCH))
			return false;
	}
	return true;
}

/* The first task has been forked (jobacct_gather polls from the last
 * task's fork on, just before the tasks are let exec). */
static bool _step_tasks_started(void)
{
	stepd_step_rec_t *job = se_step_job;

	return job && job->node_tasks && job->task && job->task[0] &&
	       job->task[0]->pid > 0;
}

/* A question's result, logged when it changes. */
static void _step_query_rc(int rc)
{
	if (rc != se_step.energy_query_rc)
		log_flag(ENERGY, "%s: energy query %s: %s", plugin_type,
			 se_step.energy_query_path, rc ? strerror(-rc) : "answering");
	se_step.energy_query_rc = rc;
}

/* What a question's answer (rc, a for [t0, t1_ns]) tells the step. */
static void _step_query_done(int rc, const energy_query_answer_t *a,
			     uint64_t t1_ns)
{
	_step_query_rc(rc);
	if (!rc)
		step_energy_query_answered(&se_step, a, t1_ns);
}

/*
 * Ask slurmd's query channel about [t0, t1] (a live source only).  With
 * kick, the question itself makes slurmd read the meter when t1 (or t0)
 * has no reading after it yet; that is how a boundary "kicks" a reading.
 * Without, it only asks what is known (the node total): no meter read for
 * an instant that is no boundary.  E(t0) is cached as soon as it is final,
 * long before the end: the sampler's history does not reach back to the
 * start of a long step.  0 or -errno (a change of result is logged once,
 * at debug level: the settle says what it means for the step).
 */
int se_step_query(uint64_t t1_ns, unsigned how, uint64_t timeout_ns,
		  energy_query_answer_t *a)
{
	energy_query_answer_t earlier;
	energy_query_step_t q;
	int rc;

	if (!se_step.energy_query_path[0])
		return -ENOENT;
	/* answers are taken in the order asked: the total never goes back */
	(void) se_step_collect(&earlier);
	step_energy_query_begin(&se_step);
	/* named, so that slurmd answers the part of the step's GPUs */
	rc = energy_query_ask(se_step.energy_query_path,
			      step_energy_t0(&se_step), t1_ns,
			      _step_ids(&q) ? &q : NULL, how, timeout_ns, a);
	_step_query_done(rc, a, t1_ns);
	return rc;
}

/*
 * The node total slurmd put into a query's answer (its total hook): the
 * same total as its energy RPC answers, without the RPC.  0, or -ENODATA
 * (no total in it).
 */
static int _step_account_total(const energy_query_answer_t *a, uint64_t now_ns)
{
	step_account_t r;
	int rc = step_energy_account_total(&se_step, a, now_ns,
				_mono_to_wall_s(a->total_sample_ns), &r);

	if (!rc)
		_step_accounted(&r, now_ns);
	return rc;
}

int se_step_collect(energy_query_answer_t *a)
{
	uint64_t t1_ns = se_step.question.t1_ns;
	step_account_t r;
	int rc;

	if (!se_step.asking)
		return -ENOENT;
	se_step.asking = false;
	rc = energy_query_collect(&se_step.question, a);
	_step_query_rc(rc);
	if (rc)
		return rc;
	/* the total as of the question's instant, when slurmd read it */
	if (!step_energy_collected(&se_step, a, t1_ns,
				   _mono_to_wall_s(a->total_sample_ns), &r))
		_step_accounted(&r, t1_ns);
	return 0;
}

int se_step_collect_by(uint64_t deadline_ns, energy_query_answer_t *a)
{
	if (se_step.asking && se_step.question.deadline_ns > deadline_ns)
		se_step.question.deadline_ns = deadline_ns;
	return se_step_collect(a);
}

void se_step_drop_question(void)
{
	if (se_step.asking)
		energy_query_drop(&se_step.question);
	se_step.asking = false;
}

/*
 * A poll's question at t1_ns, sent without waiting for its answer: the
 * next question, or the settle, reads it (se_step_collect).  False when
 * it could not be sent (the caller asks as before: its failure is
 * logged, and Slurm's RPC is the fallback).
 */
static bool _step_query_send(uint64_t t1_ns, unsigned how, uint64_t timeout_ns)
{
	energy_query_answer_t earlier;
	energy_query_step_t q;
	int rc;

	(void) se_step_collect(&earlier);
	step_energy_query_begin(&se_step);
	rc = energy_query_send(se_step.energy_query_path,
			       step_energy_t0(&se_step), t1_ns,
			       _step_ids(&q) ? &q : NULL, how, timeout_ns,
			       &se_step.question);
	if (rc) {
		_step_query_done(rc, NULL, t1_ns);
		return false;
	}
	se_step.asking = true;
	return true;
}

/*
 * The node energy in a query's answer (a, or a query made now, which kicks
 * no reading: the total is what slurmd knows).  0, or -errno: the query
 * failed, or its answer holds no total.
 */
static int _step_refresh_total(const energy_query_answer_t *a)
{
	energy_query_answer_t now_a;
	int rc;

	if (!a) {
		rc = se_step_query(se_mono_ns(), ENERGY_QUERY_NO_KICK,
				   LIVE_POLL_QUERY_TIMEOUT_NS, &now_a);
		if (rc)
			return rc;
		a = &now_a;
	}
	return _step_account_total(a, se_mono_ns());
}

/*
 * Node mode, a window source with EnergyGPU=nvml: the step's energy comes
 * from the source's rows (RPC now, its settle later), its GPU part from
 * slurmd's GPU samplers through the query socket, asked for nothing else.
 * No kick: the GPUs' energy now is their last sample's, carried at its
 * power for at most a GPU period, and a kick would read the source too.
 */
static void _step_ask_gpu_part(void)
{
	energy_query_step_t q;
	energy_query_answer_t a;
	uint64_t now_ns = se_mono_ns();

	if (!se_step.gpu_query_path[0] || !_step_ids(&q))
		return;
	if (!energy_query_ask(se_step.gpu_query_path, step_energy_t0(&se_step),
			      now_ns, &q, ENERGY_QUERY_NO_KICK,
			      LIVE_POLL_QUERY_TIMEOUT_NS, &a))
		step_energy_account_gpu_node(&se_step, &a, now_ns);
}

/* A failed energy RPC: at debug level while slurmd may be restarting. */
static void _step_rpc_failed(void)
{
	uint64_t now_ns = se_mono_ns(), failing_ns;

	if (step_energy_rpc_failed(&se_step, now_ns, &failing_ns))
		se_log(SE_LOG_DEBUG,
		       "cannot get node energy from slurmd: %s (slurmd restarting? its next answer bridges the gap)",
		       slurm_strerror(se_slurm_errno()));
	else
		se_log_limited(&rpc_log_rate, now_ns, SE_LOG_ERROR,
			       "cannot get node energy from slurmd for %.0f s: %s",
			       (double) failing_ns / SE_NS_PER_SEC,
			       slurm_strerror(se_slurm_errno()));
}

/* The node energy through Slurm's energy RPC.  0, or -errno. */
static int _step_refresh_rpc(void)
{
	acct_gather_energy_t *e = NULL;
	uint16_t cnt = 0;
	uint64_t now_ns;
	int rc = 0;

	se_step.rpcs++;
	if (slurm_get_node_energy((char *) se_energy_node_name(),
				  se_context_id, 0, &cnt, &e) !=
	    SLURM_SUCCESS) {
		_step_rpc_failed();
		return -EIO;
	}
	now_ns = se_mono_ns();
	se_step.rpc_fail_ns = 0;
	if (!cnt || !e) {
		rc = -ENODATA;
	} else if (!e[0].poll_time) {
		/* slurmd's meter has not answered yet: keep waiting */
		rc = -ENODATA;
	} else {
		_step_account(&e[0], now_ns);
	}
	acct_gather_energy_destroy(e);
	return rc;
}

/*
 * Ask slurmd for the node energy: through its query socket (the total in
 * a, or in a query now) when there is one, else, or when it cannot answer,
 * through Slurm's RPC.  0, or -errno (nothing changed).
 */
static int _step_refresh(const energy_query_answer_t *a)
{
	energy_query_answer_t share_a;
	step_refresh_t way = step_energy_refresh(&se_step, se_share_mode());
	int rc;

	if (way == STEP_REFRESH_NONE)
		return 0;
	if (way == STEP_REFRESH_SHARE) {
		/* the share so far: t1 at the start kicks no reading (the
		 * sampler's period sets the running total's freshness) */
		return se_step_share(se_step.start_ns, false, 0,
				     LIVE_POLL_QUERY_TIMEOUT_NS, &share_a);
	}
	if (way == STEP_REFRESH_SOCKET) {
		if (!(rc = _step_refresh_total(a))) {
			se_step.rpc_fail_ns = 0;
			return 0;
		}
		if (!se_step.rpcs)
			log_flag(ENERGY, "%s: node energy through Slurm's RPC: the energy query socket gave no reading (%s)",
				 plugin_type, strerror(-rc));
	}
	_step_ask_gpu_part();
	return _step_refresh_rpc();
}

/* What an accounting poll (_step_poll) brought */
typedef enum {
	POLL_NO_ANSWER,		/* none: refresh as without a poll */
	POLL_ANSWERED,		/* its answer, with the node total */
	POLL_ASKING,		/* its question in flight: nothing to refresh */
} poll_result_t;

/*
 * An accounting poll (step_energy_mark_poll: which instant it marks, and
 * whether it asks).  With a live source, each poll asks for a reading now
 * (the last one before the step ends is its end: its reading then comes
 * within milliseconds, not a poll period later); the first poll, as the
 * first task starts, is the start of the step's window.  Kicks coalesce in
 * slurmd's sampler.  The answer (in *a with POLL_ANSWERED) also carries
 * the node total.
 */
static poll_result_t _step_poll(energy_query_answer_t *a)
{
	step_poll_facts_t f = {
		.ending = se_step_job &&
			  se_step_job->state >= SLURMSTEPD_STEP_ENDING,
		.tasks_started = _step_tasks_started(),
		.share_mode = se_share_mode(),
		.now_ns = se_mono_ns(),
		.now_wall_ns = se_wall_ns(),
	};
	step_poll_question_t q;
	bool first, held;

	switch (step_energy_mark_poll(&se_step, &f, &first)) {
	case STEP_POLL_UNMARKED:
	case STEP_POLL_NO_QUESTION:
		return POLL_NO_ANSWER;
	case STEP_POLL_SAME_QUESTION:
		return POLL_ASKING;	/* that question's instant is this one */
	case STEP_POLL_SAME_ANSWER:
		/* the same instant as that poll's, for the end too */
		*a = se_step.poll_answer;
		return POLL_ANSWERED;
	case STEP_POLL_QUESTION:
		break;
	}
	/*
	 * The tasks' end, with a settle to come: this question is held until
	 * the reading after the end is in, and the settle takes its answer
	 * without asking again (one question at the step's end, not two).
	 */
	held = step_energy_settle_expected(&se_step) && _step_tasks_reaped();
	q = step_energy_poll_question(first, held);
	if (q.send && _step_query_send(se_step.end_ns, q.how, q.timeout_ns))
		return POLL_ASKING;
	if (se_step_query(se_step.end_ns, q.how, q.timeout_ns, a))
		return POLL_NO_ANSWER;
	step_energy_poll_answered(&se_step, a, se_mono_ns());
	return POLL_ANSWERED;
}

int se_step_get_data(int data_type, void *data)
{
	bool stale = step_energy_stale(&se_step, se_mono_ns());
	poll_result_t polled = POLL_NO_ANSWER;
	energy_query_answer_t a;

	if (data_type != ENERGY_DATA_LAST_POLL &&
	    data_type != ENERGY_DATA_SENSOR_CNT)
		polled = _step_poll(&a);
	switch (data_type) {
	case ENERGY_DATA_NODE_ENERGY_UP:
	case ENERGY_DATA_JOULES_TASK:
		if (polled != POLL_ASKING)
			_step_refresh(polled == POLL_ANSWERED ? &a : NULL);
		return _step_fill(data);
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_STRUCT:
		/*
		 * NODE_ENERGY is what jobacct_gather asks when energy
		 * profiling runs, including its last poll as a task exits:
		 * refresh a stale view so the step's end is not up to a
		 * profile period old.
		 */
		if (stale && polled != POLL_ASKING)
			_step_refresh(polled == POLL_ANSWERED ? &a : NULL);
		return _step_fill(data);
	default:
		return se_energy_get_common(data_type, se_step.poll_time,
					    data);
	}
}

void se_step_profile(void)
{
	if (step_energy_profile_asks(&se_step, se_mono_ns()))
		_step_refresh(NULL);
	_step_profile_add();
}

/* slurmd's query socket into path (len bytes): true, or "" and false. */
static bool _step_socket(const char *name, char *path, size_t len)
{
	if (!energy_query_socket_path(_spool_dir(), name, path, len))
		return true;
	path[0] = '\0';
	return false;
}

/*
 * A live source: find slurmd's query socket.  True when there is one (not
 * in share mode, where this registers the step with slurmd's split when
 * its record is known by now; else at its first poll).
 */
static bool _step_find_live(void)
{
	const char *name = se_energy_node_name();
	energy_query_answer_t a;

	if (se_energy_plugin.window_energy && !se_share_mode()) {
		/* no live total, but the step's GPU part when slurmd meters
		 * GPUs (it serves the socket then) */
		se_step.energy_query_path[0] = '\0';
		if (se_gpus_configured())
			(void) _step_socket(name, se_step.gpu_query_path,
					    sizeof(se_step.gpu_query_path));
		return false;
	}
	if (!_step_socket(name, se_step.energy_query_path,
			  sizeof(se_step.energy_query_path)))
		return false;
	if (se_share_mode()) {
		(void) se_step_share(se_step.start_ns, false, 0,
				     LIVE_POLL_QUERY_TIMEOUT_NS, &a);
		return false;
	}
	return true;
}

void se_step_start(void)
{
	if (se_step.start_ns)
		return;
	step_energy_start(&se_step, se_mono_ns(), se_wall_ns());
	dataset_id = -1;
	rpc_log_rate = (se_ratelimit_t) SE_RATELIMIT_INIT(STEP_LOG_INTERVAL_NS,
							  STEP_LOG_BURST);
	/*
	 * The step's base: the node energy as the step starts.  With slurmd's
	 * query socket it comes with the first poll's answer, as the first
	 * task starts, milliseconds later (the time before is filled at the
	 * power then, _step_account): no question on the step's launch path
	 * (stock plugins take their base at that poll too).  Without, ask
	 * now (Slurm's RPC).
	 */
	if (_step_find_live() || se_share_mode())
		return;
	if (_step_refresh(NULL) == 0)
		log_flag(ENERGY, "%s: step base: node at %"PRIu64" J",
			 plugin_type, se_step.last_node_j);
}

/*
 * Node mode: the step's end, said to slurmd's query server so that the
 * snapshot (slurm-energy-exporter) lists the step with its final total,
 * E(end) - E(t0), and then drops it (energy_query_steps.h).  The answer
 * changes nothing here (the settle asks its own); a question in flight is
 * left alone.
 */
static void _step_tell_end_node(void)
{
	energy_query_answer_t a;
	energy_query_step_t q;
	uint64_t t0 = step_energy_t0(&se_step);
	uint64_t t1 = step_energy_live_t1(&se_step, se_mono_ns());

	if (!_step_ids(&q))
		return;
	q.end = true;
	(void) energy_query_ask(se_step.energy_query_path, t0,
				t1 > t0 ? t1 : t0, &q, ENERGY_QUERY_NO_KICK,
				LIVE_POLL_QUERY_TIMEOUT_NS, &a);
}

void se_step_tell_end(void)
{
	energy_query_answer_t a;

	if (se_role != ROLE_STEPD || !se_step.start_ns ||
	    !se_step.energy_query_path[0])
		return;
	if (!se_share_mode()) {
		_step_tell_end_node();
		return;
	}
	if (se_step.settled)
		return;
	(void) se_step_share(step_energy_share_t1(&se_step, se_mono_ns()),
			     true, 0, LIVE_POLL_QUERY_TIMEOUT_NS, &a);
}
