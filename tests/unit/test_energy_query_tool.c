/*
 * test_energy_query_tool.c - se-energy-query against a real query server.
 *
 * The server serves a real sampler (a fake meter at constant power, a long
 * period: the only readings after the first are the ones a kick asks for)
 * with a total hook that answers the sampler's energy and newest sample,
 * as slurmd's does.  The tool (SE_ENERGY_QUERY, default the build's
 * contribs/energy-query/se-energy-query, run from the build dir as make
 * check does) is run as a child; its line, exit status and messages are
 * checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EQF_POWER_MW	250000ULL	/* 250 W */
#include "energy_query_fixture.h"

#define MS	SE_NS_PER_MS
#define SEC	SE_NS_PER_SEC
#define POWER_MW	EQF_POWER_MW
#define TOTAL_ID	0x1234567890abcdefULL

/* slurmd's hook, in short: the sampler's total at its newest sample. */
static int _total(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		  uint64_t *sample_ns)
{
	sampler_status_t st;

	sampler_status(arg, &st);
	*total_mj = st.energy_mj;
	*power_mw = st.power_mw;
	*sample_ns = st.last_sample_ns;
	return st.last_sample_ns ? 0 : -ENODATA;
}

static void _up(fixture_t *f, bool total)
{
	eqf_up(f, "/tmp/se-eqt-XXXXXX");
	if (total)
		eqf_serve(f, &(energy_query_hooks_t) { .total = _total,
						       .total_id = TOTAL_ID,
						       .arg = f->s });
}

static const char *_tool(void)
{
	const char *t = getenv("SE_ENERGY_QUERY");

	return t && *t ? t : "contribs/energy-query/se-energy-query";
}

/*
 * Run the tool with args (NULL-terminated, after argv[0]); its stdout and
 * stderr into out and err; returns its exit status (-1: not exited).
 */
static int _run(char *out, size_t out_len, char *err, size_t err_len, ...)
{
	char *argv[16] = { (char *) _tool() };
	int po[2], pe[2], status, n = 1;
	ssize_t got;
	size_t used;
	va_list ap;
	pid_t pid;

	va_start(ap, err_len);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	ck_assert_int_eq(pipe(po), 0);
	ck_assert_int_eq(pipe(pe), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* the outputs are a line or two: the pipes never fill */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	used = 0;
	while (used + 1 < out_len &&
	       (got = read(po[0], out + used, out_len - 1 - used)) > 0)
		used += got;
	out[used] = '\0';
	used = 0;
	while (used + 1 < err_len &&
	       (got = read(pe[0], err + used, err_len - 1 - used)) > 0)
		used += got;
	err[used] = '\0';
	close(po[0]);
	close(pe[0]);
	ck_assert_msg(!(WIFEXITED(status) && WEXITSTATUS(status) == 127),
		      "cannot run %s (from the build dir, or SE_ENERGY_QUERY)",
		      argv[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The five values of the tool's line; false when it is not that line. */
static bool _parse(const char *line, uint64_t v[5])
{
	int end = 0;

	return sscanf(line, "total_mj=%" SCNu64 " total_id=%" SCNu64
		      " sample_ns=%" SCNu64 " power_mw=%" SCNu64
		      " at_ns=%" SCNu64 "%n",
		      &v[0], &v[1], &v[2], &v[3], &v[4], &end) == 5 &&
	       !strcmp(line + end, "\n");
}

static uint64_t _energy_at(sampler_t *s, uint64_t t_ns)
{
	uint64_t e = 0;

	ck_assert_int_eq(sampler_energy_at(s, t_ns, &e), 0);
	return e;
}

START_TEST(test_prints_the_total_without_a_kick)
{
	char out[512], err[512];
	sampler_status_t st;
	fixture_t f;
	uint64_t v[5], t0, t1;

	_up(&f, true);
	t0 = se_mono_ns();
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--socket",
			      f.path, NULL), 0);
	t1 = se_mono_ns();
	ck_assert_msg(_parse(out, v), "line: %s (stderr: %s)", out, err);
	sampler_status(f.s, &st);
	/* the total runs on past the sample at its power: at at_ns, which
	 * lies inside the tool's run */
	ck_assert_uint_ge(v[4], t0);
	ck_assert_uint_le(v[4], t1);
	ck_assert_uint_ge(v[0], _energy_at(f.s, t0));
	ck_assert_uint_le(v[0], _energy_at(f.s, t1));
	ck_assert_uint_eq(v[1], TOTAL_ID);
	ck_assert_uint_eq(v[2], st.last_sample_ns);
	ck_assert_uint_eq(v[3], POWER_MW);
	/* a question about now, without --fresh, kicks no reading */
	se_sleep_ns(50 * MS);
	ck_assert_int_eq(eqf_reads(), 1);
	eqf_down(&f);
}
END_TEST

START_TEST(test_fresh_waits_for_a_sample_after_the_call)
{
	char out[512], err[512];
	fixture_t f;
	uint64_t v[5], t;

	_up(&f, true);
	se_sleep_ns(20 * MS);
	t = se_mono_ns();
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--fresh",
			      "--socket", f.path, NULL), 0);
	ck_assert_msg(_parse(out, v), "line: %s (stderr: %s)", out, err);
	/* the kicked reading: a sample after the call, 250 W since the
	 * first one, 20 ms and more before */
	ck_assert_int_ge(eqf_reads(), 2);
	ck_assert_uint_ge(v[2], t);
	ck_assert_uint_ge(v[4], v[2]);
	ck_assert_uint_ge(v[0], 5000);
	eqf_down(&f);
}
END_TEST

START_TEST(test_spool_dir_and_node_name_the_socket)
{
	char out[512], err[512];
	fixture_t f;
	uint64_t v[5];

	_up(&f, true);
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err),
			      "--spool-dir", f.dir, "n1", NULL), 0);
	ck_assert_msg(_parse(out, v), "line: %s (stderr: %s)", out, err);
	/* "%n" in the spool dir is the node's name (the message names the
	 * socket it tried) */
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err),
			      "--spool-dir", "/nonexistent/%n", "n1", NULL),
			 1);
	ck_assert_msg(strstr(err, "/nonexistent/n1/slurm-energy-n1.sock"),
		      "stderr: %s", err);
	eqf_down(&f);
}
END_TEST

START_TEST(test_no_total_no_server_bad_usage)
{
	char out[512], err[512], missing[128];
	fixture_t f;

	/* a server without a total hook (share mode): exit 1, said */
	_up(&f, false);
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--socket",
			      f.path, NULL), 1);
	ck_assert_str_eq(out, "");
	ck_assert_msg(strstr(err, "without its node total"), "stderr: %s",
		      err);
	/* nobody serving there */
	snprintf(missing, sizeof(missing), "%s/none.sock", f.dir);
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--socket",
			      missing, NULL), 1);
	ck_assert_msg(strstr(err, "no slurmd serves"), "stderr: %s", err);
	eqf_down(&f);
	/* usage */
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--bogus",
			      NULL), 2);
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err),
			      "--timeout", "0", "n1", NULL), 2);
	ck_assert_int_eq(_run(out, sizeof(out), err, sizeof(err), "--socket",
			      "/x", "n1", NULL), 2);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("energy_query_tool");
	TCase *tc = tcase_create("se-energy-query");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_prints_the_total_without_a_kick);
	tcase_add_test(tc, test_fresh_waits_for_a_sample_after_the_call);
	tcase_add_test(tc, test_spool_dir_and_node_name_the_socket);
	tcase_add_test(tc, test_no_total_no_server_bad_usage);
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
