/*
 * step_energy.h - a step's energy as slurmstepd keeps it: the state and
 * every decision of its polls, its refreshes and its settle, free of Slurm.
 *
 * The Slurm glue (src/acct_gather_energy/common/se_energy_step.c,
 * se_energy_settle.c) holds one step_energy_t, asks these functions what
 * to do, does the I/O itself (slurmd's query socket, Slurm's energy RPC,
 * the window source's rows, jobacct, the profile, the logs) and hands each
 * result back.  Nothing here blocks, reads a clock or logs: every instant
 * is an argument (tests/unit/test_step_energy.c).
 *
 * The paths of a step, in the order they happen:
 *  first poll    as the first task starts: its instant is t0 of the step's
 *                window, its question is sent and not waited for
 *                (step_energy_mark_poll, step_energy_poll_question);
 *  running       each accounting poll refreshes the step's energy from
 *                slurmd's node total through its query socket
 *                (step_energy_account_total), or, without one or when it
 *                cannot answer, from Slurm's energy RPC (step_energy_refresh,
 *                step_energy_account_node: the fallback); share mode takes
 *                the step's share instead (step_energy_account_share);
 *  held end poll as the last task is reaped with a settle to come: its
 *                question is held by slurmd until the reading after the
 *                end is in, and its answer is kept (step_energy_collected);
 *  settle        the step's exact energy at its end: from the held answer
 *                (step_energy_live_held_answer), else by asking again
 *                (step_energy_live_verdict, step_energy_settle_pause); by
 *                the window source's rows over the step's wall-clock window
 *                (step_energy_window); the share's (step_energy_share_t1);
 *                or refused, with the reason (step_energy_settle_refused);
 *  carry         a slurmd that restarted is bridged (energy_carry.h): the
 *                step's energy never goes back; the state itself survives
 *                the plugin's unload (the glue keeps it, linked -z nodelete);
 *  GPU part      how much of the step's energy its GPUs were, from
 *                slurmd's GPU samplers (node mode:
 *                step_energy_account_gpu_node; share mode: in
 *                step_energy_account_share), and the GPUs it holds
 *                (step_energy_gpus_fill).
 *
 * Units: the step's and the node's totals in J (as Slurm's
 * acct_gather_energy_t carries them), slurmd's answers in mJ, power in W,
 * instants in monotonic ns unless named _wall_.
 */
#ifndef SE_STEP_ENERGY_H
#define SE_STEP_ENERGY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "energy_carry.h"
#include "energy_query.h"
#include "se_time.h"

/* Slurm's NO_VAL: a watt value never reads it by accident. */
#define STEP_WATTS_NO_VAL	0xfffffffeu

/*
 * A step's query for its running total (its polls, the share so far): the
 * server answers in microseconds, or within its own 100 ms bound when a
 * silent client holds it.
 */
#define LIVE_POLL_QUERY_TIMEOUT_NS (50 * SE_NS_PER_MS)
/*
 * A held question's (the settle's, and the poll at the tasks' end): it
 * covers the server's hold (ENERGY_QUERY_SERVER_HOLD_MAX_NS) and the round
 * trip.
 */
#define LIVE_QUERY_TIMEOUT_NS	(250 * SE_NS_PER_MS)

/* A step's view of node energy older than this is refreshed. */
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
 * answer and instant (as the step's end, if it is the last): the total is
 * the same, the instants a fraction of a millisecond apart, and the
 * reading that query kicked is already on its way (a second kick would
 * cost one more meter read).
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
/* A first answer this late after the step's start says the fill is an
 * estimate (info). */
#define STEP_LATE_FIRST_NS	(2 * SE_NS_PER_SEC)

/*
 * A settle's wait.  Live and share settles ask to be held
 * (ENERGY_QUERY_HOLD): slurmd answers the moment the reading after the
 * step's end lands.  An answer still not final (the hold ran out, or a
 * slurmd of an older build answered at once) is asked again after a
 * pause, doubled after each: every query kicks a read, and a meter whose
 * reading's instant lags its read, as a BMC's rolling average does by half
 * its window, would otherwise be read back to back until the instant
 * passes the end.  The margin is what is added to the sampler's period +
 * deadline for the round trips themselves.
 */
#define LIVE_FIRST_PAUSE_NS	(1 * SE_NS_PER_MS)
#define LIVE_RETRY_NS		(5 * SE_NS_PER_MS)
#define LIVE_RETRY_MAX_NS	(160 * SE_NS_PER_MS)
#define LIVE_MARGIN_NS		(250 * SE_NS_PER_MS)
/* How often a settling step asks its window source again. */
#define SETTLE_POLL_NS		SE_NS_PER_SEC
/*
 * fini()'s settle holds the step's end: srun on every release up to 25.11
 * (slurmstepd tells srun the tasks ended after fini()), the step's
 * completion on 26.05, the job's end for batch and extern steps.
 *
 * A meter whose reads may take longer than STEP_FINI_FAST_READ_NS (its
 * read deadline in slurmd's answers: a BMC answering in seconds needs one;
 * Redfish's default is 8 s, two requests of 4 s) is a slow meter: fini() waits for its reading
 * after the step's end at most STEP_FINI_WAIT_NS after the end (t1), then
 * settles the end from what is known (step_energy_live_estimate), instead
 * of holding srun for a read.  srun's own overhead is 0.09-0.17 s on the
 * test cluster, and `srun sleep 5` must stay under 5.2 s with a 3 s BMC
 * (issue #41; at 50 ms one run in ten took 5.22 s under load, at 30 ms two
 * in twenty, all but 30 ms of it srun's launch).  10 ms still takes a
 * reading that is in at once (a Redfish BMC read in 2-3 ms with the tick
 * watch off).
 *
 * A meter whose reads are bounded by 2 s or less (Modbus, IPMI, SNMP at
 * their default timeouts) keeps the wait of one read (the sampler's reach +
 * LIVE_MARGIN_NS): its reading is normally in within milliseconds, and a
 * DCMI rolling average's is "after" the end only half its window later,
 * which test_step_boundaries.py's exact bounds hold it to.
 * spank_energy_settle.so, where listed, waits for the reading on any
 * meter: after srun was told up to 25.11, before on 26.05, where fini()
 * leaves it only a slow meter's step (step_energy_fini_leaves_to_spank).
 */
#define STEP_FINI_WAIT_NS	(10 * SE_NS_PER_MS)
#define STEP_FINI_FAST_READ_NS	(2 * SE_NS_PER_SEC)

/* slurmstepd: the step's energy, relative to its start */
typedef struct {
	bool have_base;		/* one good answer from slurmd seen */
	uint64_t start_ns;	/* monotonic: when the step configured us */
	uint64_t last_ns;	/* monotonic: last good answer */
	uint64_t last_node_j;	/* node consumed_energy at last_ns */
	uint32_t last_watts;
	time_t poll_time;	/* slurmd's last sample (wall clock) */
	int64_t slurmd_started;	/* slurmd's start time in its last answer
				 * (24.11+; 0: not said) */
	uint64_t total_id;	/* the total's id in slurmd's last answer
				 * through the query socket (0: none yet) */
	unsigned rpcs;		/* Slurm energy RPCs this step asked */
	unsigned queries;	/* ... and queries to slurmd's socket */
	uint64_t rpc_fail_ns;	/* monotonic: first RPC failure of a run,
				 * 0 while slurmd answers */
	uint64_t step_j;	/* energy of the step so far */
	uint64_t prev_step_j;	/* step_j before the last refresh */
	bool warned_no_data;
	/* the settle */
	uint64_t start_wall_ns;	/* the step's window, wall clock */
	uint64_t end_wall_ns;	/* last poll before the step began ending */
	bool settled;		/* step_j is final: no more refreshes */
	bool settle_tried;	/* a settle ran (fini's or SPANK's): once */
	bool settle_in_fini;	/* ... and it was fini's */
	bool settle_conf_no;	/* EnergySettle=no (acct_gather.conf) */
	bool settle_spank_listed; /* spank_energy_settle.so is listed */
	bool conf_bad;		/* acct_gather.conf refused in this step */
	/* for the live settle (no window_energy): slurmd's query channel */
	char energy_query_path[108];	/* "" when there is none */
	int energy_query_rc;		/* last query's result (logged
					 * on change) */
	uint64_t first_poll_ns;	/* monotonic: first accounting poll, as the
				 * first task starts: t0 of a live settle */
	uint64_t end_ns;	/* monotonic twin of end_wall_ns: t1 */
	bool asking;		/* a poll's question in flight (sent as the
				 * tasks start or end, se_step_collect) */
	energy_query_asking_t question;	/* ... this one */
	bool poll_answered;	/* the query of the poll at end_ns ... */
	energy_query_answer_t poll_answer; /* ... answered this ... */
	uint64_t poll_answer_ns;	/* ... at this instant (monotonic) */
	bool have_e0;		/* e0_mj is final (a sample after t0) */
	uint64_t e0_mj;		/* sampler energy at t0 ... */
	uint64_t e0_gen;	/* ... from this server generation */
	uint64_t e0_t_ns;	/* ... for this t0 (the start's answer comes
				 * before the tasks' start is known) */
	uint64_t read_deadline_ns; /* the meter's read deadline, from
				    * slurmd's answers (0: none yet) */
	/* EnergyAttribution=share: the step's share from slurmd */
	energy_carry_share_t share;
	uint64_t share_t_ns;	/* end of the last split interval */
	/* the GPUs it holds (se_energy_step_gpus.c), read once */
	bool gpus_read;		/* read from Slurm's GRES */
	bool gpus_known;	/* ... and they say which it holds */
	bool gpus_step_level;	/* its device cgroup has a step level */
	uint64_t gpu_job_minors[ENERGY_QUERY_MINOR_WORDS];
	uint64_t gpu_step_minors[ENERGY_QUERY_MINOR_WORDS];
	/* its GPU part, from a version-4 slurmd metering its GPUs */
	bool have_gpu_part;	/* one answer carried it */
	uint64_t gpu_part_mj;	/* the step's GPUs' energy so far */
	uint64_t gpu_t_ns;	/* ... up to this instant (monotonic) */
	uint32_t gpu_watts;	/* over the last answer's interval */
	energy_carry_share_t gpu_share;	/* share mode: slurmd's, carried
					 * over a restart like the share */
	bool have_gpu_e0;	/* node mode: gpu_e0_mj is final */
	uint64_t gpu_e0_mj;	/* the GPUs' energy at t0 ... */
	uint64_t gpu_e0_gen;	/* ... from this server generation */
	uint64_t gpu_e0_t_ns;	/* ... for this t0 */
	/* node mode, a window source (RRD) with EnergyGPU=nvml: the step's
	 * energy is the source's, its GPU part is asked of slurmd here */
	char gpu_query_path[108];	/* "" when there is none */
} step_energy_t;

/* ------------------------------------------------------------ units */

/* mJ -> J, rounded. */
uint64_t step_energy_mj_to_j(uint64_t energy_mj);

/* mW -> W, rounded, never STEP_WATTS_NO_VAL. */
uint32_t step_energy_mw_to_w(uint64_t power_mw);

/* Average watts of energy_mj over t_ns (0 over no time). */
uint32_t step_energy_avg_w(uint64_t energy_mj, uint64_t t_ns);

/* ------------------------------------------------------ the instants */

/* The step's t0 for a live settle: its tasks' start, else its own. */
uint64_t step_energy_t0(const step_energy_t *s);

/* The step configured us (conf_set) at now_ns / now_wall_ns. */
void step_energy_start(step_energy_t *s, uint64_t now_ns,
		       uint64_t now_wall_ns);

/* ------------------------------------------------------------ polls */

/* What an accounting poll does (step_energy_mark_poll). */
typedef enum {
	STEP_POLL_UNMARKED,	/* the step is ending: the poll moves no
				 * instant; refresh as without a poll */
	STEP_POLL_SAME_QUESTION,/* a question in flight is this poll's (less
				 * than STEP_POLL_SHARE_NS ago): nothing to
				 * refresh */
	STEP_POLL_SAME_ANSWER,	/* the last poll's answer is this one's */
	STEP_POLL_NO_QUESTION,	/* marked the end so far; no query (no
				 * socket, settled, share mode): refresh as
				 * without a poll */
	STEP_POLL_QUESTION,	/* marked: ask slurmd about the end now
				 * (step_energy_poll_question says how) */
} step_poll_t;

/* What the glue knows of the step at a poll. */
typedef struct {
	bool ending;		/* slurmstepd began ending the step */
	bool tasks_started;	/* its first task has been forked */
	bool share_mode;	/* EnergyAttribution=share */
	uint64_t now_ns;
	uint64_t now_wall_ns;
} step_poll_facts_t;

/*
 * An accounting poll: while the step's tasks run (or exit), its instant is
 * the step's end so far (end_ns, end_wall_ns).  Polls after slurmstepd
 * began ending the step do not move it.  A poll right after another takes
 * its answer, or its question's instant (STEP_POLL_SHARE_NS).  The first
 * poll after the first task started is t0 (first_poll_ns; *first true).
 */
step_poll_t step_energy_mark_poll(step_energy_t *s, const step_poll_facts_t *f,
				  bool *first);

/* How a poll's question is asked. */
typedef struct {
	bool send;		/* send it, read the answer later (the first
				 * poll and the held one); else ask and wait */
	unsigned how;		/* ENERGY_QUERY_HOLD for the held one */
	uint64_t timeout_ns;
} step_poll_question_t;

/*
 * The question of a poll marked STEP_POLL_QUESTION.  held: the tasks' end
 * with a settle to come (step_energy_settle_expected and every task
 * reaped): slurmd holds it until the reading after the end is in, and the
 * settle takes its answer without asking again.  The first poll and the
 * held one do not wait (slurmstepd polls before it lets the tasks exec,
 * and before it tells srun the tasks ended); every other poll waits: its
 * running total is what Slurm takes from it.
 */
step_poll_question_t step_energy_poll_question(bool first, bool held);

/* A settle will come at the step's end (EnergySettle not no, or a listed
 * SPANK settle): its last poll may wait for the reading after the end. */
bool step_energy_settle_expected(const step_energy_t *s);

/* ---------------------------------------------------- the answers */

/* Before a question: the step's t0 may have moved (e0 is for its t0). */
void step_energy_query_begin(step_energy_t *s);

/*
 * A query's answer a for [t0, t1_ns]: E(t0) kept as soon as it is final
 * (the sampler's history does not reach back to the start of a long step),
 * and the GPU part in node mode.
 */
void step_energy_query_answered(step_energy_t *s,
				const energy_query_answer_t *a, uint64_t t1_ns);

/* What one answer of slurmd's node total did to the step. */
typedef struct {
	energy_carry_how_t how;	/* energy_carry_step_j's */
	uint64_t add_j;		/* what it added (FIRST: the step so far) */
	uint64_t before_node_j;	/* the node total of the answer before */
} step_account_t;

/*
 * Account slurmd's node total a (from its RPC, or its query socket's
 * total) at monotonic a->t_ns, poll_time its sample's wall-clock second:
 * the step's energy follows it and never goes back; a slurmd that
 * restarted is bridged (energy_carry_step_j).
 */
step_account_t step_energy_account_node(step_energy_t *s,
					const energy_carry_answer_t *a,
					time_t poll_time);

/*
 * The node total slurmd put into a query's answer a (its total hook), at
 * now_ns: another total id is a slurmd that started again.  0, or
 * -ENODATA (none in it; nothing changed).  poll_time_s: the wall-clock
 * second of a->total_sample_ns.
 */
int step_energy_account_total(step_energy_t *s,
			      const energy_query_answer_t *a, uint64_t now_ns,
			      time_t poll_time_s, step_account_t *acct);

/*
 * The answer a of the poll's question in flight, asked at t1_ns and read
 * only now: accounted as that poll's (the node total as of its instant),
 * and kept as the end poll's answer when t1_ns is the step's end.
 * Returns step_energy_account_total's result (*acct set when 0).
 */
int step_energy_collected(step_energy_t *s, const energy_query_answer_t *a,
			  uint64_t t1_ns, time_t poll_time_s,
			  step_account_t *acct);

/* A poll that asked and waited: its answer a, at now_ns, is the end's. */
void step_energy_poll_answered(step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t now_ns);

/*
 * A share answer a at now_ns (EnergyAttribution=share): the step's energy
 * follows it, never decreasing; its GPU part too.  poll_time_s: the
 * wall-clock second of a->share_last_ns.  True when slurmd restarted since
 * the last answer (its shares count from zero: the ones before are kept).
 */
bool step_energy_account_share(step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t now_ns,
			       time_t poll_time_s);

/*
 * Node mode: the step's GPUs' energy between t0 and this answer's t1_ns,
 * F x (e1 - e0), with e0 kept as soon as it is final (a->complete0, or
 * STEP_GPU_E0_FINAL_NS after t0: the GPUs' history does not reach back to
 * the start of a long step); until then each answer's own e0 (carried at
 * the power of the GPUs' last sample before it: off by a fraction of a
 * second's energy at most).  Energies of another server generation do not
 * subtract: the part then stays.
 */
void step_energy_account_gpu_node(step_energy_t *s,
				  const energy_query_answer_t *a,
				  uint64_t t1_ns);

/* ------------------------------------------- refresh, and the RPC */

/* How a refresh gets the node's energy (step_energy_refresh). */
typedef enum {
	STEP_REFRESH_NONE,	/* settled: the step's energy is final */
	STEP_REFRESH_SHARE,	/* share mode: the step's share so far */
	STEP_REFRESH_SOCKET,	/* slurmd's query socket; the RPC if it
				 * gives no total */
	STEP_REFRESH_RPC,	/* Slurm's energy RPC (no socket) */
} step_refresh_t;

step_refresh_t step_energy_refresh(const step_energy_t *s, bool share_mode);

/* A view older than STEP_REFRESH_NS at now_ns. */
bool step_energy_stale(const step_energy_t *s, uint64_t now_ns);

/* A profile sample at now_ns asks first (no answer within
 * STEP_PROFILE_FRESH_NS). */
bool step_energy_profile_asks(const step_energy_t *s, uint64_t now_ns);

/*
 * Slurm's energy RPC failed at now_ns: true while the failures are within
 * STEP_RPC_GRACE_NS of the first (slurmd restarting: debug level), else
 * false (error level); *failing_ns how long since the first.
 */
bool step_energy_rpc_failed(step_energy_t *s, uint64_t now_ns,
			    uint64_t *failing_ns);

/* ------------------------------------------------- what Slurm gets */

/* The step's energy as Slurm's acct_gather_energy_t wants it. */
typedef struct {
	uint64_t consumed_j;
	uint64_t previous_j;
	uint64_t base_j;	/* consumed - previous */
	uint32_t current_watts;
	uint32_t ave_watts;
	time_t poll_time;
} step_report_t;

/* At now_ns; false (r zeroed) before any answer. */
bool step_energy_report(const step_energy_t *s, uint64_t now_ns,
			step_report_t *r);

/* ------------------------------------------------------- the settle */

/* What the glue knows of the step when it settles. */
typedef struct {
	bool in_stepd;		/* the process is slurmstepd */
	bool have_job;		/* its step record is known */
	bool share_mode;	/* EnergyAttribution=share */
	bool window_source;	/* the source has its own history (RRD) */
	bool ends_job;		/* batch, extern or interactive step */
} step_settle_facts_t;

/*
 * Why this step will not settle, or NULL when it may.  A window source
 * waits up to max_wait for rows: not for steps whose end is the job's own.
 * A live source waits at most one read: every step settles.
 */
const char *step_energy_settle_refused(const step_energy_t *s,
				       const step_settle_facts_t *f);

/* The step's energy is final: joules over [t0_ns, t1_ns] (any clock).
 * Returns its average watts. */
uint32_t step_energy_settled(step_energy_t *s, uint64_t joules,
			     uint64_t t0_ns, uint64_t t1_ns);

/*
 * How long a settle's wait pauses before it asks again, at now_ns:
 * *pause_ns (first LIVE_FIRST_PAUSE_NS), which doubles each time up to
 * LIVE_RETRY_MAX_NS, but never past LIVE_RETRY_NS before limit_ns, where
 * the last question goes.  0: no time left.
 */
uint64_t step_energy_settle_pause(uint64_t *pause_ns, uint64_t limit_ns,
				  uint64_t now_ns);

/* The first answer a of a wait that began at begin_ns brings its limit in
 * to one read: the sampler's reach (sampler_reach_ns, within which a
 * reading is late, not lost) + LIVE_MARGIN_NS. */
uint64_t step_energy_settle_read_limit(uint64_t begin_ns,
				       const energy_query_answer_t *a,
				       uint64_t limit_ns);

/*
 * The limit of a live settle's wait that began at begin_ns for the step's
 * end t1_ns, given its own limit_ns (max_wait): fini()'s, for a slow
 * meter (read deadline above STEP_FINI_FAST_READ_NS, or none known yet),
 * is cut to t1_ns + STEP_FINI_WAIT_NS (at least LIVE_RETRY_NS after
 * begin_ns, for the answer already there); else limit_ns.
 */
uint64_t step_energy_settle_limit(const step_energy_t *s, uint64_t t1_ns,
				  uint64_t begin_ns, uint64_t limit_ns);

/*
 * Whether fini() leaves the step's settle to a listed spank_energy_settle.so
 * (its slurm_spank_exit comes next in the same slurmstepd).  Up to 25.11
 * (srun_told_first: srun is told the tasks ended between the two) always:
 * a wait there holds no user.  On 26.05 srun is told after both, so a wait
 * holds srun wherever it runs; fini() keeps the settle, except for a slow
 * meter (step_energy_meter_is_slow), whose end fini() would estimate after
 * STEP_FINI_WAIT_NS: the site that listed the SPANK plugin asked for the
 * reading after the step's end, and srun waits for it (at most max_wait).
 */
bool step_energy_fini_leaves_to_spank(const step_energy_t *s,
				      bool srun_told_first);

/* A meter whose reads may take longer than STEP_FINI_FAST_READ_NS (its
 * read deadline in slurmd's answers), or whose deadline is not known yet. */
bool step_energy_meter_is_slow(const step_energy_t *s);

/* Whether a settle's question at now_ns may be held by slurmd: only when
 * the server's hold and the round trip (LIVE_QUERY_TIMEOUT_NS) fit before
 * limit_ns; else it is answered at once. */
bool step_energy_settle_holds(uint64_t limit_ns, uint64_t now_ns);

/* The live settle's t1: the step's end, else now_ns (no poll after t0). */
uint64_t step_energy_live_t1(const step_energy_t *s, uint64_t now_ns);

/* Until when the read the end poll kicked for t1_ns may still be on its
 * way (a kick then would read the meter twice); 0: none. */
uint64_t step_energy_live_read_due(const step_energy_t *s, uint64_t t1_ns);

/* Why a live settle's answer a keeps the running total, or NULL when
 * E(t1) - E(t0) is final; *done: asking again cannot help (another
 * sampler, a start older than the history, or one before the sampler's
 * first reading ever: a meter not up yet when the step began, whose
 * running total estimated that part at the first reading's power). */
const char *step_energy_live_verdict(const step_energy_t *s,
				     const energy_query_answer_t *a,
				     bool *done);

/*
 * The held answer: the end poll's, for t1_ns and final, as the poll at the
 * tasks' end is (slurmd held it until the reading after the end was in).
 * True: *a holds it and no question is asked.  *why: its verdict.
 */
bool step_energy_live_held_answer(const step_energy_t *s, uint64_t t1_ns,
				  energy_query_answer_t *a, const char **why);

/*
 * A step whose end lies in a meter outage.  The sampler extrapolates past
 * its newest sample at the last power for one missed read (its period +
 * deadline, sampler_reach_ns), then holds: energy after that is not
 * measured, nor guessed, until the meter returns, and then it goes to the
 * node's total (the counter path counts it exactly), not to a step that
 * has ended.  A settle that found no reading after t1 in time keeps the
 * running total, which then misses that span: a lower bound, to be said
 * as one (acct_gather_energy_modbus(5) and the others, Meter outages).
 */
typedef struct {
	uint64_t step_ns;	/* the step's window, t1 - t0 */
	uint64_t silent_ns;	/* t1 - the newest reading (all of the
				 * window when no reading at all) */
	uint64_t unknown_ns;	/* the part of the window past the
				 * sampler's reach: not in the total */
} step_outage_t;

/*
 * Whether the last answer a of a live settle over [t0, t1_ns], not final
 * for want of a reading after t1 (step_energy_live_verdict not done; a
 * sampler restarted or a start older than the history keep their own
 * reasons), says such an outage: its newest reading plus the sampler's
 * reach (sampler_reach_ns of the answer's period and deadline) lies
 * before t1 (a late reading of a working meter lies within it).  True
 * with *o filled.
 */
bool step_energy_live_outage(const step_energy_t *s,
			     const energy_query_answer_t *a, uint64_t t1_ns,
			     step_outage_t *o);

/*
 * Whether a live settle that found such an outage (a, t1_ns) waits for the
 * meter to return, up to its own bound (max_wait), instead of one read:
 * only a settle that runs after srun was told the tasks ended (the SPANK
 * plugin's, not fini()'s: a wait there holds srun and the job), and only
 * with time left.  Readings that bracket t1 then give E(t1) exactly
 * (counter path) or filled linearly (power path), as for any gap.  *o as
 * step_energy_live_outage fills it (the outage's spans, for the log).
 */
bool step_energy_settle_waits_outage(const step_energy_t *s,
				     const energy_query_answer_t *a,
				     uint64_t t1_ns, step_outage_t *o);

/* A step's end settled from what is known (step_energy_live_estimate). */
typedef struct {
	uint64_t joules;	/* E(t1) - E(t0), E(t1) extrapolated */
	uint64_t span_ns;	/* t1 - the newest reading */
	uint32_t watts;		/* the newest reading's power, carried */
} step_estimate_t;

/*
 * A live settle's last answer a for t1_ns that is not final for want of
 * the reading after t1 only (step_energy_live_verdict not done), while
 * the newest reading is within the sampler's reach of t1 (a late reading,
 * not an outage: step_energy_live_outage) and taken after the step's t0
 * (a step over which the meter gave nothing is not guessed: it keeps its
 * running total, said as not settled): E(t1) as slurmd gives it, the
 * newest reading's energy carried at its power to t1 (as the sampler
 * carries the node's total), minus E(t0) (the step's final one, else the
 * answer's).  Its error is what the power's change over that span makes
 * (acct_gather_energy_bmc(5), REDFISH).  True with *e filled.
 */
bool step_energy_live_estimate(const step_energy_t *s,
			       const energy_query_answer_t *a, uint64_t t1_ns,
			       step_estimate_t *e);

/* The live settle's energy from a final answer a: E(t1) - E(t0), in J. */
uint64_t step_energy_live_joules(const step_energy_t *s,
				 const energy_query_answer_t *a);

/* The share settle's t1: the step's end, else now_ns. */
uint64_t step_energy_share_t1(const step_energy_t *s, uint64_t now_ns);

/* The window of a window settle (wall clock). */
typedef struct {
	uint64_t t0_wall_ns;
	uint64_t t1_wall_ns;
	int64_t stepped_ns;	/* the wall clock's step while the step ran */
	bool clock_stepped;	/* ... by more than a second: say so */
} step_window_t;

/*
 * The step's wall-clock window, from its start's wall time; its length is
 * the step's monotonic one, so that a step of the wall clock (NTP) while
 * the step ran neither stretches nor shrinks it.  Without a monotonic end
 * (no poll), the wall-clock end, else now_wall_ns.
 */
step_window_t step_energy_window(const step_energy_t *s, uint64_t now_wall_ns);

/*
 * A window settle's wait: after the source answered rc (0 or -errno) and
 * complete (its rows cover the window), at now_ns with deadline_ns: how
 * long to sleep before asking again (up to SETTLE_POLL_NS), or 0: done.
 */
uint64_t step_energy_window_wait(int rc, bool complete, uint64_t now_ns,
				 uint64_t deadline_ns);

/* ------------------------------------------------------ the GPU part */

/* The step's GPUs into a query's q, once read (gpus_read). */
void step_energy_gpus_fill(const step_energy_t *s, energy_query_step_t *q);

/* A set of minors as "0,3,7" (or "none") into buf. */
void step_energy_minors_str(const uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			    char *buf, size_t len);

/* The minors the step's GPU part counts ("1,3"; "none", "unknown"). */
void step_energy_gpus_str(const step_energy_t *s, char *buf, size_t len);

#endif
