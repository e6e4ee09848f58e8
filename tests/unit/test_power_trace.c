/*
 * test_power_trace.c - exact energy of traces, and parse errors by line.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "power_trace.h"
#include "tmp_file.h"

static char dir[64];
static char path[128];

static void _setup(void)
{
	strcpy(dir, "/tmp/se-trace-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
}

static void _teardown(void)
{
	unlink(path);
	rmdir(dir);
}

static power_trace_t *_load(const char *text)
{
	power_trace_t *tr = NULL;
	char err[256] = "";

	tmp_file_write(path, text);
	ck_assert_msg(power_trace_load(path, &tr, err, sizeof(err)) == 0,
		      "load failed: %s", err);
	return tr;
}

/* The error text after "PATH:" for a trace that must be refused. */
static const char *_error(const char *text)
{
	static char err[256];
	power_trace_t *tr = NULL;

	tmp_file_write(path, text);
	ck_assert_int_eq(power_trace_load(path, &tr, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(tr);
	ck_assert_msg(!strncmp(err, path, strlen(path)), "no path in '%s'",
		      err);
	return err + strlen(path);
}

#define EXACT(a, b)	ck_assert_double_eq_tol((a), (b), 1e-9)

START_TEST(test_constant)
{
	power_trace_t *tr = _load("# flat\n\ntime n1 n2\n0 200 150 # row\n");

	ck_assert_int_eq(power_trace_columns(tr), 2);
	ck_assert_int_eq(power_trace_column(tr, "n2"), 1);
	ck_assert_int_eq(power_trace_column(tr, "N2"), -1);
	ck_assert_str_eq(power_trace_column_name(tr, 0), "n1");
	ck_assert_ptr_null(power_trace_column_name(tr, 2));
	EXACT(power_trace_joules(tr, 0, 0, 60), 12000);
	EXACT(power_trace_joules(tr, 1, -10, 10), 3000);
	EXACT(power_trace_watts(tr, 0, 1e6), 200);
	ck_assert(isnan(power_trace_joules(tr, 2, 0, 1)));
	power_trace_free(tr);
}
END_TEST

START_TEST(test_ramp)
{
	power_trace_t *tr = _load("time n1\r\n0 100\r\n60 400\r\n");

	/* 100 + 5 t W */
	EXACT(power_trace_joules(tr, 0, 0, 60), 15000);
	EXACT(power_trace_joules(tr, 0, 0, 30), 5250);
	EXACT(power_trace_joules(tr, 0, 10, 20), 1750);
	EXACT(power_trace_joules(tr, 0, 60, 70), 4000);	/* last value */
	EXACT(power_trace_joules(tr, 0, -10, 0), 1000);	/* first value */
	EXACT(power_trace_joules(tr, 0, 55, 65), 1937.5 + 2000);
	EXACT(power_trace_watts(tr, 0, 12.5), 162.5);
	power_trace_free(tr);
}
END_TEST

START_TEST(test_step)
{
	power_trace_t *tr = _load("time n1\n0 100\n10 100\n10 300\n20 300\n");

	EXACT(power_trace_watts(tr, 0, 9.999), 100);
	EXACT(power_trace_watts(tr, 0, 10), 300);	/* right value */
	EXACT(power_trace_joules(tr, 0, 5, 15), 500 + 1500);
	EXACT(power_trace_joules(tr, 0, 10, 10), 0);
	power_trace_free(tr);
}
END_TEST

START_TEST(test_repeat)
{
	power_trace_t *tr = _load("@repeat 20\ntime n1\n"
				  "0 100\n10 100\n10 300\n20 300\n");

	EXACT(power_trace_joules(tr, 0, 0, 20), 4000);
	EXACT(power_trace_joules(tr, 0, 5, 1005), 200000);
	EXACT(power_trace_joules(tr, 0, 15, 25), 1500 + 500);
	EXACT(power_trace_joules(tr, 0, -10, 0), 3000);
	EXACT(power_trace_watts(tr, 0, 25), 100);
	EXACT(power_trace_watts(tr, 0, 35), 300);
	EXACT(power_trace_watts(tr, 0, 40), 100);	/* period restarts */
	power_trace_free(tr);
}
END_TEST

/* min(P, cap), a load-following meter's power (issue #45) */
START_TEST(test_capped)
{
	power_trace_t *tr = _load("time n1\n0 100\n60 400\n");
	power_trace_t *sq = _load("@repeat 20\ntime n1\n"
				  "0 100\n10 100\n10 300\n20 300\n");

	/* 100 + 5 t W crosses 250 W at t = 30: 5250 J under, 30 s x 250 W */
	EXACT(power_trace_joules_capped(tr, 0, 0, 60, 250), 5250 + 7500);
	EXACT(power_trace_joules_capped(tr, 0, 60, 0, 250), -12750);
	EXACT(power_trace_joules_capped(tr, 0, 0, 60, 1000), 15000);
	EXACT(power_trace_joules_capped(tr, 0, 0, 60, 50), 3000);
	EXACT(power_trace_joules_capped(tr, 0, -10, 0, 50), 500);
	EXACT(power_trace_joules_capped(tr, 0, 20, 40, 250), 2250 + 2500);
	EXACT(power_trace_joules_capped(tr, 0, 50, 70, 320), 20 * 320);
	EXACT(power_trace_joules_capped(tr, 0, 0, 60, -5), 0);
	/* a period is 10 s at 100 W and 10 s at the 200 W cap */
	EXACT(power_trace_joules_capped(sq, 0, 5, 1005, 200), 50 * 3000);
	EXACT(power_trace_joules_capped(sq, 0, 15, 25, 200), 1000 + 500);
	EXACT(power_trace_joules_capped(sq, 0, 0, 20, 300),
	      power_trace_joules(sq, 0, 0, 20));
	ck_assert(isnan(power_trace_joules_capped(tr, 0, 0, 1, NAN)));
	ck_assert(isnan(power_trace_joules_capped(tr, 1, 0, 1, 100)));
	power_trace_free(tr);
	power_trace_free(sq);
}
END_TEST

START_TEST(test_repeat_rows_inside_period)
{
	/* [0,2) 100 W, 100 -> 200 W over [2,8], [8,10) 200 W */
	power_trace_t *tr = _load("@repeat 10\ntime a\n2 100\n8 200\n");

	EXACT(power_trace_joules(tr, 0, 0, 10), 200 + 900 + 400);
	EXACT(power_trace_joules(tr, 0, 0, 30), 4500);
	EXACT(power_trace_joules(tr, 0, 1, 12), 100 + 900 + 400 + 200);
	power_trace_free(tr);
}
END_TEST

START_TEST(test_parse_errors)
{
	ck_assert_str_eq(_error("0 1 2\n"),
		":1: expected the header 'time NAME...' before any row, got '0'");
	ck_assert_str_eq(_error("# c\ntime a b\n0 1 2\n\n5 1 2\n4 1 2\n"),
		":6: time '4' goes back (previous row: 5)");
	ck_assert_str_eq(_error("time a b\n0 1\n"),
		":2: expected 2 watt values after the time, got 1");
	ck_assert_str_eq(_error("time a b\n0 1 2 3\n"),
		":2: more than 2 watt values: '3'");
	ck_assert_str_eq(_error("time a b\n0 1 x2\n"),
		":2: column b: 'x2' is not a number of watts");
	ck_assert_str_eq(_error("time a\n0 -1\n"),
		":2: column a: '-1' watts is negative");
	ck_assert_str_eq(_error("time a\n0 nan\n"),
		":2: column a: 'nan' is not a number of watts");
	ck_assert_str_eq(_error("time a\n1s 1\n"),
		":2: time '1s' is not a number");
	ck_assert_str_eq(_error("time a\n1 1\n1 2\n1 3\n"),
		":4: time '1' given a third time (a step is two rows)");
	ck_assert_str_eq(_error("time a a\n"),
		":1: column 'a' named twice");
	ck_assert_str_eq(_error("time\n"),
		":1: the header names no column after 'time'");
	ck_assert_str_eq(_error("time a\n@repeat 5\n"),
		":2: @repeat must come before the header");
	ck_assert_str_eq(_error("@repeat 0\n"),
		":1: @repeat '0': not a positive number of seconds");
	ck_assert_str_eq(_error("@repeat 5\n@repeat 5\n"),
		":2: @repeat given twice");
	ck_assert_str_eq(_error("@loop 5\n"),
		":1: unknown directive '@loop' (known: @repeat)");
	ck_assert_str_eq(_error("@repeat 10\ntime a\n0 1\n10.5 1\n"),
		":4: time '10.5' outside the @repeat period [0, 10]");
	ck_assert_str_eq(_error("# nothing\ntime a\n"),
		": no rows (a trace needs 'time NAME...' and at least one row)");
	ck_assert_str_eq(_error(""),
		": no rows (a trace needs 'time NAME...' and at least one row)");
}
END_TEST

/*
 * Bounds that keep every energy resolved to a few joules.  Found by
 * tests/fuzz (corpus/fuzz_power_trace/crash-434f82b2...): a 7.6e64 s
 * @repeat with one row at 18 W gave E(10, 61) = -18 J, the interval's
 * energy lost in the rounding of the period's.
 */
START_TEST(test_bounds)
{
	power_trace_t *tr;

	ck_assert_str_eq(_error("@repeat 7.6e64\ntime a\n1 18\n"),
		":1: @repeat '7.6e64': longer than 1e+09 seconds");
	ck_assert_str_eq(_error("time a\n-2e9 1\n"),
		":2: time '-2e9' beyond +/-1e+09 seconds");
	ck_assert_str_eq(_error("time a\n0 2e7\n"),
		":2: column a: '2e7' watts is above 1e+07");
	/* at the bounds, a short interval keeps its energy */
	tr = _load("@repeat 1e9\ntime a\n1 1e7\n");
	ck_assert(fabs(power_trace_joules(tr, 0, 10, 61) - 51e7) <= 32);
	ck_assert(fabs(power_trace_joules(tr, 0, -1e6, -1e6 + 1) - 1e7) <= 32);
	power_trace_free(tr);
}
END_TEST

START_TEST(test_missing_file)
{
	power_trace_t *tr = NULL;
	char err[256];

	ck_assert_int_eq(power_trace_load("/nonexistent/x.trace", &tr, err,
					  sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/x.trace: No such file or directory");
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("power_trace");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, test_constant);
	tcase_add_test(tc, test_ramp);
	tcase_add_test(tc, test_step);
	tcase_add_test(tc, test_repeat);
	tcase_add_test(tc, test_repeat_rows_inside_period);
	tcase_add_test(tc, test_capped);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_missing_file);
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
