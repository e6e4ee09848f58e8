/*
 * test_powercap_lease.c - the node agent's lease (src/powercap/
 * pcap_lease.c): restore at start, apply and renew, crossed messages, the
 * lease lapsing (the controller dead), a job ending with and without a
 * lease, a failed knob retried on the next message.
 */
#include <check.h>
#include <stdlib.h>

#include "pcap_lease.h"

#define S 1000000000LL

START_TEST(test_start_restores)
{
	pcap_lease_t l;

	pcap_lease_init(&l, 30 * S);
	ck_assert_int_eq(pcap_lease_tick(&l, 0), PCAP_ACT_RESTORE);
	ck_assert_int_eq(pcap_lease_tick(&l, 1 * S), PCAP_ACT_NONE);
}
END_TEST

START_TEST(test_lease_lapses_to_defaults)
{
	pcap_lease_t l;

	pcap_lease_init(&l, 30 * S);
	pcap_lease_tick(&l, 0);
	ck_assert_int_eq(pcap_lease_cap(&l, 1 * S, 1, 250000, 10 * S),
			 PCAP_ACT_APPLY);
	ck_assert_uint_eq(l.cap_mw, 250000);
	pcap_lease_result(&l, true);
	/* renewed with the same cap: nothing written */
	ck_assert_int_eq(pcap_lease_cap(&l, 2 * S, 2, 250000, 10 * S),
			 PCAP_ACT_NONE);
	/* held until the renewed lease ends, then the defaults */
	ck_assert_int_eq(pcap_lease_tick(&l, 11 * S), PCAP_ACT_NONE);
	ck_assert_int_eq(pcap_lease_tick(&l, 12 * S), PCAP_ACT_RESTORE);
	ck_assert_int_eq(pcap_lease_tick(&l, 13 * S), PCAP_ACT_NONE);
	/* a lease longer than the agent grants is cut to hold_ns */
	ck_assert_int_eq(pcap_lease_cap(&l, 20 * S, 3, 240000, 3600 * S),
			 PCAP_ACT_APPLY);
	ck_assert_int_eq(pcap_lease_tick(&l, 49 * S), PCAP_ACT_NONE);
	ck_assert_int_eq(pcap_lease_tick(&l, 50 * S), PCAP_ACT_RESTORE);
}
END_TEST

START_TEST(test_crossed_messages_ignored)
{
	pcap_lease_t l;

	pcap_lease_init(&l, 30 * S);
	pcap_lease_tick(&l, 0);
	ck_assert_int_eq(pcap_lease_cap(&l, 1 * S, 7, 300000, 0),
			 PCAP_ACT_APPLY);
	ck_assert_int_eq(pcap_lease_cap(&l, 2 * S, 6, 200000, 0),
			 PCAP_ACT_NONE);
	ck_assert_int_eq(pcap_lease_cap(&l, 2 * S, 7, 200000, 0),
			 PCAP_ACT_NONE);
	ck_assert_uint_eq(l.cap_mw, 300000);
	/* lease from the message applied (hold_ns: lease 0) */
	ck_assert_int_eq(pcap_lease_tick(&l, 31 * S), PCAP_ACT_RESTORE);
}
END_TEST

START_TEST(test_failed_knob_retried)
{
	pcap_lease_t l;

	pcap_lease_init(&l, 30 * S);
	pcap_lease_tick(&l, 0);
	ck_assert_int_eq(pcap_lease_cap(&l, 1 * S, 1, 250000, 0),
			 PCAP_ACT_APPLY);
	pcap_lease_result(&l, false);
	ck_assert(!l.enforced);
	/* the same cap again: written again, since it failed */
	ck_assert_int_eq(pcap_lease_cap(&l, 2 * S, 2, 250000, 0),
			 PCAP_ACT_APPLY);
	pcap_lease_result(&l, true);
	ck_assert_int_eq(pcap_lease_cap(&l, 3 * S, 3, 250000, 0),
			 PCAP_ACT_NONE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_lease");
	TCase *tc = tcase_create("lease");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_start_restores);
	tcase_add_test(tc, test_lease_lapses_to_defaults);
	tcase_add_test(tc, test_crossed_messages_ignored);
	tcase_add_test(tc, test_failed_knob_retried);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
