/*
 * test_powercap_ctl.c - the controller's side of a cap group over time
 * (src/powercap/pcap_ctl.c): lowers sent at once and raises held until the
 * lowered nodes draw under their caps or the gate passes, held raises
 * dropped by the next round, a silent agent charged its maximum, and the
 * caps sent never summing above the cap over many random rounds.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_ctl.h"

#define W(x) ((uint32_t)((x) * 1000))
#define MS 1000000LL

typedef struct {
	size_t n_sent;
	size_t node[64];
	uint32_t cap[64];
	uint64_t seq[64];
} outbox_t;

static void _send(void *arg, size_t i, uint32_t cap_mw, uint64_t seq)
{
	outbox_t *o = arg;

	ck_assert_uint_lt(o->n_sent, 64);
	o->node[o->n_sent] = i;
	o->cap[o->n_sent] = cap_mw;
	o->seq[o->n_sent++] = seq;
}

static pcap_params_t _params(double cap_w)
{
	pcap_params_t p = {
		.cap_mw = (uint64_t)(cap_w * 1000),
		.headroom_mw = PCAP_DEFAULT_HEADROOM_MW,
		.at_cap_mw = PCAP_DEFAULT_AT_CAP_MW,
		.hysteresis_mw = PCAP_DEFAULT_HYSTERESIS_MW,
	};
	return p;
}

/* Two nodes 100..500 W under an 800 W cap, both answered at 400 W after
 * a first round (caps 400 each). */
static void _two(pcap_ctl_t *c, pcap_node_t *nd, outbox_t *o)
{
	pcap_params_t p = _params(800);

	memset(nd, 0, 2 * sizeof(*nd));
	for (int i = 0; i < 2; i++) {
		nd[i].floor_mw = W(100);
		nd[i].max_mw = W(500);
	}
	ck_assert_int_eq(pcap_ctl_init(c, &p, nd, 2, 500 * MS, 3000 * MS), 0);
	for (int i = 0; i < 2; i++)
		pcap_ctl_answer(c, i, 0, 0, W(450), true);
	ck_assert_int_eq(pcap_ctl_round(c, 0, _send, o), 0);
	/* both lowered from 500 to 400 at once, nothing held */
	ck_assert_uint_eq(o->n_sent, 2);
	ck_assert_uint_eq(o->cap[0], W(400));
	ck_assert(!pcap_ctl_tick(c, 1, _send, o));
	for (int i = 0; i < 2; i++)
		pcap_ctl_answer(c, i, 10 * MS, o->seq[i], W(400), true);
	memset(o, 0, sizeof(*o));
}

START_TEST(test_lowers_first_raises_held)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	/* node 1 drops to 150 W: it donates, node 0 (at cap) gets its max,
	 * node 1 keeps the rest (150 + 15 W headroom + 135 W spare) */
	pcap_ctl_answer(&c, 0, 900 * MS, 0, W(400), true);
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(150), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 1000 * MS, _send, &o), 0);
	ck_assert_uint_eq(o.n_sent, 1);
	ck_assert_uint_eq(o.node[0], 1);
	ck_assert_uint_eq(o.cap[0], W(300));
	/* node 1 not yet answered, then still above its new cap: the
	 * raise waits */
	ck_assert(pcap_ctl_tick(&c, 1100 * MS, _send, &o));
	pcap_ctl_answer(&c, 1, 1150 * MS, o.seq[0], W(350), true);
	ck_assert(pcap_ctl_tick(&c, 1200 * MS, _send, &o));
	ck_assert_uint_eq(o.n_sent, 1);
	/* an answer to an older message does not settle it */
	pcap_ctl_answer(&c, 1, 1210 * MS, o.seq[0] - 1, W(290), true);
	ck_assert(pcap_ctl_tick(&c, 1220 * MS, _send, &o));
	/* under it: the raise goes */
	pcap_ctl_answer(&c, 1, 1250 * MS, o.seq[0], W(290), true);
	ck_assert(!pcap_ctl_tick(&c, 1260 * MS, _send, &o));
	ck_assert_uint_eq(o.n_sent, 2);
	ck_assert_uint_eq(o.node[1], 0);
	ck_assert_uint_eq(o.cap[1], W(500));
	ck_assert_uint_le(o.cap[0] + o.cap[1], W(800));
	pcap_ctl_free(&c);
}
END_TEST

/* --uniform: every node cap/n whatever it draws (a donor at 150 W keeps
 * its 400 W share, unlike greedy's test above), the lowers still first. */
START_TEST(test_uniform_cap_over_n)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };
	pcap_params_t p = _params(700);

	memset(nd, 0, sizeof(nd));
	for (int i = 0; i < 2; i++) {
		nd[i].floor_mw = W(100);
		nd[i].max_mw = W(500);
	}
	ck_assert_int_eq(pcap_ctl_init(&c, &p, nd, 2, 500 * MS, 3000 * MS),
			 0);
	c.uniform = true;
	pcap_ctl_answer(&c, 0, 0, 0, W(480), true);
	pcap_ctl_answer(&c, 1, 0, 0, W(150), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 0, _send, &o), 0);
	ck_assert_uint_eq(o.n_sent, 2);
	ck_assert_uint_eq(o.cap[0], W(350));
	ck_assert_uint_eq(o.cap[1], W(350));
	ck_assert_uint_eq(c.last.sum_caps_mw, W(700));
	/* the next round changes nothing: no cap sent by the round */
	memset(&o, 0, sizeof(o));
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(150), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 1000 * MS, _send, &o), 0);
	ck_assert_uint_eq(o.n_sent, 0);
	ck_assert(!pcap_ctl_tick(&c, 1100 * MS, _send, &o));
	/* a cap below the floors' share: each at its floor */
	c.params.cap_mw = W(150);
	ck_assert_int_eq(pcap_ctl_round(&c, 2000 * MS, _send, &o), 0);
	ck_assert_uint_eq(o.cap[0], W(100));
	ck_assert(c.nodes[0].out & PCAP_LOWER);
	pcap_ctl_free(&c);
}
END_TEST

START_TEST(test_gate_and_next_round)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	pcap_ctl_answer(&c, 0, 900 * MS, 0, W(400), true);
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(150), true);
	pcap_ctl_round(&c, 1000 * MS, _send, &o);
	ck_assert_uint_eq(o.n_sent, 1);
	/* never settles: the raise goes at the gate (500 ms) */
	ck_assert(pcap_ctl_tick(&c, 1499 * MS, _send, &o));
	ck_assert(!pcap_ctl_tick(&c, 1500 * MS, _send, &o));
	ck_assert_uint_eq(o.n_sent, 2);

	ck_assert_uint_eq(o.cap[1], W(500));

	/* node 1's demand grows back (at its 300 W cap), node 0 drops: node
	 * 0 is lowered, node 1's raise held... */
	memset(&o, 0, sizeof(o));
	pcap_ctl_answer(&c, 0, 1900 * MS, 0, W(150), true);
	pcap_ctl_answer(&c, 1, 1900 * MS, 0, W(300), true);
	pcap_ctl_round(&c, 2000 * MS, _send, &o);
	ck_assert_uint_eq(o.n_sent, 1);
	ck_assert_uint_eq(o.node[0], 0);
	ck_assert_uint_eq(c.st[1].held_mw, W(500));
	/* ...and dropped by a round before the gate: that round counts
	 * node 1 at the cap last sent (300), and node 0 grew back */
	memset(&o, 0, sizeof(o));
	pcap_ctl_answer(&c, 0, 2100 * MS, 0, W(300), true);
	pcap_ctl_answer(&c, 1, 2100 * MS, 0, W(300), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 2200 * MS, _send, &o), 0);
	ck_assert_uint_eq(nd[1].cap_mw, W(300));
	ck_assert_uint_ne(c.st[1].held_mw, W(500));
	ck_assert(!pcap_ctl_tick(&c, 2800 * MS, _send, &o));
	ck_assert_uint_le(c.st[0].sent_cap_mw + c.st[1].sent_cap_mw, W(800));
	pcap_ctl_free(&c);
}
END_TEST

START_TEST(test_held_raise_not_sent_stale)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	/* round A: node 0 lowered to 300, node 1's raise to 500 held */
	pcap_ctl_answer(&c, 0, 900 * MS, 0, W(150), true);
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(400), true);
	pcap_ctl_round(&c, 1000 * MS, _send, &o);
	pcap_ctl_answer(&c, 0, 1100 * MS, 0, W(150), true);
	pcap_ctl_answer(&c, 1, 1100 * MS, 0, W(400), true);
	pcap_ctl_round(&c, 1200 * MS, _send, &o);
	ck_assert(!pcap_ctl_tick(&c, 1800 * MS, _send, &o));
	/* now node 0 at 300, node 1 at 500; round B lowers node 1 to 300,
	 * holds node 0's raise to 500; round C, before the gate, keeps
	 * node 0 where it is (a donor at 280 W of 300): its raise held in
	 * B must not go out */
	pcap_ctl_answer(&c, 0, 1900 * MS, 0, W(300), true);
	pcap_ctl_answer(&c, 1, 1900 * MS, 0, W(150), true);
	pcap_ctl_round(&c, 2000 * MS, _send, &o);
	ck_assert_uint_eq(c.st[0].held_mw, W(500));
	ck_assert_uint_eq(c.st[1].sent_cap_mw, W(300));
	pcap_ctl_answer(&c, 0, 2100 * MS, 0, W(280), true);
	pcap_ctl_answer(&c, 1, 2100 * MS, c.st[1].sent_seq, W(300), true);
	pcap_ctl_round(&c, 2200 * MS, _send, &o);
	ck_assert(!(nd[0].out & PCAP_CHANGED));
	pcap_ctl_tick(&c, 2900 * MS, _send, &o);
	ck_assert_uint_eq(c.st[0].sent_cap_mw, W(300));
	ck_assert_uint_le(c.st[0].sent_cap_mw + c.st[1].sent_cap_mw, W(800));
	pcap_ctl_free(&c);
}
END_TEST

START_TEST(test_silent_agent_charged_max)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	/* node 0 stops answering; node 1 answers on */
	for (int r = 1; r <= 4; r++) {
		pcap_ctl_answer(&c, 1, r * 1000 * MS - 100 * MS, 0, W(400),
				true);
		pcap_ctl_round(&c, r * 1000 * MS, _send, &o);
		pcap_ctl_tick(&c, r * 1000 * MS + 600 * MS, _send, &o);
		/* no answer since the last round, silent for less than
		 * 3 s: its cap kept and charged */
		if (r == 2)
			ck_assert_uint_eq(nd[0].out, PCAP_HELD);
	}
	/* 3 s silent: charged its max, node 1 left 300 W */
	ck_assert_uint_eq(nd[0].out, PCAP_UNENFORCED);
	ck_assert_uint_eq(c.last.budget_mw, W(300));
	ck_assert_uint_le(c.st[1].sent_cap_mw, W(300));
	/* it answers again: under control at once */
	pcap_ctl_answer(&c, 0, 4500 * MS, 0, W(300), true);
	pcap_ctl_answer(&c, 1, 4500 * MS, 0, W(300), true);
	pcap_ctl_round(&c, 5000 * MS, _send, &o);
	ck_assert(!(nd[0].out & PCAP_UNENFORCED));
	pcap_ctl_free(&c);
}
END_TEST

/* An idle node (its agent's JOB flag clear) is released by the next
 * round: sent its maximum, marked for RESTORE, raised once the busy
 * node's lower has settled; busy again, it is capped again. */
START_TEST(test_idle_node_released_and_capped_again)
{
	pcap_ctl_t c;
	pcap_node_t nd[2];
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	pcap_ctl_answer(&c, 0, 900 * MS, 0, W(400), true);
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(80), true);
	pcap_ctl_idle(&c, 1, true);
	ck_assert_int_eq(pcap_ctl_round(&c, 1000 * MS, _send, &o), 0);
	ck_assert(c.st[1].released);
	ck_assert(!c.st[0].released);
	ck_assert_uint_eq(c.last.n_released, 1);
	/* node 0 gets 800 - (80 + 15) at most: 500 is its max */
	ck_assert(pcap_ctl_tick(&c, 1000 * MS, _send, &o) ||
		  o.n_sent == 2);
	pcap_ctl_tick(&c, 1600 * MS, _send, &o);
	ck_assert_uint_eq(o.n_sent, 2);
	for (size_t k = 0; k < o.n_sent; k++)
		if (o.node[k] == 1)
			ck_assert_uint_eq(o.cap[k], W(500));
	/* a job on node 1 again, drawing 300 W: capped again, lowered */
	memset(&o, 0, sizeof(o));
	pcap_ctl_answer(&c, 0, 1900 * MS, 0, W(400), true);
	pcap_ctl_answer(&c, 1, 1900 * MS, 0, W(300), true);
	pcap_ctl_idle(&c, 1, false);
	ck_assert_int_eq(pcap_ctl_round(&c, 2000 * MS, _send, &o), 0);
	ck_assert(!c.st[1].released);
	ck_assert_uint_eq(c.last.n_released, 0);
	ck_assert(nd[1].out & PCAP_LOWER);
	for (size_t k = 0; k < o.n_sent; k++)
		if (o.node[k] == 1)
			ck_assert_uint_lt(o.cap[k], W(500));
	ck_assert_uint_lt(c.st[1].sent_cap_mw, W(500));
	pcap_ctl_free(&c);
}
END_TEST

/* pcap_ctl_renew: every node not sent a cap in the round gets its cap again
 * with a new sequence (its lease renewed, its answer asked); a node
 * lowered in the round is not sent twice. */
START_TEST(test_renew_sends_the_others_their_caps)
{
	pcap_node_t nd[2];
	pcap_ctl_t c;
	outbox_t o = { 0 };

	_two(&c, nd, &o);
	/* nothing moved: no cap in the round, both renewed at 400 W */
	pcap_ctl_answer(&c, 0, 900 * MS, 0, W(398), true);
	pcap_ctl_answer(&c, 1, 900 * MS, 0, W(398), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 1000 * MS, _send, &o), 0);
	ck_assert_uint_eq(o.n_sent, 0);
	pcap_ctl_renew(&c, _send, &o);
	ck_assert_uint_eq(o.n_sent, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(o.node[i], i);
		ck_assert_uint_eq(o.cap[i], W(400));
		ck_assert_uint_eq(c.st[i].sent_seq, o.seq[i]);
	}
	ck_assert_uint_gt(o.seq[0], 2);		/* after the first round's */
	ck_assert_uint_ne(o.seq[0], o.seq[1]);
	/* node 1 donates: lowered in the round, only node 0 renewed */
	memset(&o, 0, sizeof(o));
	pcap_ctl_answer(&c, 0, 1900 * MS, 0, W(400), true);
	pcap_ctl_answer(&c, 1, 1900 * MS, 0, W(150), true);
	ck_assert_int_eq(pcap_ctl_round(&c, 2000 * MS, _send, &o), 0);
	ck_assert_uint_eq(o.n_sent, 1);
	ck_assert_uint_eq(o.node[0], 1);
	pcap_ctl_renew(&c, _send, &o);
	ck_assert_uint_eq(o.n_sent, 2);
	ck_assert_uint_eq(o.node[1], 0);
	ck_assert_uint_eq(o.cap[1], W(400));	/* its raise still held */
	pcap_ctl_free(&c);
}
END_TEST

START_TEST(test_sent_caps_never_sum_above)
{
	enum { N = 30 };
	pcap_node_t nd[N];
	pcap_ctl_t c;
	outbox_t o;
	pcap_params_t p = _params(N * 250);
	unsigned seed = 99;
	double demand[N];

	memset(nd, 0, sizeof(nd));
	for (int i = 0; i < N; i++) {
		nd[i].floor_mw = W(100);
		nd[i].max_mw = W(i % 3 ? 450 : 900);
		demand[i] = 100;
	}
	ck_assert_int_eq(pcap_ctl_init(&c, &p, nd, N, 500 * MS, 3000 * MS),
			 0);
	for (int t = 0; t < 2000; t++) {		/* 0.1 s steps */
		int64_t now = t * 100 * MS;
		uint64_t sum = 0;

		for (int i = 0; i < N; i++) {
			uint32_t cap = c.st[i].sent_cap_mw;
			uint32_t d = W(demand[i]);

			if (!(rand_r(&seed) % 50))
				demand[i] = 100 + rand_r(&seed) % 800;
			pcap_ctl_answer(&c, i, now, c.st[i].sent_seq,
					d < cap ? d : cap, true);
		}
		memset(&o, 0, sizeof(o));
		if (t % 10 == 0)
			ck_assert_int_eq(pcap_ctl_round(&c, now, _send, &o),
					 0);
		pcap_ctl_tick(&c, now, _send, &o);
		for (int i = 0; i < N; i++)
			sum += c.st[i].sent_cap_mw;
		/* the first round starts from every node at its max */
		if (t >= 1)
			ck_assert_msg(sum <= p.cap_mw, "t=%d: %lu > %lu", t,
				      (unsigned long)sum,
				      (unsigned long)p.cap_mw);
	}
	pcap_ctl_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_ctl");
	TCase *tc = tcase_create("ctl");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_lowers_first_raises_held);
	tcase_add_test(tc, test_gate_and_next_round);
	tcase_add_test(tc, test_uniform_cap_over_n);
	tcase_add_test(tc, test_held_raise_not_sent_stale);
	tcase_add_test(tc, test_silent_agent_charged_max);
	tcase_add_test(tc, test_renew_sends_the_others_their_caps);
	tcase_add_test(tc, test_idle_node_released_and_capped_again);
	tcase_add_test(tc, test_sent_caps_never_sum_above);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
