/*
 * test_cpufreq_model.c - min_energy / min_time choices from histories.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "freq_model.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static freq_model_params_t prm(void)
{
	freq_model_params_t p = { .max_slowdown = 0.05,
				  .energy_tolerance = 0.02, .min_freqs = 2 };
	return p;
}

/* A memory-bound code: time barely changes below 2.4 GHz, power falls. */
START_TEST(test_min_energy_memory_bound)
{
	freq_run_t r[] = {
		{ 1200000, 104, 15600 }, { 1600000, 102, 18400 },
		{ 2000000, 101, 21200 }, { 2400000, 100, 25000 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_int_eq(c.status, FREQ_CHOICE_OK);
	ck_assert_uint_eq(c.khz, 1200000);	/* 4 % slower, 38 % less */
	p.max_slowdown = 0.03;
	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 1600000);
}
END_TEST

/* Flat energy curve: DVFS does not pay, run at the highest frequency. */
START_TEST(test_min_energy_flat)
{
	freq_run_t r[] = {
		{ 1200000, 100, 20000 }, { 1600000, 100, 20100 },
		{ 2000000, 100, 19900 }, { 2400000, 100, 20050 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2400000);
}
END_TEST

/* U-shaped energy: static power dominates low, dynamic power high. */
START_TEST(test_min_energy_u_shape)
{
	freq_run_t r[] = {
		{ 1200000, 100, 30000 }, { 1600000, 100, 24000 },
		{ 2000000, 100, 21000 }, { 2400000, 100, 26000 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2000000);
	ck_assert(fabs(c.energy_j - 21000) < 1e-9);
	ck_assert(fabs(c.time_s - 100) < 1e-9);
}
END_TEST

/* Repeats with one wild outlier each: the median ignores it. */
START_TEST(test_min_energy_noisy_repeats)
{
	freq_run_t r[] = {
		{ 1200000, 104, 15600 }, { 1200000, 103, 15500 },
		{ 1200000, 300, 99999 },	/* node was shared */
		{ 2400000, 100, 25000 }, { 2400000, 101, 25200 },
		{ 2400000, 40, 2000 },		/* a broken reading */
		{ 1600000, 102, 18400 },
	};
	freq_model_params_t p = prm();
	freq_point_t pts[8];
	freq_choice_t c;
	size_t n = freq_model_aggregate(r, N(r), &p, pts, 8);

	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(pts[0].khz, 1200000);
	ck_assert_uint_eq(pts[0].n, 3);
	ck_assert(fabs(pts[0].time_s - 104) < 1e-9);
	ck_assert(fabs(pts[2].energy_j - 25000) < 1e-9);
	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 1200000);
}
END_TEST

START_TEST(test_empty_history)
{
	freq_model_params_t p = prm();
	freq_run_t one[] = { { 2400000, 100, 25000 }, { 2400000, 99, 25000 } };
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(NULL, 0, &p, &c), -ENODATA);
	ck_assert_int_eq(c.status, FREQ_CHOICE_NO_HISTORY);
	ck_assert_uint_eq(c.khz, 0);
	ck_assert_int_eq(freq_model_min_time(NULL, 0, &p, &c), -ENODATA);
	/* one frequency only is still too little to choose */
	ck_assert_int_eq(freq_model_min_energy(one, N(one), &p, &c), -ENODATA);
	p.min_freqs = 1;
	ck_assert_int_eq(freq_model_min_energy(one, N(one), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2400000);
}
END_TEST

/* Compute-bound: every lower frequency is more than 5 % slower. */
START_TEST(test_slowdown_excludes_all_lower)
{
	freq_run_t r[] = {
		{ 1200000, 200, 16000 }, { 1600000, 150, 17000 },
		{ 2000000, 120, 19000 }, { 2400000, 100, 22000 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2400000);
	p.max_slowdown = 0.25;	/* allow 25 %: 2.0 GHz */
	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2000000);
}
END_TEST

/* Bad values are ignored; the allowed range limits the candidates. */
START_TEST(test_bad_runs_and_range)
{
	freq_run_t r[] = {
		{ 0, 100, 1 }, { 1200000, NAN, 1 }, { 1200000, -1, 1 },
		{ 1200000, 100, INFINITY }, { 1200000, 104, 15600 },
		{ 1600000, 102, 18400 }, { 2400000, 100, 25000 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 1200000);
	p.min_khz = 1500000;
	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 1600000);
	p.max_khz = 2000000;	/* only 1.6 GHz left: too little */
	ck_assert_int_eq(freq_model_min_energy(r, N(r), &p, &c), -ENODATA);
}
END_TEST

START_TEST(test_min_time_caps)
{
	/* power: 120, 150, 190, 250 W */
	freq_run_t r[] = {
		{ 1200000, 200, 24000 }, { 1600000, 150, 22500 },
		{ 2000000, 120, 22800 }, { 2400000, 100, 25000 },
	};
	freq_model_params_t p = prm();
	freq_choice_t c;

	/* no cap: fastest */
	ck_assert_int_eq(freq_model_min_time(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2400000);
	p.power_cap_w = 200;
	ck_assert_int_eq(freq_model_min_time(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 2000000);
	p.power_cap_w = 0;
	p.energy_cap_j = 22600;
	ck_assert_int_eq(freq_model_min_time(r, N(r), &p, &c), 0);
	ck_assert_uint_eq(c.khz, 1600000);
	p.energy_cap_j = 0;
	p.power_cap_w = 100;	/* nothing fits: least power, flagged */
	ck_assert_int_eq(freq_model_min_time(r, N(r), &p, &c), 0);
	ck_assert_int_eq(c.status, FREQ_CHOICE_CAP_UNMET);
	ck_assert_uint_eq(c.khz, 1200000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpufreq_model");
	TCase *tc = tcase_create("model");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_min_energy_memory_bound);
	tcase_add_test(tc, test_min_energy_flat);
	tcase_add_test(tc, test_min_energy_u_shape);
	tcase_add_test(tc, test_min_energy_noisy_repeats);
	tcase_add_test(tc, test_empty_history);
	tcase_add_test(tc, test_slowdown_excludes_all_lower);
	tcase_add_test(tc, test_bad_runs_and_range);
	tcase_add_test(tc, test_min_time_caps);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
