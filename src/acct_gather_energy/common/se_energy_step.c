/*
 * se_energy_step.c - slurmstepd's side of the energy glue: the step's
 * running figure, its energy relative to its start (se_energy.h).  What
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
 * The node figure comes from slurmd's energy query socket (energy_query.h:
 * tens of microseconds, and each boundary of the step kicks a meter
 * reading), or, when there is none or it cannot answer, from Slurm's
 * energy RPC (slurm_get_node_energy(): a munge credential each way).  In
 * share mode the same socket answers the step's share instead.  A slurmd
 * that restarted is bridged (energy_carry.h): the step's energy never
 * decreases.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "se_energy_int.h"

/* A step's view of node energy older than this is refreshed by RPC. */
#define STEP_REFRESH_NS		SE_NS_PER_SEC
/*
 * With energy profiling (--profile=energy), slurmstepd's energy thread
 * asks for a profile sample as it starts and then every profile period:
 * a view younger than this (an accounting poll's answer) is the current
 * one, and no question of its own is asked.
 */
#define STEP_PROFILE_FRESH_NS	(100 * SE_NS_PER_MS)
/*
 * slurmstepd polls twice as a task exits (the task's removal, and the
 * accounting thread woken for its last round), a fraction of a millisecond
 * apart.  A poll this close to the answer of the step's last poll query
 * (held at the tasks' end: the read it waited for) takes that query's
 * answer and instant (as the step's end, if it is the last): the
 * figure is the same, the instants a fraction of a millisecond apart, and
 * the reading that query kicked is already on its way (a second kick
 * would cost one more meter read).
 */
#define STEP_POLL_SHARE_NS	SE_NS_PER_MS	/* and its instant */

/*
 * Node mode: the GPUs' energy at the step's t0 is final once a GPU sample
 * after t0 exists.  slurmd's GPU samplers read every meter period, at most
 * every second (se_energy_gpus.c): twice that after t0 there is one, also
 * for a source whose own period is far longer (RRD rows every 10 s and
 * more, whose first reading after t0 comes that late).
 */
#define STEP_GPU_E0_FINAL_NS	(2 * SE_NS_PER_SEC)

/*
 * A step that cannot reach slurmd for less than this logs it at debug
 * level: slurmd restarting (an admin, a package upgrade) is bridged by the
 * next answer and loses nothing.  Longer, at error level.
 */
#define STEP_RPC_GRACE_NS	(30 * SE_NS_PER_SEC)

/* At most this many RPC failure messages per minute from one step. */
#define STEP_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define STEP_LOG_BURST		3

step_state_t se_step;

/* The first answer with data: the step's energy so far (its base). */
static void _step_account_first(uint64_t fill_j, uint32_t watts,
				uint64_t now_ns)
{
	/*
	 * Normally it comes as the step starts; if slurmd had no sample yet
	 * then, the time since the start is filled at the power now.
	 */
	se_step.have_base = true;
	if (now_ns - se_step.start_ns > 2 * SE_NS_PER_SEC)
		info("%s: first node energy %.1f s after the step started; the %"PRIu64" J before it are estimated from the power now (%u W)",
		     plugin_type, (double) (now_ns - se_step.start_ns) / 1e9,
		     fill_j, watts);
	se_step.step_j = fill_j;
}

/*
 * Account one answer of slurmd (node energy e at monotonic now_ns), from
 * its RPC or its query socket (_step_account_figure); restarted: the
 * answer says slurmd started again since the last one.
 */
static void _step_account(const acct_gather_energy_t *e, uint64_t now_ns,
			  bool restarted)
{
	energy_carry_step_t v = {
		.have_base = se_step.have_base,
		.start_ns = se_step.start_ns,
		.last_ns = se_step.last_ns,
		.last_node_j = se_step.last_node_j,
		.last_watts = se_step.last_watts,
		.started_s = se_step.slurmd_started,
	};
	energy_carry_answer_t a = {
		.t_ns = now_ns,
		.node_j = e->consumed_energy,
		.watts = (e->current_watts == NO_VAL) ? 0 : e->current_watts,
		.started_s = se_energy_start_time(e),
		.restarted = restarted,
	};
	energy_carry_how_t how;
	uint64_t add_j = energy_carry_step_j(&v, &a, &how);

	se_step.prev_step_j = se_step.step_j;
	switch (how) {
	case ENERGY_CARRY_FIRST:
		_step_account_first(add_j, a.watts, now_ns);
		break;
	case ENERGY_CARRY_ADVANCE:
		se_step.step_j += add_j;
		break;
	case ENERGY_CARRY_BACKWARDS:
	case ENERGY_CARRY_RESTARTED:
		info("%s: node energy went from %"PRIu64" J to %"PRIu64" J%s (slurmd restarted?); %"PRIu64" J bridged",
		     plugin_type, se_step.last_node_j, a.node_j,
		     how == ENERGY_CARRY_RESTARTED ?
		     ", slurmd's start time changed" : "", add_j);
		se_step.step_j += add_j;
		/* each way of telling a restart starts again from here: the
		 * other one's last id is from before it */
		se_step.slurmd_started = 0;
		se_step.figure_id = 0;
		break;
	}
	se_step.last_node_j = a.node_j;
	se_step.last_watts = a.watts;
	se_step.last_ns = now_ns;
	se_step.poll_time = e->poll_time;
	if (a.started_s)
		se_step.slurmd_started = a.started_s;
}

/* The step as a query names it, with its GPUs; false before its record
 * is known. */
static bool _step_ids(energy_query_step_t *q)
{
	stepd_step_rec_t *job = se_step.job;

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
 * The step's GPU part is now part_mj, up to t_ns; its power over the
 * interval since the last one (kept when the instant did not move).
 */
static void _step_gpu_part(uint64_t part_mj, uint64_t t_ns)
{
	if (se_step.have_gpu_part && t_ns > se_step.gpu_t_ns)
		se_step.gpu_watts = _avg_w(part_mj > se_step.gpu_part_mj ?
					   part_mj - se_step.gpu_part_mj : 0,
					   t_ns - se_step.gpu_t_ns);
	else if (!se_step.have_gpu_part && t_ns > se_step_t0())
		/* the first: its power since the step's start */
		se_step.gpu_watts = _avg_w(part_mj, t_ns - se_step_t0());
	se_step.have_gpu_part = true;
	se_step.gpu_part_mj = part_mj;
	se_step.gpu_t_ns = t_ns;
}

/*
 * Share mode: slurmd's charge of the step's GPUs so far, never decreasing
 * and carried over a restart like the share.  A version-3 slurmd, or one
 * not metering GPUs, sends none: the part stays as it was.
 */
static void _step_account_gpu_share(const energy_query_answer_t *a)
{
	bool restarted;

	if (!a->gpu.part)
		return;
	se_step.gpu_share = energy_carry_share(&se_step.gpu_share,
					       a->generation, a->gpu.part_mj,
					       &restarted);
	_step_gpu_part(se_step.gpu_share.share_mj, a->share_last_ns);
}

/*
 * Node mode: the step's GPUs' energy between t0 and this answer's t1_ns,
 * F x (e1 - e0), with e0 cached as soon as it is final (like e0_mj: the
 * GPUs' history does not reach back to the start of a long step); until
 * then each answer's own e0 (carried at the power of the GPUs' last sample
 * before it: off by a fraction of a second's energy at most).  Energies of
 * another server generation do not subtract: the part then stays.
 */
static void _step_account_gpu_node(const energy_query_answer_t *a,
				   uint64_t t1_ns)
{
	uint64_t e0_mj = a->gpu.e0_mj;

	if (!a->gpu.part)
		return;
	if (se_step.have_gpu_e0 && se_step.gpu_e0_t_ns != se_step_t0())
		se_step.have_gpu_e0 = false;
	if (!se_step.have_gpu_e0 &&
	    (a->complete0 || t1_ns >= se_step_t0() + STEP_GPU_E0_FINAL_NS)) {
		se_step.have_gpu_e0 = true;
		se_step.gpu_e0_mj = a->gpu.e0_mj;
		se_step.gpu_e0_gen = a->generation;
		se_step.gpu_e0_t_ns = se_step_t0();
	}
	if (se_step.have_gpu_e0) {
		if (a->generation != se_step.gpu_e0_gen)
			return;
		e0_mj = se_step.gpu_e0_mj;
	}
	if (a->gpu.e1_mj >= e0_mj)
		_step_gpu_part(a->gpu.e1_mj - e0_mj, t1_ns);
}

/*
 * A share answer: the step's energy follows it, never decreasing.  A
 * slurmd restarted since the last answer (another generation, a lower
 * figure) counts shares from zero again: what it counted before is kept
 * as a base (energy_carry_share).
 */
static void _step_account_share(const energy_query_answer_t *a, uint64_t now_ns)
{
	uint64_t prev_mj = se_step.share.share_mj;
	uint64_t prev_t = se_step.share_t_ns;
	bool restarted;

	se_step.share = energy_carry_share(&se_step.share, a->generation,
					   a->share_mj, &restarted);
	if (restarted)
		info("%s: slurmd restarted: its shares count again from here (%"PRIu64" mJ kept)",
		     plugin_type, se_step.share.base_mj);
	se_step.prev_step_j = se_step.step_j;
	se_step.step_j = (se_step.share.share_mj + 500) / 1000;
	if (a->share_last_ns > prev_t && prev_t)
		se_step.last_watts = _avg_w(se_step.share.share_mj - prev_mj,
					    a->share_last_ns - prev_t);
	_step_account_gpu_share(a);
	se_step.share_t_ns = a->share_last_ns;
	se_step.poll_time = _mono_to_wall_s(a->share_last_ns);
	se_step.have_base = true;
	se_step.last_ns = now_ns;
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
	uint64_t now_ns = se_mono_ns();

	memset(e, 0, sizeof(*e));
	if (!se_step.have_base) {
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
	e->consumed_energy = se_step.step_j;
	e->previous_consumed_energy = se_step.prev_step_j;
	e->base_consumed_energy = se_step.step_j - se_step.prev_step_j;
	e->current_watts = se_step.last_watts;
	if (now_ns - se_step.start_ns >= SE_NS_PER_SEC)
		e->ave_watts = _avg_w(se_step.step_j * 1000,
				      se_step.last_ns - se_step.start_ns);
	else
		e->ave_watts = se_step.last_watts;
	e->poll_time = se_step.poll_time;
	return SLURM_SUCCESS;
}

/*
 * A profile sample's time: the node figure's.  A window source's figure
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
	if (se_step.dataset_id < 0) {
		se_step.dataset_id = acct_gather_profile_g_create_dataset(
			"Energy", NO_PARENT, dataset);
		if (se_step.dataset_id < 0) {
			error("%s: cannot create the Energy profile dataset",
			      plugin_type);
			return;
		}
	}
	/* the step's GPU part is in Power too: GPUPower shows how much */
	power_w[0] = se_step.last_watts;
	power_w[1] = se_step.gpu_watts;
	acct_gather_profile_g_add_sample_data(se_step.dataset_id, power_w,
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
	stepd_step_rec_t *job = se_step.job;

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
	stepd_step_rec_t *job = se_step.job;

	return job && job->node_tasks && job->task && job->task[0] &&
	       job->task[0]->pid > 0;
}

uint64_t se_step_t0(void)
{
	return se_step.first_poll_ns ? se_step.first_poll_ns :
	       se_step.start_ns;
}

/* What a question's answer (rc, a for [t0, t1_ns]) tells the step. */
static void _step_query_done(int rc, const energy_query_answer_t *a,
			     uint64_t t1_ns)
{
	if (rc != se_step.energy_query_rc)
		log_flag(ENERGY, "%s: energy query %s: %s", plugin_type,
			 se_step.energy_query_path, rc ? strerror(-rc) : "answering");
	se_step.energy_query_rc = rc;
	if (rc)
		return;
	if (!se_step.have_e0 && a->complete0) {
		se_step.have_e0 = true;
		se_step.e0_mj = a->e0_mj;
		se_step.e0_gen = a->generation;
		se_step.e0_t_ns = se_step_t0();
	}
	_step_account_gpu_node(a, t1_ns);
}

/* Before a question: the step's t0 may have moved (e0 is for its t0). */
static void _step_query_begin(void)
{
	if (se_step.have_e0 && se_step.e0_t_ns != se_step_t0())
		se_step.have_e0 = false;
	se_step.queries++;
}

/*
 * Ask slurmd's query channel about [t0, t1] (a live source only).  With
 * kick, the question itself makes slurmd read the meter when t1 (or t0)
 * has no reading after it yet; that is how a boundary "kicks" a reading.
 * Without, it only asks what is known (the node figure): no meter read for
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
	/* answers are taken in the order asked: the figure never goes back */
	(void) se_step_collect(&earlier);
	_step_query_begin();
	/* named, so that slurmd answers the part of the step's GPUs */
	rc = energy_query_ask(se_step.energy_query_path, se_step_t0(), t1_ns,
			      _step_ids(&q) ? &q : NULL, how, timeout_ns, a);
	_step_query_done(rc, a, t1_ns);
	return rc;
}

/*
 * The node figure slurmd put into a query's answer (its figure hook): the
 * same figure as its energy RPC answers, without the RPC.  Another figure
 * id is a slurmd that started again.  0, or -ENODATA (no figure in it).
 */
static int _step_account_figure(const energy_query_answer_t *a, uint64_t now_ns)
{
	acct_gather_energy_t e;
	bool restarted;

	if (!a->figure)
		return -ENODATA;
	memset(&e, 0, sizeof(e));
	e.consumed_energy = a->figure_mj / 1000;
	e.current_watts = _mw_to_w(a->figure_power_mw);
	e.poll_time = _mono_to_wall_s(a->figure_sample_ns);
	restarted = se_step.figure_id && a->figure_id != se_step.figure_id;
	_step_account(&e, now_ns, restarted);
	se_step.figure_id = a->figure_id;
	return 0;
}

int se_step_collect(energy_query_answer_t *a)
{
	uint64_t t1_ns = se_step.question.t1_ns;
	int rc;

	if (!se_step.asking)
		return -ENOENT;
	se_step.asking = false;
	rc = energy_query_collect(&se_step.question, a);
	_step_query_done(rc, a, t1_ns);
	if (rc)
		return rc;
	/* the figure as of the question's instant, when slurmd read it */
	(void) _step_account_figure(a, t1_ns);
	if (t1_ns == se_step.end_ns) {
		se_step.poll_answered = true;
		se_step.poll_answer = *a;
		se_step.poll_answer_ns = t1_ns;
	}
	return 0;
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
	_step_query_begin();
	rc = energy_query_send(se_step.energy_query_path, se_step_t0(), t1_ns,
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
 * no reading: the figure is what slurmd knows).  0, or -errno: the query
 * failed, or its answer holds no figure.
 */
static int _step_refresh_figure(const energy_query_answer_t *a)
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
	return _step_account_figure(a, se_mono_ns());
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
	if (!energy_query_ask(se_step.gpu_query_path, se_step_t0(), now_ns,
			      &q, ENERGY_QUERY_NO_KICK,
			      LIVE_POLL_QUERY_TIMEOUT_NS, &a))
		_step_account_gpu_node(&a, now_ns);
}

/* A failed energy RPC: at debug level while slurmd may be restarting. */
static void _step_rpc_failed(void)
{
	uint64_t now_ns = se_mono_ns();

	if (!se_step.rpc_fail_ns)
		se_step.rpc_fail_ns = now_ns;
	if (now_ns - se_step.rpc_fail_ns < STEP_RPC_GRACE_NS)
		se_log(SE_LOG_DEBUG,
		       "cannot get node energy from slurmd: %s (slurmd restarting? its next answer bridges the gap)",
		       slurm_strerror(se_slurm_errno()));
	else
		se_log_limited(&se_step.rl, now_ns, SE_LOG_ERROR,
			       "cannot get node energy from slurmd for %.0f s: %s",
			       (double) (now_ns - se_step.rpc_fail_ns) /
			       SE_NS_PER_SEC,
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
		_step_account(&e[0], now_ns, false);
	}
	acct_gather_energy_destroy(e);
	return rc;
}

/*
 * Ask slurmd for the node energy: through its query socket (the figure in
 * a, or in a query now) when there is one, else, or when it cannot answer,
 * through Slurm's RPC.  0, or -errno (nothing changed).
 */
static int _step_refresh(const energy_query_answer_t *a)
{
	energy_query_answer_t share_a;
	int rc;

	if (se_step.settled)
		return 0;
	if (se_share_mode()) {
		/* the share so far: t1 at the start kicks no reading (the
		 * sampler's period sets the running figure's freshness) */
		return se_step_share(se_step.start_ns, false, 0,
				     LIVE_POLL_QUERY_TIMEOUT_NS, &share_a);
	}
	if (se_step.energy_query_path[0]) {
		if (!(rc = _step_refresh_figure(a))) {
			se_step.rpc_fail_ns = 0;
			return 0;
		}
		if (!se_step.rpcs)
			log_flag(ENERGY, "%s: node energy through Slurm's RPC: the energy query socket gave no figure (%s)",
				 plugin_type, strerror(-rc));
	}
	_step_ask_gpu_part();
	return _step_refresh_rpc();
}

/* What an accounting poll (_step_mark_poll) brought */
typedef enum {
	POLL_NO_ANSWER,		/* none: refresh as without a poll */
	POLL_ANSWERED,		/* its answer, with the node figure */
	POLL_ASKING,		/* its question in flight: nothing to refresh */
} step_poll_t;

/*
 * An accounting poll: while the step's tasks run (or exit), its instant is
 * the step's end so far.  Polls after slurmstepd began ending the step
 * (jobacct_gather's thread may run once more) do not move it.  With a live
 * source, each such poll asks for a reading now (the last one before the
 * step ends is its end: its reading then comes within milliseconds, not a
 * poll period later); the first poll, as the first task starts, is the
 * start of the step's window.  Kicks coalesce in slurmd's sampler, and a
 * poll right after another takes its answer, or its question's instant
 * (STEP_POLL_SHARE_NS).  The answer (in *a with POLL_ANSWERED) also
 * carries the node figure.
 */
static step_poll_t _step_mark_poll(energy_query_answer_t *a)
{
	uint64_t now_ns = se_mono_ns(), timeout;
	bool first = false, held;
	unsigned how;

	if (se_step.job && se_step.job->state >= SLURMSTEPD_STEP_ENDING)
		return POLL_NO_ANSWER;
	if (se_step.asking && !se_step.settled &&
	    now_ns - se_step.question.t1_ns < STEP_POLL_SHARE_NS)
		return POLL_ASKING;	/* that question's instant is this one */
	if (se_step.poll_answered && !se_step.settled &&
	    now_ns - se_step.poll_answer_ns < STEP_POLL_SHARE_NS) {
		/* the same instant as that poll's, for the end too */
		*a = se_step.poll_answer;
		return POLL_ANSWERED;
	}
	se_step.end_wall_ns = se_wall_ns();
	se_step.end_ns = now_ns;
	se_step.poll_answered = false;
	if (!se_step.energy_query_path[0] || se_step.settled || se_share_mode())
		return POLL_NO_ANSWER;
	if (!se_step.first_poll_ns && _step_tasks_started()) {
		se_step.first_poll_ns = se_step.end_ns;
		first = true;
	}
	/*
	 * The tasks' end, with a settle to come: this question is held until
	 * the reading after the end is in, and the settle takes its answer
	 * without asking again (one question at the step's end, not two).
	 */
	held = se_settle_expected() && _step_tasks_reaped();
	/*
	 * The first poll (as the first task starts: slurmstepd polls before
	 * it lets the tasks exec, so a wait there delays every task) and the
	 * held one (slurmstepd polls there before telling srun the tasks
	 * ended; the settle reads its answer in fini() a millisecond later)
	 * do not wait for their answer.  What the step reports meanwhile is
	 * its energy before that poll; the settle sets its end.  Every other
	 * poll waits: its running figure is what Slurm takes from it.
	 */
	how = held ? ENERGY_QUERY_HOLD : 0;
	timeout = held ? LIVE_QUERY_TIMEOUT_NS : LIVE_POLL_QUERY_TIMEOUT_NS;
	if ((first || held) && _step_query_send(se_step.end_ns, how, timeout))
		return POLL_ASKING;
	if (se_step_query(se_step.end_ns, how, timeout, a))
		return POLL_NO_ANSWER;
	se_step.poll_answered = true;
	se_step.poll_answer = *a;
	se_step.poll_answer_ns = se_mono_ns();
	return POLL_ANSWERED;
}

int se_step_get_data(int data_type, void *data)
{
	bool stale = (se_mono_ns() - se_step.last_ns) >= STEP_REFRESH_NS;
	step_poll_t polled = POLL_NO_ANSWER;
	energy_query_answer_t a;

	if (data_type != ENERGY_DATA_LAST_POLL &&
	    data_type != ENERGY_DATA_SENSOR_CNT)
		polled = _step_mark_poll(&a);
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
	case ENERGY_DATA_LAST_POLL:
		*(time_t *) data = se_step.poll_time;
		return SLURM_SUCCESS;
	case ENERGY_DATA_SENSOR_CNT:
		*(uint16_t *) data = 1;
		return SLURM_SUCCESS;
	default:
		error("%s: %s: unknown data type %d", plugin_type, __func__,
		      data_type);
		return SLURM_ERROR;
	}
}

void se_step_profile(void)
{
	if (!se_step.last_ns ||
	    se_mono_ns() - se_step.last_ns >= STEP_PROFILE_FRESH_NS)
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
		/* no live figure, but the step's GPU part when slurmd meters
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
	se_step.start_ns = se_mono_ns();
	se_step.start_wall_ns = se_wall_ns();
	se_step.dataset_id = -1;
	se_step.rl = (se_ratelimit_t) SE_RATELIMIT_INIT(STEP_LOG_INTERVAL_NS,
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

void se_step_tell_end(void)
{
	energy_query_answer_t a;

	if (se_role != ROLE_STEPD || !se_share_mode() || se_step.settled ||
	    !se_step.start_ns || !se_step.energy_query_path[0])
		return;
	(void) se_step_share(se_step.end_ns > se_step.start_ns ?
			     se_step.end_ns : se_mono_ns(), true, 0,
			     LIVE_POLL_QUERY_TIMEOUT_NS, &a);
}
