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
#include "energy_query_fixture.h"

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
	ck_assert_uint_eq(a.period_ns, EQF_PERIOD_NS);
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
		 uint64_t t1_ns, uint64_t *share_mj, uint64_t *last_ns,
		 energy_query_gpu_t *gpu)
{
	(void) gpu;
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
	energy_query_step_t st = { .job_id = 7, .step_id = 0xfffffffbu,
				   .ncpus = 3, .begin = true };
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
	eqf_serve(&f, &(energy_query_hooks_t) { .share = _hook,
						.arg = (void *) 1 });
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

/* The total hook: a fixed total, or a refusal when arg says so. */
static int _total(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		  uint64_t *sample_ns)
{
	if (arg == (void *) 2)
		return -EBUSY;
	*total_mj = 123456789;
	*power_mw = 654321;
	*sample_ns = 777;
	return 0;
}

START_TEST(test_total_hook)
{
	energy_query_step_t st = { .job_id = 7, .step_id = 0, .begin = true };
	fixture_t f;
	energy_query_answer_t a;
	uint64_t t;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	/* no hook: no total */
	t = se_mono_ns();
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.total);
	eqf_serve(&f, &(energy_query_hooks_t) { .total = _total,
						.total_id = 0xabcdef,
						.arg = (void *) 1 });
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(a.total);
	ck_assert_uint_eq(a.total_id, 0xabcdef);
	ck_assert_uint_eq(a.total_mj, 123456789);
	ck_assert_uint_eq(a.total_power_mw, 654321);
	ck_assert_uint_eq(a.total_sample_ns, 777);
	/* the sampler's own answer is still there beside it */
	ck_assert_int_eq(a.rc0, 0);
	ck_assert_uint_ne(a.generation, 0);
	/* a step query carries it too (no share hook: no share) */
	ck_assert_int_eq(energy_query_step(f.path, t, t, &st, SEC, &a), 0);
	ck_assert(a.total && !a.share);
	ck_assert_uint_eq(a.total_mj, 123456789);
	/* a hook that cannot answer now: no total, the query still works */
	eqf_serve(&f, &(energy_query_hooks_t) { .total = _total,
						.total_id = 0xabcdef,
						.arg = (void *) 2 });
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.total);
	ck_assert_uint_eq(a.total_mj, 0);
	/* hook removed */
	eqf_serve(&f, NULL);
	ck_assert_int_eq(energy_query(f.path, t, t, SEC, &a), 0);
	ck_assert(!a.total);
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
	ck_assert_msg(took < ENERGY_QUERY_SERVER_IO_TIMEOUT_NS + 100 * MS,
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
	ck_assert_ptr_null(energy_query_server_start(path, s, SEC, SEC, NULL,
						     err, sizeof(err)));
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

	f.srv = energy_query_server_start(f.path, f.s, SEC, SEC, NULL, err,
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
	ck_assert_ptr_null(energy_query_server_start(f.path, s, SEC, SEC, NULL,
						     err, sizeof(err)));
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
	srv2 = energy_query_server_start(other, s, SEC, SEC, NULL, err,
					 sizeof(err));
	ck_assert_msg(srv2, "%s", err);
	ck_assert_int_eq(energy_query(other, 0, 0, SEC, &a), 0);
	energy_query_server_stop(srv2);

	/* A regular file is never touched. */
	fd = open(other, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_null(energy_query_server_start(other, s, SEC, SEC, NULL,
						     err, sizeof(err)));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(access(other, F_OK), 0);
	unlink(other);
	eqf_down(&f);
}
END_TEST

/* ---------------------------------------------------------- version 4 */

/*
 * The wire of version 3 as an old build has it, written out here (not from
 * energy_query_wire.h): what a step started before the upgrade sends, and what
 * slurmd before the upgrade answers.
 */
typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;
	uint64_t t0_ns;
	uint64_t t1_ns;
	uint32_t flags;
	uint32_t job_id;
	uint32_t step_id;
	uint32_t ncpus;
} old_req_t;

typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;
	int32_t status;
	uint32_t flags;
	int32_t rc0;
	int32_t rc1;
	uint64_t generation;
	uint64_t e0_mj;
	uint64_t e1_mj;
	uint64_t last_sample_ns;
	uint64_t period_ns;
	uint64_t deadline_ns;
	int32_t share_rc;
	uint32_t pad;
	uint64_t share_mj;
	uint64_t share_last_ns;
	uint64_t total_id;
	uint64_t total_mj;
	uint64_t total_power_mw;
	uint64_t total_sample_ns;
} old_rep_t;

#define OLD_REQ_MAGIC	0x53455131u
#define OLD_REP_MAGIC	0x53455231u
#define OLD_SHARE	0x8	/* reply flag */
#define OLD_REQ_STEP	0x1
#define OLD_REQ_BEGIN	0x2
#define V4_REP_SIZE	160	/* a version-4 reply, as the server sends it */

/* Share and GPU hooks that answer from the step's sets, so that what the
 * client reads proves the sets crossed: part_mj is the step's first minor
 * times 1000, count the number of minors in the job's set. */
static int _count_minors(const uint64_t set[ENERGY_QUERY_MINOR_WORDS])
{
	int n = 0;

	for (unsigned m = 0; m < ENERGY_QUERY_MINORS_MAX; m++)
		n += energy_query_minors_has(set, m);
	return n;
}

static int _first_minor(const uint64_t set[ENERGY_QUERY_MINOR_WORDS])
{
	for (unsigned m = 0; m < ENERGY_QUERY_MINORS_MAX; m++)
		if (energy_query_minors_has(set, m))
			return m;
	return -1;
}

static int _gpu_share_hook(void *arg, const energy_query_step_t *step,
			   uint64_t t0_ns, uint64_t t1_ns, uint64_t *share_mj,
			   uint64_t *last_ns, energy_query_gpu_t *gpu)
{
	pthread_mutex_lock(&hook_lock);
	hook_step = *step;
	hook_calls++;
	pthread_mutex_unlock(&hook_lock);
	(void) arg;
	(void) t0_ns;
	*share_mj = 5000;
	*last_ns = t1_ns;	/* final: no kick */
	gpu->metered = true;
	gpu->count = 8;
	if (!step->gpus_known)
		return 0;
	gpu->part = true;
	gpu->part_mj = 1000 * (uint64_t) _first_minor(step->step_minors);
	gpu->e0_mj = _count_minors(step->job_minors);
	return 0;
}

/* Node mode's GPU hook: e0/e1 from the instants; refuses job 99. */
static int _gpu_hook(void *arg, const energy_query_step_t *step,
		     uint64_t t0_ns, uint64_t t1_ns, energy_query_gpu_t *gpu)
{
	(void) arg;
	if (step->job_id == 99) {
		gpu->count = 1234;	/* must not reach the client */
		return -ENOENT;
	}
	gpu->metered = true;
	gpu->count = 2;
	gpu->part = step->gpus_known;
	gpu->e0_mj = t0_ns * 3;
	gpu->e1_mj = t1_ns * 3;
	return 0;
}

START_TEST(test_minor_sets)
{
	uint64_t set[ENERGY_QUERY_MINOR_WORDS] = { 0 };

	ck_assert_int_eq(energy_query_minors_add(set, 0), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 63), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 64), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 255), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 256), -ERANGE);
	ck_assert_uint_eq(set[0], 0x8000000000000001ULL);
	ck_assert_uint_eq(set[1], 1);
	ck_assert_uint_eq(set[2], 0);
	ck_assert_uint_eq(set[3], 0x8000000000000000ULL);
	ck_assert(energy_query_minors_has(set, 64));
	ck_assert(!energy_query_minors_has(set, 65));
	ck_assert(!energy_query_minors_has(set, 256));
	ck_assert_int_eq(_count_minors(set), 4);
}
END_TEST

/* v4 client, v4 server: the sets reach the hook bit for bit, the GPU
 * part comes back; a step that does not know its GPUs sends no set. */
START_TEST(test_v4_round_trip_with_gpu_sets)
{
	energy_query_step_t st = { .job_id = 7, .step_id = 2, .ncpus = 4,
				   .begin = true, .gpus_known = true };
	energy_query_step_t seen;
	energy_query_answer_t a;
	uint64_t t0, t1;
	int calls;
	fixture_t f;

	ck_assert_int_eq(energy_query_minors_add(st.step_minors, 130), 0);
	ck_assert_int_eq(energy_query_minors_add(st.step_minors, 255), 0);
	for (unsigned m = 0; m < ENERGY_QUERY_MINORS_MAX; m += 37)
		ck_assert_int_eq(energy_query_minors_add(st.job_minors, m), 0);
	pthread_mutex_lock(&hook_lock);
	hook_calls = 0;		/* CK_FORK=no (valgrind): one process */
	pthread_mutex_unlock(&hook_lock);
	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	eqf_serve(&f, &(energy_query_hooks_t) { .share = _gpu_share_hook });
	ck_assert_int_eq(energy_query_step(f.path, 5, 6, &st, SEC, &a), 0);
	ck_assert_uint_eq(a.version, 4);
	ck_assert(a.share);
	ck_assert_uint_eq(a.share_mj, 5000);
	ck_assert(a.gpu.metered && a.gpu.part);
	ck_assert_uint_eq(a.gpu.count, 8);
	ck_assert_uint_eq(a.gpu.part_mj, 130000);
	ck_assert_uint_eq(a.gpu.e0_mj, 7);	/* 0, 37, ..., 222 */
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert(seen.gpus_known);
	ck_assert_mem_eq(seen.step_minors, st.step_minors,
			 sizeof(st.step_minors));
	ck_assert_mem_eq(seen.job_minors, st.job_minors,
			 sizeof(st.job_minors));

	/* not known: the sets are not sent, whatever the struct holds */
	st.gpus_known = false;
	ck_assert_int_eq(energy_query_step(f.path, 5, 6, &st, SEC, &a), 0);
	ck_assert(a.gpu.metered && !a.gpu.part);
	ck_assert_uint_eq(a.gpu.part_mj, 0);
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert(!seen.gpus_known);
	ck_assert_int_eq(_count_minors(seen.step_minors), 0);
	ck_assert_int_eq(_count_minors(seen.job_minors), 0);
	ck_assert_int_eq(calls, 2);

	/* node mode: the GPU hook alone, on step queries only */
	eqf_serve(&f, &(energy_query_hooks_t) { .gpus = _gpu_hook });
	st.gpus_known = true;
	ck_assert_int_eq(energy_query_step_known(f.path, 10, 20, &st, SEC, &a),
			 0);
	ck_assert(!a.share && !a.kicked);
	ck_assert(a.gpu.metered && a.gpu.part);
	ck_assert_uint_eq(a.gpu.count, 2);
	ck_assert_uint_eq(a.gpu.e0_mj, 30);
	ck_assert_uint_eq(a.gpu.e1_mj, 60);
	ck_assert_int_eq(energy_query(f.path, 10, 20, SEC, &a), 0);
	ck_assert(!a.gpu.metered && !a.gpu.part);
	ck_assert_uint_eq(a.gpu.count, 0);
	/* a hook that cannot answer leaves the part empty */
	st.job_id = 99;
	ck_assert_int_eq(energy_query_step(f.path, 10, 20, &st, SEC, &a), 0);
	ck_assert_uint_eq(a.gpu.count, 0);
	ck_assert(!a.gpu.part);
	eqf_down(&f);
}
END_TEST

/* Send len bytes of msg raw and read the reply into rep (up to rep_len);
 * the reply's real length. */
static ssize_t _raw_ask(const char *path, const void *msg, size_t len,
			void *rep, size_t rep_len)
{
	ssize_t n;
	int fd = _raw_connect(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(send(fd, msg, len, 0), (ssize_t) len);
	n = recv(fd, rep, rep_len, MSG_TRUNC);
	close(fd);
	return n;
}

/* A step still running from before the upgrade sends version 3: answered,
 * in the version-3 layout it reads, and its GPUs are unknown. */
START_TEST(test_v3_request_answered_in_v3_layout)
{
	old_req_t req = {
		.magic = OLD_REQ_MAGIC, .version = 3, .size = sizeof(req),
		.flags = OLD_REQ_STEP | OLD_REQ_BEGIN,
		.job_id = 7, .step_id = 1, .ncpus = 2,
	};
	unsigned long answered, refused;
	energy_query_step_t seen;
	sampler_status_t sst;
	uint64_t t0, t1;
	old_rep_t rep;
	char buf[512];
	fixture_t f;
	int calls;

	ck_assert_uint_eq(sizeof(req), 40);
	ck_assert_uint_eq(sizeof(rep), 128);
	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	eqf_serve(&f, &(energy_query_hooks_t) { .share = _gpu_share_hook });
	sampler_status(f.s, &sst);
	req.t0_ns = req.t1_ns = sst.last_sample_ns;	/* complete, both */
	ck_assert_int_eq(_raw_ask(f.path, &req, sizeof(req), buf, sizeof(buf)),
			 sizeof(rep));
	memcpy(&rep, buf, sizeof(rep));
	ck_assert_uint_eq(rep.magic, OLD_REP_MAGIC);
	ck_assert_uint_eq(rep.version, 3);
	ck_assert_uint_eq(rep.size, 128);
	ck_assert_int_eq(rep.status, 0);
	ck_assert_int_eq(rep.rc0, 0);
	ck_assert_int_eq(rep.rc1, 0);
	ck_assert_uint_eq(rep.flags, 0x3 | OLD_SHARE);	/* complete, share */
	ck_assert_uint_eq(rep.e0_mj, rep.e1_mj);
	ck_assert_uint_eq(rep.last_sample_ns, sst.last_sample_ns);
	ck_assert_uint_ne(rep.generation, 0);
	ck_assert_uint_eq(rep.period_ns, EQF_PERIOD_NS);
	ck_assert_uint_eq(rep.deadline_ns, 200 * MS);
	ck_assert_uint_eq(rep.share_mj, 5000);
	ck_assert_uint_eq(rep.share_last_ns, sst.last_sample_ns);
	_hook_seen(&seen, &t0, &t1, &calls);
	ck_assert_uint_eq(seen.job_id, 7);
	ck_assert_uint_eq(seen.ncpus, 2);
	ck_assert(seen.begin);
	ck_assert(!seen.gpus_known);

	/* its refusals come in its layout too */
	req.t0_ns = req.t1_ns + 1;
	ck_assert_int_eq(_raw_ask(f.path, &req, sizeof(req), buf, sizeof(buf)),
			 sizeof(rep));
	memcpy(&rep, buf, sizeof(rep));
	ck_assert_uint_eq(rep.version, 3);
	ck_assert_int_eq(rep.status, -EINVAL);
	energy_query_server_counts(f.srv, &answered, &refused);
	ck_assert_uint_eq(answered, 1);
	ck_assert_uint_eq(refused, 1);
	eqf_down(&f);
}
END_TEST

/*
 * slurmd before the upgrade, played by hand: a version-3 server (it
 * refuses any other size or version with a version-3 refusal, -EPROTO),
 * for a given number of connections; it keeps the size of each request.
 * bogus: it answers every request in version 3, status 0 (no server
 * does: a client must not take it for an answer to version 4).
 */
typedef struct {
	int lfd;
	int conns;
	bool bogus;
	ssize_t sizes[8];
	int seen;
	pthread_t thread;
} old_server_t;

static void *_old_server_main(void *arg)
{
	old_server_t *o = arg;

	for (int i = 0; i < o->conns; i++) {
		old_req_t req = { 0 };
		old_rep_t rep = { .magic = OLD_REP_MAGIC, .version = 3,
				  .size = sizeof(rep) };
		int fd = accept(o->lfd, NULL, NULL);
		ssize_t n;

		if (fd < 0)
			break;
		n = recv(fd, &req, sizeof(req), MSG_TRUNC);
		o->sizes[o->seen++] = n;
		if (!o->bogus && (n != sizeof(req) || req.version != 3)) {
			rep.status = -EPROTO;
		} else {
			rep.generation = 77;
			rep.e0_mj = req.t0_ns * 10;
			rep.e1_mj = req.t1_ns * 10;
			rep.flags = 0x3;
		}
		(void) send(fd, &rep, sizeof(rep), MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;
}

static void _old_server_up(old_server_t *o, const char *path, int conns,
			   bool bogus)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(o, 0, sizeof(*o));
	o->conns = conns;
	o->bogus = bogus;
	strcpy(sa.sun_path, path);
	o->lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ck_assert_int_ge(o->lfd, 0);
	ck_assert_int_eq(bind(o->lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(o->lfd, 8), 0);
	ck_assert_int_eq(pthread_create(&o->thread, NULL, _old_server_main, o),
			 0);
}

/* Joined: its sizes are ours to read. */
static void _old_server_down(old_server_t *o, const char *path)
{
	pthread_join(o->thread, NULL);
	close(o->lfd);
	unlink(path);
}

START_TEST(test_v4_client_falls_back_to_v3_server)
{
	energy_query_step_t st = { .job_id = 7, .gpus_known = true };
	char old_path[200];
	energy_query_answer_t a;
	old_server_t o;
	fixture_t f;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	snprintf(old_path, sizeof(old_path), "%s/old.sock", f.dir);
	_old_server_up(&o, old_path, 4, false);

	/* refused in v3: asked again in v3, answered */
	ck_assert_int_eq(energy_query_step(old_path, 2, 3, &st, SEC, &a), 0);
	ck_assert_uint_eq(a.version, 3);
	ck_assert_uint_eq(a.generation, 77);
	ck_assert_uint_eq(a.e0_mj, 20);
	ck_assert_uint_eq(a.e1_mj, 30);
	ck_assert(a.complete0 && a.complete1);
	ck_assert(!a.gpu.metered && !a.gpu.part);
	/* remembered: the next queries ask in v3 at once */
	ck_assert_int_eq(energy_query(old_path, 4, 5, SEC, &a), 0);
	ck_assert_uint_eq(a.e1_mj, 50);
	/* ... at that socket only: the new server is asked in v4 */
	ck_assert_int_eq(energy_query(f.path, 0, 0, SEC, &a), 0);
	ck_assert_uint_eq(a.version, 4);
	ck_assert_int_eq(energy_query_known(old_path, 6, 6, SEC, &a), 0);
	ck_assert_uint_eq(a.version, 3);
	_old_server_down(&o, old_path);
	ck_assert_int_eq(o.seen, 4);
	ck_assert_int_eq(o.sizes[0], 104);	/* v4 first */
	ck_assert_int_eq(o.sizes[1], 40);	/* then v3 */
	ck_assert_int_eq(o.sizes[2], 40);	/* remembered */
	ck_assert_int_eq(o.sizes[3], 40);
	eqf_down(&f);
}
END_TEST

/* A question sent and collected later (a step's poll as its tasks start)
 * to an old server: asked again in version 3, within its deadline. */
START_TEST(test_sent_question_falls_back_to_v3_server)
{
	char old_path[200];
	energy_query_asking_t q;
	energy_query_answer_t a;
	old_server_t o;
	fixture_t f;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	snprintf(old_path, sizeof(old_path), "%s/old.sock", f.dir);
	_old_server_up(&o, old_path, 2, false);
	ck_assert_int_eq(energy_query_send(old_path, 2, 3, NULL, 0, SEC, &q),
			 0);
	ck_assert_int_ge(q.fd, 0);
	ck_assert_int_eq(energy_query_collect(&q, &a), 0);
	ck_assert_int_eq(q.fd, -1);
	ck_assert_uint_eq(a.version, 3);
	ck_assert_uint_eq(a.e0_mj, 20);
	ck_assert_uint_eq(a.e1_mj, 30);
	/* collected once: a second collect has nothing to read */
	ck_assert_int_eq(energy_query_collect(&q, &a), -EBADF);
	_old_server_down(&o, old_path);
	ck_assert_int_eq(o.seen, 2);
	ck_assert_int_eq(o.sizes[0], 104);
	ck_assert_int_eq(o.sizes[1], 40);
	eqf_down(&f);
}
END_TEST

/* A version-3 reply to a version-4 question is only ever a refusal. */
START_TEST(test_v3_answer_to_v4_is_not_an_answer)
{
	char dir[64] = "/tmp/se-eq-XXXXXX", path[160];
	energy_query_answer_t a;
	old_server_t o;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bogus.sock", dir);
	_old_server_up(&o, path, 2, true);
	ck_assert_int_eq(energy_query(path, 2, 3, SEC, &a), -EPROTO);
	/* not taken for an old server: asked in v4 again */
	ck_assert_int_eq(energy_query(path, 2, 3, SEC, &a), -EPROTO);
	_old_server_down(&o, path);
	ck_assert_int_eq(o.seen, 2);
	ck_assert_int_eq(o.sizes[0], 104);
	ck_assert_int_eq(o.sizes[1], 104);
	rmdir(dir);
}
END_TEST

/* Sizes and versions that are neither 3 nor 4 are refused, in v4. */
START_TEST(test_wrong_sizes_and_versions_refused)
{
	static const struct {
		uint16_t version, size;
		size_t sent;
	} bad[] = {
		{ 4, 104, 40 },		/* v4 header, v3 size */
		{ 4, 104, 41 },
		{ 4, 40, 40 },		/* v4 claiming v3's size */
		{ 3, 40, 104 },		/* v3 header, v4 size */
		{ 3, 104, 104 },
		{ 4, 104, 200 },	/* too long */
		{ 5, 104, 104 },	/* a later version */
		{ 2, 40, 40 },		/* an earlier one */
	};
	unsigned long answered, refused;
	char msg[256] = { 0 }, buf[512];
	old_rep_t rep;
	fixture_t f;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		old_req_t h = { .magic = OLD_REQ_MAGIC, .version = bad[i].version,
				.size = bad[i].size };

		memcpy(msg, &h, sizeof(h));
		ck_assert_int_eq(_raw_ask(f.path, msg, bad[i].sent, buf,
					  sizeof(buf)), V4_REP_SIZE);
		memcpy(&rep, buf, sizeof(rep));
		ck_assert_uint_eq(rep.version, 4);
		ck_assert_uint_eq(rep.size, V4_REP_SIZE);
		ck_assert_int_eq(rep.status, -EPROTO);
	}
	energy_query_server_counts(f.srv, &answered, &refused);
	ck_assert_uint_eq(answered, 0);
	ck_assert_uint_eq(refused, sizeof(bad) / sizeof(bad[0]));
	eqf_down(&f);
}
END_TEST

/* ------------------------------------------------------------ holds */

/* A held question (a settling step's) is answered by the reading it
 * kicked, the moment that lands: one question, not ask-pause-ask, and
 * long before the hold would have run out. */
START_TEST(test_held_question_answered_when_reading_lands)
{
	fixture_t f;
	energy_query_answer_t a;
	sampler_status_t st;
	uint64_t t0, t1, took, expect;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	sampler_status(f.s, &st);
	t0 = st.last_sample_ns;
	se_sleep_ns(20 * MS);
	t1 = se_mono_ns();
	ck_assert_int_eq(energy_query_ask(f.path, t0, t1, NULL,
					  ENERGY_QUERY_HOLD, SEC, &a), 0);
	took = se_mono_ns() - t1;
	ck_assert(a.complete0 && a.complete1);
	ck_assert(a.kicked);
	ck_assert_int_eq(eqf_reads(), 2);
	ck_assert_uint_gt(a.last_sample_ns, t1);
	ck_assert_msg(took < ENERGY_QUERY_SERVER_HOLD_MAX_NS / 2,
		      "answered after %.3f s: by the hold's end, not the reading",
		      (double) took / SEC);
	expect = POWER_MW * (t1 - t0) / SEC;
	ck_assert_uint_le(a.e1_mj - a.e0_mj, expect + 2);
	ck_assert_uint_ge(a.e1_mj - a.e0_mj + 2, expect);
	eqf_down(&f);
}
END_TEST

/* No reading comes (asked without a kick, none on its way): the held
 * question is answered as it stands once the hold runs out, never later,
 * and reads no meter. */
START_TEST(test_held_question_bounded_without_reading)
{
	fixture_t f;
	energy_query_answer_t a;
	uint64_t t1, took;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	t1 = se_mono_ns();
	ck_assert_int_eq(energy_query_ask(f.path, 0, t1, NULL,
					  ENERGY_QUERY_HOLD |
					  ENERGY_QUERY_NO_KICK, SEC, &a), 0);
	took = se_mono_ns() - t1;
	ck_assert(!a.complete1);
	ck_assert(!a.kicked);
	ck_assert_int_eq(eqf_reads(), 1);
	ck_assert_msg(took >= ENERGY_QUERY_SERVER_HOLD_MAX_NS - 5 * MS &&
		      took < ENERGY_QUERY_SERVER_HOLD_MAX_NS + 100 * MS,
		      "held %.3f s, the hold is %.3f s", (double) took / SEC,
		      (double) ENERGY_QUERY_SERVER_HOLD_MAX_NS / SEC);
	eqf_down(&f);
}
END_TEST

/* Instants before the sampler's first sample ever (a step begun before
 * this slurmd started) never complete: such a question is not held. */
START_TEST(test_question_before_first_sample_not_held)
{
	fixture_t f;
	energy_query_answer_t a;
	sampler_status_t st;
	uint64_t start, took;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	sampler_status(f.s, &st);
	start = se_mono_ns();
	ck_assert_int_eq(energy_query_ask(f.path, 1, st.first_sample_ns - 1,
					  NULL, ENERGY_QUERY_HOLD, SEC, &a), 0);
	took = se_mono_ns() - start;
	ck_assert(!a.complete0 && !a.complete1);
	ck_assert_int_eq(a.rc1, -ENODATA);
	ck_assert(!a.kicked);
	ck_assert_msg(took < ENERGY_QUERY_SERVER_HOLD_MAX_NS / 2, "held %.3f s",
		      (double) took / SEC);
	eqf_down(&f);
}
END_TEST

/*
 * A held question sent and read later (a step's poll at its tasks' end,
 * read by the settle): the server took it when sent, so the reading it
 * kicked came then, not when its answer was read, and the answer is the
 * one energy_query_ask() gives.  One dropped unread costs the server
 * nothing but its answer.
 */
START_TEST(test_sent_question_answered_from_when_sent)
{
	fixture_t f;
	energy_query_asking_t q;
	energy_query_answer_t a;
	sampler_status_t st;
	uint64_t t0, t1, expect;
	unsigned long answered, refused;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	sampler_status(f.s, &st);
	t0 = st.last_sample_ns;
	se_sleep_ns(20 * MS);
	t1 = se_mono_ns();
	ck_assert_int_eq(energy_query_send(f.path, t0, t1, NULL,
					   ENERGY_QUERY_HOLD, SEC, &q), 0);
	se_sleep_ns(100 * MS);
	ck_assert_int_eq(energy_query_collect(&q, &a), 0);
	ck_assert(a.complete0 && a.complete1);
	ck_assert(a.kicked);
	ck_assert_int_eq(eqf_reads(), 2);
	ck_assert_uint_gt(a.last_sample_ns, t1);
	ck_assert_msg(a.last_sample_ns < t1 + 50 * MS,
		      "the reading came %.3f s after the question's instant",
		      (double) (a.last_sample_ns - t1) / SEC);
	expect = POWER_MW * (t1 - t0) / SEC;
	ck_assert_uint_le(a.e1_mj - a.e0_mj, expect + 2);
	ck_assert_uint_ge(a.e1_mj - a.e0_mj + 2, expect);

	ck_assert_int_eq(energy_query_send(f.path, t0, se_mono_ns(), NULL,
					   ENERGY_QUERY_NO_KICK, SEC, &q), 0);
	energy_query_drop(&q);
	ck_assert_int_eq(q.fd, -1);
	energy_query_drop(&q);		/* twice: nothing */
	ck_assert_int_eq(energy_query(f.path, t0, t1, SEC, &a), 0);
	energy_query_server_counts(f.srv, &answered, &refused);
	ck_assert_uint_eq(refused, 0);
	eqf_down(&f);
}
END_TEST

typedef struct {
	const char *path;
	uint64_t t0, t1;
	unsigned how;
	int rc;
	uint64_t took;
	energy_query_answer_t a;
} held_ask_t;

static void *_held_ask(void *arg)
{
	held_ask_t *h = arg;

	h->rc = energy_query_ask(h->path, h->t0, h->t1, NULL, h->how, SEC,
				 &h->a);
	h->took = se_mono_ns() - h->t1;
	return NULL;
}

/* Ask a held question from the first sample to now, without a kick, in a
 * thread, and give the server time to take it in. */
static void _held_ask_start(pthread_t *th, held_ask_t *h, fixture_t *f)
{
	sampler_status_t st;

	sampler_status(f->s, &st);
	h->path = f->path;
	h->t0 = st.first_sample_ns;
	h->t1 = se_mono_ns();
	h->how = ENERGY_QUERY_HOLD | ENERGY_QUERY_NO_KICK;
	ck_assert_int_eq(pthread_create(th, NULL, _held_ask, h), 0);
	se_sleep_ns(30 * MS);
}

/* While a question is held the server answers others at once, and the
 * reading another question kicks answers the held one too. */
START_TEST(test_hold_leaves_others_served)
{
	fixture_t f;
	energy_query_answer_t b;
	held_ask_t h = { 0 };
	pthread_t th;
	uint64_t start, took;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	_held_ask_start(&th, &h, &f);
	start = se_mono_ns();
	ck_assert_int_eq(energy_query_known(f.path, 0, start, SEC, &b), 0);
	took = se_mono_ns() - start;
	ck_assert_msg(took < ENERGY_QUERY_SERVER_HOLD_MAX_NS / 2,
		      "a plain question waited %.3f s behind a held one",
		      (double) took / SEC);
	ck_assert(!b.complete1);
	ck_assert_int_eq(eqf_reads(), 1);
	/* this one kicks: its reading lands after both instants */
	ck_assert_int_eq(energy_query(f.path, 0, se_mono_ns(), SEC, &b), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(h.rc, 0);
	ck_assert(h.a.complete1);
	ck_assert_uint_gt(h.a.last_sample_ns, h.t1);
	ck_assert_msg(h.took < ENERGY_QUERY_SERVER_HOLD_MAX_NS,
		      "held %.3f s: answered by the hold's end, not the reading",
		      (double) h.took / SEC);
	eqf_down(&f);
}
END_TEST

/* A server stopping (slurmd reconfigured) answers what it holds as it
 * stands: the step keeps an answer, not a reset connection. */
START_TEST(test_stop_answers_held_questions)
{
	fixture_t f;
	held_ask_t h = { 0 };
	pthread_t th;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	_held_ask_start(&th, &h, &f);
	energy_query_server_stop(f.srv);
	f.srv = NULL;
	pthread_join(th, NULL);
	ck_assert_int_eq(h.rc, 0);
	ck_assert(!h.a.complete1);
	ck_assert_msg(h.took < ENERGY_QUERY_SERVER_HOLD_MAX_NS,
		      "answered %.3f s after asking", (double) h.took / SEC);
	eqf_down(&f);
}
END_TEST

/* A share hook that splits up to the sampler's newest sample, as slurmd's
 * does after each reading. */
static int _split_to_newest(void *arg, const energy_query_step_t *step,
			    uint64_t t0_ns, uint64_t t1_ns, uint64_t *share_mj,
			    uint64_t *last_ns, energy_query_gpu_t *gpu)
{
	sampler_status_t st;

	(void) step;
	(void) t0_ns;
	(void) t1_ns;
	(void) gpu;
	sampler_status(arg, &st);
	*last_ns = st.last_sample_ns;
	*share_mj = 77;
	return 0;
}

/* A held share question (a settling step in share mode) is answered once
 * the split covers its end, after the reading it kicked. */
START_TEST(test_held_share_answered_when_split_covers_end)
{
	energy_query_step_t st = { .job_id = 7, .step_id = 0, .end = true };
	fixture_t f;
	energy_query_answer_t a;
	uint64_t t1;

	eqf_up(&f, "/tmp/se-eq-XXXXXX");
	eqf_serve(&f, &(energy_query_hooks_t) { .share = _split_to_newest,
						.arg = f.s });
	se_sleep_ns(10 * MS);
	t1 = se_mono_ns();
	ck_assert_int_eq(energy_query_ask(f.path, 0, t1, &st,
					  ENERGY_QUERY_HOLD, SEC, &a), 0);
	ck_assert(a.share);
	ck_assert_int_eq(a.share_rc, 0);
	ck_assert_uint_ge(a.share_last_ns, t1);
	ck_assert_int_eq(eqf_reads(), 2);
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
	tcase_add_test(tc, test_total_hook);
	tcase_add_test(tc, test_random_id_never_zero_and_differs);
	tcase_add_test(tc, test_silent_client_does_not_block);
	tcase_add_test(tc, test_garbage_refused);
	tcase_add_test(tc, test_wrong_peer_refused);
	tcase_add_test(tc, test_socket_mode_0600);
	tcase_add_test(tc, test_path_too_long);
	tcase_add_test(tc, test_stop_unlinks_and_restart_is_new_generation);
	tcase_add_test(tc, test_stale_socket_replaced_other_file_kept);
	tcase_add_test(tc, test_minor_sets);
	tcase_add_test(tc, test_v4_round_trip_with_gpu_sets);
	tcase_add_test(tc, test_v3_request_answered_in_v3_layout);
	tcase_add_test(tc, test_v4_client_falls_back_to_v3_server);
	tcase_add_test(tc, test_v3_answer_to_v4_is_not_an_answer);
	tcase_add_test(tc, test_wrong_sizes_and_versions_refused);
	tcase_add_test(tc, test_held_question_answered_when_reading_lands);
	tcase_add_test(tc, test_held_question_bounded_without_reading);
	tcase_add_test(tc, test_question_before_first_sample_not_held);
	tcase_add_test(tc, test_hold_leaves_others_served);
	tcase_add_test(tc, test_stop_answers_held_questions);
	tcase_add_test(tc, test_held_share_answered_when_split_covers_end);
	tcase_add_test(tc, test_sent_question_answered_from_when_sent);
	tcase_add_test(tc, test_sent_question_falls_back_to_v3_server);
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
