/*
 * test_powercap_wire.c - the controller's and agents' messages as bytes
 * (src/powercap/pcap_wire.c): both messages round-trip, the bytes of a
 * CAP are the layout pcap_wire.h says, every header fault and an
 * unterminated string are refused with what is wrong, and 50,000 damaged
 * or random buffers are decoded without a fault (under ASan in CI).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_wire.h"

static pcap_cap_msg_t _cap(void)
{
	pcap_cap_msg_t m = { .seq = 0x0102030405060708ull,
			     .cap_mw = 250000, .lease_ms = 30000,
			     .flags = PCAP_CAP_RESTORE };

	strcpy(m.node, "gpu017");
	return m;
}

START_TEST(test_round_trip)
{
	uint8_t buf[PCAP_WIRE_MAX_LEN];
	pcap_cap_msg_t c = _cap(), c2;
	pcap_report_msg_t r = { .seq = 99, .power_mw = 412345,
				.window_ms = 1000, .cap_mw = 450000,
				.window_cap_mw = 431250,
				.flags = PCAP_REPORT_JOB }, r2;
	char err[256] = "";

	ck_assert_int_eq(pcap_wire_cap(&c, buf, sizeof(buf)),
			 PCAP_WIRE_CAP_LEN);
	ck_assert_int_eq(pcap_wire_type(buf, PCAP_WIRE_CAP_LEN, err,
					sizeof(err)), PCAP_WIRE_CAP);
	ck_assert_int_eq(pcap_wire_read_cap(buf, PCAP_WIRE_CAP_LEN, &c2, err,
					    sizeof(err)), 0);
	ck_assert_str_eq(c2.node, c.node);
	ck_assert(c2.seq == c.seq && c2.cap_mw == c.cap_mw &&
		  c2.lease_ms == c.lease_ms && c2.flags == c.flags);

	strcpy(r.node, "n1");
	strcpy(r.error, "rapl: cannot write 1 to /x: Permission denied");
	ck_assert_int_eq(pcap_wire_report(&r, buf, sizeof(buf)),
			 PCAP_WIRE_REPORT_LEN);
	ck_assert_int_eq(pcap_wire_read_report(buf, PCAP_WIRE_REPORT_LEN, &r2,
					       err, sizeof(err)), 0);
	ck_assert_str_eq(r2.node, r.node);
	ck_assert_str_eq(r2.error, r.error);
	ck_assert(r2.seq == r.seq && r2.power_mw == r.power_mw &&
		  r2.window_ms == r.window_ms && r2.cap_mw == r.cap_mw &&
		  r2.window_cap_mw == r.window_cap_mw && r2.flags == r.flags);
}
END_TEST

START_TEST(test_layout)
{
	static const uint8_t head[] = {
		'S', 'E', 'P', 'C', 2, 0, 1, 0, PCAP_WIRE_CAP_LEN, 0, 0, 0,
		8, 7, 6, 5, 4, 3, 2, 1,		/* seq */
		0x90, 0xd0, 0x03, 0x00,		/* 250000 mW */
		0x30, 0x75, 0x00, 0x00,		/* 30000 ms */
		1, 0, 0, 0,			/* RESTORE */
		'g', 'p', 'u', '0', '1', '7', 0,
	};
	uint8_t buf[PCAP_WIRE_MAX_LEN];
	pcap_cap_msg_t c = _cap();

	pcap_wire_cap(&c, buf, sizeof(buf));
	ck_assert(!memcmp(buf, head, sizeof(head)));
	for (size_t i = sizeof(head); i < PCAP_WIRE_CAP_LEN; i++)
		ck_assert_uint_eq(buf[i], 0);
}
END_TEST

START_TEST(test_refusals_named)
{
	uint8_t buf[PCAP_WIRE_MAX_LEN], bad[PCAP_WIRE_MAX_LEN];
	pcap_cap_msg_t c = _cap(), c2;
	pcap_report_msg_t r;
	char err[256] = "";

	pcap_wire_cap(&c, buf, sizeof(buf));
	ck_assert_int_eq(pcap_wire_type(buf, 11, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "powercap message: 11 bytes, shorter than its "
			 "header (12)");
	memcpy(bad, buf, sizeof(bad));
	bad[0] = 'X';
	ck_assert_int_eq(pcap_wire_type(bad, PCAP_WIRE_CAP_LEN, err,
					sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "not a powercap peer"), "%s", err);
	memcpy(bad, buf, sizeof(bad));
	bad[4] = 1;	/* a peer of the version before */
	ck_assert_int_eq(pcap_wire_type(bad, PCAP_WIRE_CAP_LEN, err,
					sizeof(err)), -EPROTONOSUPPORT);
	ck_assert_str_eq(err, "powercap message: version 1, this build speaks "
			 "2");
	memcpy(bad, buf, sizeof(bad));
	bad[6] = 9;
	ck_assert_int_eq(pcap_wire_type(bad, PCAP_WIRE_CAP_LEN, err,
					sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "powercap message: unknown type 9");
	ck_assert_int_eq(pcap_wire_type(buf, PCAP_WIRE_CAP_LEN - 1, err,
					sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "received"), "%s", err);
	/* a CAP read as a REPORT */
	ck_assert_int_eq(pcap_wire_read_report(buf, PCAP_WIRE_CAP_LEN, &r, err,
					       sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "expected type 2"), "%s", err);
	/* a name without its NUL */
	memcpy(bad, buf, sizeof(bad));
	memset(bad + PCAP_WIRE_CAP_LEN - PCAP_WIRE_NAME_MAX, 'a',
	       PCAP_WIRE_NAME_MAX);
	ck_assert_int_eq(pcap_wire_read_cap(bad, PCAP_WIRE_CAP_LEN, &c2, err,
					    sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "powercap message: node name without its end "
			 "(64 bytes, no NUL)");
	/* encoding refuses what would not decode */
	memset(c.node, 'a', sizeof(c.node));
	ck_assert_int_eq(pcap_wire_cap(&c, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(pcap_wire_cap(&c, buf, 10), -ENOSPC);
}
END_TEST

START_TEST(test_damaged_buffers)
{
	uint8_t good[PCAP_WIRE_MAX_LEN], buf[PCAP_WIRE_MAX_LEN + 8];
	pcap_report_msg_t r = { .seq = 1 };
	unsigned seed = 4;
	size_t accepted = 0;
	char err[256];

	strcpy(r.node, "n1");
	pcap_wire_report(&r, good, sizeof(good));
	for (int k = 0; k < 50000; k++) {
		size_t len = rand_r(&seed) % sizeof(buf);
		pcap_report_msg_t out;
		pcap_cap_msg_t cout;

		if (k % 2) {		/* a good message, a few bytes hit */
			memcpy(buf, good, sizeof(good));
			len = PCAP_WIRE_REPORT_LEN;
			for (int j = rand_r(&seed) % 4; j >= 0; j--)
				buf[rand_r(&seed) % len] = rand_r(&seed);
		} else {
			for (size_t j = 0; j < len; j++)
				buf[j] = rand_r(&seed);
		}
		if (!pcap_wire_read_report(buf, len, &out, err, sizeof(err))) {
			accepted++;
			ck_assert(memchr(out.node, 0, sizeof(out.node)));
			ck_assert(memchr(out.error, 0, sizeof(out.error)));
		}
		(void)pcap_wire_read_cap(buf, len, &cout, err, sizeof(err));
	}
	ck_assert_uint_gt(accepted, 0);		/* hits in the body pass */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_wire");
	TCase *tc = tcase_create("wire");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_refusals_named);
	tcase_add_test(tc, test_damaged_buffers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
