/*
 * test_se_log.c - the log sink and the rate limiter.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "se_log.h"
#include "se_time.h"

#define MAX_MSGS 16

static struct {
	int n;
	se_log_level_t level[MAX_MSGS];
	char msg[MAX_MSGS][1100];
} rec;

static void _record(void *arg, se_log_level_t level, const char *msg)
{
	int *calls = arg;

	(*calls)++;
	if (rec.n == MAX_MSGS)
		return;
	rec.level[rec.n] = level;
	strncpy(rec.msg[rec.n], msg, sizeof(rec.msg[0]) - 1);
	rec.n++;
}

static int calls;

static void _setup(void)
{
	memset(&rec, 0, sizeof(rec));
	calls = 0;
	se_log_set_sink(_record, &calls);
}

static void _teardown(void)
{
	se_log_set_sink(NULL, NULL);
}

START_TEST(test_sink)
{
	se_log(SE_LOG_INFO, "meter %s: %d W", "m1", 250);
	se_log(SE_LOG_SAMPLE, "x");
	ck_assert_int_eq(calls, 2);
	ck_assert_str_eq(rec.msg[0], "meter m1: 250 W");
	ck_assert_int_eq(rec.level[0], SE_LOG_INFO);
	ck_assert_int_eq(rec.level[1], SE_LOG_SAMPLE);
}
END_TEST

START_TEST(test_truncation)
{
	char big[2000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	se_log(SE_LOG_ERROR, "%s", big);
	ck_assert_uint_eq(strlen(rec.msg[0]), 1023);
}
END_TEST

START_TEST(test_ratelimit_counts_suppressed)
{
	se_ratelimit_t rl = SE_RATELIMIT_INIT(10 * SE_NS_PER_SEC, 2);
	uint64_t t0 = 5 * SE_NS_PER_SEC;
	int i;

	for (i = 0; i < 5; i++)
		se_log_limited(&rl, t0 + i * SE_NS_PER_SEC, SE_LOG_ERROR,
			       "read failed %d", i);
	ck_assert_int_eq(rec.n, 2);
	ck_assert_str_eq(rec.msg[1], "read failed 1");
	ck_assert_uint_eq(rl.suppressed, 3);

	/* 9.999 s after the window opened: still suppressed */
	se_log_limited(&rl, t0 + 10 * SE_NS_PER_SEC - 1, SE_LOG_ERROR,
		       "read failed %d", 5);
	ck_assert_int_eq(rec.n, 2);
	ck_assert_uint_eq(rl.suppressed, 4);

	/* a new window: the first message carries the count */
	se_log_limited(&rl, t0 + 10 * SE_NS_PER_SEC, SE_LOG_ERROR,
		       "read failed %d", 6);
	ck_assert_int_eq(rec.n, 3);
	ck_assert_str_eq(rec.msg[2],
			 "read failed 6 (4 similar messages suppressed)");
	ck_assert_uint_eq(rl.suppressed, 0);
	se_log_limited(&rl, t0 + 11 * SE_NS_PER_SEC, SE_LOG_ERROR, "again");
	ck_assert_str_eq(rec.msg[3], "again");
	se_log_limited(&rl, t0 + 12 * SE_NS_PER_SEC, SE_LOG_ERROR, "dropped");
	ck_assert_int_eq(rec.n, 4);
	ck_assert_uint_eq(rl.suppressed, 1);
}
END_TEST

START_TEST(test_ratelimit_unlimited)
{
	se_ratelimit_t rl = SE_RATELIMIT_INIT(0, 1);
	int i;

	for (i = 0; i < 10; i++)
		se_log_limited(&rl, 0, SE_LOG_DEBUG, "m");
	ck_assert_int_eq(rec.n, 10);
	ck_assert_uint_eq(rl.suppressed, 0);
}
END_TEST

/* A sink that writes no per-sample lines (DebugFlags off): se_log() asks
 * its wants function first and neither formats nor hands such a line on;
 * the limited log, whose limiter already let the message through, does. */
static int wants_asked;

static bool _no_samples(void *arg, se_log_level_t level)
{
	ck_assert_ptr_eq(arg, &calls);
	wants_asked++;
	return level != SE_LOG_SAMPLE;
}

START_TEST(test_wants_skips_unwanted_levels)
{
	se_ratelimit_t rl = SE_RATELIMIT_INIT(0, 0);

	wants_asked = 0;
	se_log_set_sink_wants(_record, _no_samples, &calls);
	se_log(SE_LOG_SAMPLE, "sample %d", 1);
	se_log(SE_LOG_DEBUG, "debug %d", 2);
	ck_assert_int_eq(wants_asked, 2);
	ck_assert_int_eq(calls, 1);
	ck_assert_str_eq(rec.msg[0], "debug 2");
	ck_assert(se_log_limited(&rl, se_mono_ns(), SE_LOG_SAMPLE, "limited"));
	ck_assert_int_eq(calls, 2);
	/* a plain sink again: every level */
	se_log_set_sink(_record, &calls);
	se_log(SE_LOG_SAMPLE, "sample");
	ck_assert_int_eq(calls, 3);
	ck_assert_int_eq(wants_asked, 2);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("se_log");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, test_sink);
	tcase_add_test(tc, test_truncation);
	tcase_add_test(tc, test_ratelimit_counts_suppressed);
	tcase_add_test(tc, test_ratelimit_unlimited);
	tcase_add_test(tc, test_wants_skips_unwanted_levels);
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
