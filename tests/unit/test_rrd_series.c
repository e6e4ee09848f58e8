/*
 * test_rrd_series.c - energy from RRD rows: trapezoid, ends, dropped rows,
 * and agreement with the power trace's exact integral.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "power_trace.h"
#include "rrd_series.h"
#include "se_time.h"

#define S(x)	((uint64_t) (x) * SE_NS_PER_SEC)

static const rrd_limits_t any = { 0, 1e6 };

/* Rows of 10 s from wall second 1000: row i is (1000+10i, 1010+10i]. */
static rrd_series_t _series(const double *w, size_t n)
{
	rrd_series_t s = { 1000, 10, n, w };

	return s;
}

START_TEST(test_row_midpoint)
{
	double w[2] = { 1, 2 };
	rrd_series_t s = _series(w, 2);

	ck_assert_uint_eq(rrd_series_row_ns(&s, 0), S(1005));
	ck_assert_uint_eq(rrd_series_row_ns(&s, 1), S(1015));
}
END_TEST

START_TEST(test_constant)
{
	double w[8] = { 200, 200, 200, 200, 200, 200, 200, 200 };
	rrd_series_t s = _series(w, 8);
	rrd_energy_t e;

	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1010), S(1070), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 12000000);	/* 200 W x 60 s */
	ck_assert_uint_eq(e.n_used, 6);
	ck_assert_uint_eq(e.bridged_ns, 0);
	ck_assert_uint_eq(e.held_ns, 0);
}
END_TEST

/* Rows are averages of a ramp 100 -> 180 W: trapezoid between midpoints
 * is exact for a linear power, whatever the interval ends. */
START_TEST(test_ramp_exact_inside)
{
	double w[8];
	rrd_series_t s = _series(w, 8);
	rrd_energy_t e;
	double p0, p1, want;

	/* P(t) = 100 + (t - 1000) W/s; row i's mean is P at its midpoint. */
	for (int i = 0; i < 8; i++)
		w[i] = 100 + (10 * i + 5);
	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1012), S(1063) + 1, &e),
			 0);
	p0 = 100 + 12;
	p1 = 100 + 63;
	want = (63.0 - 12.0) * (p0 + p1) / 2 * 1000;
	ck_assert_double_eq_tol((double) e.energy_mj, want, 2);
}
END_TEST

START_TEST(test_ends_interpolated)
{
	double w[3] = { 100, 300, 100 };
	rrd_series_t s = _series(w, 3);
	rrd_energy_t e;

	/* samples at 1005 (100 W), 1015 (300 W), 1025 (100 W);
	 * [1010, 1020]: 200 -> 300 over 5 s, 300 -> 200 over 5 s = 2500 J */
	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1010), S(1020), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 2500000);
	ck_assert_uint_eq(e.n_used, 1);
}
END_TEST

START_TEST(test_nan_and_out_of_range_dropped)
{
	double w[5] = { 100, NAN, 5000, 100, -3 };
	rrd_limits_t lim = { 10, 1000 };
	rrd_series_t s = _series(w, 5);
	rrd_energy_t e;

	/* valid: 1005 and 1035, both 100 W; the 30 s between are bridged;
	 * after 1035 the power is held. */
	ck_assert_int_eq(rrd_series_energy(&s, &lim, S(1005), S(1045), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 4000000);
	ck_assert_uint_eq(e.n_dropped, 3);
	ck_assert_uint_eq(e.bridged_ns, S(30));
	ck_assert_uint_eq(e.held_ns, S(10));
}
END_TEST

START_TEST(test_held_before_and_after)
{
	double w[2] = { 100, 100 };
	rrd_series_t s = _series(w, 2);
	rrd_energy_t e;

	ck_assert_int_eq(rrd_series_energy(&s, &any, S(990), S(1030), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 4000000);
	ck_assert_uint_eq(e.held_ns, S(15) + S(15));
}
END_TEST

START_TEST(test_errors)
{
	double w[2] = { NAN, NAN };
	rrd_series_t s = _series(w, 2);
	rrd_energy_t e;

	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1010), S(1000), &e),
			 -EINVAL);
	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1000), S(1010), &e),
			 -ENODATA);
	ck_assert_uint_eq(e.n_dropped, 2);
	s.step_s = 0;
	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1000), S(1010), &e),
			 -EINVAL);
}
END_TEST

START_TEST(test_zero_length)
{
	double w[2] = { 100, 300 };
	rrd_series_t s = _series(w, 2);
	rrd_energy_t e;

	ck_assert_int_eq(rrd_series_energy(&s, &any, S(1010), S(1010), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 0);
}
END_TEST

START_TEST(test_last)
{
	double w[4] = { 100, 150, NAN, 9999 };
	rrd_limits_t lim = { 0, 1000 };
	rrd_series_t s = _series(w, 4);
	rrd_sample_t smp;

	ck_assert_int_eq(rrd_series_last(&s, &lim, &smp), 0);
	ck_assert_uint_eq(smp.t_ns, S(1015));
	ck_assert_double_eq(smp.watts, 150);
	w[0] = w[1] = NAN;
	ck_assert_int_eq(rrd_series_last(&s, &lim, &smp), -ENODATA);
}
END_TEST

/*
 * Rows made as rrdtool makes them from a trace (mean power of each step,
 * which a DERIVE of the trace's joules gives exactly): the energy of an
 * unaligned 60 s interval stays within the documented bound of
 * step x |dP| / 4 per end.
 */
START_TEST(test_against_trace)
{
	char path[] = "/tmp/test_rrd_series.XXXXXX";
	static const char text[] =
		"time n1\n0 150\n30 150\n30 400\n95 400\n95 180\n200 180\n";
	power_trace_t *tr = NULL;
	char err[256];
	double w[20];
	rrd_series_t s = { 0, 10, 20, w };
	rrd_energy_t e;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
			 (int) sizeof(text) - 1);
	close(fd);
	ck_assert_msg(!power_trace_load(path, &tr, err, sizeof(err)), "%s",
		      err);
	unlink(path);

	for (int i = 0; i < 20; i++)
		w[i] = power_trace_joules(tr, 0, 10.0 * i, 10.0 * i + 10) / 10;

	for (double t0 = 20; t0 <= 40; t0 += 2.5) {
		double t1 = t0 + 60;
		double truth = power_trace_joules(tr, 0, t0, t1) * 1000;
		double bound = 2 * 10 * (400 - 150) / 4.0 * 1000;

		ck_assert_int_eq(rrd_series_energy(&s, &any,
						   (uint64_t) (t0 * 1e9),
						   (uint64_t) (t1 * 1e9), &e), 0);
		ck_assert_msg(fabs((double) e.energy_mj - truth) <= bound,
			      "t0=%g: %llu mJ vs truth %.0f", t0,
			      (unsigned long long) e.energy_mj, truth);
	}
	/* Aligned on steps away from power changes: exact. */
	ck_assert_int_eq(rrd_series_energy(&s, &any, S(45), S(85), &e), 0);
	ck_assert_uint_eq(e.energy_mj, 40 * 400 * 1000);
	power_trace_free(tr);
}
END_TEST

/* ------------------------------------------- window energy (row means) */

/* rrd_series_window_energy() that must succeed; returns *complete. */
static bool _window(const rrd_series_t *s, uint64_t t0, uint64_t t1,
		    rrd_energy_t *e)
{
	bool complete;

	ck_assert_int_eq(rrd_series_window_energy(s, &any, t0, t1, e,
						  &complete), 0);
	return complete;
}

START_TEST(test_window_constant_and_complete)
{
	double w[8] = { 200, 200, 200, 200, 200, 200, 200, 200 };
	rrd_series_t s = _series(w, 8);
	rrd_energy_t e;

	/* rows (1000, 1080]: a window with a row beyond each end row */
	ck_assert(_window(&s, S(1013), S(1063), &e));
	ck_assert_uint_eq(e.energy_mj, 200 * 50 * 1000);
	ck_assert_uint_eq(e.held_ns, 0);
	/* t1 in the last row: no row beyond it yet */
	ck_assert(!_window(&s, S(1013), S(1075), &e));
	ck_assert_uint_eq(e.held_ns, 0);
	ck_assert_uint_eq(e.energy_mj, 200 * 62 * 1000);
	/* t1 past the series: held at the last row, 200 W anyway */
	ck_assert(!_window(&s, S(1013), S(1090), &e));
	ck_assert_uint_eq(e.held_ns, S(10));
	ck_assert_uint_eq(e.energy_mj, 200 * 77 * 1000);
	/* t0 in the first row: no row before it */
	ck_assert(!_window(&s, S(1005), S(1050), &e));
}
END_TEST

/* Rows are means of a ramp: the reconstruction is the ramp itself, so any
 * window is exact (to the mJ of rounding). */
START_TEST(test_window_ramp_exact)
{
	double w[10];
	rrd_series_t s = _series(w, 10);
	rrd_energy_t e;
	bool complete;

	/* P(t) = 100 + 2 (t - 1000) W: row i's mean at its midpoint */
	for (int i = 0; i < 10; i++)
		w[i] = 100 + 2 * (10 * i + 5);
	for (double t0 = 1011; t0 < 1030; t0 += 3.7) {
		double t1 = t0 + 41.3;
		double truth = (100 * (t1 - t0) +
				((t1 - 1000) * (t1 - 1000) -
				 (t0 - 1000) * (t0 - 1000))) * 1000;

		ck_assert_int_eq(rrd_series_window_energy(
					 &s, &any, (uint64_t) (t0 * 1e9),
					 (uint64_t) (t1 * 1e9), &e, &complete),
				 0);
		ck_assert_msg(fabs((double) e.energy_mj - truth) <= 2,
			      "t0=%g: %llu mJ vs %.1f", t0,
			      (unsigned long long) e.energy_mj, truth);
		ck_assert(complete);
	}
}
END_TEST

/*
 * The case the settle exists for: 10 s means of a 250 +/- 150 W sine of
 * 60 s period (node1 of the cluster trace).  Windows of 30 to 90 s at any
 * phase are within 0.5 % of the exact integral; the midpoint trapezoid
 * (rrd_series_energy) is off by more than 2 % for some of the same windows.
 */
static double _sine_j(double t0, double t1)
{
	double k = 2 * M_PI / 60;

	return 250 * (t1 - t0) - 150 / k * (cos(k * t1) - cos(k * t0));
}

START_TEST(test_window_sine_within_half_percent)
{
	double w[40], worst = 0, worst_trap = 0;
	rrd_series_t s = { 0, 10, 40, w };
	rrd_energy_t e;
	bool complete;

	for (int i = 0; i < 40; i++)
		w[i] = _sine_j(10.0 * i, 10.0 * i + 10) / 10;
	for (double len = 30; len <= 90; len += 7)
		for (double t0 = 30; t0 < 90; t0 += 1.3) {
			double t1 = t0 + len, truth = _sine_j(t0, t1) * 1000;
			uint64_t a = (uint64_t) (t0 * 1e9);
			uint64_t b = (uint64_t) (t1 * 1e9);
			double err;

			ck_assert_int_eq(rrd_series_window_energy(
						 &s, &any, a, b, &e,
						 &complete), 0);
			ck_assert(complete);
			err = fabs(e.energy_mj / truth - 1);
			worst = err > worst ? err : worst;
			ck_assert_int_eq(rrd_series_energy(&s, &any, a, b,
							   &e), 0);
			err = fabs(e.energy_mj / truth - 1);
			worst_trap = err > worst_trap ? err : worst_trap;
		}
	ck_assert_msg(worst < 0.005, "window energy off by %.3f %%",
		      100 * worst);
	ck_assert_msg(worst_trap > 0.02, "trapezoid only %.3f %% off",
		      100 * worst_trap);
}
END_TEST

START_TEST(test_window_bridges_and_never_dips)
{
	double w[6] = { 200, 200, NAN, 200, 200, 200 };
	double dip[5] = { 1000, 1000, 0, 1000, 1000 };
	rrd_series_t s = _series(w, 6);
	rrd_energy_t e;
	bool complete;

	ck_assert(_window(&s, S(1012), S(1045), &e));
	ck_assert_uint_eq(e.energy_mj, 200 * 33 * 1000);
	ck_assert_uint_eq(e.bridged_ns, S(10));
	ck_assert_uint_eq(e.n_dropped, 1);

	/* A parabola through row 2 would go below 0 W: the row is flat. */
	s = _series(dip, 5);
	_window(&s, S(1022), S(1027), &e);
	ck_assert_uint_eq(e.energy_mj, 0);

	/* no valid row, bad window */
	w[0] = w[1] = w[3] = w[4] = w[5] = NAN;
	s = _series(w, 6);
	ck_assert_int_eq(rrd_series_window_energy(&s, &any, S(1010), S(1020),
						  &e, &complete), -ENODATA);
	ck_assert_int_eq(rrd_series_window_energy(&s, &any, S(1020), S(1010),
						  &e, &complete), -EINVAL);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("rrd_series");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_row_midpoint);
	tcase_add_test(tc, test_constant);
	tcase_add_test(tc, test_ramp_exact_inside);
	tcase_add_test(tc, test_ends_interpolated);
	tcase_add_test(tc, test_nan_and_out_of_range_dropped);
	tcase_add_test(tc, test_held_before_and_after);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_zero_length);
	tcase_add_test(tc, test_last);
	tcase_add_test(tc, test_against_trace);
	tcase_add_test(tc, test_window_constant_and_complete);
	tcase_add_test(tc, test_window_ramp_exact);
	tcase_add_test(tc, test_window_sine_within_half_percent);
	tcase_add_test(tc, test_window_bridges_and_never_dips);
	suite_add_tcase(s, tc);
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
