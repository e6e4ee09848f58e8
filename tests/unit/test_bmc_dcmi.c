/*
 * test_bmc_dcmi.c - DCMI 1.5 request building and response parsing.
 *
 * Responses are given in ipmi_cmd_raw's layout: command, completion code,
 * then the response data of DCMI 1.5 §6.6.1 / §6.1.1 from its byte 2.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "bmc_dcmi_codec.h"

/* 0x01F4 = 500 W current, 100 min, 700 max, 0x0190 = 400 avg, time stamp
 * 0x12345678, period 0x0000EA60 = 60000 ms, state 0x40 (active). */
static const uint8_t _reading[] = {
	0x02, 0x00, 0xdc,
	0xf4, 0x01, 0x64, 0x00, 0xbc, 0x02, 0x90, 0x01,
	0x78, 0x56, 0x34, 0x12,
	0x60, 0xea, 0x00, 0x00,
	0x40,
};

START_TEST(power_reading_request)
{
	uint8_t rq[DCMI_POWER_READING_RQ_LEN];

	ck_assert_uint_eq(dcmi_power_reading_rq(rq, DCMI_MODE_SYSTEM_POWER_STATS,
						0x41), 5);
	ck_assert_uint_eq(rq[0], 0x02);
	ck_assert_uint_eq(rq[1], 0xdc);
	ck_assert_uint_eq(rq[2], 0x01);
	ck_assert_uint_eq(rq[3], 0x00);	/* attributes only for enhanced */
	ck_assert_uint_eq(rq[4], 0x00);

	dcmi_power_reading_rq(rq, DCMI_MODE_ENHANCED_POWER_STATS, 0x41);
	ck_assert_uint_eq(rq[2], 0x02);
	ck_assert_uint_eq(rq[3], 0x41);
}
END_TEST

START_TEST(power_reading_fields)
{
	dcmi_power_reading_t pr;

	ck_assert_int_eq(dcmi_parse_power_reading(_reading, sizeof(_reading),
						  &pr), 0);
	ck_assert_uint_eq(pr.current_w, 500);
	ck_assert_uint_eq(pr.min_w, 100);
	ck_assert_uint_eq(pr.max_w, 700);
	ck_assert_uint_eq(pr.avg_w, 400);
	ck_assert_uint_eq(pr.timestamp_s, 0x12345678);
	ck_assert_uint_eq(pr.period_ms, 60000);
	ck_assert(pr.active);
}
END_TEST

START_TEST(power_reading_full_scale)
{
	uint8_t rs[sizeof(_reading)];
	dcmi_power_reading_t pr;

	memcpy(rs, _reading, sizeof(rs));
	rs[3] = 0xff;	/* 16-bit watts: no 8-bit quantisation */
	rs[4] = 0xff;
	rs[19] = 0x00;	/* no power measurement available */
	ck_assert_int_eq(dcmi_parse_power_reading(rs, sizeof(rs), &pr), 0);
	ck_assert_uint_eq(pr.current_w, 65535);
	ck_assert(!pr.active);
	rs[19] = 0xbf;	/* every bit but 6 */
	dcmi_parse_power_reading(rs, sizeof(rs), &pr);
	ck_assert(!pr.active);
}
END_TEST

START_TEST(power_reading_errors)
{
	uint8_t rs[sizeof(_reading)];
	dcmi_power_reading_t pr;

	memcpy(rs, _reading, sizeof(rs));
	ck_assert_int_eq(dcmi_parse_power_reading(rs, sizeof(rs) - 1, &pr),
			 -EPROTO);
	ck_assert_int_eq(dcmi_parse_power_reading(rs, 1, &pr), -EPROTO);

	rs[2] = 0xdd;	/* another group extension */
	ck_assert_int_eq(dcmi_parse_power_reading(rs, sizeof(rs), &pr),
			 -EPROTO);
	rs[2] = 0xdc;
	rs[0] = 0x01;	/* response to another command */
	ck_assert_int_eq(dcmi_parse_power_reading(rs, sizeof(rs), &pr),
			 -EPROTO);
	rs[0] = 0x02;

	/* a BMC without DCMI: "invalid command", and nothing else */
	rs[1] = IPMI_CC_INVALID_COMMAND;
	ck_assert_int_eq(dcmi_parse_power_reading(rs, 2, &pr), -EOPNOTSUPP);
	rs[1] = 0xd4;	/* insufficient privilege */
	ck_assert_int_eq(dcmi_parse_power_reading(rs, 2, &pr), -EINVAL);
}
END_TEST

START_TEST(check_head_reports_cc)
{
	const uint8_t rs[] = { 0x02, 0xd4 };
	uint8_t cc = 0;

	ck_assert_int_eq(dcmi_check_head(rs, sizeof(rs), 0x02, &cc), -EINVAL);
	ck_assert_uint_eq(cc, 0xd4);
}
END_TEST

START_TEST(rolling_periods)
{
	/* 1 s, 5 s, 15 min, 2 h, 1 day (units in bits 7:6) */
	const uint8_t rs[] = { 0x01, 0x00, 0xdc, 0x01, 0x05, 0x02,
			       5, 0x01, 0x05, 0x4f, 0x82, 0xc1 };
	uint8_t periods[8];
	uint64_t ms[8];
	size_t n;

	ck_assert_int_eq(dcmi_parse_rolling_periods(rs, sizeof(rs), periods,
						    ms, 8, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(ms[0], 1000);
	ck_assert_uint_eq(ms[1], 5000);
	ck_assert_uint_eq(ms[2], 15 * 60000ULL);
	ck_assert_uint_eq(ms[3], 2 * 3600000ULL);
	ck_assert_uint_eq(ms[4], 86400000ULL);
	ck_assert_uint_eq(periods[2], 0x4f);

	/* the count says more periods than the response holds */
	ck_assert_int_eq(dcmi_parse_rolling_periods(rs, sizeof(rs) - 1,
						    periods, ms, 8, &n),
			 -EPROTO);
	/* more than the caller's room: truncated, not overrun */
	ck_assert_int_eq(dcmi_parse_rolling_periods(rs, sizeof(rs), periods,
						    ms, 2, &n), 0);
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(choose_period)
{
	const uint64_t ms[] = { 60000, 5000, 1000, 30000 };

	ck_assert_int_eq(dcmi_choose_period(ms, 4, 1000), 2);
	ck_assert_int_eq(dcmi_choose_period(ms, 4, 500), 2);	/* 1 s <= 2 x */
	ck_assert_int_eq(dcmi_choose_period(ms, 1, 10000), -1); /* 60 s > 20 */
	ck_assert_int_eq(dcmi_choose_period(ms, 0, 1000), -1);
	ck_assert_int_eq(dcmi_choose_period(ms, 4, 400), -1);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("bmc_dcmi");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, power_reading_request);
	tcase_add_test(tc, power_reading_fields);
	tcase_add_test(tc, power_reading_full_scale);
	tcase_add_test(tc, power_reading_errors);
	tcase_add_test(tc, check_head_reports_cc);
	tcase_add_test(tc, rolling_periods);
	tcase_add_test(tc, choose_period);
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
