/*
 * test_counter.c - counter_step(): wrap, reset, 64-bit, plausibility.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "counter.h"

START_TEST(test_forward)
{
	uint64_t d = 99;

	ck_assert_int_eq(counter_step(100, 350, 32, 0, &d), COUNTER_FORWARD);
	ck_assert_uint_eq(d, 250);
	ck_assert_int_eq(counter_step(7, 7, 16, 10, &d), COUNTER_FORWARD);
	ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_wrap16)
{
	uint64_t d = 0;

	/* 65530 -> 4 passes 0xffff: 6 to reach 65536, then 4 */
	ck_assert_int_eq(counter_step(65530, 4, 16, 100, &d), COUNTER_WRAPPED);
	ck_assert_uint_eq(d, 10);
	/* bits above the width are ignored */
	ck_assert_int_eq(counter_step(0x1fffa, 0x20004, 16, 100, &d),
			 COUNTER_WRAPPED);
	ck_assert_uint_eq(d, 10);
}
END_TEST

START_TEST(test_wrap32)
{
	uint64_t d = 0;

	ck_assert_int_eq(counter_step(0xfffffff0ULL, 0x10, 32, 1000, &d),
			 COUNTER_WRAPPED);
	ck_assert_uint_eq(d, 0x20);
	/* exactly at the bound is still plausible */
	ck_assert_int_eq(counter_step(0xfffffff0ULL, 0x10, 32, 0x20, &d),
			 COUNTER_WRAPPED);
	ck_assert_uint_eq(d, 0x20);
}
END_TEST

START_TEST(test_reset_backwards)
{
	uint64_t d = 42;

	/* 32-bit at 3e9 back to 5: as a wrap that is 1.29e9 units, far more
	 * than the 1000 the elapsed time allows: a reset */
	ck_assert_int_eq(counter_step(3000000000ULL, 5, 32, 1000, &d),
			 COUNTER_RESET);
	ck_assert_uint_eq(d, 0);
	/* one unit over the bound */
	ck_assert_int_eq(counter_step(0xfffffff0ULL, 0x10, 32, 0x1f, &d),
			 COUNTER_RESET);
}
END_TEST

START_TEST(test_reset_forward_jump)
{
	uint64_t d = 42;

	ck_assert_int_eq(counter_step(100, 100000, 32, 500, &d),
			 COUNTER_RESET);
	ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_unbounded_half_range)
{
	uint64_t d = 0;

	/* no time bound: a short wrap is believed ... */
	ck_assert_int_eq(counter_step(65000, 100, 16, 0, &d), COUNTER_WRAPPED);
	ck_assert_uint_eq(d, 636);
	/* ... a restart from near 0 is not */
	ck_assert_int_eq(counter_step(30000, 3, 16, 0, &d), COUNTER_RESET);
	ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_64bit_never_wraps)
{
	uint64_t d = 42;

	ck_assert_int_eq(counter_step(UINT64_MAX - 5, 3, 64, 0, &d),
			 COUNTER_RESET);
	ck_assert_uint_eq(d, 0);
	ck_assert_int_eq(counter_step(UINT64_MAX - 5, 3, 64, UINT64_MAX, &d),
			 COUNTER_RESET);
	ck_assert_int_eq(counter_step(1, UINT64_MAX, 64, 0, &d),
			 COUNTER_FORWARD);
	ck_assert_uint_eq(d, UINT64_MAX - 1);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("counter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_forward);
	tcase_add_test(tc, test_wrap16);
	tcase_add_test(tc, test_wrap32);
	tcase_add_test(tc, test_reset_backwards);
	tcase_add_test(tc, test_reset_forward_jump);
	tcase_add_test(tc, test_unbounded_half_range);
	tcase_add_test(tc, test_64bit_never_wraps);
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
