/*
 * test_step_energy.c - a step's energy as slurmstepd keeps it
 * (step_energy.h), on concrete values: each path that otherwise only the
 * test cluster covers (tests/integration/test_step_boundaries.py,
 * test_settle_in_plugin.py, test_rrd_energy.py, test_gpu_share.py).
 *
 * Units: instants in ns (S(x) seconds), energy in mJ in slurmd's answers,
 * in J in the step's total; 1 W for 1 s is 1000 mJ.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler.h"
#include "se_time.h"
#include "step_energy.h"

#define S(x)	((uint64_t) ((x) * 1e9 + 0.5))	/* seconds to ns */
#define MS(x)	((uint64_t) ((x) * 1e6 + 0.5))	/* ms to ns */

/* slurmd's server generation in the answers */
#define GEN	0x5eed
#define GEN2	0xbeef

/* A step with slurmd's query socket, configured at 100 s (wall 1000 s). */
static step_energy_t live_step(void)
{
	step_energy_t s;

	memset(&s, 0, sizeof(s));
	step_energy_start(&s, S(100), S(1000));
	strcpy(s.energy_query_path, "/spool/slurm-energy-node1.sock");
	return s;
}

/* A poll at now (wall clock as far from 1000 s as now from 100 s). */
static step_poll_t poll_at(step_energy_t *s, uint64_t now, bool started,
			   bool *first)
{
	step_poll_facts_t f = {
		.tasks_started = started,
		.now_ns = now,
		.now_wall_ns = now + S(900),
	};

	return step_energy_mark_poll(s, &f, first);
}

/* slurmd's answer for [t0, t1]: E(t0) and E(t1) final, its node total. */
static energy_query_answer_t answer(uint64_t e0_mj, uint64_t e1_mj,
				    uint64_t total_mj)
{
	energy_query_answer_t a = {
		.generation = GEN,
		.e0_mj = e0_mj,
		.e1_mj = e1_mj,
		.complete0 = true,
		.complete1 = true,
		.period_ns = S(1),
		.deadline_ns = MS(500),
		.total = true,
		.total_id = 7,
		.total_mj = total_mj,
		.total_power_mw = 200000,
	};

	return a;
}

/* ------------------------------------------------------- first poll */

/* The first poll after the first task started is t0 and sends its
 * question without waiting; one before the tasks start marks only the
 * end so far. */
START_TEST(test_first_poll)
{
	step_energy_t s = live_step();
	step_poll_question_t q;
	bool first;

	ck_assert_uint_eq(step_energy_t0(&s), S(100));
	ck_assert_int_eq(poll_at(&s, S(100.2), false, &first),
			 STEP_POLL_QUESTION);
	ck_assert(!first);
	ck_assert_uint_eq(s.first_poll_ns, 0);
	ck_assert_uint_eq(s.end_ns, S(100.2));

	ck_assert_int_eq(poll_at(&s, S(100.5), true, &first),
			 STEP_POLL_QUESTION);
	ck_assert(first);
	ck_assert_uint_eq(s.first_poll_ns, S(100.5));
	ck_assert_uint_eq(step_energy_t0(&s), S(100.5));
	ck_assert_uint_eq(s.end_ns, S(100.5));
	ck_assert_uint_eq(s.end_wall_ns, S(1000.5));
	q = step_energy_poll_question(first, false);
	ck_assert(q.send);
	ck_assert_uint_eq(q.how, 0);
	ck_assert_uint_eq(q.timeout_ns, LIVE_POLL_QUERY_TIMEOUT_NS);

	/* the next poll is no first; a running poll asks and waits */
	ck_assert_int_eq(poll_at(&s, S(130), true, &first), STEP_POLL_QUESTION);
	ck_assert(!first);
	ck_assert_uint_eq(s.first_poll_ns, S(100.5));
	q = step_energy_poll_question(first, false);
	ck_assert(!q.send);
	ck_assert_uint_eq(q.timeout_ns, LIVE_POLL_QUERY_TIMEOUT_NS);
}
END_TEST

/* A poll within a millisecond of a question in flight is that question's
 * (nothing moves); one after the step began ending moves nothing. */
START_TEST(test_poll_same_question_and_ending)
{
	step_energy_t s = live_step();
	step_poll_facts_t ending = { .ending = true, .now_ns = S(200) };
	bool first;

	(void) poll_at(&s, S(100.5), true, &first);
	s.asking = true;
	s.question.t1_ns = S(100.5);
	ck_assert_int_eq(poll_at(&s, S(100.5) + MS(0.9), true, &first),
			 STEP_POLL_SAME_QUESTION);
	ck_assert_uint_eq(s.end_ns, S(100.5));
	ck_assert_int_eq(poll_at(&s, S(100.5) + MS(1), true, &first),
			 STEP_POLL_QUESTION);
	ck_assert_uint_eq(s.end_ns, S(100.5) + MS(1));

	ck_assert_int_eq(step_energy_mark_poll(&s, &ending, &first),
			 STEP_POLL_UNMARKED);
	ck_assert_uint_eq(s.end_ns, S(100.5) + MS(1));
	ck_assert_uint_eq(s.end_wall_ns, S(1000.5) + MS(1));
}
END_TEST

/* No socket, share mode or a settled step: the poll marks the end but
 * asks nothing of the socket. */
START_TEST(test_poll_no_question)
{
	step_energy_t s = live_step();
	step_poll_facts_t share = { .share_mode = true, .tasks_started = true,
				    .now_ns = S(101) };
	bool first;

	ck_assert_int_eq(step_energy_mark_poll(&s, &share, &first),
			 STEP_POLL_NO_QUESTION);
	ck_assert_uint_eq(s.end_ns, S(101));
	ck_assert_uint_eq(s.first_poll_ns, 0);	/* no live t0 in share mode */
	s.energy_query_path[0] = '\0';
	ck_assert_int_eq(poll_at(&s, S(102), true, &first),
			 STEP_POLL_NO_QUESTION);
	ck_assert_uint_eq(s.end_ns, S(102));
}
END_TEST

/* ---------------------------------------------------- held end poll */

/* The tasks' end with a settle to come: the question is held, sent
 * without waiting; its answer, read later, is the end poll's, and a poll
 * a fraction of a millisecond after takes it. */
START_TEST(test_held_end_poll)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(1000000, 1250000, 9250000), got;
	step_poll_question_t q;
	step_account_t acct;
	bool first;

	q = step_energy_poll_question(false, true);
	ck_assert(q.send);
	ck_assert_uint_eq(q.how, ENERGY_QUERY_HOLD);
	ck_assert_uint_eq(q.timeout_ns, LIVE_QUERY_TIMEOUT_NS);
	ck_assert(step_energy_settle_expected(&s));

	(void) poll_at(&s, S(101), true, &first);	/* t0 */
	ck_assert_int_eq(poll_at(&s, S(106), true, &first),
			 STEP_POLL_QUESTION);	/* the tasks' end */
	ck_assert_int_eq(step_energy_collected(&s, &a, S(106), 1006, &acct),
			 0);
	ck_assert(s.poll_answered);
	ck_assert_uint_eq(s.poll_answer_ns, S(106));
	ck_assert_uint_eq(s.poll_answer.e1_mj, 1250000);
	/* the node total came with it: the step's first answer */
	ck_assert_int_eq(acct.how, ENERGY_CARRY_FIRST);
	ck_assert_uint_eq(s.last_node_j, 9250);
	ck_assert_uint_eq(s.poll_time, 1006);
	ck_assert(s.have_e0);
	ck_assert_uint_eq(s.e0_mj, 1000000);

	ck_assert_int_eq(poll_at(&s, S(106) + MS(0.5), true, &first),
			 STEP_POLL_SAME_ANSWER);
	ck_assert_uint_eq(s.end_ns, S(106));
	ck_assert_int_eq(poll_at(&s, S(106) + MS(1.5), true, &first),
			 STEP_POLL_QUESTION);
	ck_assert(!s.poll_answered);

	/* an answer read for an earlier instant is no end poll's */
	s = live_step();
	(void) poll_at(&s, S(106), true, &first);
	ck_assert_int_eq(step_energy_collected(&s, &a, S(105), 0, &acct), 0);
	ck_assert(!s.poll_answered);
	/* a poll that asked and waited keeps its answer as the end's */
	step_energy_poll_answered(&s, &a, S(106) + MS(0.2));
	got = s.poll_answer;
	ck_assert(s.poll_answered);
	ck_assert_uint_eq(got.e1_mj, 1250000);
	ck_assert_uint_eq(s.poll_answer_ns, S(106) + MS(0.2));
}
END_TEST

/* EnergySettle=no and no SPANK settle: no settle to come, no hold. */
START_TEST(test_settle_expected)
{
	step_energy_t s = live_step();

	s.settle_conf_no = true;
	ck_assert(!step_energy_settle_expected(&s));
	s.settle_spank_listed = true;
	ck_assert(step_energy_settle_expected(&s));
}
END_TEST

/* ------------------------------------- settle from the held answer */

/* The first poll's answer makes E(t0) final; the held end poll's answer
 * settles the step with no question more: E(t1) - E(t0). */
START_TEST(test_settle_from_held_answer)
{
	step_energy_t s = live_step();
	energy_query_answer_t start = answer(1000000, 1000000, 9000000);
	/* the end's answer interpolates E(t0) again from the samples it has
	 * now: the settle takes the E(t0) kept from the start */
	energy_query_answer_t end = answer(1010000, 1250400, 9250000), a;
	step_account_t acct;
	const char *why = "unset";
	bool first;
	uint64_t t1;

	(void) poll_at(&s, S(101), true, &first);
	step_energy_query_begin(&s);
	ck_assert_int_eq(step_energy_collected(&s, &start, S(101), 0, &acct),
			 0);
	ck_assert(s.have_e0);
	ck_assert_uint_eq(s.e0_t_ns, S(101));
	(void) poll_at(&s, S(106), true, &first);
	step_energy_query_begin(&s);
	end.kicked = true;
	ck_assert_int_eq(step_energy_collected(&s, &end, S(106), 0, &acct), 0);
	ck_assert_uint_eq(s.queries, 2);

	t1 = step_energy_live_t1(&s, S(107));
	ck_assert_uint_eq(t1, S(106));
	/* the read the end poll kicked may still be on its way */
	ck_assert_uint_eq(step_energy_live_read_due(&s, t1),
			  S(106) + MS(500));
	memset(&a, 0, sizeof(a));
	ck_assert(step_energy_live_held_answer(&s, t1, &a, &why));
	ck_assert_ptr_null(why);
	ck_assert_uint_eq(a.e1_mj, 1250400);
	ck_assert_uint_eq(step_energy_live_joules(&s, &a), 250);
	ck_assert_uint_eq(step_energy_settled(&s, 250, S(101), S(106)), 50);
	ck_assert_uint_eq(s.step_j, 250);
	ck_assert(s.settled);
	ck_assert_int_eq(step_energy_refresh(&s, false), STEP_REFRESH_NONE);
}
END_TEST

/* The held answer is not taken when it is not final, not for t1, or of
 * another slurmd: the settle asks (and the verdict says why). */
START_TEST(test_held_answer_refused)
{
	step_energy_t s = live_step();
	energy_query_answer_t a;
	const char *why = NULL;
	bool done;

	s.have_e0 = true;
	s.e0_mj = 1000000;
	s.e0_gen = GEN;
	s.end_ns = S(106);
	s.poll_answered = true;
	s.poll_answer = answer(1000000, 1250000, 0);
	s.poll_answer.complete1 = false;
	ck_assert(!step_energy_live_held_answer(&s, S(106), &a, &why));
	ck_assert_str_eq(why, "no reading after the step's boundaries in time");
	ck_assert(!step_energy_live_held_answer(&s, S(105), &a, &why));
	/* not kicked: nothing on its way */
	ck_assert_uint_eq(step_energy_live_read_due(&s, S(106)), 0);

	a = answer(1000000, 1250000, 0);
	a.generation = GEN2;
	ck_assert_ptr_nonnull(step_energy_live_verdict(&s, &a, &done));
	ck_assert(done);
	a = answer(1000000, 900000, 0);
	ck_assert_str_eq(step_energy_live_verdict(&s, &a, &done),
			 "energy at the end below the start");
	ck_assert(done);
	s.have_e0 = false;
	a.rc0 = -ERANGE;
	ck_assert_str_eq(step_energy_live_verdict(&s, &a, &done),
			 "the step's start is older than slurmd's history and was not fetched in time");
	ck_assert(done);
	a.rc0 = 0;
	ck_assert_ptr_nonnull(step_energy_live_verdict(&s, &a, &done));
	ck_assert(!done);
}
END_TEST

/*
 * A step that began before the meter's first reading ever (a meter up
 * after slurmd: the extern step's first poll kicked the read that was the
 * first, 1 ms after its t0): E(t0) stays unknown whatever is asked, so the
 * settle keeps the running total at once instead of waiting out its
 * limit (1.8 s on the cluster, after which sacct had already read the
 * job's energy without its extern step: 0 J, test_gpu_share.py).  With no
 * reading at all yet, a reading may still come: asked again.
 */
START_TEST(test_verdict_start_before_first_reading)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(0, 8964000, 8964000);
	bool done = false;
	bool first;

	ck_assert_int_eq(poll_at(&s, S(101), true, &first), STEP_POLL_QUESTION);
	ck_assert(first);
	a.rc0 = -ENODATA;	/* t0 before the first sample ever */
	a.complete0 = false;
	a.last_sample_ns = S(101) + MS(1);
	ck_assert_str_eq(step_energy_live_verdict(&s, &a, &done),
			 "the step began before the meter's first reading (the meter was not up yet)");
	ck_assert(done);
	/* a reading exactly at t0 is one at or after it */
	a.last_sample_ns = S(101);
	ck_assert_ptr_nonnull(step_energy_live_verdict(&s, &a, &done));
	ck_assert(done);
	/* no reading yet: one may come */
	a.last_sample_ns = 0;
	a.complete1 = false;
	ck_assert_str_eq(step_energy_live_verdict(&s, &a, &done),
			 "no reading after the step's boundaries in time");
	ck_assert(!done);
}
END_TEST

/*
 * A step inside a meter outage (issue #44, SNMP): the sampler over a fake
 * meter of constant power with a counter, down from a twelfth of the
 * step's window on until after the settle.  Scaled from the job that kept
 * -91.7 %: 20 s with the meter silent after 1.66 s and a 1 s period, here
 * 1 s, silent after 83 ms, a 50 ms period.
 */
#define OUT_POWER_MW	1000000ULL	/* 1 kW: 1 J a ms */
#define OUT_PERIOD_NS	MS(50)
#define OUT_DEADLINE_NS	MS(20)

static int out_down;		/* atomic builtins: reads fail while set */
static uint64_t out_origin_ns;	/* the counter's zero */

static int out_read(void *dev, meter_reading_t *r, uint64_t deadline_ns,
		    char *msg, size_t len)
{
	uint64_t now = se_mono_ns();

	(void) dev;
	(void) deadline_ns;
	if (__atomic_load_n(&out_down, __ATOMIC_SEQ_CST)) {
		snprintf(msg, len, "PDU does not answer");
		return -ETIMEDOUT;
	}
	r->t_ns = now;
	r->has_power = true;
	r->power_mw = OUT_POWER_MW;
	r->has_counter = true;
	/* mJ: W x ns / 1e9 x 1000 */
	r->counter_raw = (now - out_origin_ns) / 1000;
	return 0;
}

static const meter_ops_t out_ops = { .name = "fake-pdu", .read = out_read };

/* slurmd's total hook over the test's sampler, as se_energy_node.c's. */
static int out_total(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		     uint64_t *sample_ns)
{
	sampler_status_t st;

	sampler_status(arg, &st);
	*total_mj = st.energy_mj;
	*power_mw = st.power_mw;
	*sample_ns = st.last_sample_ns;
	return 0;
}

/* What slurmd's query server (a real one, on path) answers for [t0, t1],
 * kicking no reading: the sampler's energies, final once a reading
 * follows. */
static energy_query_answer_t out_answer(const char *path, uint64_t t0,
					uint64_t t1)
{
	energy_query_answer_t a;

	ck_assert_int_eq(energy_query_ask(path, t0, t1, NULL,
					  ENERGY_QUERY_NO_KICK,
					  LIVE_QUERY_TIMEOUT_NS, &a), 0);
	return a;
}

/* Sleep until the monotonic instant t (at once when it passed). */
static void out_sleep_until(uint64_t t)
{
	uint64_t now = se_mono_ns();

	if (t > now)
		se_sleep_ns(t - now);
}

/* Poll (bounded: 5 s, then fail) until the sampler read n times well. */
static void out_wait_reads(sampler_t *smp, unsigned long n)
{
	uint64_t limit = se_mono_ns() + S(5);
	sampler_status_t st;

	do {
		se_sleep_ns(MS(5));
		sampler_status(smp, &st);
	} while (st.reads_ok < n && se_mono_ns() < limit);
	ck_assert_uint_ge(st.reads_ok, n);
}

START_TEST(test_outage_over_step_end)
{
	sampler_config_t cfg;
	sampler_t *smp;
	sampler_status_t st;
	step_energy_t s = live_step();
	energy_query_answer_t a;
	step_account_t acct;
	step_outage_t o;
	energy_query_hooks_t hooks = { .total = out_total, .total_id = 7 };
	energy_query_server_t *srv;
	char dir[64] = "/tmp/se-outage-XXXXXX", path[160], err[256];
	uint64_t t0, t1, down_ns, after_mj, measured_ns;
	double truth_j, err_pct;
	bool first, done;

	out_origin_ns = se_mono_ns();
	sampler_config_init(&cfg, OUT_PERIOD_NS, OUT_DEADLINE_NS);
	cfg.use_counter = true;
	cfg.counter = (counter_spec_t) { 64, 1.0, 0, 0 };
	cfg.backoff_max_ns = MS(100);
	cfg.label = "outage";
	smp = sampler_start(&out_ops, NULL, &cfg);
	ck_assert_ptr_nonnull(smp);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/node.sock", dir);
	hooks.arg = smp;
	srv = energy_query_server_start(path, smp, OUT_PERIOD_NS,
					OUT_DEADLINE_NS, &hooks, err,
					sizeof(err));
	ck_assert_msg(srv, "%s", err);
	out_wait_reads(smp, 3);
	step_energy_start(&s, se_mono_ns(), S(1000));

	/* the first task starts: t0, its answer kept once E(t0) is final */
	t0 = se_mono_ns();
	(void) poll_at(&s, t0, true, &first);
	ck_assert(first);
	sampler_status(smp, &st);
	out_wait_reads(smp, st.reads_ok + 1);
	step_energy_query_begin(&s);
	a = out_answer(path, t0, t0);
	ck_assert_int_eq(step_energy_collected(&s, &a, t0, 0, &acct), 0);
	ck_assert(s.have_e0);

	/* the meter goes silent 83 ms in; the step ends at 1 s */
	out_sleep_until(t0 + MS(83));
	__atomic_store_n(&out_down, 1, __ATOMIC_SEQ_CST);
	down_ns = se_mono_ns();
	out_sleep_until(t0 + S(1));
	t1 = se_mono_ns();
	(void) poll_at(&s, t1, true, &first);
	step_energy_query_begin(&s);
	a = out_answer(path, t0, t1);
	ck_assert_int_eq(step_energy_collected(&s, &a, t1, 0, &acct), 0);

	/* the settle: no reading after t1, asking again cannot make one */
	ck_assert_str_eq(step_energy_live_verdict(&s, &a, &done),
			 "no reading after the step's boundaries in time");
	truth_j = (double) OUT_POWER_MW * (double) (t1 - t0) / 1e12;
	err_pct = ((double) s.step_j - truth_j) / truth_j * 100;
	fprintf(stderr, "outage over the step's end: running total %lu J, truth %.1f J (%+.1f %%)\n",
		(unsigned long) s.step_j, truth_j, err_pct);
	/* today's total: the energy up to the sampler's reach, far below */
	ck_assert(err_pct < -50);

	/* ... said as an outage, with the span the total misses */
	ck_assert(step_energy_live_outage(&s, &a, t1, &o));
	ck_assert_uint_eq(o.step_ns, t1 - t0);
	ck_assert_uint_eq(o.silent_ns, t1 - a.last_sample_ns);
	ck_assert_uint_eq(o.unknown_ns, t1 - a.last_sample_ns -
			  OUT_PERIOD_NS - OUT_DEADLINE_NS);
	ck_assert_uint_ge(o.silent_ns, t1 - down_ns);
	/* the total is what was measured up to the last reading (and at
	 * most the sampler's reach past it), to within a joule's rounding
	 * at each end: a lower bound, never more */
	measured_ns = o.step_ns - o.silent_ns;
	ck_assert_uint_ge(s.step_j * 1000 + 2000,
			  OUT_POWER_MW * measured_ns / SE_NS_PER_SEC);
	measured_ns = o.step_ns - o.unknown_ns;
	ck_assert_uint_le(s.step_j * 1000,
			  OUT_POWER_MW * measured_ns / SE_NS_PER_SEC + 2000);

	/* the meter returns after the settle: the node's total has the
	 * outage's energy (the counter), the ended step does not */
	__atomic_store_n(&out_down, 0, __ATOMIC_SEQ_CST);
	sampler_status(smp, &st);
	out_wait_reads(smp, st.reads_ok + 1);
	ck_assert_int_eq(sampler_energy_at(smp, t1, &after_mj), 0);
	fprintf(stderr, "after the meter returned: E(t1) - E(t0) %.1f J\n",
		(double) (after_mj - s.e0_mj) / 1000);
	ck_assert_uint_le(after_mj - s.e0_mj,
			  (uint64_t) (truth_j * 1000 * 1.01));
	ck_assert_uint_ge(after_mj - s.e0_mj,
			  (uint64_t) (truth_j * 1000 * 0.99));
	energy_query_server_stop(srv);
	ck_assert_int_eq(sampler_stop(smp), 0);
	rmdir(dir);
}
END_TEST

/* Not an outage: a reading merely late (within the sampler's reach of t1),
 * a final answer, or no window. */
START_TEST(test_outage_not_late_reading)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(1000000, 1250000, 0);
	step_outage_t o;

	s.first_poll_ns = S(101);
	ck_assert(!step_energy_live_outage(&s, &a, S(121), &o));
	a.complete1 = false;
	/* reach: 1 s period + 0.5 s deadline */
	a.last_sample_ns = S(119.5);
	ck_assert(!step_energy_live_outage(&s, &a, S(121), &o));
	a.last_sample_ns = S(102.66);
	ck_assert(step_energy_live_outage(&s, &a, S(121), &o));
	ck_assert_uint_eq(o.step_ns, S(20));
	ck_assert_uint_eq(o.silent_ns, S(18.34));
	ck_assert_uint_eq(o.unknown_ns, S(16.84));
	/* silent since before t0: none of the window is known */
	a.last_sample_ns = S(90);
	ck_assert(step_energy_live_outage(&s, &a, S(121), &o));
	ck_assert_uint_eq(o.unknown_ns, S(20));
	a.last_sample_ns = 0;
	ck_assert(step_energy_live_outage(&s, &a, S(121), &o));
	ck_assert_uint_eq(o.silent_ns, S(20));
	ck_assert_uint_eq(o.unknown_ns, S(20));
	ck_assert(!step_energy_live_outage(&s, &a, S(101), &o));
	/* another sampler's answer keeps its own reason */
	s.have_e0 = true;
	s.e0_gen = GEN2;
	ck_assert(!step_energy_live_outage(&s, &a, S(121), &o));
	s.e0_gen = GEN;
	ck_assert(step_energy_live_outage(&s, &a, S(121), &o));
	/* the SPANK settle (after srun was told) waits for the meter's
	 * return up to its bound; fini()'s (holding srun) waits one read */
	ck_assert(!step_energy_settle_waits_outage(&s, &a, S(121), &o));
	s.settle_tried = true;
	s.settle_in_fini = true;
	ck_assert(!step_energy_settle_waits_outage(&s, &a, S(121), &o));
	s.settle_in_fini = false;
	ck_assert(step_energy_settle_waits_outage(&s, &a, S(121), &o));
	a.last_sample_ns = S(119.5);	/* merely late: one read */
	ck_assert(!step_energy_settle_waits_outage(&s, &a, S(121), &o));
}
END_TEST

/* E(t0) is for t0: when the tasks' start moves t0, it is asked again. */
START_TEST(test_e0_follows_t0)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(500000, 500000, 0);

	step_energy_query_answered(&s, &a, S(100));	/* t0 = the start */
	ck_assert(s.have_e0);
	ck_assert_uint_eq(s.e0_t_ns, S(100));
	s.first_poll_ns = S(100.4);
	step_energy_query_begin(&s);
	ck_assert(!s.have_e0);
	a.e0_mj = 540000;
	step_energy_query_answered(&s, &a, S(100.4));
	ck_assert_uint_eq(s.e0_mj, 540000);
	ck_assert_uint_eq(s.e0_t_ns, S(100.4));
}
END_TEST

/* A settle that asks again: pauses of 1, 2, 4 ... ms up to 160, the last
 * question LIVE_RETRY_NS before the limit; the first answer brings the
 * limit in to one read. */
START_TEST(test_settle_pause)
{
	uint64_t pause = LIVE_FIRST_PAUSE_NS, limit = S(10);
	energy_query_answer_t a = answer(0, 0, 0);

	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit, S(1)), MS(1));
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit, S(1)), MS(2));
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit, S(1)), MS(4));
	pause = MS(128);
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit, S(1)),
			  MS(128));
	ck_assert_uint_eq(pause, MS(160));
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit, S(1)),
			  MS(160));
	/* near the limit: cut so that the last question goes 5 ms before */
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit,
						   S(10) - MS(50)), MS(45));
	ck_assert_uint_eq(step_energy_settle_pause(&pause, limit,
						   S(10) - MS(5)), 0);
	/* period 1 s + deadline 0.5 s + margin 0.25 s after the begin */
	ck_assert_uint_eq(step_energy_settle_read_limit(S(50), &a, S(80)),
			  S(51.75));
	ck_assert_uint_eq(step_energy_settle_read_limit(S(50), &a, S(51)),
			  S(51));
}
END_TEST

/* fini()'s settle holds srun: for a slow meter (reads allowed over 1 s)
 * its wait ends STEP_FINI_WAIT_NS (10 ms) after the step's end, or at once
 * when fini() came later; a fast meter's, and the SPANK settle's (after
 * srun was told), keep their own limit.  Near the limit a
 * question is not held (the server's hold would outlast it). */
START_TEST(test_settle_fini_limit)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(0, 0, 0);

	s.settle_tried = true;
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(121));
	s.settle_in_fini = true;
	/* no answer yet: the deadline unknown, srun not held */
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(106.01));
	/* a fast meter (reads bounded by 0.5 s, then by 2 s): one read */
	step_energy_query_answered(&s, &a, S(103));
	ck_assert_uint_eq(s.read_deadline_ns, MS(500));
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(121));
	a.deadline_ns = S(2);
	step_energy_query_answered(&s, &a, S(104));
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(121));
	/* a slow one (Redfish's 8 s deadline): 10 ms after the end */
	a.deadline_ns = S(2.001);
	step_energy_query_answered(&s, &a, S(105));
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(106.01));
	a.deadline_ns = S(8);
	step_energy_query_answered(&s, &a, S(105));
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(121)), S(106.01));
	/* fini() 0.3 s after the end: 5 ms for what slurmd already has */
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.3),
						   S(121)), S(106.305));
	/* EnergySettleMaxWait cut to less still wins */
	ck_assert_uint_eq(step_energy_settle_limit(&s, S(106), S(106.001),
						   S(106.005)), S(106.005));
	ck_assert(step_energy_settle_holds(S(10), S(9.75)));
	ck_assert(!step_energy_settle_holds(S(10), S(9.76)));
	ck_assert(!step_energy_settle_holds(S(10), S(10)));
	ck_assert(!step_energy_settle_holds(S(10), S(11)));
}
END_TEST

/* fini() leaves the settle to a listed SPANK plugin: always up to 25.11
 * (srun told first); on 26.05 only for a slow meter, whose end fini()
 * would estimate, and never when the plugin is not listed. */
START_TEST(test_fini_leaves_to_spank)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(0, 0, 0);

	ck_assert(!step_energy_fini_leaves_to_spank(&s, true));
	ck_assert(!step_energy_fini_leaves_to_spank(&s, false));
	s.settle_spank_listed = true;
	ck_assert(step_energy_fini_leaves_to_spank(&s, true));
	/* no answer yet: the deadline unknown, taken as slow */
	ck_assert(step_energy_meter_is_slow(&s));
	ck_assert(step_energy_fini_leaves_to_spank(&s, false));
	a.deadline_ns = S(2);		/* Modbus, IPMI, SNMP: fini() settles */
	step_energy_query_answered(&s, &a, S(103));
	ck_assert(!step_energy_meter_is_slow(&s));
	ck_assert(step_energy_fini_leaves_to_spank(&s, true));
	ck_assert(!step_energy_fini_leaves_to_spank(&s, false));
	a.deadline_ns = S(8);		/* Redfish's default */
	step_energy_query_answered(&s, &a, S(104));
	ck_assert(step_energy_meter_is_slow(&s));
	ck_assert(step_energy_fini_leaves_to_spank(&s, false));
}
END_TEST

/* A slow meter's step end, no reading after it in fini()'s wait: the
 * newest reading's energy carried at its power to t1 (slurmd's E(t1))
 * minus E(t0), while that reading is within the sampler's reach; an
 * outage, another sampler, a final answer or no reading give none. */
START_TEST(test_live_estimate)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(1000000, 2050000, 0);
	step_estimate_t e;

	s.first_poll_ns = S(101);
	s.have_e0 = true;
	s.e0_mj = 1000000;
	s.e0_gen = GEN;
	/* final: exact, no estimate */
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	/* the reading after t1 not in: the one 1.2 s before, at 200 W
	 * (reach 1.5 s) */
	a.complete1 = false;
	a.last_sample_ns = S(104.8);
	ck_assert(step_energy_live_estimate(&s, &a, S(106), &e));
	ck_assert_uint_eq(e.joules, 1050);
	ck_assert_uint_eq(e.span_ns, S(1.2));
	ck_assert_uint_eq(e.watts, 200);
	/* at the edge of the reach, and past it: an outage, not guessed */
	a.last_sample_ns = S(104.5);
	ck_assert(step_energy_live_estimate(&s, &a, S(106), &e));
	a.last_sample_ns = S(104.499);
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	{
		step_outage_t o;

		ck_assert(step_energy_live_outage(&s, &a, S(106), &o));
	}
	a.last_sample_ns = 0;
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	/* within the reach but before t0: the meter gave nothing over the
	 * step, nothing guessed */
	s.first_poll_ns = S(105.2);
	a.last_sample_ns = S(105.1);
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	a.last_sample_ns = S(105.2);
	ck_assert(step_energy_live_estimate(&s, &a, S(106), &e));
	s.first_poll_ns = S(101);
	a.last_sample_ns = S(105);
	/* E(t1) not known at all */
	a.rc1 = -ENODATA;
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	a.rc1 = 0;
	/* another sampler since t0: no difference of its energies */
	s.e0_gen = GEN2;
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	s.e0_gen = GEN;
	/* E(t0) not final yet: the answer's own */
	s.have_e0 = false;
	a.e0_mj = 1100000;
	ck_assert(step_energy_live_estimate(&s, &a, S(106), &e));
	ck_assert_uint_eq(e.joules, 950);
	a.rc0 = -ENODATA;
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
	a.rc0 = 0;
	a.e0_mj = 2100000;	/* below E(t0): none */
	ck_assert(!step_energy_live_estimate(&s, &a, S(106), &e));
}
END_TEST

/* ------------------------------------------------- settle by window */

/* The window keeps the step's monotonic length from its start's wall
 * time: a wall clock stepped by +40 s while the step ran changes nothing,
 * and is said. */
START_TEST(test_window)
{
	step_energy_t s = live_step();
	step_window_t w;

	s.end_ns = S(160);		/* 60 s after the start */
	s.end_wall_ns = S(1100);	/* the wall clock says 100 s */
	w = step_energy_window(&s, S(2000));
	ck_assert_uint_eq(w.t0_wall_ns, S(1000));
	ck_assert_uint_eq(w.t1_wall_ns, S(1060));
	ck_assert_int_eq(w.stepped_ns, (int64_t) S(40));
	ck_assert(w.clock_stepped);

	s.end_wall_ns = S(1060.5);	/* half a second: not said */
	w = step_energy_window(&s, S(2000));
	ck_assert_uint_eq(w.t1_wall_ns, S(1060));
	ck_assert(!w.clock_stepped);

	/* no poll: the wall-clock end, else now */
	s.end_ns = 0;
	s.end_wall_ns = S(1030);
	ck_assert_uint_eq(step_energy_window(&s, S(2000)).t1_wall_ns,
			  S(1030));
	s.end_wall_ns = 0;
	ck_assert_uint_eq(step_energy_window(&s, S(2000)).t1_wall_ns,
			  S(2000));
}
END_TEST

/* The source is asked every second until its rows cover the window or
 * max_wait passes; then the energy in J, rounded, and its watts. */
START_TEST(test_window_wait_and_store)
{
	step_energy_t s = live_step();

	ck_assert_uint_eq(step_energy_window_wait(0, true, S(5), S(30)), 0);
	ck_assert_uint_eq(step_energy_window_wait(0, false, S(5), S(30)),
			  SETTLE_POLL_NS);
	ck_assert_uint_eq(step_energy_window_wait(-EIO, true, S(5), S(30)),
			  SETTLE_POLL_NS);
	ck_assert_uint_eq(step_energy_window_wait(0, false, S(29.75), S(30)),
			  MS(250));
	ck_assert_uint_eq(step_energy_window_wait(0, false, S(30), S(30)), 0);

	ck_assert_uint_eq(step_energy_mj_to_j(12499), 12);
	ck_assert_uint_eq(step_energy_mj_to_j(12500), 13);
	s.step_j = 11;
	/* 12 000 J over 60 s: 200 W */
	ck_assert_uint_eq(step_energy_settled(&s, 12000, S(1000), S(1060)),
			  200);
	ck_assert_uint_eq(s.prev_step_j, 11);
	ck_assert_uint_eq(s.step_j, 12000);
}
END_TEST

/* ---------------------------------------------------------- refusal */

/* Why a step does not settle, in the order the reasons are checked. */
START_TEST(test_settle_refused)
{
	step_energy_t s = live_step();
	step_settle_facts_t f = { .in_stepd = true, .have_job = true };
	step_settle_facts_t window = { .in_stepd = true, .have_job = true,
				       .window_source = true };

	ck_assert_ptr_null(step_energy_settle_refused(&s, &f));
	f.in_stepd = false;
	ck_assert_str_eq(step_energy_settle_refused(&s, &f),
			 "not in slurmstepd");
	f.in_stepd = true;
	f.have_job = false;
	ck_assert_str_eq(step_energy_settle_refused(&s, &f), "no step record");
	f.have_job = true;
	/* a live source settles batch and extern steps too */
	f.ends_job = true;
	ck_assert_ptr_null(step_energy_settle_refused(&s, &f));
	s.energy_query_path[0] = '\0';
	ck_assert_str_eq(step_energy_settle_refused(&s, &f),
			 "no energy query socket for this node");
	f.share_mode = true;
	ck_assert_str_eq(step_energy_settle_refused(&s, &f),
			 "no energy query socket for this node");
	strcpy(s.energy_query_path, "/x.sock");
	ck_assert_ptr_null(step_energy_settle_refused(&s, &f));

	/* a window source: not for steps whose end is the job's */
	ck_assert_ptr_null(step_energy_settle_refused(&s, &window));
	window.ends_job = true;
	ck_assert_str_eq(step_energy_settle_refused(&s, &window),
			 "batch, extern or interactive step");
	s.start_wall_ns = 0;
	ck_assert_str_eq(step_energy_settle_refused(&s, &window), "no start");
	s.conf_bad = true;
	ck_assert_str_eq(step_energy_settle_refused(&s, &window),
			 "acct_gather.conf was refused in this step");
	s.settle_tried = true;
	ck_assert_str_eq(step_energy_settle_refused(&s, &window),
			 "a settle already ran for this step");
	s.settled = true;
	ck_assert_str_eq(step_energy_settle_refused(&s, &window),
			 "already settled");
}
END_TEST

/* ------------------------------------------------------------ carry */

/* The step follows slurmd's total: the first answer fills the time since
 * the start at the power then; later ones add what the node counted. */
START_TEST(test_account_node)
{
	step_energy_t s = live_step();
	energy_carry_answer_t a = { .t_ns = S(103), .node_j = 50000,
				    .watts = 200 };
	step_account_t r;
	step_report_t rep;

	ck_assert(!step_energy_report(&s, S(103), &rep));
	r = step_energy_account_node(&s, &a, 1003);
	ck_assert_int_eq(r.how, ENERGY_CARRY_FIRST);
	ck_assert_uint_eq(r.add_j, 600);	/* 3 s at 200 W */
	ck_assert_uint_eq(s.step_j, 600);
	ck_assert(s.have_base);

	a = (energy_carry_answer_t) { .t_ns = S(106), .node_j = 50750,
				      .watts = 250 };
	r = step_energy_account_node(&s, &a, 1006);
	ck_assert_int_eq(r.how, ENERGY_CARRY_ADVANCE);
	ck_assert_uint_eq(r.before_node_j, 50000);
	ck_assert_uint_eq(s.step_j, 1350);
	ck_assert_uint_eq(s.prev_step_j, 600);

	ck_assert(step_energy_report(&s, S(106.5), &rep));
	ck_assert_uint_eq(rep.consumed_j, 1350);
	ck_assert_uint_eq(rep.previous_j, 600);
	ck_assert_uint_eq(rep.base_j, 750);
	ck_assert_uint_eq(rep.current_watts, 250);
	ck_assert_uint_eq(rep.ave_watts, 225);	/* 1350 J over 6 s */
	ck_assert_int_eq(rep.poll_time, 1006);
}
END_TEST

/* A slurmd that restarted (another total id in the socket's answer)
 * counts from zero: the gap is bridged, the step never goes back, and the
 * new id is the one to follow. */
START_TEST(test_carry_restart)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(0, 0, 50000000);
	step_account_t r;

	ck_assert_int_eq(step_energy_account_total(&s, &a, S(100), 1000, &r),
			 0);
	ck_assert_int_eq(r.how, ENERGY_CARRY_FIRST);
	ck_assert_uint_eq(s.total_id, 7);
	a.total_mj = 50400000;
	ck_assert_int_eq(step_energy_account_total(&s, &a, S(102), 1002, &r),
			 0);
	ck_assert_uint_eq(s.step_j, 400);
	ck_assert_uint_eq(s.last_watts, 200);

	/* slurmd again: 300 J counted since, the gap 2 s at 200 W = 400 J */
	a.total_id = 8;
	a.total_mj = 300000;
	ck_assert_int_eq(step_energy_account_total(&s, &a, S(104), 1004, &r),
			 0);
	ck_assert_int_eq(r.how, ENERGY_CARRY_RESTARTED);
	ck_assert_uint_eq(r.add_j, 400);
	ck_assert_uint_eq(r.before_node_j, 50400);
	ck_assert_uint_eq(s.step_j, 800);
	ck_assert_uint_eq(s.total_id, 8);
	/* the same id again: an advance */
	a.total_mj = 500000;
	ck_assert_int_eq(step_energy_account_total(&s, &a, S(105), 1005, &r),
			 0);
	ck_assert_int_eq(r.how, ENERGY_CARRY_ADVANCE);
	ck_assert_uint_eq(s.step_j, 1000);
}
END_TEST

/* Share mode: the step's energy is its share, kept over a restart of
 * slurmd (another generation counting from zero), never decreasing. */
START_TEST(test_carry_share)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = { .generation = GEN, .share = true,
				    .share_mj = 100400,
				    .share_last_ns = S(101) };

	ck_assert(!step_energy_account_share(&s, &a, S(101.1), 1001));
	ck_assert_uint_eq(s.step_j, 100);
	ck_assert(s.have_base);
	a.share_mj = 300400;
	a.share_last_ns = S(102);
	ck_assert(!step_energy_account_share(&s, &a, S(102.1), 1002));
	ck_assert_uint_eq(s.step_j, 300);
	ck_assert_uint_eq(s.last_watts, 200);	/* 200 J over 1 s */
	a.generation = GEN2;
	a.share_mj = 50000;
	a.share_last_ns = S(103);
	ck_assert(step_energy_account_share(&s, &a, S(103.1), 1003));
	ck_assert_uint_eq(s.share.base_mj, 300400);
	ck_assert_uint_eq(s.step_j, 350);
	ck_assert_uint_eq(s.prev_step_j, 300);
	ck_assert_int_eq(s.poll_time, 1003);
	ck_assert_uint_eq(s.last_ns, S(103.1));

	/* the share settle's t1 is the step's end, else now */
	ck_assert_uint_eq(step_energy_share_t1(&s, S(110)), S(110));
	s.end_ns = S(104);
	ck_assert_uint_eq(step_energy_share_t1(&s, S(110)), S(104));
}
END_TEST

/* --------------------------------------------------------- GPU part */

/* Node mode: F x (e1 - e0) of the step's GPUs, e0 kept once final; an
 * answer of another slurmd generation leaves the part as it was. */
START_TEST(test_gpu_part_node)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = { .generation = GEN };

	s.first_poll_ns = S(101);
	a.gpu.part = true;
	a.gpu.e0_mj = 2000000;
	a.gpu.e1_mj = 2000000;
	/* not final yet (no sample after t0, less than 2 s after it) */
	step_energy_account_gpu_node(&s, &a, S(101.5));
	ck_assert(!s.have_gpu_e0);
	ck_assert_uint_eq(s.gpu_part_mj, 0);
	a.complete0 = true;
	a.gpu.e1_mj = 2300000;
	step_energy_account_gpu_node(&s, &a, S(102));
	ck_assert(s.have_gpu_e0);
	ck_assert_uint_eq(s.gpu_e0_mj, 2000000);
	ck_assert_uint_eq(s.gpu_part_mj, 300000);
	/* 300 J over the 0.5 s since the answer before */
	ck_assert_uint_eq(s.gpu_watts, 600);
	/* a later answer's own e0 no longer counts */
	a.gpu.e0_mj = 2100000;
	a.gpu.e1_mj = 2700000;
	step_energy_account_gpu_node(&s, &a, S(104));
	ck_assert_uint_eq(s.gpu_part_mj, 700000);
	ck_assert_uint_eq(s.gpu_watts, 200);	/* 400 J over 2 s */
	ck_assert_uint_eq(s.gpu_t_ns, S(104));
	/* another generation does not subtract */
	a.generation = GEN2;
	a.gpu.e1_mj = 100;
	step_energy_account_gpu_node(&s, &a, S(105));
	ck_assert_uint_eq(s.gpu_part_mj, 700000);
	/* no part in the answer (no GPUs metered): nothing */
	a.generation = GEN;
	a.gpu.part = false;
	a.gpu.e1_mj = 9000000;
	step_energy_account_gpu_node(&s, &a, S(106));
	ck_assert_uint_eq(s.gpu_part_mj, 700000);
}
END_TEST

/* Without complete0, e0 is final 2 s after t0 (a slow window source). */
START_TEST(test_gpu_e0_by_time)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = { .generation = GEN };

	a.gpu.part = true;
	a.gpu.e0_mj = 1000;
	a.gpu.e1_mj = 5000;
	step_energy_account_gpu_node(&s, &a, S(100) + STEP_GPU_E0_FINAL_NS);
	ck_assert(s.have_gpu_e0);
	ck_assert_uint_eq(s.gpu_e0_mj, 1000);
	ck_assert_uint_eq(s.gpu_part_mj, 4000);
}
END_TEST

/* Share mode: slurmd's charge of the step's GPUs, carried like the share;
 * the GPUs the step holds go with its questions. */
START_TEST(test_gpu_part_share)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = { .generation = GEN, .share = true,
				    .share_mj = 500000,
				    .share_last_ns = S(102) };
	energy_query_step_t q;
	char buf[64];

	a.gpu.part = true;
	a.gpu.part_mj = 150000;
	(void) step_energy_account_share(&s, &a, S(102), 1002);
	ck_assert_uint_eq(s.gpu_part_mj, 150000);
	ck_assert_uint_eq(s.gpu_watts, 75);	/* 150 J over 2 s from t0 */

	memset(&q, 0, sizeof(q));
	step_energy_gpus_str(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "unknown");
	step_energy_gpus_fill(&s, &q);
	ck_assert(!q.gpus_known);
	s.gpus_known = true;
	s.gpus_step_level = true;
	ck_assert_int_eq(energy_query_minors_add(s.gpu_step_minors, 1), 0);
	ck_assert_int_eq(energy_query_minors_add(s.gpu_step_minors, 3), 0);
	ck_assert_int_eq(energy_query_minors_add(s.gpu_job_minors, 0), 0);
	step_energy_gpus_str(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1,3");
	s.gpus_step_level = false;
	step_energy_gpus_str(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	step_energy_gpus_fill(&s, &q);
	ck_assert(q.gpus_known);
	ck_assert(energy_query_minors_has(q.step_minors, 3));
	ck_assert(energy_query_minors_has(q.job_minors, 0));
	memset(s.gpu_job_minors, 0, sizeof(s.gpu_job_minors));
	step_energy_gpus_str(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "none");
}
END_TEST

/* --------------------------------------------- fallback to the RPC */

/* Which way a refresh asks, and what an answer without a total does. */
START_TEST(test_refresh_fallback)
{
	step_energy_t s = live_step();
	energy_query_answer_t a = answer(0, 0, 0);
	step_account_t r;

	ck_assert_int_eq(step_energy_refresh(&s, false), STEP_REFRESH_SOCKET);
	ck_assert_int_eq(step_energy_refresh(&s, true), STEP_REFRESH_SHARE);
	s.energy_query_path[0] = '\0';
	ck_assert_int_eq(step_energy_refresh(&s, false), STEP_REFRESH_RPC);
	/* a socket answer with no total: -ENODATA, nothing changed (the glue
	 * asks Slurm's RPC) */
	a.total = false;
	ck_assert_int_eq(step_energy_account_total(&s, &a, S(101), 0, &r),
			 -ENODATA);
	ck_assert(!s.have_base);
	ck_assert_uint_eq(s.total_id, 0);
	/* how old a view may get */
	s.last_ns = S(101);
	ck_assert(!step_energy_stale(&s, S(101.9)));
	ck_assert(step_energy_stale(&s, S(102)));
	ck_assert(!step_energy_profile_asks(&s, S(101.05)));
	ck_assert(step_energy_profile_asks(&s, S(101.1)));
	s.last_ns = 0;
	ck_assert(step_energy_profile_asks(&s, S(101.05)));
}
END_TEST

/* RPC failures are quiet for 30 s from the first of a run (slurmd
 * restarting), then loud; an answer ends the run. */
START_TEST(test_rpc_grace)
{
	step_energy_t s = live_step();
	uint64_t failing;

	ck_assert(step_energy_rpc_failed(&s, S(200), &failing));
	ck_assert_uint_eq(failing, 0);
	ck_assert(step_energy_rpc_failed(&s, S(229.9), &failing));
	ck_assert(!step_energy_rpc_failed(&s, S(230), &failing));
	ck_assert_uint_eq(failing, S(30));
	s.rpc_fail_ns = 0;	/* what the glue does on an answer */
	ck_assert(step_energy_rpc_failed(&s, S(300), &failing));
	ck_assert_uint_eq(s.rpc_fail_ns, S(300));
}
END_TEST

/* Watts never read NO_VAL; averages over no time are 0. */
START_TEST(test_units)
{
	ck_assert_uint_eq(step_energy_mw_to_w(1499), 1);
	ck_assert_uint_eq(step_energy_mw_to_w(1500), 2);
	ck_assert_uint_eq(step_energy_mw_to_w(UINT64_MAX / 2),
			  STEP_WATTS_NO_VAL - 1);
	ck_assert_uint_eq(step_energy_avg_w(5000, 0), 0);
	ck_assert_uint_eq(step_energy_avg_w(5000, S(2)), 3);	/* 2.5 W */
}
END_TEST

static Suite *step_energy_suite(void)
{
	Suite *s = suite_create("step_energy");
	TCase *poll = tcase_create("poll");
	TCase *settle = tcase_create("settle");
	TCase *carry = tcase_create("carry");
	TCase *gpu = tcase_create("gpu");
	TCase *rpc = tcase_create("rpc");

	tcase_add_test(poll, test_first_poll);
	tcase_add_test(poll, test_poll_same_question_and_ending);
	tcase_add_test(poll, test_poll_no_question);
	tcase_add_test(poll, test_held_end_poll);
	tcase_add_test(poll, test_settle_expected);
	tcase_add_test(poll, test_fini_leaves_to_spank);
	suite_add_tcase(s, poll);
	tcase_add_test(settle, test_settle_from_held_answer);
	tcase_add_test(settle, test_held_answer_refused);
	tcase_add_test(settle, test_verdict_start_before_first_reading);
	tcase_add_test(settle, test_e0_follows_t0);
	tcase_add_test(settle, test_settle_pause);
	tcase_add_test(settle, test_settle_fini_limit);
	tcase_add_test(settle, test_live_estimate);
	tcase_add_test(settle, test_window);
	tcase_add_test(settle, test_window_wait_and_store);
	tcase_add_test(settle, test_settle_refused);
	tcase_add_test(settle, test_outage_over_step_end);
	tcase_add_test(settle, test_outage_not_late_reading);
	suite_add_tcase(s, settle);
	tcase_add_test(carry, test_account_node);
	tcase_add_test(carry, test_carry_restart);
	tcase_add_test(carry, test_carry_share);
	suite_add_tcase(s, carry);
	tcase_add_test(gpu, test_gpu_part_node);
	tcase_add_test(gpu, test_gpu_e0_by_time);
	tcase_add_test(gpu, test_gpu_part_share);
	suite_add_tcase(s, gpu);
	tcase_add_test(rpc, test_refresh_fallback);
	tcase_add_test(rpc, test_rpc_grace);
	tcase_add_test(rpc, test_units);
	suite_add_tcase(s, rpc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(step_energy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
