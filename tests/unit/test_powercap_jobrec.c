/*
 * test_powercap_jobrec.c - each job's power cap record (src/powercap/
 * pcap_jobrec.c): the time capped charged per interval from the state at
 * its start, once per job however many of its nodes were capped; the
 * lowest cap; jobs ending handed over with their final record; a job
 * never capped writes nothing; the AdminComment token replaced or
 * appended; many jobs kept sorted.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_jobrec.h"

#define S 1000000000LL

static pcap_jobrec_t ended[16];
static size_t n_ended;

static void _end(void *arg, const pcap_jobrec_t *r)
{
	(void)arg;
	ck_assert_uint_lt(n_ended, 16);
	ended[n_ended++] = *r;
}

/* 3 nodes of max 200 W */
static const uint32_t MAX[3] = { 200000, 200000, 200000 };

START_TEST(test_time_capped_and_lowest_cap)
{
	pcap_jobrecs_t j;
	const size_t n01[] = { 0, 1 }, n2[] = { 2 };
	pcap_job_t jobs[] = { { 7, n01, 2 }, { 9, n2, 1 } };
	uint32_t cap[3] = { 200000, 200000, 200000 };
	char tok[64];

	n_ended = 0;
	pcap_jobrecs_init(&j);
	/* t=0: nobody capped */
	ck_assert_int_eq(pcap_jobrecs_round(&j, 0, jobs, 2, cap, MAX, 3, _end,
					    NULL), 0);
	ck_assert_uint_eq(j.n, 2);
	/* t=1: both of job 7's nodes capped (charged once), job 9 not */
	cap[0] = 150000;
	cap[1] = 170000;
	pcap_jobrecs_round(&j, 1 * S, jobs, 2, cap, MAX, 3, _end, NULL);
	ck_assert_int_eq(j.v[0].capped_ns, 0);	/* (0,1]: uncapped at 0 */
	/* t=3: job 7's node 0 at 120 W */
	cap[0] = 120000;
	cap[1] = 200000;
	pcap_jobrecs_round(&j, 3 * S, jobs, 2, cap, MAX, 3, _end, NULL);
	ck_assert_int_eq(j.v[0].job_id, 7);
	ck_assert_int_eq(j.v[0].capped_ns, 2 * S);
	ck_assert_uint_eq(j.v[0].min_cap_mw, 120000);
	/* t=4: all uncapped; (3,4] still charged (capped at 3) */
	cap[0] = 200000;
	pcap_jobrecs_round(&j, 4 * S, jobs, 2, cap, MAX, 3, _end, NULL);
	/* t=10: job 7 gone, job 9 runs on */
	pcap_jobrecs_round(&j, 10 * S, &jobs[1], 1, cap, MAX, 3, _end, NULL);
	ck_assert_uint_eq(n_ended, 1);
	ck_assert_uint_eq(ended[0].job_id, 7);
	ck_assert_int_eq(ended[0].capped_ns, 3 * S);
	ck_assert_uint_eq(ended[0].min_cap_mw, 120000);
	ck_assert_int_eq(pcap_jobrec_token(&ended[0], tok, sizeof(tok)),
			 (int)strlen("powercap=capped:3s,min:120W"));
	ck_assert_str_eq(tok, "powercap=capped:3s,min:120W");
	/* job 9, never capped: nothing to write */
	pcap_jobrecs_round(&j, 11 * S, NULL, 0, cap, MAX, 3, _end, NULL);
	ck_assert_uint_eq(n_ended, 2);
	ck_assert_uint_eq(ended[1].job_id, 9);
	ck_assert_int_eq(pcap_jobrec_token(&ended[1], tok, sizeof(tok)), 0);
	ck_assert_uint_eq(j.n, 0);
	pcap_jobrecs_free(&j);
}
END_TEST

START_TEST(test_new_job_capped_from_its_first_round)
{
	pcap_jobrecs_t j;
	const size_t n0[] = { 0 };
	pcap_job_t job = { 5, n0, 1 };
	uint32_t cap[3] = { 100000, 200000, 200000 };

	n_ended = 0;
	pcap_jobrecs_init(&j);
	pcap_jobrecs_round(&j, 100 * S, &job, 1, cap, MAX, 3, _end, NULL);
	ck_assert_int_eq(j.v[0].capped_ns, 0);	/* nothing before it ran */
	ck_assert_uint_eq(j.v[0].min_cap_mw, 100000);
	pcap_jobrecs_round(&j, 101 * S, &job, 1, cap, MAX, 3, _end, NULL);
	/* listed twice in one round: charged once */
	pcap_job_t twice[] = { job, job };
	pcap_jobrecs_round(&j, 102 * S, twice, 2, cap, MAX, 3, _end, NULL);
	ck_assert_uint_eq(j.n, 1);
	ck_assert_int_eq(j.v[0].capped_ns, 2 * S);
	/* a node index out of range is ignored, not read */
	const size_t bad[] = { 99 };
	pcap_job_t b = { 6, bad, 1 };
	pcap_jobrecs_round(&j, 103 * S, &b, 1, cap, MAX, 3, _end, NULL);
	ck_assert_uint_eq(n_ended, 1);
	ck_assert_int_eq(ended[0].capped_ns, 2 * S);
	ck_assert_uint_eq(j.v[0].min_cap_mw, 0);
	pcap_jobrecs_free(&j);
}
END_TEST

START_TEST(test_many_jobs_sorted)
{
	enum { N = 1000 };
	pcap_jobrecs_t j;
	static pcap_job_t jobs[N];
	const size_t n0[] = { 0 };
	uint32_t cap[3] = { 100000, 200000, 200000 };

	pcap_jobrecs_init(&j);
	for (size_t i = 0; i < N; i++)	/* ids out of order */
		jobs[i] = (pcap_job_t){ (uint32_t)((i * 7919) % N) + 1, n0,
					1 };
	ck_assert_int_eq(pcap_jobrecs_round(&j, 0, jobs, N, cap, MAX, 3,
					    NULL, NULL), 0);
	ck_assert_int_eq(pcap_jobrecs_round(&j, S, jobs, N, cap, MAX, 3,
					    NULL, NULL), 0);
	ck_assert_uint_eq(j.n, N);
	for (size_t i = 0; i < N; i++) {
		ck_assert_uint_eq(j.v[i].job_id, i + 1);
		ck_assert_int_eq(j.v[i].capped_ns, S);
	}
	pcap_jobrecs_free(&j);
}
END_TEST

START_TEST(test_written_while_running)
{
	pcap_jobrec_t r = { .job_id = 1 };

	ck_assert(!pcap_jobrec_due(&r, 0, 30 * S));	/* never capped */
	r.min_cap_mw = 150000;
	ck_assert(pcap_jobrec_due(&r, 0, 30 * S));	/* first: at once */
	pcap_jobrec_written(&r, 0);
	ck_assert(!pcap_jobrec_due(&r, 1 * S, 30 * S));
	r.capped_ns = 10 * S;
	ck_assert(!pcap_jobrec_due(&r, 29 * S, 30 * S));
	ck_assert(pcap_jobrec_due(&r, 30 * S, 30 * S));	/* grown, 30 s */
	pcap_jobrec_written(&r, 30 * S);
	r.min_cap_mw = 140000;				/* lower: at once */
	ck_assert(pcap_jobrec_due(&r, 31 * S, 30 * S));
	pcap_jobrec_written(&r, 31 * S);
	/* not grown (uncapped since): nothing to write, however long */
	ck_assert(!pcap_jobrec_due(&r, 1000 * S, 30 * S));
}
END_TEST

START_TEST(test_admin_comment)
{
	const char *t = "powercap=capped:3s,min:120W";
	char *s;

	s = pcap_jobrec_comment(NULL, t);
	ck_assert_str_eq(s, t);
	free(s);
	s = pcap_jobrec_comment("", t);
	ck_assert_str_eq(s, t);
	free(s);
	s = pcap_jobrec_comment("site=abc", t);
	ck_assert_str_eq(s, "site=abc powercap=capped:3s,min:120W");
	free(s);
	s = pcap_jobrec_comment("a powercap=capped:1s,min:150W b", t);
	ck_assert_str_eq(s, "a powercap=capped:3s,min:120W b");
	free(s);
	/* only a word of its own: xpowercap= is someone else's */
	s = pcap_jobrec_comment("xpowercap=1", t);
	ck_assert_str_eq(s, "xpowercap=1 powercap=capped:3s,min:120W");
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_jobrec");
	TCase *tc = tcase_create("jobrec");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_time_capped_and_lowest_cap);
	tcase_add_test(tc, test_new_job_capped_from_its_first_round);
	tcase_add_test(tc, test_many_jobs_sorted);
	tcase_add_test(tc, test_written_while_running);
	tcase_add_test(tc, test_admin_comment);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
