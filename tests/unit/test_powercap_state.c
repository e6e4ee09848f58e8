/*
 * test_powercap_state.c - the power cap's state file (src/powercap/
 * pcap_state.c): what slurm-energy-powercapd publishes and
 * cli_filter/energy_policy tells users at submit.  The text round trip,
 * bad files refused, the write atomic (no .tmp left), the bounded read
 * (a FIFO without a writer stands in for a file system that does not
 * answer: the caller is back within the timeout), the user's line only
 * while capping and fresh, PowerCapStateFile picked out of a powercap.conf.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pcap_state.h"
#include "tmp_file.h"

static char dir[] = "/tmp/se-test-pcap-state-XXXXXX";

static void _setup(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(EXIT_FAILURE);
	}
}

static pcap_state_t _capping(void)
{
	return (pcap_state_t){ .time_s = 1000, .valid_until_s = 1015,
			       .since_s = 880, .capping = true,
			       .cap_w = 1000, .power_w = 962.5, .nodes = 4,
			       .capped_nodes = 3 };
}

START_TEST(test_round_trip)
{
	pcap_state_t a = _capping(), b;
	char text[PCAP_STATE_MAX_LEN], err[256];
	int n = pcap_state_format(&a, text, sizeof(text));

	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, 512);
	ck_assert_int_eq(pcap_state_parse(text, (size_t)n, &b, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(b.time_s, 1000);
	ck_assert_int_eq(b.valid_until_s, 1015);
	ck_assert_int_eq(b.since_s, 880);
	ck_assert(b.capping);
	ck_assert_double_eq_tol(b.power_w, 962.5, 1e-9);
	ck_assert_double_eq_tol(b.cap_w, 1000, 1e-9);
	ck_assert_uint_eq(b.nodes, 4);
	ck_assert_uint_eq(b.capped_nodes, 3);
	ck_assert_int_eq(pcap_state_format(&a, text, 40), -ENOSPC);
}
END_TEST

START_TEST(test_bad_files_refused)
{
	static const char *bad[] = {
		"",
		"time=1\nvalid_until=2\n",			/* no magic */
		PCAP_STATE_MAGIC "\ntime=1\n",			/* no valid_until */
		PCAP_STATE_MAGIC "\ntime=1\nvalid_until=2\ncapping=maybe\n",
		PCAP_STATE_MAGIC "\ntime=1\nvalid_until=x\n",
		PCAP_STATE_MAGIC "\ntime=1\nvalid_until=2\npower_w=-3\n",
		PCAP_STATE_MAGIC "\ntime=1\nvalid_until=2\njunk\n",
	};
	pcap_state_t s;
	char err[256], big[PCAP_STATE_MAX_LEN + 10];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		ck_assert_msg(pcap_state_parse(bad[i], strlen(bad[i]), &s, err,
					       sizeof(err)) == -EINVAL,
			      "accepted: %s", bad[i]);
		ck_assert_msg(err[0], "no reason for: %s", bad[i]);
	}
	ck_assert_ptr_nonnull(strstr(err, "junk"));
	/* unknown keys: a newer daemon's, ignored */
	const char *ok = PCAP_STATE_MAGIC "\ntime=1\nvalid_until=2\nnew=1\n";
	ck_assert_int_eq(pcap_state_parse(ok, strlen(ok), &s, err,
					  sizeof(err)), 0);
	memset(big, 'a', sizeof(big));
	memcpy(big, PCAP_STATE_MAGIC "\n", strlen(PCAP_STATE_MAGIC) + 1);
	ck_assert_int_eq(pcap_state_parse(big, sizeof(big), &s, err,
					  sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_write_then_read)
{
	pcap_state_t a = _capping(), b;
	char path[256], tmp[300], err[512];

	snprintf(path, sizeof(path), "%s/state", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(pcap_state_write(path, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);	/* renamed */
	ck_assert_int_eq(pcap_state_read_bounded(path, 1000, &b, err,
						 sizeof(err)), 0);
	ck_assert_uint_eq(b.capped_nodes, 3);
	a.capping = false;
	a.since_s = 0;
	ck_assert_int_eq(pcap_state_write(path, &a, err, sizeof(err)), 0);
	ck_assert_int_eq(pcap_state_read_bounded(path, 1000, &b, err,
						 sizeof(err)), 0);
	ck_assert(!b.capping);
	/* a directory that is not there: named */
	ck_assert_int_eq(pcap_state_write("/nonexistent-se/state", &a, err,
					  sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent-se/state.tmp"));
}
END_TEST

START_TEST(test_read_errors_named)
{
	pcap_state_t s;
	char path[256], err[512];

	snprintf(path, sizeof(path), "%s/missing", dir);
	ck_assert_int_eq(pcap_state_read_bounded(path, 1000, &s, err,
						 sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
	snprintf(path, sizeof(path), "%s/garbage", dir);
	tmp_file_write(path, "hello\n");
	ck_assert_int_eq(pcap_state_read_bounded(path, 1000, &s, err,
						 sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a state file"));
}
END_TEST

static double _now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

START_TEST(test_read_bounded_by_timeout)
{
	pcap_state_t s;
	char path[256], err[512];
	double t0, took;

	/* open(2) of a FIFO without a writer blocks, as a read from a file
	 * system that stopped answering does */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	t0 = _now();
	ck_assert_int_eq(pcap_state_read_bounded(path, 100, &s, err,
						 sizeof(err)), -ETIMEDOUT);
	took = _now() - t0;
	ck_assert_msg(took >= 0.095 && took < 0.3, "took %.3f s", took);
	ck_assert_ptr_nonnull(strstr(err, "no answer within 100 ms"));
}
END_TEST

START_TEST(test_notice_only_when_capping_and_fresh)
{
	pcap_state_t s = _capping();
	char line[512];

	ck_assert_int_gt(pcap_state_notice(&s, 1010, line, sizeof(line)), 0);
	ck_assert_str_eq(line, "the cluster is power-capped (for 2 min: "
			 "drawing 962 W of its 1000 W cap, 3 of 4 nodes "
			 "capped); jobs may run slower than usual");
	/* up to valid_until, not after */
	ck_assert_int_gt(pcap_state_notice(&s, 1015, line, sizeof(line)), 0);
	ck_assert_int_eq(pcap_state_notice(&s, 1016, line, sizeof(line)), 0);
	/* written far in the future: a clock gone wrong, ignored */
	ck_assert_int_eq(pcap_state_notice(&s, 1000 - 61, line, sizeof(line)),
			 0);
	ck_assert_int_gt(pcap_state_notice(&s, 1000 - 60, line, sizeof(line)),
			 0);
	ck_assert_ptr_nonnull(strstr(line, "for 1 min:"));
	s.since_s = 1000 - 3 * 3600 - 5 * 60;
	pcap_state_notice(&s, 1000, line, sizeof(line));
	ck_assert_ptr_nonnull(strstr(line, "for 3 h 5 min"));
	s.capping = false;
	ck_assert_int_eq(pcap_state_notice(&s, 1000, line, sizeof(line)), 0);
}
END_TEST

START_TEST(test_conf_path)
{
	char conf[256], path[256];

	snprintf(conf, sizeof(conf), "%s/powercap.conf", dir);
	tmp_file_write(conf, "# the site's\nPowerCapWatts=1000\n"
		       "PowerCapNodes=a,b\n"
		       "  powercapstatefile = /shared/pcap.state  # here\n");
	ck_assert_int_eq(pcap_state_conf_path(conf, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/shared/pcap.state");
	tmp_file_write(conf, "PowerCapWatts=1000\n#PowerCapStateFile=/x\n");
	ck_assert_int_eq(pcap_state_conf_path(conf, path, sizeof(path)),
			 -ENOENT);
	tmp_file_write(conf, "PowerCapStateFile=relative\n");
	ck_assert_int_eq(pcap_state_conf_path(conf, path, sizeof(path)),
			 -EINVAL);
	tmp_file_write(conf, "PowerCapStateFileX=/x\n");
	ck_assert_int_eq(pcap_state_conf_path(conf, path, sizeof(path)),
			 -ENOENT);
	snprintf(conf, sizeof(conf), "%s/none.conf", dir);
	ck_assert_int_eq(pcap_state_conf_path(conf, path, sizeof(path)),
			 -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_state");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	_setup();
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_bad_files_refused);
	tcase_add_test(tc, test_write_then_read);
	tcase_add_test(tc, test_read_errors_named);
	tcase_add_test(tc, test_read_bounded_by_timeout);
	tcase_add_test(tc, test_notice_only_when_capping_and_fresh);
	tcase_add_test(tc, test_conf_path);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
