/*
 * test_powercap_core.c - the cluster power cap's round (src/powercap/
 * pcap_core.c): bad configurations named, donations to the nodes at their
 * cap, the water level across unlike nodes, spare headroom, what silent and
 * failing nodes are charged, hysteresis (and its yielding to the sum), the
 * reaction to a demand step, and the invariants over random clusters.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_core.h"

#define W(x) ((uint32_t)((x) * 1000))
#define OK (PCAP_MEASURED | PCAP_ENFORCED)

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

static pcap_node_t _node(double floor_w, double max_w, double power_w,
			 double cap_w, unsigned flags)
{
	pcap_node_t nd = {
		.name = "n", .floor_mw = W(floor_w), .max_mw = W(max_w),
		.power_mw = W(power_w), .cap_mw = W(cap_w), .flags = flags,
	};
	return nd;
}

static uint64_t _sum_new(const pcap_node_t *nd, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += nd[i].new_cap_mw;
	return s;
}

/* Load-following: each node draws min(demand, cap), applied in full. */
static void _follow(pcap_node_t *nd, const double *demand_w, size_t n,
		    double noise_w, unsigned *seed)
{
	for (size_t i = 0; i < n; i++) {
		double noise = noise_w * (2.0 * rand_r(seed) / RAND_MAX - 1);
		double d = demand_w[i] + noise;
		uint32_t want = d < 0 ? 0 : W(d);

		nd[i].cap_mw = nd[i].new_cap_mw;
		nd[i].power_mw = want < nd[i].cap_mw ? want : nd[i].cap_mw;
	}
}

START_TEST(test_bad_config_cap_below_floors)
{
	pcap_node_t nd[10];
	pcap_params_t p = _params(1000);
	char err[256] = "";

	for (int i = 0; i < 10; i++)
		nd[i] = _node(120, 500, 200, 500, OK);
	ck_assert_int_eq(pcap_params_check(&p, nd, 10, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "PowerCapWatts=1000.000") &&
		      strstr(err, "PowerCapFloorWatts (1200.000 W over 10"),
		      "%s", err);
	ck_assert_int_eq(pcap_round(&p, nd, 10, NULL), -EINVAL);
	p.cap_mw = W(1200);
	ck_assert_int_eq(pcap_params_check(&p, nd, 10, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_bad_config_floor_and_headroom)
{
	pcap_node_t nd[2] = { _node(100, 500, 0, 500, OK),
			      _node(600, 500, 0, 500, OK) };
	pcap_params_t p = _params(5000);
	char err[256] = "";

	nd[1].name = "gpu7";
	ck_assert_int_eq(pcap_params_check(&p, nd, 2, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "node gpu7: PowerCapFloorWatts=600.000 is "
			     "above PowerCapMaxWatts=500.000"), "%s", err);
	nd[1].floor_mw = W(100);
	p.headroom_mw = p.at_cap_mw;
	ck_assert_int_eq(pcap_params_check(&p, nd, 2, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "PowerCapHeadroomWatts=5.000 must exceed "
			     "PowerCapAtCapWatts=5.000"), "%s", err);
}
END_TEST

START_TEST(test_donations_go_to_capped_nodes)
{
	/* 4 nodes capped alike at 300 W; two draw 300 (at cap), two 120 */
	pcap_node_t nd[4] = {
		_node(100, 500, 300, 300, OK), _node(100, 500, 295, 300, OK),
		_node(100, 500, 120, 300, OK), _node(100, 500, 120, 300, OK),
	};
	pcap_params_t p = _params(1200);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(st.n_greedy, 2);
	ck_assert_uint_eq(st.n_donor, 2);
	/* donors keep draw + headroom, and go down first */
	for (int i = 2; i < 4; i++) {
		ck_assert_uint_eq(nd[i].out, PCAP_DONOR | PCAP_LOWER |
				  PCAP_CHANGED);
		ck_assert_uint_eq(nd[i].new_cap_mw, W(120) +
				  PCAP_DEFAULT_HEADROOM_MW);
	}
	/* the greedy ones share the rest alike: (1200 - 270) / 2 */
	for (int i = 0; i < 2; i++) {
		ck_assert(nd[i].out & PCAP_GREEDY);
		ck_assert(!(nd[i].out & PCAP_LOWER));
		ck_assert_uint_ge(nd[i].new_cap_mw, W(465) - 2);
		ck_assert_uint_le(nd[i].new_cap_mw, W(465));
	}
	ck_assert_uint_le(_sum_new(nd, 4), W(1200));
	ck_assert_uint_eq(st.sum_caps_mw, _sum_new(nd, 4));
}
END_TEST

/* A node raised from 231 to 370 W half-way through its reading's window,
 * at its cap all along, reads 300.5 W: against the 370 W sent it looks a
 * donor (cut back to 315.5 W); against the cap in force over the window
 * (the agent's time mean, 300.5 W) it is greedy, and keeps its share. */
START_TEST(test_judged_against_the_window_cap)
{
	pcap_node_t nd[2] = { _node(100, 500, 300.5, 370, OK),
			      _node(100, 500, 430, 430, OK) };
	pcap_params_t p = _params(800);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_uint_eq(nd[0].out & (PCAP_DONOR | PCAP_GREEDY), PCAP_DONOR);
	ck_assert_uint_eq(nd[0].new_cap_mw, W(300.5) +
			  PCAP_DEFAULT_HEADROOM_MW);
	nd[0] = _node(100, 500, 300.5, 370, OK);
	nd[0].window_cap_mw = W(300.5);
	nd[1] = _node(100, 500, 430, 430, OK);
	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert(nd[0].out & PCAP_GREEDY);
	ck_assert_uint_eq(st.n_greedy, 2);
	/* both greedy, one range: 400 W each, the budget all handed out */
	ck_assert_uint_eq(nd[0].new_cap_mw, W(400));
	ck_assert_uint_eq(nd[1].new_cap_mw, W(400));
	/* a true donor stays one whatever the window: 150 W under both */
	nd[0] = _node(100, 500, 150, 370, OK);
	nd[0].window_cap_mw = W(300.5);
	nd[1] = _node(100, 500, 430, 430, OK);
	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert(nd[0].out & PCAP_DONOR);
}
END_TEST

START_TEST(test_unlike_nodes_same_fraction)
{
	/* a GPU node (300..2300 W) and a CPU node (100..500 W), both at cap:
	 * 300 + 2000 L + 100 + 400 L = 1400, L = 5/12 */
	pcap_node_t nd[2] = { _node(300, 2300, 700, 700, OK),
			      _node(100, 500, 400, 400, OK) };
	pcap_params_t p = _params(1400);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_double_eq_tol(st.level, 5.0 / 12, 1e-6);
	ck_assert_uint_ge(nd[0].new_cap_mw, 1133333 - 2);
	ck_assert_uint_le(nd[0].new_cap_mw, 1133334);
	ck_assert_uint_ge(nd[1].new_cap_mw, 266666 - 2);
	ck_assert_uint_le(nd[1].new_cap_mw, 266667);
	ck_assert_uint_le(_sum_new(nd, 2), W(1400));
}
END_TEST

START_TEST(test_spare_spread_over_room)
{
	/* all donors, wants 2 x 215 W, cap 930: 500 W spare over the room
	 * below max (285 W each): every node gets 215 + 250 */
	pcap_node_t nd[2] = { _node(100, 500, 200, 480, OK),
			      _node(100, 500, 200, 480, OK) };
	pcap_params_t p = _params(930);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_double_eq(st.level, 1);
	for (int i = 0; i < 2; i++) {
		ck_assert(nd[i].out & PCAP_DONOR);
		ck_assert_uint_ge(nd[i].new_cap_mw, W(465) - 1);
		ck_assert_uint_le(nd[i].new_cap_mw, W(465));
	}
}
END_TEST

START_TEST(test_silent_and_failing_nodes_charged)
{
	/* n0's knobs failed: charged its max (500); n1 has no reading: its
	 * cap in force (300) is kept and charged; n2, n3 share 400 W */
	pcap_node_t nd[4] = {
		_node(100, 500, 250, 250, PCAP_MEASURED),
		_node(100, 500, 0, 300, PCAP_ENFORCED),
		_node(100, 500, 400, 400, OK), _node(100, 500, 400, 400, OK),
	};
	pcap_params_t p = _params(1200);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(nd[0].out, PCAP_UNENFORCED);
	ck_assert_uint_eq(nd[1].out, PCAP_HELD);
	ck_assert_uint_eq(nd[1].new_cap_mw, W(300));
	ck_assert_uint_eq(st.budget_mw, W(400));
	ck_assert_uint_le(nd[2].new_cap_mw + nd[3].new_cap_mw, W(400));
	ck_assert_uint_ge(nd[2].new_cap_mw + nd[3].new_cap_mw, W(400) - 4);
	ck_assert_uint_le(st.sum_caps_mw, W(1200));
	ck_assert(!st.infeasible);

	/* a failing node drawing above its max is charged what it draws */
	nd[0].power_mw = W(700);
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(st.budget_mw, W(200));
	ck_assert_uint_eq(nd[2].new_cap_mw, W(100));	/* floors */
	ck_assert(!st.infeasible);
	nd[0].power_mw = W(800);
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert(st.infeasible);
	ck_assert_uint_eq(nd[2].new_cap_mw, W(100));
	ck_assert_uint_eq(nd[3].new_cap_mw, W(100));
}
END_TEST

/* Three busy nodes and one whose jobs ended (IDLE), 100..200 W each, all
 * at cap_w, drawing busy_w and idle_w. */
static void _three_busy_one_idle(pcap_node_t *nd, double busy_w,
				 double idle_w, double cap_w)
{
	for (int i = 0; i < 3; i++)
		nd[i] = _node(100, 200, busy_w, cap_w, OK);
	nd[3] = _node(100, 200, idle_w, cap_w, OK | PCAP_IDLE);
}

/* A node whose jobs ended (IDLE) is released: uncapped at its maximum,
 * charged its draw + headroom (at least its floor), the busy nodes
 * sharing the rest; a job starting on it makes it capped again, lowered
 * first. */
START_TEST(test_idle_node_released)
{
	pcap_params_t p = _params(500);
	pcap_node_t nd[4];
	pcap_stats_t st;

	_three_busy_one_idle(nd, 150, 60, 150);	/* greedy; nd[3] job over */
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(nd[3].out, PCAP_RELEASED | PCAP_CHANGED);
	ck_assert_uint_eq(nd[3].new_cap_mw, W(200));
	ck_assert_uint_eq(st.n_released, 1);
	/* 500 - max(60 + 15, its 100 W floor) over three greedy nodes */
	ck_assert_uint_le(_sum_new(nd, 3), W(400));
	ck_assert_uint_ge(_sum_new(nd, 3), W(400) - 3);
	ck_assert_uint_le(st.sum_caps_mw, W(500));

	/* PowerCapIdleNodes=cap: kept capped, a donor at its draw + headroom
	 * (its floor) */
	p.keep_idle_capped = true;
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(st.n_released, 0);
	ck_assert(nd[3].out & PCAP_DONOR);
	ck_assert_uint_eq(nd[3].new_cap_mw, W(100));
	p.keep_idle_capped = false;
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);

	/* a job starts on it: capped again (a donor at 120 W), lowered */
	nd[3] = _node(100, 200, 120, 200, OK);
	for (int i = 0; i < 3; i++)
		nd[i].cap_mw = nd[i].new_cap_mw;
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert(nd[3].out & PCAP_DONOR);
	ck_assert(nd[3].out & PCAP_LOWER);
	ck_assert_uint_eq(st.n_released, 0);
	ck_assert_uint_le(_sum_new(nd, 4), W(500));
}
END_TEST

/* Released only when the busy nodes' floors still fit: 3 x 100 W of
 * floors + 90 + 15 W charged is over 400 W, so the idle node stays a
 * donor and the caps hold the cap. */
START_TEST(test_idle_kept_capped_when_floors_do_not_fit)
{
	pcap_params_t p = _params(400);
	pcap_node_t nd[4];
	pcap_stats_t st;

	_three_busy_one_idle(nd, 100, 90, 100);
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(st.n_released, 0);
	ck_assert(!(nd[3].out & PCAP_RELEASED));
	ck_assert_uint_le(_sum_new(nd, 4), W(400));
	/* 5 W more of cap: released */
	p.cap_mw = W(405);
	ck_assert_int_eq(pcap_round(&p, nd, 4, &st), 0);
	ck_assert_uint_eq(st.n_released, 1);
	ck_assert_uint_eq(nd[3].new_cap_mw, W(200));
	ck_assert_uint_le(_sum_new(nd, 3), W(300));
}
END_TEST

START_TEST(test_hysteresis_yields_to_the_sum)
{
	/* targets 500 each; the caps in force (503) are within the
	 * hysteresis but their sum would break the cap: they go down */
	pcap_node_t nd[2] = { _node(0, 1000, 503, 503, OK),
			      _node(0, 1000, 503, 503, OK) };
	pcap_params_t p = _params(1000);
	pcap_stats_t st;

	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_uint_le(_sum_new(nd, 2), W(1000));
	ck_assert(nd[0].out & PCAP_LOWER);
	ck_assert(nd[1].out & PCAP_LOWER);

	/* within the hysteresis and room in the budget: kept */
	p.cap_mw = W(1010);
	nd[0].cap_mw = nd[1].cap_mw = W(503);
	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_uint_eq(nd[0].new_cap_mw, W(503));
	ck_assert_uint_eq(st.n_changed, 0);

	/* a move of 7 W, above the 5 W hysteresis: made */
	p.cap_mw = W(1020);
	ck_assert_int_eq(pcap_round(&p, nd, 2, &st), 0);
	ck_assert_uint_eq(st.n_changed, 2);
	ck_assert_uint_ge(nd[0].new_cap_mw, W(510) - 1);
}
END_TEST

/* Rounds of load-following with a few watts of noise; returns the caps
 * changed in rounds [from, rounds). */
static size_t _changes_under_noise(uint32_t hysteresis_mw, int from,
				   int rounds)
{
	enum { N = 20 };
	pcap_node_t nd[N];
	double demand[N];
	pcap_params_t p = _params(N * 300);
	unsigned seed = 7;
	size_t changes = 0;

	p.hysteresis_mw = hysteresis_mw;
	for (int i = 0; i < N; i++) {
		demand[i] = i % 3 ? 450 : 150;	/* 2/3 want more */
		nd[i] = _node(100, 500, 0, 500, OK);
		nd[i].new_cap_mw = W(500);
	}
	for (int r = 0; r < rounds; r++) {
		pcap_stats_t st;

		_follow(nd, demand, N, 2.0, &seed);
		ck_assert_int_eq(pcap_round(&p, nd, N, &st), 0);
		ck_assert_uint_le(st.sum_caps_mw, p.cap_mw);
		if (r >= from)
			changes += st.n_changed;
	}
	return changes;
}

START_TEST(test_hysteresis_prevents_flapping)
{
	/* 2 W of noise against a 5 W hysteresis: settled after a few rounds,
	 * then not one cap moves */
	ck_assert_uint_eq(_changes_under_noise(PCAP_DEFAULT_HYSTERESIS_MW, 5,
					       100), 0);
	/* the same noise without hysteresis moves caps all the time */
	ck_assert_uint_gt(_changes_under_noise(0, 5, 100), 500);
}
END_TEST

START_TEST(test_reaction_to_a_demand_step)
{
	/* 10 nodes at 150 W under a 3000 W cap, all donors; node 0's job
	 * jumps to 480 W: greedy in the round after its reading shows it,
	 * and served in that round */
	enum { N = 10 };
	pcap_node_t nd[N];
	double demand[N];
	pcap_params_t p = _params(3000);
	pcap_stats_t st;
	unsigned seed = 1;
	int r;

	for (int i = 0; i < N; i++) {
		demand[i] = 150;
		nd[i] = _node(100, 500, 0, 500, OK);
		nd[i].new_cap_mw = W(300);
	}
	for (r = 0; r < 5; r++) {
		_follow(nd, demand, N, 0, &seed);
		pcap_round(&p, nd, N, &st);
	}
	ck_assert_uint_eq(st.n_greedy, 0);
	demand[0] = 480;
	for (r = 1; r <= 3; r++) {
		_follow(nd, demand, N, 0, &seed);
		pcap_round(&p, nd, N, &st);
		if (nd[0].new_cap_mw >= W(480))
			break;
	}
	ck_assert_int_eq(r, 1);
	ck_assert(nd[0].out & PCAP_GREEDY);
}
END_TEST

START_TEST(test_invariants_random_clusters)
{
	unsigned seed = 12345;

	for (int c = 0; c < 500; c++) {
		size_t n = 1 + rand_r(&seed) % 40;
		pcap_node_t nd[40];
		uint64_t floors = 0, charged = 0, controlled = 0, budget;
		pcap_params_t p = _params(0);
		pcap_stats_t st;

		for (size_t i = 0; i < n; i++) {
			double fl = 50 + rand_r(&seed) % 200;
			double mx = fl + rand_r(&seed) % 2000;
			double cap = fl + rand_r(&seed) % 2500;
			double pw = rand_r(&seed) % 2500;
			unsigned fl_bits = rand_r(&seed) % 8;

			nd[i] = _node(fl, mx, pw, cap,
				      fl_bits ? OK : rand_r(&seed) % 4);
			floors += nd[i].floor_mw;
		}
		p.cap_mw = floors + (uint64_t)rand_r(&seed) % (n * W(1500));
		p.hysteresis_mw = rand_r(&seed) % W(20);
		ck_assert_int_eq(pcap_round(&p, nd, n, &st), 0);
		for (size_t i = 0; i < n; i++) {
			pcap_node_t *x = &nd[i];
			bool ctl = (x->flags & OK) == OK;

			ck_assert_uint_ge(x->new_cap_mw, x->floor_mw);
			ck_assert_uint_le(x->new_cap_mw, x->max_mw);
			ck_assert(!!(x->out & PCAP_LOWER) ==
				  (x->new_cap_mw < x->cap_mw));
			if (ctl) {
				controlled += x->new_cap_mw;
				continue;
			}
			ck_assert_uint_eq(x->new_cap_mw,
					  x->cap_mw < x->floor_mw ?
					  x->floor_mw : x->cap_mw > x->max_mw ?
					  x->max_mw : x->cap_mw);
			if (!(x->flags & PCAP_ENFORCED))
				charged += (x->flags & PCAP_MEASURED) &&
					   x->power_mw > x->max_mw ?
					   x->power_mw : x->max_mw;
			else
				charged += x->new_cap_mw;
		}
		budget = charged < p.cap_mw ? p.cap_mw - charged : 0;
		ck_assert_uint_eq(st.sum_caps_mw, controlled + charged);
		if (st.infeasible) {
			uint64_t cf = 0;

			for (size_t i = 0; i < n; i++)
				if ((nd[i].flags & OK) == OK)
					cf += nd[i].floor_mw;
			ck_assert(cf > budget || charged > p.cap_mw);
			continue;
		}
		ck_assert_msg(controlled <= budget,
			      "cluster %d: %lu mW of caps over a %lu budget",
			      c, (unsigned long)controlled,
			      (unsigned long)budget);
		ck_assert_uint_le(st.sum_caps_mw, p.cap_mw);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_core");
	TCase *tc = tcase_create("round");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_bad_config_cap_below_floors);
	tcase_add_test(tc, test_bad_config_floor_and_headroom);
	tcase_add_test(tc, test_donations_go_to_capped_nodes);
	tcase_add_test(tc, test_judged_against_the_window_cap);
	tcase_add_test(tc, test_unlike_nodes_same_fraction);
	tcase_add_test(tc, test_spare_spread_over_room);
	tcase_add_test(tc, test_silent_and_failing_nodes_charged);
	tcase_add_test(tc, test_idle_node_released);
	tcase_add_test(tc, test_idle_kept_capped_when_floors_do_not_fit);
	tcase_add_test(tc, test_hysteresis_yields_to_the_sum);
	tcase_add_test(tc, test_hysteresis_prevents_flapping);
	tcase_add_test(tc, test_reaction_to_a_demand_step);
	tcase_add_test(tc, test_invariants_random_clusters);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
