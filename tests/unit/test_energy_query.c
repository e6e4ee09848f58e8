/*
 * test_energy_query.c - the energy query channel against a real sampler.
 *
 * The sampler reads a fake meter at constant power with a long period, so
 * the only readings after the first are the ones a query's kick asks for:
 * an instant past the newest sample is "incomplete" until the kicked
 * reading exists.  The server runs on a socket in a fresh temporary dir.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EQF_POWER_MW	1000000ULL	/* 1 kW */
#include "eq_fixture.h"

#define MS	SE_NS_PER_MS
#define SEC	SE_NS_PER_SEC
#define POWER_MW	EQF_POWER_MW

/* Connect without the client library; -1 on failure. */
static int _raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	strcpy(sa.sun_path, path);
	if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

START_TEST(test_round_trip_complete_after_kick)
{
	fixture_t f;
	energy_query_answer_t a, b;
	sampler_status_t st;
	uint64_t t0, t1, expect;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	sampler_status(f.s, &st);
	t0 = st.last_sample_ns;		/* on the first sample: complete */
	se_sleep_ns(50 * MS);
	t1 = se_mono_ns();		/* past the newest sample */

	ck_assert_int_eq(energy_query(f.path, t0, t1, SEC, &a), 0);
	ck_assert(a.complete0);
	ck_assert(!a.complete1);
	ck_assert(a.kicked);
	ck_assert_uint_eq(a.period_ns, 100 * SEC);
	ck_assert_uint_eq(a.deadline_ns, 200 * MS);
	ck_assert_uint_ne(a.generation, 0);

	/* The kick brings the reading after t1, long before the tick. */
	eqf_wait_reads(2);
	ck_assert_int_eq(energy_query(f.path, t0, t1, SEC, &b), 0);
	ck_assert(b.complete0 && b.complete1);
	ck_assert(!b.kicked);
	ck_assert_uint_eq(b.generation, a.generation);
	ck_assert_uint_gt(b.last_sample_ns, t1);
	expect = POWER_MW * (t1 - t0) / SEC;
	ck_assert_uint_le(b.e1_mj - b.e0_mj, expect + 2);
	ck_assert_uint_ge(b.e1_mj - b.e0_mj + 2, expect);
	ck_assert_uint_eq(b.e0_mj, a.e0_mj);	/* history, final */
	eqf_down(&f);
}
END_TEST

/* A question about what is known (a profile sample, a poll after the end)
 * reads no meter: the instant past the newest sample stays incomplete,
 * and no reading comes, until a boundary's query asks for one. */
START_TEST(test_known_query_kicks_no_reading)
{
	fixture_t f;
	energy_query_answer_t a, b;
	sampler_status_t st;
	uint64_t t0, t1;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	sampler_status(f.s, &st);
	t0 = st.last_sample_ns;
	se_sleep_ns(20 * MS);
	t1 = se_mono_ns();

	ck_assert_int_eq(energy_query_known(f.path, t0, t1, SEC, &a), 0);
	ck_assert(a.complete0);
	ck_assert(!a.complete1);
	ck_assert(!a.kicked);
	ck_assert_uint_eq(a.last_sample_ns, t0);
	/* a kicked read would land within milliseconds (see above) */
	se_sleep_ns(100 * MS);
	ck_assert_int_eq(eqf_reads(), 1);

	ck_assert_int_eq(energy_query(f.path, t0, t1, SEC, &b), 0);
	ck_assert(b.kicked);
	eqf_wait_reads(2);
	eqf_down(&f);
}
END_TEST

/* The share hook (attribution): the step's fields reach it, its answer
 * comes back, and a share not final for t1 kicks a reading.  The hook runs
 * on the server's thread: what it saw is kept under hook_lock (the answer
 * on the socket orders it already, but helgrind cannot see that order). */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static energy_query_step_t hook_step;
static uint64_t hook_t0, hook_t1;
static int hook_calls;

static int _hook(void *arg, const energy_query_step_t *step, uint64_t t0_ns,
		 uint64_t t1_ns, uint64_t *share_mj, uint64_t *last_ns)
{
	pthread_mutex_lock(&hook_lock);
	hook_step = *step;
	hook_t0 = t0_ns;
	hook_t1 = t1_ns;
	hook_calls++;
	pthread_mutex_unlock(&hook_lock);
	*share_mj = 4242 + (uint64_t) (uintptr_t) arg;
	*last_ns = 1000;
	return step->job_id == 99 ? -ENOENT : 0;
}

static void _hook_seen(energy_query_step_t *step, uint64_t *t0, uint64_t *t1,
		       int *calls)
{
	pthread_mutex_lock(&hook_lock);
	*step = hook_step;
	*t0 = hook_t0;
	*t1 = hook_t1;
	*calls = hook_calls;
	pthread_mutex_unlock(&hook_lock);
}

START_TEST(test_share_hook)
{
	energy_query_step_t st = { .job_id = 7, .step_id = 0xfffffffbu, .ncpus = 3,
			 .begin = true };
	fixture_t f;
	energy_query_answer_t a;
	energy_query_step_t seen;
	uint64_t t, t0, t1;
	int calls;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	/* no hook: no share in the answer */
	t = se_mono_ns();
	ck_assert_int_eq(energy_query_step(f.path, t, t, &st, SEC, &a), 0);
	ck_assert(!a.share);
	energy_query_server_set_share(f.srv, _hook, (void *) 1);
	pthread_mutex_lock(&hook_lock);
	hook_calls = 0;
	pthread_mutex_unlock(&hook_lock);
	ck_assert_int_eq(energy_query_step(f.path, 5, 2000, &st, SEC, &a), 0);
	ck_assert(a.share);
	ck_assert_int_eq(a.share_rc, 0);
	ck_assert_uint_eq(a.share_mj, 4243);
	ck_assert_uint_eq(a.share_last_ns, 1000);
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert_int_eq(calls, 1);
	ck_assert_uint_eq(seen.job_id, 7);
	ck_assert_uint_eq(seen.step_id, 0xfffffffbu);
	ck_assert_uint_eq(seen.ncpus, 3);
	ck_assert(seen.begin && !seen.end);
	ck_assert_uint_eq(t0, 5);
	ck_assert_uint_eq(t1, 2000);
	/* last 1000 < t1 2000: the sampler was kicked */
	eqf_wait_reads(2);
	st.job_id = 99;
	st.begin = false;
	st.end = true;
	ck_assert_int_eq(energy_query_step(f.path, 5, 6, &st, SEC, &a), 0);
	ck_assert_int_eq(a.share_rc, -ENOENT);
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert_int_eq(calls, 2);
	ck_assert(seen.end && !seen.begin);
	/* a plain query never calls the hook */
	ck_assert_int_eq(energy_query(f.path, 5, 6, SEC, &a), 0);
	ck_assert(!a.share);
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert_int_eq(calls, 2);
	eqf_down(&f);
}
END_TEST

/* The figure hook: a fixed figure, or a refusal when arg says so. */
static int _figure(void *arg, uint64_t *figure_mj, uint64_t *power_mw,
		   uint64_t *sample_ns)
{
	if (arg == (void *) 2)
		return -EBUSY;
	*figure_mj = 123456789;
	*power_mw = 654321;
	*sample_ns = 777;
	return 0;
}

START_TEST(test_figure_hook)
{
	energy_query_step_t st = { .job_id = 7, .step_id = 0, .begin = true };
	fixture_t f;
	energy_query_answer_t a;
	uint64_t t;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	/* no hook: no figure */
	t = se_mono_ns();
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.figure);
	energy_query_server_set_figure(f.srv, _figure, (void *) 1, 0xabcdef);
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(a.figure);
	ck_assert_uint_eq(a.figure_id, 0xabcdef);
	ck_assert_uint_eq(a.figure_mj, 123456789);
	ck_assert_uint_eq(a.figure_power_mw, 654321);
	ck_assert_uint_eq(a.figure_sample_ns, 777);
	/* the sampler's own answer is still there beside it */
	ck_assert_int_eq(a.rc0, 0);
	ck_assert_uint_ne(a.generation, 0);
	/* a step query carries it too (no share hook: no share) */
	ck_assert_int_eq(energy_query_step(f.path, t, t, &st, SEC, &a), 0);
	ck_assert(a.figure && !a.share);
	ck_assert_uint_eq(a.figure_mj, 123456789);
	/* a hook that cannot answer now: no figure, the query still works */
	energy_query_server_set_figure(f.srv, _figure, (void *) 2, 0xabcdef);
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.figure);
	ck_assert_uint_eq(a.figure_mj, 0);
	/* hook removed */
	energy_query_server_set_figure(f.srv, NULL, NULL, 0);
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.figure);
	eqf_down(&f);
}
END_TEST

START_TEST(test_random_id_never_zero_and_differs)
{
	uint64_t a = energy_query_random_id(), b = energy_query_random_id();

	ck_assert_uint_ne(a, 0);
	ck_assert_uint_ne(b, 0);
	ck_assert_uint_ne(a, b);
}
END_TEST

START_TEST(test_one_instant_and_bad_order)
{
	fixture_t f;
	energy_query_answer_t a;
	uint64_t t;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	t = se_mono_ns();	/* after the first sample: it can complete */
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(a.kicked);
	eqf_wait_reads(2);
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(a.complete0 && a.complete1);
	ck_assert_uint_eq(a.e0_mj, a.e1_mj);
	ck_assert_int_eq(energy_query(f.path, t + 1, t, SEC, &a), -EINVAL);
	eqf_down(&f);
}
END_TEST

START_TEST(test_silent_client_does_not_block)
{
	fixture_t f;
	energy_query_answer_t a;
	uint64_t start, took;
	char buf[8];
	int fd;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	fd = _raw_connect(f.path);
	ck_assert_int_ge(fd, 0);
	/* The server is busy with the silent one: we still get an answer
	 * within its I/O timeout, not our own (1 s). */
	start = se_mono_ns();
	ck_assert_int_eq(energy_query(f.path, 0, 0, SEC, &a), 0);
	took = se_mono_ns() - start;
	ck_assert_msg(took < EQ_SERVER_IO_TIMEOUT_NS + 100 * MS,
		      "query took %.3f s", (double) took / SEC);
	/* and the silent one was dropped, unanswered */
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);
	eqf_down(&f);
}
END_TEST

START_TEST(test_garbage_refused)
{
	fixture_t f;
	unsigned long answered, refused;
	char buf[256];
	int fd;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	fd = _raw_connect(f.path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(send(fd, "hello", 5, 0), 5);
	/* a reply (status -EPROTO), then the server closes */
	ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);
	energy_query_server_counts(f.srv, &answered, &refused);
	ck_assert_uint_eq(answered, 0);
	ck_assert_uint_eq(refused, 1);
	eqf_down(&f);
}
END_TEST

START_TEST(test_wrong_peer_refused)
{
	fixture_t f;
	energy_query_answer_t a;
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return;		/* needs root to be another uid */
	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	/* Past the file mode, so that the uid check is what refuses. */
	ck_assert_int_eq(chmod(f.dir, 0755), 0);
	ck_assert_int_eq(chmod(f.path, 0666), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setuid(65534))
			_exit(2);
		_exit(energy_query(f.path, 0, 0, SEC, &a) == -EACCES ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	eqf_down(&f);
}
END_TEST

START_TEST(test_socket_mode_0600)
{
	fixture_t f;
	struct stat sb;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	ck_assert_int_eq(stat(f.path, &sb), 0);
	ck_assert(S_ISSOCK(sb.st_mode));
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	eqf_down(&f);
}
END_TEST

START_TEST(test_path_too_long)
{
	char dir[200], path[300], err[256] = "";
	energy_query_answer_t a;
	sampler_t *s = (sampler_t *) 1;	/* never used: refused first */

	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	ck_assert_int_eq(energy_query_socket_path(dir, "n1", path, sizeof(path)),
			 -ENAMETOOLONG);
	ck_assert_int_eq(energy_query_socket_path(dir, "n1", path, 16), -ENAMETOOLONG);
	ck_assert_int_eq(energy_query_socket_path("", "n1", path, sizeof(path)),
			 -EINVAL);
	snprintf(path, sizeof(path), "%s/slurm-energy-n1.sock", dir);
	ck_assert_ptr_null(energy_query_server_start(path, s, SEC, SEC, err,
						     sizeof(err)));
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_msg(strstr(err, "at most 107") && strstr(err, "SlurmdSpoolDir"),
		      "message: %s", err);
	ck_assert_int_eq(energy_query(path, 0, 0, SEC, &a), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_stop_unlinks_and_restart_is_new_generation)
{
	fixture_t f;
	energy_query_answer_t a;
	uint64_t gen;
	char err[256];

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	ck_assert_int_eq(energy_query(f.path, 0, 0, SEC, &a), 0);
	gen = a.generation;
	energy_query_server_stop(f.srv);
	ck_assert_int_eq(access(f.path, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(energy_query(f.path, 0, 0, SEC, &a), -ENOENT);

	f.srv = energy_query_server_start(f.path, f.s, SEC, SEC, err,
					  sizeof(err));
	ck_assert_msg(f.srv, "%s", err);
	ck_assert_int_eq(energy_query(f.path, 0, 0, SEC, &a), 0);
	ck_assert_uint_ne(a.generation, gen);
	eqf_down(&f);
}
END_TEST

START_TEST(test_stale_socket_replaced_other_file_kept)
{
	fixture_t f;
	energy_query_answer_t a;
	char err[256] = "", other[160];
	sampler_t *s;
	energy_query_server_t *srv2;
	int fd;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	/* A second server on a live socket is refused. */
	s = f.s;
	ck_assert_ptr_null(energy_query_server_start(f.path, s, SEC, SEC, err,
						     sizeof(err)));
	ck_assert_int_eq(errno, EADDRINUSE);

	/* A socket file left by a dead server is replaced. */
	snprintf(other, sizeof(other), "%s/stale.sock", f.dir);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		strcpy(sa.sun_path, other);
		ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa,
				      sizeof(sa)), 0);
		close(fd);	/* bound, never listened: stale */
	}
	srv2 = energy_query_server_start(other, s, SEC, SEC, err, sizeof(err));
	ck_assert_msg(srv2, "%s", err);
	ck_assert_int_eq(energy_query(other, 0, 0, SEC, &a), 0);
	energy_query_server_stop(srv2);

	/* A regular file is never touched. */
	fd = open(other, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_null(energy_query_server_start(other, s, SEC, SEC, err,
						     sizeof(err)));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(access(other, F_OK), 0);
	unlink(other);
	eqf_down(&f);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("energy_query");
	TCase *tc = tcase_create("channel");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_round_trip_complete_after_kick);
	tcase_add_test(tc, test_known_query_kicks_no_reading);
	tcase_add_test(tc, test_one_instant_and_bad_order);
	tcase_add_test(tc, test_share_hook);
	tcase_add_test(tc, test_figure_hook);
	tcase_add_test(tc, test_random_id_never_zero_and_differs);
	tcase_add_test(tc, test_silent_client_does_not_block);
	tcase_add_test(tc, test_garbage_refused);
	tcase_add_test(tc, test_wrong_peer_refused);
	tcase_add_test(tc, test_socket_mode_0600);
	tcase_add_test(tc, test_path_too_long);
	tcase_add_test(tc, test_stop_unlinks_and_restart_is_new_generation);
	tcase_add_test(tc, test_stale_socket_replaced_other_file_kept);
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
