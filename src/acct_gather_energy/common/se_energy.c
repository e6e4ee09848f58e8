/*
 * se_energy.c - shared Slurm glue of the suite's acct_gather_energy plugins.
 *
 * See se_energy.h for the model.  What Slurm 22.05 does with each call, and
 * so what each answer must be (src/ paths are Slurm's):
 *
 *  slurmd/req.c:_rpc_acct_gather_update()  (slurmctld, AcctGatherNodeFreq)
 *	update_node_energy(), then get_sum(ENERGY_DATA_NODE_ENERGY): the node
 *	total shown by scontrol show node (CurrentWatts NO_VAL = "n/s").
 *  slurmd/slurmd.c:_fill_registration_msg()  get_sum(NODE_ENERGY) likewise.
 *  slurmd/req.c:_rpc_acct_gather_energy()  (a step's slurm_get_node_energy)
 *	LAST_POLL and SENSOR_CNT, then STRUCT or, when the last poll is older
 *	than the request's delta, JOULES_TASK, into a SENSOR_CNT array.  With
 *	SENSOR_CNT 0 it sends no reply at all.
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
 *  slurm_acct_gather.c:acct_gather_reconfig()  unloads the plugin (fini,
 *	dlclose) and loads it again: the plugin is linked -z nodelete, so the
 *	node total carried over below survives and a detached sampler thread
 *	never runs in unmapped code.
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"
#include "src/slurmd/slurmd/slurmd.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "attrib.h"
#include "cg_cpu.h"
#include "energy_query.h"
#include "se_energy.h"
#include "se_log.h"
#include "se_slurm_log.h"
#include "se_time.h"

/* slurmd and slurmstepd export their slurmd_conf_t; other daemons do not. */
#pragma weak conf

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
 * apart.  A poll this close to the step's last poll query takes that
 * query's answer and instant (as the step's end, if it is the last): the
 * figure is the same, the instants a fraction of a millisecond apart, and
 * the reading that query kicked is already on its way (a second kick
 * would cost one more meter read).
 */
#define STEP_POLL_SHARE_NS	SE_NS_PER_MS	/* and its instant */

/* How often a settling step asks its source again. */
#define SETTLE_POLL_NS		SE_NS_PER_SEC
/*
 * When srun's allocation ends while a step settles, slurmd asks the step to
 * terminate, which starts slurmstepd's step_terminate_monitor: a step still
 * there after UnkillableStepTimeout drains the node ("Kill task failed").
 * The settle ends this long before that.
 */
#define SETTLE_UNKILLABLE_MARGIN_S	10

/*
 * Live settle (sources without window_energy, see se_energy_step_settle):
 * one query's timeout (the server answers in microseconds, or within its
 * own 100 ms bound when a silent client holds it), the pause between
 * queries while the reading after the end is awaited, doubled after each
 * (every query kicks a read: a meter whose reading's instant lags its read,
 * as a BMC's rolling average does by half its window, would otherwise be
 * read back to back until the instant passes the end), and what is added
 * to the sampler's period + deadline for the query round trips themselves.
 */
#define LIVE_QUERY_TIMEOUT_NS	(250 * SE_NS_PER_MS)
#define LIVE_POLL_QUERY_TIMEOUT_NS (50 * SE_NS_PER_MS)
#define LIVE_RETRY_NS		(5 * SE_NS_PER_MS)
#define LIVE_RETRY_MAX_NS	(160 * SE_NS_PER_MS)
#define LIVE_MARGIN_NS		(250 * SE_NS_PER_MS)

/*
 * How long a settle's wait pauses before it asks again: *pause_ns, which
 * doubles each time up to LIVE_RETRY_MAX_NS, but never past LIVE_RETRY_NS
 * before limit_ns, where the last question goes.  0: no time left.
 */
static uint64_t _settle_pause(uint64_t *pause_ns, uint64_t limit_ns)
{
	uint64_t now = se_mono_ns(), wait = *pause_ns;

	if (now + LIVE_RETRY_NS >= limit_ns)
		return 0;
	if (wait > limit_ns - LIVE_RETRY_NS - now)
		wait = limit_ns - LIVE_RETRY_NS - now;
	*pause_ns = *pause_ns * 2 < LIVE_RETRY_MAX_NS ? *pause_ns * 2 :
		    LIVE_RETRY_MAX_NS;
	return wait;
}

/*
 * A step that cannot reach slurmd for less than this logs it at debug
 * level: slurmd restarting (an admin, a package upgrade) is bridged by the
 * next answer and loses nothing.  Longer, at error level.
 */
#define STEP_RPC_GRACE_NS	(30 * SE_NS_PER_SEC)

/*
 * The query server's figure hook (_node_figure) runs in the server's
 * thread, which _node_stop joins under state_lock: it tries the lock for at
 * most this long (then the step asks Slurm's RPC instead), in these steps.
 */
#define FIGURE_LOCK_WAIT_NS	(5 * SE_NS_PER_MS)
#define FIGURE_LOCK_RETRY_NS	(100 * SE_NS_PER_US)

/* At most this many RPC failure messages per minute from one step. */
#define STEP_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define STEP_LOG_BURST		3

typedef enum {
	ROLE_OTHER = 0,		/* slurmctld, clients: config only */
	ROLE_SLURMD,
	ROLE_STEPD,
} role_t;

/*
 * Node energy at the last fini(): survives a reload (-z nodelete).  The
 * node's history at its last sample (energy_mj at t_ns; power_mw the
 * average over the last seconds, to bridge the reload's gap with), and the
 * highest figure already answered (a floor: extrapolations may have gone
 * past the history, and the node total never goes back).
 */
typedef struct {
	bool valid;
	uint64_t energy_mj;
	uint64_t power_mw;
	uint64_t t_ns;
	uint64_t reported_mj;
} carry_t;

/* slurmd: the sampler and what readers derived from it */
typedef struct {
	sampler_t *sampler;
	se_energy_meter_t meter;
	bool unmetered;		/* configured without a meter */
	uint64_t base_mj;	/* carried over from before a reconfigure */
	uint64_t skip_mj;	/* sampler energy not the node's: before
				 * the carry or before start_ns */
	uint64_t start_ns;	/* monotonic: this sampler's start */
	bool joined;		/* first sample seen (_node_join) */
	/* A reconfigure's carry until the new sampler's first sample joins
	 * it (valid: still pending) */
	carry_t carry;
	uint64_t reported_mj;	/* highest energy ever answered */
	uint64_t prev_reported_j; /* consumed_energy of the previous answer */
	bool have_first;	/* first_* valid (for ave_watts) */
	uint64_t first_ns;
	uint64_t first_mj;
	eq_server_t *eq;	/* steps' energy queries (live sources) */
} node_state_t;

/* slurmstepd: the step's energy, relative to its start */
typedef struct {
	bool have_base;		/* one good answer from slurmd seen */
	uint64_t start_ns;	/* monotonic: when the step configured us */
	uint64_t last_ns;	/* monotonic: last good answer */
	uint64_t last_node_j;	/* node consumed_energy at last_ns */
	uint32_t last_watts;
	time_t poll_time;	/* slurmd's last sample (wall clock) */
	time_t slurmd_started;	/* slurmd's start time in its last answer
				 * (24.11+; 0: not said) */
	uint64_t figure_id;	/* the figure's id in slurmd's last answer
				 * through the query socket (0: none yet) */
	unsigned rpcs;		/* Slurm energy RPCs this step asked */
	unsigned queries;	/* ... and queries to slurmd's socket */
	uint64_t rpc_fail_ns;	/* monotonic: first RPC failure of a run,
				 * 0 while slurmd answers */
	uint64_t step_j;	/* energy of the step so far */
	uint64_t prev_step_j;	/* step_j before the last refresh */
	int dataset_id;		/* profile dataset, -1: none */
	bool warned_no_data;
	se_ratelimit_t rl;
	/* for se_energy_step_settle() */
	stepd_step_rec_t *job;	/* ENERGY_DATA_STEP_PTR */
	uint64_t start_wall_ns;	/* the step's window, wall clock */
	uint64_t end_wall_ns;	/* last poll before the step began ending */
	bool settled;		/* step_j is final: no more refreshes */
	bool conf_bad;		/* acct_gather.conf refused in this step */
	/* for the live settle (no window_energy): slurmd's query channel */
	char eq_path[108];	/* "" when there is none */
	int eq_rc;		/* last query's result (logged on change) */
	uint64_t first_poll_ns;	/* monotonic: first accounting poll, as the
				 * first task starts: t0 of a live settle */
	uint64_t end_ns;	/* monotonic twin of end_wall_ns: t1 */
	bool poll_answered;	/* the query of the poll at end_ns ... */
	eq_answer_t poll_answer; /* ... answered this */
	bool have_e0;		/* e0_mj is final (a sample after t0) */
	uint64_t e0_mj;		/* sampler energy at t0 ... */
	uint64_t e0_gen;	/* ... from this server generation */
	uint64_t e0_t_ns;	/* ... for this t0 (the start's answer comes
				 * before the tasks' start is known) */
	/* EnergyAttribution=share: the step's share from slurmd */
	bool share_have;	/* one share answer seen */
	uint64_t share_gen;	/* ... from this server generation */
	uint64_t share_last_mj;	/* slurmd's figure in the last answer */
	uint64_t share_base_mj;	/* shares of slurmds before a restart */
	uint64_t share_mj;	/* the step's share (base + last) */
	uint64_t share_t_ns;	/* end of the last split interval */
} step_state_t;


/* The window of the power that bridges a reload: at least this, or two
 * periods of the meter. */
#define CARRY_POWER_WINDOW_NS	(2 * SE_NS_PER_SEC)

/*
 * EnergyAttribution=share (attrib.h).  acfg: the keys, in every process.
 * slurmd: attr, the split, lives as long as slurmd (the plugin is -z
 * nodelete: a reload continues every step's share); attr_lock guards it
 * between the sampler thread (on_sample: split) and the query server's
 * thread (shares).  attr_scan, attr_scan_rc, attr_said_sluid and the status
 * file are the sampler thread's, under scan_lock (a sampler thread left behind by a
 * reload, stuck in its meter, may still finish one sample).
 */
static attrib_conf_t acfg;
static char acfg_root[PATH_MAX];	/* EnergyCgroupRoot, "" auto */
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static attrib_t *attr;
static char attr_root[PATH_MAX];
static cg_scan_t attr_scan;
static bool attr_said_sluid;	/* SLUID job cgroups seen last scan */
static int attr_scan_rc = 1;		/* 1: none yet */
static char attr_status[PATH_MAX];	/* the totals file, "" none */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static role_t role;
/* slurmd: the id of its node figure's continuity (energy_query.h), drawn
 * once per slurmd process: the figure is carried over reloads (-z nodelete
 * keeps this too) and starts again from zero only when slurmd does. */
static uint64_t figure_id;
static int context_id = -1;
static node_state_t node;
static step_state_t step;
static carry_t carry;

/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(ENERGY);


static role_t _role(void)
{
	if (se_in_slurmd())
		return ROLE_SLURMD;
	if (se_in_slurmstepd())
		return ROLE_STEPD;
	return ROLE_OTHER;
}

static time_t _mono_to_wall_s(uint64_t t_ns)
{
	return t_ns ? (time_t) (se_mono_to_wall_ns(t_ns) / SE_NS_PER_SEC) : 0;
}

/* mW -> W, rounded; a watt figure never reads NO_VAL by accident. */
static uint32_t _mw_to_w(uint64_t power_mw)
{
	uint64_t w = (power_mw + 500) / 1000;

	return (w >= NO_VAL) ? NO_VAL - 1 : (uint32_t) w;
}

/* Average watts of energy_mj over t_ns (mJ/ns = 1e6 W). */
static uint32_t _avg_w(uint64_t energy_mj, uint64_t t_ns)
{
	if (!t_ns)
		return 0;
	return _mw_to_w((uint64_t) ((double) energy_mj * 1e9 / (double) t_ns));
}

/* ------------------------------------------------------------ slurmd */

static void _node_stop(void)
{
	if (!node.sampler)
		return;
	/* The query server reads the sampler: it goes first. */
	eq_server_stop(node.eq);
	node.eq = NULL;
	/*
	 * sampler_stop() joins the thread, or detaches it when the backend
	 * overruns its deadline; a detached thread may still use dev, so dev
	 * is freed only after a join.  The thread itself closes the device.
	 */
	if (sampler_stop(node.sampler) == 0 && node.meter.dev_free)
		node.meter.dev_free(node.meter.dev);
	node.sampler = NULL;
	xfree(node.meter.cfg.label);
	xfree(node.meter.describe);
}

/*
 * The new sampler's first sample: its figures count from that sample's
 * instant t_f, which may lie before the sampler started (a reading stands
 * for an instant before it was made: a DCMI rolling average for the
 * middle of its window).  After a reload, its carry (node energy E at the
 * old sampler's last sample, t_c) meets them: the node total is E + the
 * gap [t_c, t_f] at the power carried over, or, t_f earlier, E + what the
 * new sampler counted after t_c.  Without a carry (slurmd started), what
 * the sampler counted before its start is no energy of this slurmd's:
 * the steps bridged a restart up to it.  So no interval is counted twice
 * or not at all.  Before the first sample after a reload, E extrapolated
 * at that power for one missed sample (period + deadline), then held.
 */
static void _node_join(const sampler_status_t *st)
{
	uint64_t t_f = st->first_sample_ns, t_c = node.carry.t_ns, e_mj = 0;

	if (node.joined || !t_f)
		return;
	node.joined = true;
	if (!node.carry.valid) {
		if (t_f < node.start_ns &&
		    !sampler_energy_at(node.sampler, node.start_ns, &e_mj))
			node.skip_mj = e_mj;
		return;
	}
	node.carry.valid = false;
	node.base_mj = node.carry.energy_mj;
	if (t_f >= t_c)
		node.base_mj += (uint64_t) ((double) node.carry.power_mw *
					    (double) (t_f - t_c) / 1e9);
	else if (!sampler_energy_at(node.sampler, t_c, &e_mj))
		node.skip_mj = e_mj;
}

/* The node's figure from the sampler's (never below 0). */
static uint64_t _node_mj(uint64_t sampler_mj)
{
	return node.base_mj + (sampler_mj > node.skip_mj ?
			       sampler_mj - node.skip_mj : 0);
}

/*
 * A reload's carry from this sampler (before it stops): the node's history
 * at its last sample, not an extrapolation to now (a meter's last power
 * may be far off: a counter-only meter's, from two readings milliseconds
 * apart), with the average power of the last seconds for the gap.  A
 * sampler without a sample passes its own carry on.
 */
static void _node_carry_out(const sampler_status_t *st)
{
	uint64_t t1 = st->last_sample_ns, t0, w, e0 = 0, e1 = 0;

	if (node.carry.valid || !t1) {
		carry.energy_mj = node.carry.valid ? node.carry.energy_mj :
				  node.base_mj;
		carry.t_ns = node.carry.valid ? node.carry.t_ns :
			     se_mono_ns();
		carry.power_mw = node.carry.valid ? node.carry.power_mw : 0;
		return;
	}
	w = 2 * node.meter.cfg.period_ns;
	if (w < CARRY_POWER_WINDOW_NS)
		w = CARRY_POWER_WINDOW_NS;
	t0 = t1 > w ? t1 - w : 0;
	if (t0 < st->first_sample_ns)
		t0 = st->first_sample_ns;
	(void) sampler_energy_at(node.sampler, t1, &e1);
	(void) sampler_energy_at(node.sampler, t0, &e0);
	carry.energy_mj = _node_mj(e1);
	carry.t_ns = t1;
	carry.power_mw = t1 > t0 && e1 > e0 ?
		(uint64_t) ((double) (e1 - e0) * 1e9 / (double) (t1 - t0)) :
		st->power_mw;
}

/* Node energy now, carried over reloads, never decreasing. */
static uint64_t _node_energy_mj(const sampler_status_t *st)
{
	uint64_t mj, now_ns, dt_ns, hold_ns;

	_node_join(st);
	if (node.carry.valid) {
		now_ns = se_mono_ns();
		hold_ns = node.meter.cfg.period_ns + node.meter.cfg.deadline_ns;
		dt_ns = now_ns > node.carry.t_ns ? now_ns - node.carry.t_ns : 0;
		if (dt_ns > hold_ns)
			dt_ns = hold_ns;
		mj = node.carry.energy_mj +
		     (uint64_t) ((double) node.carry.power_mw *
				 (double) dt_ns / 1e9);
	} else {
		mj = _node_mj(st->energy_mj);
	}
	if (mj < node.reported_mj)
		mj = node.reported_mj;
	node.reported_mj = mj;
	return mj;
}

/*
 * Fill one acct_gather_energy_t with the node's figures now, from the
 * sampler's last sample and interpolation; never blocks on the meter.
 * Returns SLURM_ERROR when there has been no sample yet (figures then say
 * "no data": 0 J so far, current_watts NO_VAL, poll_time 0).
 */
static int _node_fill(acct_gather_energy_t *e)
{
	sampler_status_t st;
	uint64_t now_ns = se_mono_ns(), mj;

	memset(e, 0, sizeof(*e));
	e->current_watts = NO_VAL;
	se_energy_set_start_time(e);	/* 24.11+: tells steps of a restart */
	if (!node.sampler) {
		e->consumed_energy = node.reported_mj / 1000;
		return SLURM_ERROR;
	}

	sampler_status(node.sampler, &st);
	mj = _node_energy_mj(&st);
	e->consumed_energy = mj / 1000;
	e->previous_consumed_energy = node.prev_reported_j;
	e->base_consumed_energy = e->consumed_energy - node.prev_reported_j;
	node.prev_reported_j = e->consumed_energy;
	if (!st.last_sample_ns)
		return SLURM_ERROR;

	e->current_watts = _mw_to_w(st.power_mw);
	e->poll_time = _mono_to_wall_s(st.last_sample_ns);
	if (!node.have_first) {
		node.have_first = true;
		node.first_ns = now_ns;
		node.first_mj = mj;
	}
	if (now_ns - node.first_ns >= SE_NS_PER_SEC)
		e->ave_watts = _avg_w(mj - node.first_mj,
				      now_ns - node.first_ns);
	else
		e->ave_watts = e->current_watts;
	return SLURM_SUCCESS;
}

static time_t _node_last_poll(void)
{
	sampler_status_t st;

	if (!node.sampler)
		return 0;
	sampler_status(node.sampler, &st);
	return _mono_to_wall_s(st.last_sample_ns);
}

/* slurmd's SlurmdSpoolDir (%n expanded), shared with its slurmstepds. */
static const char *_spool_dir(void)
{
	return (&conf && conf) ? conf->spooldir : NULL;
}

static bool _share_mode(void)
{
	return acfg.mode == ATTRIB_MODE_SHARE;
}

/*
 * slurmd's sampler thread, after each good sample: the steps' CPU time
 * from their cgroups, and the split of the energy since the previous
 * sample.  A scan that fails (other than "no job tree yet") splits
 * nothing: the next sample's interval then covers this one too.
 */
/*
 * The node's totals since slurmd's split began, for admins and tests, in
 * <SlurmdSpoolDir>/slurm-energy-<node>.attribution (one line, replaced
 * atomically at each sample): "time=<wall s> t_ns=<monotonic>
 * measured_mj= charged_mj= unattributed_mj= idle_mw= idle=configured|
 * learned|unknown intervals= jobs=".  charged + unattributed == measured.
 */
static void _attr_write_status(const attrib_totals_t *t, uint64_t t_ns)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (!attr_status[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", attr_status);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "time=%.3f t_ns=%"PRIu64" measured_mj=%"PRIu64" charged_mj=%"PRIu64" unattributed_mj=%"PRIu64" idle_mw=%"PRIu64" idle=%s intervals=%lu jobs=%zu sluid_jobs=%zu sluid_unread=%zu\n",
		(double) se_mono_to_wall_ns(t_ns) / 1e9, t_ns, t->measured_mj,
		t->charged_mj, t->unattributed_mj, t->idle_mw,
		acfg.idle_set ? "configured" :
		(t->idle_learned ? "learned" : "unknown"), t->intervals,
		t->jobs, attr_scan.sluid_jobs, attr_scan.sluid_unread);
	if (fclose(f) || rename(tmp, attr_status))
		unlink(tmp);
}

static void _attr_on_sample(void *arg, uint64_t t_ns, uint64_t energy_mj)
{
	attrib_totals_t tot;
	int rc;

	(void) arg;
	slurm_mutex_lock(&scan_lock);
	rc = cg_scan(attr_root, &attr_scan);
	if (rc != attr_scan_rc && rc && rc != -ENOENT)
		error("%s: energy attribution: cannot read the steps' CPU time under %s: %s; intervals are merged until it reads again",
		      plugin_type, attr_root, strerror(-rc));
	else if (rc != attr_scan_rc)
		log_flag(ENERGY, "%s: energy attribution: %s %s", plugin_type,
			 attr_root, rc ? "does not exist yet (no job)" :
			 "read");
	attr_scan_rc = rc;
	/* Slurm 26.05's cgroup v2 names job directories by SLUID unless
	 * CgroupJobIdPaths=yes; cg_scan() maps them through their steps'
	 * slurmstepd, and says how many it could not */
	if (!rc && attr_scan.sluid_unread && !attr_said_sluid)
		log_flag(ENERGY, "%s: energy attribution: %zu job cgroup(s) under %s named by SLUID with no slurmstepd to tell their job id, not read this time (CgroupJobIdPaths=yes in cgroup.conf names them by job id)",
			 plugin_type, attr_scan.sluid_unread, attr_root);
	attr_said_sluid = !rc && attr_scan.sluid_unread;
	if (rc && rc != -ENOENT) {
		slurm_mutex_unlock(&scan_lock);
		return;
	}
	slurm_mutex_lock(&attr_lock);
	if (attr && attrib_interval(attr, t_ns, energy_mj,
				    rc ? NULL : &attr_scan, NULL, 0) == -ENOMEM)
		error("%s: energy attribution: out of memory", plugin_type);
	if (attr)
		attrib_totals(attr, &tot);
	slurm_mutex_unlock(&attr_lock);
	if (attr)
		_attr_write_status(&tot, t_ns);
	slurm_mutex_unlock(&scan_lock);
}

/* The query server's thread: register a step's begin/end, its share. */
static int _attr_share(void *arg, const eq_step_t *st, uint64_t t0_ns,
		       uint64_t t1_ns, uint64_t *share_mj, uint64_t *last_ns)
{
	int rc = -ENOENT;

	(void) arg;
	slurm_mutex_lock(&attr_lock);
	if (attr) {
		if (st->begin)
			(void) attrib_step_begin(attr, st->job_id, st->step_id,
						 t0_ns, st->ncpus);
		if (st->end)
			(void) attrib_step_end(attr, st->job_id, st->step_id,
					       t1_ns);
		rc = attrib_share(attr, st->job_id, st->step_id, share_mj,
				  last_ns);
	}
	slurm_mutex_unlock(&attr_lock);
	return rc;
}

/* slurmd, share mode: the split state (kept over reloads) and the hook
 * that feeds it, in the meter's sampler configuration. */
static void _attr_start(const char *name, sampler_config_t *cfg)
{
	attrib_params_t p = {
		.idle = acfg.idle, .idle_set = acfg.idle_set,
		.idle_mw = acfg.idle_mw,
		.node_cpus = (&conf && conf) ? conf->cpus : 0,
	};
	char root[PATH_MAX];
	int rc;

	if (!_share_mode())
		return;
	rc = cg_root_path(acfg_root[0] ? acfg_root : NULL, NULL, name, root,
			  sizeof(root));
	if (rc)
		fatal("%s: node %s: EnergyCgroupRoot=%s: cannot make the cgroup root's path: %s",
		      plugin_type, name, acfg_root, strerror(-rc));
	slurm_mutex_lock(&attr_lock);
	if (!attr)
		attr = attrib_new(&p);
	else
		attrib_rebase(attr);	/* a reload: a new sampler from 0 */
	slurm_mutex_unlock(&attr_lock);
	if (!attr)
		fatal("%s: energy attribution: out of memory", plugin_type);
	slurm_mutex_lock(&scan_lock);
	strcpy(attr_root, root);
	attr_scan_rc = 1;
	if (!_spool_dir() ||
	    snprintf(attr_status, sizeof(attr_status),
		     "%s/slurm-energy-%s.attribution", _spool_dir(), name) >=
	    (int) sizeof(attr_status))
		attr_status[0] = '\0';
	slurm_mutex_unlock(&scan_lock);
	cfg->on_sample = _attr_on_sample;
	cfg->on_sample_arg = NULL;
	info("%s: node %s: EnergyAttribution=share: each step is charged its share of the node's energy (CPU time from the cgroups under %s; idle %s, %s%s; %u CPUs)",
	     plugin_type, name, attr_root,
	     acfg.idle == ATTRIB_IDLE_SHARE ? "shared by allocated CPUs" :
	     "left unattributed",
	     acfg.idle_set ? "EnergyIdleWatts=" : "idle power learned",
	     acfg.idle_set ? "set" : " from job-free intervals", p.node_cpus);
}

/*
 * The node's figure for a step's energy query: what _node_fill answers
 * Slurm's energy RPC, so that the step needs no RPC (energy_query.h).  It
 * runs in the query server's thread, which _node_stop joins under
 * state_lock: it never waits long for that lock, and a server of a sampler
 * being replaced answers without it.  0, or -errno (the step then asks
 * Slurm's RPC).
 */
static int _node_figure(void *arg, uint64_t *figure_mj, uint64_t *power_mw,
			uint64_t *sample_ns)
{
	uint64_t until = se_mono_ns() + FIGURE_LOCK_WAIT_NS;
	sampler_status_t st;
	int rc = 0;

	while (pthread_mutex_trylock(&state_lock)) {
		if (se_mono_ns() >= until)
			return -EBUSY;
		se_sleep_ns(FIGURE_LOCK_RETRY_NS);
	}
	if (!node.sampler || node.sampler != arg) {
		rc = -ESTALE;
	} else {
		sampler_status(node.sampler, &st);
		*figure_mj = _node_energy_mj(&st);
		*power_mw = st.power_mw;
		*sample_ns = st.last_sample_ns;
		if (!st.last_sample_ns)
			rc = -ENODATA;
	}
	slurm_mutex_unlock(&state_lock);
	return rc;
}

/*
 * Serve the steps' energy queries (energy_query.h) for a live source, and
 * their shares in share mode; a source with window_energy settles from its
 * own history instead.  A failure costs only the settle's exactness (in
 * share mode: steps keep the node's figure): logged, not fatal.
 */
static void _node_serve(const char *name)
{
	char path[PATH_MAX], err[512] = "";
	int rc;

	if (se_energy_plugin.window_energy && !_share_mode())
		return;
	rc = eq_socket_path(_spool_dir(), name, path, sizeof(path));
	if (rc == -ENAMETOOLONG) {
		error("%s: node %s: energy query socket path too long for AF_UNIX (at most 107 bytes): %s; choose a shorter SlurmdSpoolDir. Steps keep their running energy figure",
		      plugin_type, name, path);
		return;
	}
	if (rc) {
		error("%s: node %s: no SlurmdSpoolDir for the energy query socket; steps keep their running energy figure",
		      plugin_type, name);
		return;
	}
	node.eq = eq_server_start(path, node.sampler,
				  node.meter.cfg.period_ns,
				  node.meter.cfg.deadline_ns, err,
				  sizeof(err));
	if (!node.eq)
		error("%s: node %s: %s; steps keep their running energy figure",
		      plugin_type, name, err);
	else
		debug("%s: node %s: serving step energy queries on %s",
		      plugin_type, name, path);
	if (node.eq && _share_mode())
		eq_server_set_share(node.eq, _attr_share, NULL);
	if (node.eq && !_share_mode()) {
		if (!figure_id)
			figure_id = eq_random_id();
		eq_server_set_figure(node.eq, _node_figure, node.sampler,
				     figure_id);
	}
}

static void _node_start(const char *meter_name, se_energy_make_meter_fn make,
			void *arg)
{
	const char *name = se_energy_node_name();
	se_energy_meter_t m = { 0 };
	char err[512] = "";
	int rc;

	if (!name)
		fatal("%s: cannot tell this slurmd's node name", plugin_type);
	rc = make(arg, name, &m, err, sizeof(err));
	if (rc == SE_ENERGY_NO_METER) {
		node.unmetered = true;
		info("%s: slurm-energy-plugins %s (built for Slurm %s), meter %s: node %s has no meter configured (%s); it reports no energy",
		     plugin_type, se_energy_version, se_energy_slurm_version,
		     meter_name, name, err[0] ? err : "Device=none");
		return;
	}
	if (rc)
		fatal("%s: node %s: %s", plugin_type, name, err);

	node.meter = m;
	node.meter.cfg.label = xstrdup(m.cfg.label);
	node.meter.describe = xstrdup(m.describe);
	_attr_start(name, &node.meter.cfg);
	node.start_ns = se_mono_ns();
	if (!(node.sampler = sampler_start(m.ops, m.dev, &node.meter.cfg)))
		fatal("%s: node %s: cannot start the %s sampler for %s: %m",
		      plugin_type, name, meter_name, node.meter.describe);
	_node_serve(name);

	/* A reload (scontrol reconfigure) continues the node's total from
	 * the new sampler's first sample (_node_join). */
	if (carry.valid) {
		node.carry = carry;	/* valid: pending */
		node.base_mj = carry.energy_mj;
		node.reported_mj = carry.reported_mj;
		carry.valid = false;
	}

	info("%s: slurm-energy-plugins %s (built for Slurm %s) started on node %s: meter %s %s",
	     plugin_type, se_energy_version, se_energy_slurm_version, name,
	     meter_name, node.meter.describe);
}

static int _node_get_data(int data_type, void *data)
{
	switch (data_type) {
	case ENERGY_DATA_NODE_ENERGY_UP:
	case ENERGY_DATA_JOULES_TASK:
		/* "fresh data wanted": ask for a read, answer with what is
		 * known now; the RPC thread never waits on the meter. */
		if (node.sampler)
			sampler_kick(node.sampler);
		return _node_fill(data);
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_STRUCT:
		return _node_fill(data);
	case ENERGY_DATA_LAST_POLL:
		*(time_t *) data = _node_last_poll();
		return SLURM_SUCCESS;
	case ENERGY_DATA_SENSOR_CNT:
		/* Always 1: with 0, slurmd leaves the step's RPC unanswered. */
		*(uint16_t *) data = 1;
		return SLURM_SUCCESS;
	default:
		error("%s: %s: unknown data type %d", plugin_type, __func__,
		      data_type);
		return SLURM_ERROR;
	}
}

/* ------------------------------------------------------------ slurmstepd */

/*
 * Account one answer of slurmd (node energy e at monotonic now_ns), from
 * its RPC or its query socket (_step_account_figure); restarted: the
 * answer says slurmd started again since the last one.
 */
static void _step_account(const acct_gather_energy_t *e, uint64_t now_ns,
			  bool restarted)
{
	uint32_t watts = (e->current_watts == NO_VAL) ? 0 : e->current_watts;
	uint64_t node_j = e->consumed_energy, fill_j;
	time_t started = se_energy_start_time(e);

	/*
	 * 24.11+ says when slurmd started (0 before its first registration,
	 * and always 0 on 22.05): another start time than the last answer's
	 * is a restart even when the new total happens not to be lower.
	 * 24.11's "scontrol reconfigure" re-executes slurmd, so it is one.
	 */
	restarted = step.have_base &&
		    (restarted || (started && step.slurmd_started &&
				   started != step.slurmd_started));

	step.prev_step_j = step.step_j;
	if (!step.have_base) {
		/*
		 * First answer with data.  Normally it comes as the step
		 * starts; if slurmd had no sample yet then, the time since the
		 * start is filled at the power now.
		 */
		step.have_base = true;
		fill_j = (uint64_t) watts * (now_ns - step.start_ns) /
			SE_NS_PER_SEC;
		if (now_ns - step.start_ns > 2 * SE_NS_PER_SEC)
			info("%s: first node energy %.1f s after the step started; the %"PRIu64" J before it are estimated from the power now (%u W)",
			     plugin_type,
			     (double) (now_ns - step.start_ns) / 1e9, fill_j,
			     watts);
		step.step_j = fill_j;
	} else if (node_j >= step.last_node_j && !restarted) {
		step.step_j += node_j - step.last_node_j;
	} else {
		/*
		 * The node total went back, or slurmd says it started again:
		 * slurmd restarted and counts from zero again.  What it
		 * counted since (node_j) is a lower bound of the interval;
		 * the other estimate is the interval filled linearly between
		 * the power of the last answer before and of this one (the
		 * error of a linear fill, as for a meter's gap; the last
		 * power held over the interval errs by the whole change of
		 * power); take the larger, never lose what we have.
		 */
		fill_j = ((uint64_t) step.last_watts + watts) *
			(now_ns - step.last_ns) / (2 * SE_NS_PER_SEC);
		if (fill_j < node_j)
			fill_j = node_j;
		info("%s: node energy went from %"PRIu64" J to %"PRIu64" J%s (slurmd restarted?); %"PRIu64" J bridged",
		     plugin_type, step.last_node_j, node_j,
		     restarted ? ", slurmd's start time changed" : "",
		     fill_j);
		step.step_j += fill_j;
		/* each way of telling a restart starts again from here: the
		 * other one's last id is from before it */
		step.slurmd_started = 0;
		step.figure_id = 0;
	}
	step.last_node_j = node_j;
	step.last_watts = watts;
	step.last_ns = now_ns;
	step.poll_time = e->poll_time;
	if (started)
		step.slurmd_started = started;
}

/* The step as a share query names it; false before its record is known. */
static bool _step_ids(eq_step_t *q)
{
	stepd_step_rec_t *job = step.job;

	if (!job)
		return false;
	memset(q, 0, sizeof(*q));
	q->job_id = job->step_id.job_id;
	q->step_id = job->step_id.step_id;
	q->ncpus = job->cpus;
	q->begin = true;	/* at step.start_ns: also after a restart */
	return true;
}

/*
 * A share answer: the step's energy follows it, never decreasing.  A
 * slurmd restarted since the last answer (another generation, a lower
 * figure) counts shares from zero again: what it counted before is kept
 * as a base.  (A reload keeps the split: the figure just continues.)
 */
static void _step_account_share(const eq_answer_t *a, uint64_t now_ns)
{
	uint64_t mj, prev_mj = step.share_mj;
	uint64_t prev_t = step.share_t_ns;

	if (step.share_have && a->generation != step.share_gen &&
	    a->share_mj < step.share_last_mj) {
		step.share_base_mj += step.share_last_mj;
		info("%s: slurmd restarted: its shares count again from here (%"PRIu64" mJ kept)",
		     plugin_type, step.share_base_mj);
	}
	step.share_gen = a->generation;
	step.share_last_mj = a->share_mj;
	mj = step.share_base_mj + a->share_mj;
	if (mj > step.share_mj)
		step.share_mj = mj;
	step.share_have = true;
	step.prev_step_j = step.step_j;
	step.step_j = (step.share_mj + 500) / 1000;
	if (a->share_last_ns > prev_t && prev_t)
		step.last_watts = _avg_w(step.share_mj - prev_mj,
					 a->share_last_ns - prev_t);
	step.share_t_ns = a->share_last_ns;
	step.poll_time = _mono_to_wall_s(a->share_last_ns);
	step.have_base = true;
	step.last_ns = now_ns;
}

/*
 * EnergyAttribution=share: ask slurmd for the step's share up to t1 (end:
 * the step ended at t1).  0, or -errno: -ENOENT slurmd does not know the
 * step (yet), -EPROTO slurmd is not in share mode.
 */
static int _step_share(uint64_t t1_ns, bool end, uint64_t timeout_ns,
		       eq_answer_t *a)
{
	eq_step_t q;
	int rc;

	if (!step.eq_path[0] || !_step_ids(&q))
		return -ENOENT;
	q.end = end;
	rc = eq_query_step(step.eq_path, step.start_ns,
			   t1_ns > step.start_ns ? t1_ns : step.start_ns, &q,
			   timeout_ns, a);
	if (!rc && !a->share)
		rc = -EPROTO;
	if (!rc)
		rc = a->share_rc;
	if (rc != step.eq_rc)
		log_flag(ENERGY, "%s: share query %s: %s", plugin_type,
			 step.eq_path, rc ? strerror(-rc) : "answering");
	step.eq_rc = rc;
	if (!rc)
		_step_account_share(a, se_mono_ns());
	return rc;
}

static int _step_fill(acct_gather_energy_t *e)
{
	uint64_t now_ns = se_mono_ns();

	memset(e, 0, sizeof(*e));
	if (!step.have_base) {
		/*
		 * No data yet: 0 J so far, but flagged as an error so that a
		 * sum over several plugins skips it; never NO_VAL64, which
		 * would wipe the step's total over all its nodes.
		 */
		if (!step.warned_no_data) {
			step.warned_no_data = true;
			info("%s: no energy from slurmd yet for this step",
			     plugin_type);
		}
		return SLURM_ERROR;
	}
	e->consumed_energy = step.step_j;
	e->previous_consumed_energy = step.prev_step_j;
	e->base_consumed_energy = step.step_j - step.prev_step_j;
	e->current_watts = step.last_watts;
	if (now_ns - step.start_ns >= SE_NS_PER_SEC)
		e->ave_watts = _avg_w(step.step_j * 1000,
				      step.last_ns - step.start_ns);
	else
		e->ave_watts = step.last_watts;
	e->poll_time = step.poll_time;
	return SLURM_SUCCESS;
}

static void _step_profile(void)
{
	acct_gather_profile_dataset_t dataset[] = {
		{ "Power", PROFILE_FIELD_UINT64 },
		{ NULL, PROFILE_FIELD_NOT_SET },
	};
	uint32_t profile_opt = 0;
	uint64_t power_w;

	acct_gather_profile_g_get(ACCT_GATHER_PROFILE_RUNNING, &profile_opt);
	if (!(profile_opt & ACCT_GATHER_PROFILE_ENERGY) || !step.have_base)
		return;
	if (step.dataset_id < 0) {
		step.dataset_id = acct_gather_profile_g_create_dataset(
			"Energy", NO_PARENT, dataset);
		if (step.dataset_id < 0) {
			error("%s: cannot create the Energy profile dataset",
			      plugin_type);
			return;
		}
	}
	power_w = step.last_watts;
	acct_gather_profile_g_add_sample_data(step.dataset_id, &power_w,
					      step.poll_time);
}

/* The first task has been forked (jobacct_gather polls from the last
 * task's fork on, just before the tasks are let exec). */
static bool _step_tasks_started(void)
{
	stepd_step_rec_t *job = step.job;

	return job && job->node_tasks && job->task && job->task[0] &&
	       job->task[0]->pid > 0;
}

/* The step's t0 for a live settle: its tasks' start, else its own. */
static uint64_t _step_t0(void)
{
	return step.first_poll_ns ? step.first_poll_ns : step.start_ns;
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
static int _step_query(uint64_t t1_ns, bool kick, uint64_t timeout_ns,
		       eq_answer_t *a)
{
	int rc;

	if (!step.eq_path[0])
		return -ENOENT;
	if (step.have_e0 && step.e0_t_ns != _step_t0())
		step.have_e0 = false;
	step.queries++;
	rc = (kick ? eq_query : eq_query_known)(step.eq_path, _step_t0(),
						t1_ns, timeout_ns, a);
	if (rc != step.eq_rc)
		log_flag(ENERGY, "%s: energy query %s: %s", plugin_type,
			 step.eq_path, rc ? strerror(-rc) : "answering");
	step.eq_rc = rc;
	if (!rc && !step.have_e0 && a->complete0) {
		step.have_e0 = true;
		step.e0_mj = a->e0_mj;
		step.e0_gen = a->generation;
		step.e0_t_ns = _step_t0();
	}
	return rc;
}

/*
 * The node figure slurmd put into a query's answer (its figure hook): the
 * same figure as its energy RPC answers, without the RPC.  Another figure
 * id is a slurmd that started again.  0, or -ENODATA (no figure in it).
 */
static int _step_account_figure(const eq_answer_t *a, uint64_t now_ns)
{
	acct_gather_energy_t e;
	bool restarted;

	if (!a->figure)
		return -ENODATA;
	memset(&e, 0, sizeof(e));
	e.consumed_energy = a->figure_mj / 1000;
	e.current_watts = _mw_to_w(a->figure_power_mw);
	e.poll_time = _mono_to_wall_s(a->figure_sample_ns);
	restarted = step.figure_id && a->figure_id != step.figure_id;
	_step_account(&e, now_ns, restarted);
	step.figure_id = a->figure_id;
	return 0;
}

/*
 * The node energy in a query's answer (a, or a query made now, which kicks
 * no reading: the figure is what slurmd knows).  0, or -errno: the query
 * failed, or its answer holds no figure.
 */
static int _step_refresh_figure(const eq_answer_t *a)
{
	eq_answer_t now_a;
	int rc;

	if (!a) {
		rc = _step_query(se_mono_ns(), false,
				 LIVE_POLL_QUERY_TIMEOUT_NS, &now_a);
		if (rc)
			return rc;
		a = &now_a;
	}
	return _step_account_figure(a, se_mono_ns());
}

/* The node energy through Slurm's energy RPC.  0, or -errno. */
static int _step_refresh_rpc(void)
{
	acct_gather_energy_t *e = NULL;
	uint16_t cnt = 0;
	uint64_t now_ns;
	int rc = 0;

	step.rpcs++;
	if (slurm_get_node_energy((char *) se_energy_node_name(), context_id,
				  0, &cnt, &e) != SLURM_SUCCESS) {
		now_ns = se_mono_ns();
		if (!step.rpc_fail_ns)
			step.rpc_fail_ns = now_ns;
		if (now_ns - step.rpc_fail_ns < STEP_RPC_GRACE_NS)
			se_log(SE_LOG_DEBUG,
			       "cannot get node energy from slurmd: %s (slurmd restarting? its next answer bridges the gap)",
			       slurm_strerror(se_slurm_errno()));
		else
			se_log_limited(&step.rl, now_ns, SE_LOG_ERROR,
				       "cannot get node energy from slurmd for %.0f s: %s",
				       (double) (now_ns - step.rpc_fail_ns) /
				       SE_NS_PER_SEC,
				       slurm_strerror(se_slurm_errno()));
		return -EIO;
	}
	now_ns = se_mono_ns();
	step.rpc_fail_ns = 0;
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
static int _step_refresh(const eq_answer_t *a)
{
	eq_answer_t share_a;
	int rc;

	if (step.settled)
		return 0;
	if (_share_mode()) {
		/* the share so far: t1 at the start kicks no reading (the
		 * sampler's period sets the running figure's freshness) */
		return _step_share(step.start_ns, false,
				   LIVE_POLL_QUERY_TIMEOUT_NS, &share_a);
	}
	if (step.eq_path[0]) {
		if (!(rc = _step_refresh_figure(a))) {
			step.rpc_fail_ns = 0;
			return 0;
		}
		if (!step.rpcs)
			log_flag(ENERGY, "%s: node energy through Slurm's RPC: the energy query socket gave no figure (%s)",
				 plugin_type, strerror(-rc));
	}
	return _step_refresh_rpc();
}

/*
 * An accounting poll: while the step's tasks run (or exit), its instant is
 * the step's end so far.  Polls after slurmstepd began ending the step
 * (jobacct_gather's thread may run once more) do not move it.  With a live
 * source, each such poll asks for a reading now (the last one before the
 * step ends is its end: its reading then comes within milliseconds, not a
 * poll period later); the first poll, as the first task starts, is the
 * start of the step's window.  Kicks coalesce in slurmd's sampler, and a
 * poll right after another takes its answer (STEP_POLL_SHARE_NS).  The
 * answer (in *a; true when there is one) also carries the node figure.
 */
static bool _step_mark_poll(eq_answer_t *a)
{
	uint64_t now_ns = se_mono_ns();

	if (step.job && step.job->state >= SLURMSTEPD_STEP_ENDING)
		return false;
	if (step.poll_answered && !step.settled &&
	    now_ns - step.end_ns < STEP_POLL_SHARE_NS) {
		/* the same instant as that poll's, for the end too */
		*a = step.poll_answer;
		return true;
	}
	step.end_wall_ns = se_wall_ns();
	step.end_ns = now_ns;
	step.poll_answered = false;
	if (!step.eq_path[0] || step.settled || _share_mode())
		return false;
	if (!step.first_poll_ns && _step_tasks_started())
		step.first_poll_ns = step.end_ns;
	if (_step_query(step.end_ns, true, LIVE_POLL_QUERY_TIMEOUT_NS, a))
		return false;
	step.poll_answered = true;
	step.poll_answer = *a;
	return true;
}

static int _step_get_data(int data_type, void *data)
{
	bool stale = (se_mono_ns() - step.last_ns) >= STEP_REFRESH_NS;
	eq_answer_t a;
	bool polled = false;

	if (data_type != ENERGY_DATA_LAST_POLL &&
	    data_type != ENERGY_DATA_SENSOR_CNT)
		polled = _step_mark_poll(&a);
	switch (data_type) {
	case ENERGY_DATA_NODE_ENERGY_UP:
	case ENERGY_DATA_JOULES_TASK:
		_step_refresh(polled ? &a : NULL);
		return _step_fill(data);
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_STRUCT:
		/*
		 * NODE_ENERGY is what jobacct_gather asks when energy
		 * profiling runs, including its last poll as a task exits:
		 * refresh a stale view so the step's end is not up to a
		 * profile period old.
		 */
		if (stale)
			_step_refresh(polled ? &a : NULL);
		return _step_fill(data);
	case ENERGY_DATA_LAST_POLL:
		*(time_t *) data = step.poll_time;
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

/*
 * A live source: find slurmd's query socket.  True when there is one (not
 * in share mode, where this registers the step with slurmd's split when
 * its record is known by now; else at its first poll).
 */
static bool _step_find_live(void)
{
	const char *name = se_energy_node_name();
	eq_answer_t a;

	if ((se_energy_plugin.window_energy && !_share_mode()) ||
	    eq_socket_path(_spool_dir(), name, step.eq_path,
			   sizeof(step.eq_path))) {
		step.eq_path[0] = '\0';
		return false;
	}
	if (_share_mode()) {
		(void) _step_share(step.start_ns, false,
				   LIVE_POLL_QUERY_TIMEOUT_NS, &a);
		return false;
	}
	return true;
}

static void _step_start(void)
{
	step.start_ns = se_mono_ns();
	step.start_wall_ns = se_wall_ns();
	step.dataset_id = -1;
	step.rl = (se_ratelimit_t) SE_RATELIMIT_INIT(STEP_LOG_INTERVAL_NS,
						     STEP_LOG_BURST);
	/*
	 * The step's base: the node energy as the step starts.  With slurmd's
	 * query socket it comes with the first poll's answer, as the first
	 * task starts, milliseconds later (the time before is filled at the
	 * power then, _step_account): no question on the step's launch path
	 * (stock plugins take their base at that poll too).  Without, ask
	 * now (Slurm's RPC).
	 */
	if (_step_find_live() || _share_mode())
		return;
	if (_step_refresh(NULL) == 0)
		log_flag(ENERGY, "%s: step base: node at %"PRIu64" J",
			 plugin_type, step.last_node_j);
}

/* ------------------------------------------------------------ settle */

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

/* Ask the source until its data covers [t0, t1] or the deadline passes. */
static int _settle_wait(se_energy_window_fn window, uint64_t t0_ns,
			uint64_t t1_ns, unsigned max_wait_s,
			uint64_t *energy_mj, bool *complete, char *msg,
			size_t msg_len)
{
	uint64_t deadline = se_mono_ns() + max_wait_s * SE_NS_PER_SEC;
	int rc;

	for (;;) {
		uint64_t now;

		rc = window(se_energy_node_name(), t0_ns, t1_ns, energy_mj,
			    complete, msg, msg_len);
		now = se_mono_ns();
		if ((!rc && *complete) || now >= deadline)
			return rc;
		se_sleep_ns(deadline - now < SETTLE_POLL_NS ?
			    deadline - now : SETTLE_POLL_NS);
	}
}

/* The step's final energy into what slurmstepd sends to slurmctld. */
static void _settle_store(stepd_step_rec_t *job, uint64_t joules,
			  uint64_t t0_ns, uint64_t t1_ns)
{
	jobacctinfo_t *ja = job->jobacct;
	uint32_t ave = _avg_w(joules * 1000, t1_ns - t0_ns);

	step.prev_step_j = step.step_j;
	step.step_j = joules;
	step.settled = true;
	if (!ja)
		return;
	ja->energy.consumed_energy = joules;
	ja->energy.ave_watts = ave;
	if (ja->tres_count > SE_TRES_ARRAY_ENERGY) {
		ja->tres_usage_in_tot[SE_TRES_ARRAY_ENERGY] = joules;
		ja->tres_usage_out_tot[SE_TRES_ARRAY_ENERGY] = ave;
	}
}

/* Why a live settle keeps the running figure, or NULL when E(t1)-E(t0) is
 * final; *done tells the waiting loop to stop. */
static const char *_live_verdict(const eq_answer_t *a, bool *done)
{
	*done = true;
	if (step.have_e0 && a->generation != step.e0_gen)
		return "slurmd's sampler restarted between the step's start and end (slurmd restart or reconfigure)";
	if (!step.have_e0 && a->rc0 == -ERANGE)
		return "the step's start is older than slurmd's history and was not fetched in time";
	if (step.have_e0 && a->complete1 && a->e1_mj < step.e0_mj)
		return "energy at the end below the start";
	if (step.have_e0 && a->complete1)
		return NULL;
	*done = false;
	return "no reading after the step's boundaries in time";
}

/*
 * The live settle: E(t1) - E(t0) from slurmd's sampler history once a
 * reading after t1 exists.  The query kicks that reading (normally there
 * already: each accounting poll kicked one), so the wait is one read; it
 * never exceeds the sampler's period + deadline (from the answer) plus a
 * margin, nor the SPANK max_wait (cut clear of UnkillableStepTimeout).
 */
static int _settle_live(stepd_step_rec_t *job, unsigned max_wait_s)
{
	uint64_t begin = se_mono_ns(), limit, t0, t1, joules, running_j;
	uint64_t pause = LIVE_RETRY_NS, wait;
	const char *why = NULL;
	eq_answer_t a = { 0 };
	unsigned asked;
	bool done = false;
	int rc;

	limit = begin + _settle_cap(max_wait_s) * SE_NS_PER_SEC;
	slurm_mutex_lock(&state_lock);
	asked = step.queries;
	t0 = _step_t0();
	t1 = step.end_ns > t0 ? step.end_ns : se_mono_ns();
	running_j = step.step_j;
	for (bool first = true;; first = false) {
		/* jobacct_gather has stopped polling: the lock costs no one */
		rc = _step_query(t1, true, LIVE_QUERY_TIMEOUT_NS, &a);
		if (rc)
			break;
		if (first && begin + a.period_ns + a.deadline_ns +
			     LIVE_MARGIN_NS < limit)
			limit = begin + a.period_ns + a.deadline_ns +
				LIVE_MARGIN_NS;
		why = _live_verdict(&a, &done);
		if (done || !(wait = _settle_pause(&pause, limit)))
			break;
		slurm_mutex_unlock(&state_lock);
		se_sleep_ns(wait);
		slurm_mutex_lock(&state_lock);
	}
	if (rc || why) {
		slurm_mutex_unlock(&state_lock);
		info("%s: step energy not settled: %s%s; keeping the running figure %"PRIu64" J",
		     plugin_type, rc ? "energy query to slurmd failed: " : why,
		     rc ? strerror(-rc) : "", running_j);
		return rc ? rc : -ETIMEDOUT;
	}
	joules = (a.e1_mj - step.e0_mj + 500) / 1000;
	_settle_store(job, joules, t0, t1);
	slurm_mutex_unlock(&state_lock);
	log_flag(ENERGY, "%s: step energy settled: %"PRIu64" J over %.3f s from the tasks' start (%.3f s after the step's) (running figure %"PRIu64" J, %u energy RPCs, %u queries), reading after the end %.3f s after it, settled in %.3f s (%u queries)",
		 plugin_type, joules, (double) (t1 - t0) / 1e9,
		 (double) (t0 - step.start_ns) / 1e9, running_j, step.rpcs,
		 asked,
		 (double) (a.last_sample_ns - t1) / 1e9,
		 (double) (se_mono_ns() - begin) / 1e9, step.queries - asked);
	return 0;
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
	uint64_t pause = LIVE_RETRY_NS, wait;
	eq_answer_t a = { 0 };
	int rc;

	limit = begin + _settle_cap(max_wait_s) * SE_NS_PER_SEC;
	slurm_mutex_lock(&state_lock);
	t1 = step.end_ns > step.start_ns ? step.end_ns : se_mono_ns();
	running_j = step.step_j;
	for (bool first = true;; first = false) {
		rc = _step_share(t1, true, LIVE_QUERY_TIMEOUT_NS, &a);
		if (rc)
			break;
		if (first && begin + a.period_ns + a.deadline_ns +
			     LIVE_MARGIN_NS < limit)
			limit = begin + a.period_ns + a.deadline_ns +
				LIVE_MARGIN_NS;
		if (a.share_last_ns >= t1 ||
		    !(wait = _settle_pause(&pause, limit)))
			break;
		slurm_mutex_unlock(&state_lock);
		se_sleep_ns(wait);
		slurm_mutex_lock(&state_lock);
	}
	if (rc || a.share_last_ns < t1) {
		slurm_mutex_unlock(&state_lock);
		info("%s: step share not settled: %s%s; keeping the running share %"PRIu64" J",
		     plugin_type, rc ? "share query to slurmd failed: " :
		     "no split after the step's end in time",
		     rc ? strerror(-rc) : "", running_j);
		return rc ? rc : -ETIMEDOUT;
	}
	_settle_store(job, step.step_j, step.start_ns, t1);
	slurm_mutex_unlock(&state_lock);
	log_flag(ENERGY, "%s: step share settled: %"PRIu64" J (running figure %"PRIu64" J), split %.3f s after the end, settled in %.3f s",
		 plugin_type, step.step_j, running_j,
		 (double) (a.share_last_ns - t1) / 1e9,
		 (double) (se_mono_ns() - begin) / 1e9);
	return 0;
}

/*
 * The wall-clock end of a step's window.  The window keeps the step's
 * monotonic length: a step of the node's wall clock while the step ran (an
 * NTP step) must not stretch or shrink the interval whose energy is taken
 * (+40 s would count 40 s of another job's or no one's energy).  It is
 * placed from the start's wall time, as the node's clock read then (see
 * acct_gather_energy_rrd(5), FAULTS).  The step is said once, in the step's
 * log.
 */
static uint64_t _window_end_wall(uint64_t t0_mono, uint64_t t0_wall,
				 uint64_t t1_mono, uint64_t t1_wall)
{
	int64_t stepped;

	if (!t1_mono || t1_mono < t0_mono)
		return t1_wall > t0_wall ? t1_wall : se_wall_ns();
	stepped = (int64_t) (t1_wall - t0_wall) - (int64_t) (t1_mono - t0_mono);
	if (stepped > (int64_t) SE_NS_PER_SEC ||
	    stepped < -(int64_t) SE_NS_PER_SEC)
		info("%s: the node's wall clock stepped by %+.1f s while the step ran; its energy window keeps the step's own length (%.1f s) from its start",
		     plugin_type, (double) stepped / 1e9,
		     (double) (t1_mono - t0_mono) / 1e9);
	return t0_wall + (t1_mono - t0_mono);
}

/* The window settle: the source's own history (RRD rows) over the step. */
static int _settle_window(stepd_step_rec_t *job, se_energy_window_fn window,
			  unsigned max_wait_s)
{
	uint64_t t0_ns, t1_ns, energy_mj = 0, running_j, begin = se_mono_ns();
	char msg[512] = "";
	bool complete = false;
	int rc;

	slurm_mutex_lock(&state_lock);
	t0_ns = step.start_wall_ns;
	t1_ns = _window_end_wall(step.start_ns, step.start_wall_ns,
				 step.end_ns, step.end_wall_ns);
	running_j = step.step_j;
	slurm_mutex_unlock(&state_lock);
	max_wait_s = _settle_cap(max_wait_s);

	/* No lock while waiting: jobacct_gather has stopped polling. */
	rc = _settle_wait(window, t0_ns, t1_ns, max_wait_s, &energy_mj,
			  &complete, msg, sizeof(msg));
	if (rc) {
		error("%s: step energy not settled: %s; keeping the running figure %"PRIu64" J",
		      plugin_type, msg, running_j);
		return rc;
	}
	if (!complete)
		info("%s: the data did not cover the step's window after %u s; ends held at the nearest row (%"PRIu64" J, running figure %"PRIu64" J)",
		     plugin_type, max_wait_s, (energy_mj + 500) / 1000,
		     running_j);

	slurm_mutex_lock(&state_lock);
	_settle_store(job, (energy_mj + 500) / 1000, t0_ns, t1_ns);
	slurm_mutex_unlock(&state_lock);
	log_flag(ENERGY, "%s: step energy settled: %"PRIu64" J over %.3f s (running figure %"PRIu64" J), data %s after %.1f s",
		 plugin_type, (energy_mj + 500) / 1000,
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
 * figure is the job's line in sacct).
 */
static const char *_no_settle_reason(void)
{
	if (role != ROLE_STEPD)
		return "not in slurmstepd";
	if (!step.job)
		return "no step record";
	if (step.settled)
		return "already settled";
	if (_share_mode())
		return step.eq_path[0] ? NULL :
		       "no energy query socket for this node";
	if (se_energy_plugin.window_energy) {
		if (step.conf_bad)
			return "acct_gather.conf was refused in this step";
		if (!step.start_wall_ns)
			return "no start";
		if (_step_ends_job(step.job))
			return "batch, extern or interactive step";
		return NULL;
	}
	if (!step.eq_path[0])
		return "no energy query socket for this node";
	return NULL;
}

int se_energy_step_settle(unsigned max_wait_s)
{
	se_energy_window_fn window = se_energy_plugin.window_energy;
	stepd_step_rec_t *job;
	const char *why;

	slurm_mutex_lock(&state_lock);
	job = step.job;
	why = _no_settle_reason();
	slurm_mutex_unlock(&state_lock);
	if (why) {
		log_flag(ENERGY, "%s: no settle for this step (%s)",
			 plugin_type, why);
		return 1;
	}
	if (_share_mode())
		return _settle_share(job, max_wait_s);
	if (window)
		return _settle_window(job, window, max_wait_s);
	return _settle_live(job, max_wait_s);
}

/* ------------------------------------------------------------ public */

const char *se_energy_node_name(void)
{
	if (!se_in_slurmd_or_stepd())
		return NULL;
	if (&conf && conf && conf->node_name)
		return conf->node_name;
	return getenv("SLURMD_NODENAME");
}

void se_energy_init(void)
{
	se_log_set_sink(se_slurm_log_sink, &log_to);
	debug("%s: slurm-energy-plugins %s (built for Slurm %s) loaded",
	      plugin_type, se_energy_version, se_energy_slurm_version);
}

void se_energy_set_attribution(const attrib_conf_t *c)
{
	slurm_mutex_lock(&state_lock);
	acfg.mode = c->mode;
	acfg.idle = c->idle;
	acfg.idle_set = c->idle_set;
	acfg.idle_mw = c->idle_mw;
	snprintf(acfg_root, sizeof(acfg_root), "%s",
		 c->cgroup_root ? c->cgroup_root : "");
	slurm_mutex_unlock(&state_lock);
}

void se_energy_conf_set(int context_id_in, const char *meter_name,
			const char *conf_error, se_energy_make_meter_fn make,
			void *arg)
{
	slurm_mutex_lock(&state_lock);
	context_id = context_id_in;
	role = _role();

	if (conf_error) {
		if (role == ROLE_SLURMD)
			fatal("%s: %s", plugin_type, conf_error);
		error("%s: %s", plugin_type, conf_error);
		/*
		 * A step gets slurmd's table, which after a refused reload
		 * holds the refused values while slurmd kept its last good
		 * ones (se_energy_plugin.c): the step still counts the node
		 * energy slurmd serves, and only a settle that needs this
		 * configuration (window_energy) is off.
		 */
		if (role == ROLE_STEPD) {
			step.conf_bad = true;
			if (!step.start_ns)
				_step_start();
		}
		slurm_mutex_unlock(&state_lock);
		return;
	}

	switch (role) {
	case ROLE_SLURMD:
		if (!node.sampler && !node.unmetered)
			_node_start(meter_name, make, arg);
		break;
	case ROLE_STEPD:
		if (!step.start_ns)
			_step_start();
		break;
	default:
		break;
	}
	slurm_mutex_unlock(&state_lock);
}

/*
 * Share mode, a step ending (slurmstepd unloads us at its end): tell
 * slurmd the step's end, so that its job stops being charged there even
 * without the settle plugin (the cgroups linger a moment after the step).
 */
static void _step_tell_end(void)
{
	eq_answer_t a;

	if (role != ROLE_STEPD || !_share_mode() || step.settled ||
	    !step.start_ns || !step.eq_path[0])
		return;
	(void) _step_share(step.end_ns > step.start_ns ? step.end_ns :
			   se_mono_ns(), true, LIVE_POLL_QUERY_TIMEOUT_NS, &a);
}

bool se_energy_fini(void)
{
	sampler_status_t st;
	bool keep;

	slurm_mutex_lock(&state_lock);
	_step_tell_end();
	if (node.sampler) {
		sampler_status(node.sampler, &st);
		carry.reported_mj = _node_energy_mj(&st);
		_node_carry_out(&st);
		carry.valid = true;
		_node_stop();
	}
	/*
	 * slurmstepd unloads the plugin (acct_gather_profile_fini()) before
	 * slurm_spank_exit, where the settle runs: the step keeps its state
	 * (the .so stays mapped, -z nodelete; the process ends right after the
	 * step's completion is sent), and a step that may still settle tells
	 * the caller to keep the configuration too.
	 */
	keep = role == ROLE_STEPD && !_no_settle_reason();
	memset(&node, 0, sizeof(node));
	if (role != ROLE_STEPD) {
		memset(&step, 0, sizeof(step));
		context_id = -1;
	}
	slurm_mutex_unlock(&state_lock);
	return keep;
}

int se_energy_update_node_energy(void)
{
	/* The sampler keeps the node current; nothing to do on demand. */
	return SLURM_SUCCESS;
}

int se_energy_get_data(int data_type, void *data)
{
	int rc;

	if (!data)
		return SLURM_ERROR;
	slurm_mutex_lock(&state_lock);
	switch (role) {
	case ROLE_SLURMD:
		rc = _node_get_data(data_type, data);
		break;
	case ROLE_STEPD:
		rc = _step_get_data(data_type, data);
		break;
	default:
		rc = SLURM_ERROR;
		break;
	}
	slurm_mutex_unlock(&state_lock);
	return rc;
}

int se_energy_set_data(int data_type, void *data)
{
	slurm_mutex_lock(&state_lock);
	switch (data_type) {
	case ENERGY_DATA_PROFILE:
		if (role == ROLE_STEPD) {
			if (!step.last_ns ||
			    se_mono_ns() - step.last_ns >= STEP_PROFILE_FRESH_NS)
				_step_refresh(NULL);
			_step_profile();
		}
		break;
	case ENERGY_DATA_STEP_PTR:
		/* slurmstepd.c, before job_manager(), maybe before conf_set
		 * has set role: for the settle */
		if (se_in_slurmstepd())
			step.job = data;
		break;
	case ENERGY_DATA_RECONFIG:
		/* slurmd reloads the plugin on reconfigure (see top) */
		break;
	default:
		error("%s: %s: unknown data type %d", plugin_type, __func__,
		      data_type);
		slurm_mutex_unlock(&state_lock);
		return SLURM_ERROR;
	}
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}
