/*
 * test_energy_carry.c - a node's energy total across a reload or a restart
 * of slurmd (energy_carry.h), on concrete values.
 *
 * Units: power in mW (a step's in W), time in ns, energy in mJ (a step's
 * node total in J); 1 W for 1 s is 1000 mJ.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "energy_carry.h"

#define S(x)	((uint64_t) ((x) * 1000000000.0))	/* seconds to ns */
#define W(x)	((uint64_t) ((x) * 1000))		/* watts to mW */

/* 1000 J at 100 s, 250 W over the old sampler's last seconds */
static const energy_carry_t carry_100s = {
	.valid = true,
	.energy_mj = 1000000,
	.power_mw = W(250),
	.t_ns = S(100),
};

/* slurmd started: no carry.  A first reading that stands for an instant
 * before the sampler's start counts from the start only. */
START_TEST(test_first_start)
{
	energy_carry_t none = { 0 };
	energy_carry_join_t j;

	j = energy_carry_join(NULL, S(99.5), S(100));
	ck_assert_uint_eq(j.base_mj, 0);
	ck_assert(j.skip);
	ck_assert_uint_eq(j.skip_ns, S(100));
	/* the sampler counted 300 mJ before its start, 1300 by now */
	ck_assert_uint_eq(energy_carry_total_mj(j.base_mj, 300, 1300), 1000);

	/* an invalid carry is none; a reading after the start skips nothing */
	none.energy_mj = 5000;
	j = energy_carry_join(&none, S(101), S(100));
	ck_assert_uint_eq(j.base_mj, 0);
	ck_assert(!j.skip);
	ck_assert_uint_eq(energy_carry_total_mj(j.base_mj, 0, 1300), 1300);
}
END_TEST

/* A reload (scontrol reconfigure): the new sampler's first reading comes
 * 3 s after the old one's last; the gap is filled at the carried power. */
START_TEST(test_reload_gap)
{
	energy_carry_join_t j = energy_carry_join(&carry_100s, S(103),
						  S(102.5));

	ck_assert_uint_eq(j.base_mj, 1000000 + 3 * 250000);
	ck_assert(!j.skip);
	ck_assert_uint_eq(energy_carry_total_mj(j.base_mj, 0, 5000),
			  1755000);
	/* the reading at the carry's own instant: nothing to fill */
	j = energy_carry_join(&carry_100s, S(100), S(100.2));
	ck_assert_uint_eq(j.base_mj, 1000000);
	ck_assert(!j.skip);
}
END_TEST

/* The new sampler's first reading stands for an instant before the old
 * one's last (a rolling average): what it counted up to there is skipped. */
START_TEST(test_reload_overlap)
{
	energy_carry_join_t j = energy_carry_join(&carry_100s, S(99.5),
						  S(100.5));

	ck_assert_uint_eq(j.base_mj, 1000000);
	ck_assert(j.skip);
	ck_assert_uint_eq(j.skip_ns, S(100));
	/* the new sampler's count at 100 s was 2000 mJ */
	ck_assert_uint_eq(energy_carry_total_mj(j.base_mj, 2000, 2000),
			  1000000);
	ck_assert_uint_eq(energy_carry_total_mj(j.base_mj, 2000, 2500),
			  1000500);
}
END_TEST

/* Before the new sampler's first sample: extrapolated for one missed
 * sample (here 3 s), then held. */
START_TEST(test_reload_pending)
{
	ck_assert_uint_eq(energy_carry_pending_mj(&carry_100s, S(100), S(3)),
			  1000000);
	ck_assert_uint_eq(energy_carry_pending_mj(&carry_100s, S(101), S(3)),
			  1250000);
	ck_assert_uint_eq(energy_carry_pending_mj(&carry_100s, S(110), S(3)),
			  1750000);
	/* an instant before the carry's own: E, never less */
	ck_assert_uint_eq(energy_carry_pending_mj(&carry_100s, S(99), S(3)),
			  1000000);
}
END_TEST

/* What a sampler carries out: the average power of its last two periods
 * (at least 2 s), not before its first sample. */
START_TEST(test_carry_out)
{
	ck_assert_uint_eq(energy_carry_window_ns(S(100), S(50), S(0.5)),
			  S(98));
	ck_assert_uint_eq(energy_carry_window_ns(S(100), S(50), S(5)),
			  S(90));
	ck_assert_uint_eq(energy_carry_window_ns(S(100), S(99), S(5)),
			  S(99));
	ck_assert_uint_eq(energy_carry_window_ns(S(1), S(0.5), S(1)),
			  S(0.5));

	/* 500 J over 2 s */
	ck_assert_uint_eq(energy_carry_power_mw(S(98), 1000, S(100), 501000,
						W(7)), W(250));
	/* an empty window, or one that counted nothing: the last power */
	ck_assert_uint_eq(energy_carry_power_mw(S(100), 1000, S(100), 501000,
						W(7)), W(7));
	ck_assert_uint_eq(energy_carry_power_mw(S(98), 1000, S(100), 1000,
						W(7)), W(7));
}
END_TEST

/* The node's total never goes below what was carried, even when the new
 * sampler's count is below what was skipped (a counter that went back). */
START_TEST(test_total_counter_backwards)
{
	ck_assert_uint_eq(energy_carry_total_mj(1000000, 2000, 1500),
			  1000000);
	ck_assert_uint_eq(energy_carry_total_mj(0, 0, 0), 0);
}
END_TEST

/* A step's first answer: the time since its start at the power now. */
START_TEST(test_step_first)
{
	energy_carry_step_t v = { .start_ns = S(10) };
	energy_carry_answer_t a = {
		.t_ns = S(13), .node_j = 5000, .watts = 200,
		.started_s = 1000, .restarted = true,
	};
	energy_carry_how_t how;

	/* no answer before it, so no restart to tell */
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 600);
	ck_assert_int_eq(how, ENERGY_CARRY_FIRST);
}
END_TEST

/* The node counted on: the step adds the difference. */
START_TEST(test_step_advance)
{
	energy_carry_step_t v = {
		.have_base = true, .start_ns = S(10), .last_ns = S(13),
		.last_node_j = 5000, .last_watts = 200, .started_s = 1000,
	};
	energy_carry_answer_t a = {
		.t_ns = S(14), .node_j = 5100, .watts = 200,
		.started_s = 1000,
	};
	energy_carry_how_t how;

	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 100);
	ck_assert_int_eq(how, ENERGY_CARRY_ADVANCE);
	/* 22.05 says no start time (0): nothing to compare */
	a.started_s = 0;
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 100);
	ck_assert_int_eq(how, ENERGY_CARRY_ADVANCE);
}
END_TEST

/* slurmd restarted and its total went back: the 10 s between the two
 * answers are bridged linearly between their powers, or by what the new
 * slurmd counted when that is more. */
START_TEST(test_step_counter_backwards)
{
	energy_carry_step_t v = {
		.have_base = true, .start_ns = S(1), .last_ns = S(10),
		.last_node_j = 5000, .last_watts = 300,
	};
	energy_carry_answer_t a = { .t_ns = S(20), .node_j = 40, .watts = 100 };
	energy_carry_how_t how;

	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how),
			  (300 + 100) * 10 / 2);
	ck_assert_int_eq(how, ENERGY_CARRY_BACKWARDS);

	v.last_watts = 100;
	a.t_ns = S(12);
	a.node_j = 900;
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 900);
	ck_assert_int_eq(how, ENERGY_CARRY_BACKWARDS);
}
END_TEST

/* Carried across a restart that the total alone would not show: a new
 * slurmd whose total is already above the old one's last.  Another start
 * time (24.11+) or another total id says it. */
START_TEST(test_step_restart)
{
	energy_carry_step_t v = {
		.have_base = true, .start_ns = S(1), .last_ns = S(10),
		.last_node_j = 100, .last_watts = 200, .started_s = 1000,
	};
	energy_carry_answer_t a = {
		.t_ns = S(12), .node_j = 150, .watts = 200, .started_s = 2000,
	};
	energy_carry_how_t how;

	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 400);
	ck_assert_int_eq(how, ENERGY_CARRY_RESTARTED);

	a.started_s = 1000;		/* the same slurmd */
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 50);
	ck_assert_int_eq(how, ENERGY_CARRY_ADVANCE);

	a.restarted = true;		/* another total id */
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 400);
	ck_assert_int_eq(how, ENERGY_CARRY_RESTARTED);

	/* the total counted more than the fill: what it counted */
	a.node_j = 1500;
	ck_assert_uint_eq(energy_carry_step_j(&v, &a, &how), 1500);
	ck_assert_int_eq(how, ENERGY_CARRY_RESTARTED);
}
END_TEST

/* A share from another server generation that is lower: slurmd restarted,
 * its shares count from zero again; the step keeps what it had. */
START_TEST(test_share_generation_change)
{
	energy_carry_share_t s = {
		.have = true, .generation = 1, .last_mj = 4000,
		.share_mj = 4000,
	};
	bool restarted;

	s = energy_carry_share(&s, 2, 300, &restarted);
	ck_assert(restarted);
	ck_assert_uint_eq(s.base_mj, 4000);
	ck_assert_uint_eq(s.share_mj, 4300);
	ck_assert_uint_eq(s.last_mj, 300);
	ck_assert_uint_eq(s.generation, 2);

	s = energy_carry_share(&s, 2, 900, &restarted);
	ck_assert(!restarted);
	ck_assert_uint_eq(s.base_mj, 4000);
	ck_assert_uint_eq(s.share_mj, 4900);
}
END_TEST

/* Another generation that continues (a reload keeps the split), a lower
 * answer of the same generation, and the first answer. */
START_TEST(test_share_no_restart)
{
	energy_carry_share_t s = {
		.have = true, .generation = 1, .last_mj = 4000,
		.share_mj = 4000,
	}, n, first = { 0 };
	bool restarted;

	n = energy_carry_share(&s, 2, 4500, &restarted);
	ck_assert(!restarted);
	ck_assert_uint_eq(n.base_mj, 0);
	ck_assert_uint_eq(n.share_mj, 4500);

	/* the share never decreases */
	n = energy_carry_share(&s, 1, 3000, &restarted);
	ck_assert(!restarted);
	ck_assert_uint_eq(n.share_mj, 4000);
	ck_assert_uint_eq(n.last_mj, 3000);

	n = energy_carry_share(&first, 7, 100, &restarted);
	ck_assert(!restarted);
	ck_assert(n.have);
	ck_assert_uint_eq(n.share_mj, 100);
	ck_assert_uint_eq(n.generation, 7);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("energy_carry");
	TCase *n = tcase_create("slurmd");
	TCase *t = tcase_create("slurmstepd");

	tcase_add_test(n, test_first_start);
	tcase_add_test(n, test_reload_gap);
	tcase_add_test(n, test_reload_overlap);
	tcase_add_test(n, test_reload_pending);
	tcase_add_test(n, test_carry_out);
	tcase_add_test(n, test_total_counter_backwards);
	suite_add_tcase(s, n);

	tcase_add_test(t, test_step_first);
	tcase_add_test(t, test_step_advance);
	tcase_add_test(t, test_step_counter_backwards);
	tcase_add_test(t, test_step_restart);
	tcase_add_test(t, test_share_generation_change);
	tcase_add_test(t, test_share_no_restart);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
