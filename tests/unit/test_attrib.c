/*
 * test_attrib.c - energy attribution on shared nodes (attrib.h) and the
 * cgroup CPU-time reader it feeds on (cg_cpu.h), on fixture trees of both
 * Slurm layouts (cgroup v1 and v2) made in a temporary directory.
 *
 * One test program, though over 800 lines: each case is short, all share
 * the fixture trees.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attrib.h"
#include "cg_cpu.h"
#include "se_time.h"
#include "tmp_file.h"

#define S	SE_NS_PER_SEC

/*
 * Assertions for the property test's loops.  Check records every ck_assert
 * it passes (a write to its log file, or its pipe when forked): 1.2 million
 * in the property test, 2.5 s here and 160 s under valgrind (7 s without).
 * These tell Check only when the comparison fails, with both sides' text
 * and values.
 */
#define PROP_ASSERT_OP(X, OP, Y) do {					\
	uintmax_t _x = (uintmax_t)(X), _y = (uintmax_t)(Y);		\
	if (!(_x OP _y))						\
		ck_abort_msg("%s %s %s: %jd vs %jd", #X, #OP, #Y,	\
			     (intmax_t)_x, (intmax_t)_y);		\
} while (0)
#define PROP_ASSERT_EQ(X, Y) PROP_ASSERT_OP(X, ==, Y)
#define PROP_ASSERT_LE(X, Y) PROP_ASSERT_OP(X, <=, Y)
#define PROP_ASSERT_GE(X, Y) PROP_ASSERT_OP(X, >=, Y)

static char tmp[64];

/* ------------------------------------------------------------ fixtures */

static void _mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* Write text into tmp/rel, making its directories. */
static void _put(const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	strcpy(dir, path);
	*strrchr(dir, '/') = '\0';
	_mkdirs(dir);
	tmp_file_write(path, text);
}

static void _setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/test_attrib.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void _teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static const cg_entry_t *_find(const cg_scan_t *s, uint32_t job,
			       uint32_t step)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].job_id == job && s->e[i].step_id == step)
			return &s->e[i];
	return NULL;
}

/* ------------------------------------------------------------ reader */

START_TEST(test_step_names)
{
	uint32_t id;

	ck_assert_int_eq(cg_step_id("batch", &id), 0);
	ck_assert_uint_eq(id, CG_STEP_BATCH);
	ck_assert_int_eq(cg_step_id("extern", &id), 0);
	ck_assert_uint_eq(id, 0xfffffffcu);
	ck_assert_int_eq(cg_step_id("interactive", &id), 0);
	ck_assert_int_eq(cg_step_id("12", &id), 0);
	ck_assert_uint_eq(id, 12);
	ck_assert_int_eq(cg_step_id("3+1", &id), 0);
	ck_assert_uint_eq(id, 3);
	ck_assert_int_eq(cg_step_id("x", &id), -EINVAL);
	ck_assert_int_eq(cg_step_id("1x", &id), -EINVAL);
	ck_assert_int_eq(cg_step_id("", &id), -EINVAL);
}
END_TEST

START_TEST(test_count_cpus)
{
	uint32_t n = 99;

	ck_assert_int_eq(cg_count_cpus("0-3,8,10-11\n", &n), 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_int_eq(cg_count_cpus("5", &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(cg_count_cpus("\n", &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(cg_count_cpus("3-1", &n), -EINVAL);
	ck_assert_int_eq(cg_count_cpus("a", &n), -EINVAL);
	ck_assert_int_eq(cg_count_cpus("1,,2", &n), -EINVAL);
}
END_TEST

/* Slurm 22.05/24.11 cgroup v1: cpuacct/slurm_<node>/uid_U/job_J/step_S. */
START_TEST(test_scan_v1)
{
	char root[PATH_MAX];
	cg_scan_t s = { 0 };
	const cg_entry_t *e;

	_put("cpuacct/slurm_n1/cpuacct.usage", "900000000000\n");
	_put("cpuacct/slurm_n1/uid_1000/cpuacct.usage", "70000\n");
	_put("cpuacct/slurm_n1/uid_1000/job_5/cpuacct.usage", "60000\n");
	_put("cpuacct/slurm_n1/uid_1000/job_5/step_0/cpuacct.usage", "40000\n");
	_put("cpuacct/slurm_n1/uid_1000/job_5/step_0/task_0/cpuacct.usage",
	     "40000\n");
	_put("cpuacct/slurm_n1/uid_1000/job_5/step_batch/cpuacct.usage",
	     "15000\n");
	_put("cpuacct/slurm_n1/uid_1000/job_5/step_extern/cpuacct.usage",
	     "5\n");
	_put("cpuacct/slurm_n1/uid_1001/job_6/cpuacct.usage", "1\n");
	_put("cpuacct/slurm_n1/uid_1001/job_6/step_2/cpuacct.usage", "1\n");
	/* a step dir whose file vanished (ended during the walk) */
	_put("cpuacct/slurm_n1/uid_1001/job_6/step_3/cgroup.procs", "");
	_put("cpuset/slurm_n1/cpuset.cpus", "0-7\n");
	_put("cpuset/slurm_n1/uid_1000/job_5/cpuset.cpus", "2-3\n");

	snprintf(root, sizeof(root), "%s/cpuacct/slurm_n1", tmp);
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert(s.have_root);
	ck_assert_uint_eq(s.root_cpu_ns, 900000000000ULL);
	ck_assert_uint_eq(s.root_ncpus, 8);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_ptr_nonnull(e = _find(&s, 5, CG_JOB_LEVEL));
	ck_assert_uint_eq(e->cpu_ns, 60000);
	ck_assert_uint_eq(e->ncpus, 2);
	ck_assert_ptr_nonnull(e = _find(&s, 5, 0));
	ck_assert_uint_eq(e->cpu_ns, 40000);
	ck_assert_ptr_nonnull(e = _find(&s, 5, CG_STEP_BATCH));
	ck_assert_uint_eq(e->cpu_ns, 15000);
	ck_assert_ptr_nonnull(e = _find(&s, 5, CG_STEP_EXTERN));
	ck_assert_ptr_nonnull(e = _find(&s, 6, CG_JOB_LEVEL));
	ck_assert_uint_eq(e->ncpus, 0);		/* no cpuset: unknown */
	ck_assert_ptr_nonnull(_find(&s, 6, 2));
	ck_assert_ptr_null(_find(&s, 6, 3));
	cg_scan_free(&s);

	snprintf(root, sizeof(root), "%s/cpuacct/nothing", tmp);
	ck_assert_int_eq(cg_scan(root, &s), -ENOENT);
	cg_scan_free(&s);
}
END_TEST

/* Slurm cgroup v2: system.slice/<node>_slurmstepd.scope/job_J/step_S. */
START_TEST(test_scan_v2)
{
	char root[PATH_MAX];
	cg_scan_t s = { 0 };
	const cg_entry_t *e;
	const char *sc = "system.slice/n2_slurmstepd.scope";
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/cpu.stat", sc);
	_put(rel, "usage_usec 500000\nuser_usec 400000\nsystem_usec 100000\n");
	snprintf(rel, sizeof(rel), "%s/job_9/cpu.stat", sc);
	_put(rel, "usage_usec 3000\nuser_usec 2000\n");
	snprintf(rel, sizeof(rel), "%s/job_9/cpuset.cpus.effective", sc);
	_put(rel, "0,4-5\n");
	snprintf(rel, sizeof(rel), "%s/job_9/step_0/cpu.stat", sc);
	_put(rel, "usage_usec 2500\n");
	snprintf(rel, sizeof(rel), "%s/job_9/step_0/user_processes/cpu.stat",
		 sc);
	_put(rel, "usage_usec 2400\n");
	snprintf(rel, sizeof(rel), "%s/job_9/step_batch/cpu.stat", sc);
	_put(rel, "user_usec 1\nusage_usec 400\n");
	snprintf(rel, sizeof(rel), "%s/system/cpu.stat", sc);
	_put(rel, "usage_usec 7\n");

	snprintf(root, sizeof(root), "%s/%s", tmp, sc);
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.root_cpu_ns, 500000000ULL);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_ptr_nonnull(e = _find(&s, 9, CG_JOB_LEVEL));
	ck_assert_uint_eq(e->cpu_ns, 3000000);
	ck_assert_uint_eq(e->ncpus, 3);
	ck_assert_ptr_nonnull(e = _find(&s, 9, 0));
	ck_assert_uint_eq(e->cpu_ns, 2500000);
	ck_assert_ptr_nonnull(e = _find(&s, 9, CG_STEP_BATCH));
	ck_assert_uint_eq(e->cpu_ns, 400000);
	cg_scan_free(&s);
}
END_TEST

/* Slurm 26.05's cgroup v2 without CgroupJobIdPaths=yes: the job directory
 * is named by the SLUID, which does not hold the job id; its steps'
 * slurmstepd titles do.  A SLUID directory with no slurmstepd is counted
 * as not read. */
START_TEST(test_is_sluid)
{
	ck_assert(cg_is_sluid("s0KQ4B7RZ1M2N3"));
	ck_assert(cg_is_sluid("S0kq4b7rz1m2n3"));
	ck_assert(!cg_is_sluid("s0KQ4B7RZ1M2N"));	/* 12 after the s */
	ck_assert(!cg_is_sluid("s0KQ4B7RZ1M2N3X"));
	ck_assert(!cg_is_sluid("s0KQ4B7RZ1M2NU"));	/* U: not base 32 */
	ck_assert(!cg_is_sluid("x0KQ4B7RZ1M2N3"));
	ck_assert(!cg_is_sluid("system"));
	ck_assert(!cg_is_sluid("job_12"));
}
END_TEST

#define SLUID_SCOPE	"system.slice/slurmstepd.scope"

/* A file under the 26.05 scope, its path relative to it. */
static void _put_scoped(const char *rel, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", SLUID_SCOPE, rel);
	_put(path, text);
}

/* Two SLUID-named jobs (one with step 0, one with only its extern step),
 * a job_9 of the old naming, and a system directory. */
static void _put_sluid_tree(void)
{
	_put_scoped("cpu.stat", "usage_usec 900000\n");
	_put_scoped("s0KQ4B7RZ1M2N3/cpu.stat", "usage_usec 3000\n");
	_put_scoped("s0KQ4B7RZ1M2N3/step_0/cpu.stat", "usage_usec 2500\n");
	_put_scoped("s0KQ4B7RZ1M2N4/step_extern/cpu.stat", "usage_usec 10\n");
	_put_scoped("job_9/cpu.stat", "usage_usec 4000\n");
	_put_scoped("system/cpu.stat", "usage_usec 7\n");
}

/* Step 0's slurmstepd, pid 4242, in step_0/slurm, its title as
 * setproctitle() leaves it (NULs to argv's end); proc_dir must outlive
 * the scans (cg_set_proc_dir() keeps the pointer). */
static void _put_stepd(char *proc_dir, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	_put_scoped("s0KQ4B7RZ1M2N3/step_0/slurm/cgroup.procs", "4242\n");
	_put_scoped("s0KQ4B7RZ1M2N3/step_0/user/cgroup.procs", "4243\n");
	_put("proc/4242/stat", "");
	snprintf(path, sizeof(path), "%s/proc/4242/cmdline", tmp);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fwrite("slurmstepd: [77.0]\0\0\0", 1, 21, f);
	fclose(f);
	snprintf(proc_dir, len, "%s/proc", tmp);
	cg_set_proc_dir(proc_dir);
}

START_TEST(test_scan_v2_sluid)
{
	char root[PATH_MAX], proc_dir[PATH_MAX];
	cg_scan_t s = { 0 };
	const cg_entry_t *e;

	_put_sluid_tree();
	snprintf(root, sizeof(root), "%s/%s", tmp, SLUID_SCOPE);
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.sluid_jobs, 2);
	ck_assert_uint_eq(s.sluid_unread, 2);	/* no slurmstepd in either */
	ck_assert_uint_eq(s.n, 1);
	ck_assert_ptr_nonnull(_find(&s, 9, CG_JOB_LEVEL));

	/* step 0's slurmstepd tells the first one's job id */
	_put_stepd(proc_dir, sizeof(proc_dir));
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.sluid_jobs, 2);
	ck_assert_uint_eq(s.sluid_unread, 1);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_ptr_nonnull(e = _find(&s, 77, CG_JOB_LEVEL));
	ck_assert_uint_eq(e->cpu_ns, 3000000);
	ck_assert_ptr_nonnull(e = _find(&s, 77, 0));
	ck_assert_uint_eq(e->cpu_ns, 2500000);

	/* the step ended, the job goes on (no Contain: no slurmstepd now):
	 * still job 77, remembered */
	_put_scoped("s0KQ4B7RZ1M2N3/step_0/slurm/cgroup.procs", "");
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.sluid_unread, 1);
	ck_assert_ptr_nonnull(_find(&s, 77, CG_JOB_LEVEL));

	/* the directory went with the job: forgotten, so a new directory of
	 * that name (not Slurm's way, but a test of the pruning) is not 77 */
	{
		char cmd[PATH_MAX + 32];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s/s0KQ4B7RZ1M2N3'", tmp,
			 SLUID_SCOPE);
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.sluid_jobs, 1);
	_put_scoped("s0KQ4B7RZ1M2N3/cpu.stat", "usage_usec 5\n");
	ck_assert_int_eq(cg_scan(root, &s), 0);
	ck_assert_uint_eq(s.sluid_unread, 2);
	ck_assert_ptr_null(_find(&s, 77, CG_JOB_LEVEL));
	cg_set_proc_dir(NULL);
	cg_scan_free(&s);
}
END_TEST

/* What slurmstepd's title says (slurmstepd.c, _set_job_log_prefix()). */
START_TEST(test_stepd_title_job)
{
	static const struct {
		const char *title;
		int rc;
		uint32_t job;	/* 99: left as it was */
	} cases[] = {
		{ "slurmstepd: [1234.0]", 0, 1234 },
		{ "slurmstepd: [55.batch]", 0, 55 },
		{ "slurmstepd: [56.extern]", 0, 56 },
		{ "slurmstepd: [7.0 stepmgr]", 0, 7 },
		{ "slurmstepd: [4294967295.1]", 0, 4294967295u },
		{ "slurmstepd: [8+1.0]", 0, 8 },	/* het component */
		{ "slurmstepd: [4294967296.1]", -EINVAL, 99 },
		{ "slurmstepd: [12]", -EINVAL, 99 },
		{ "slurmstepd: [x.0]", -EINVAL, 99 },
		{ "sleep: [12.0]", -EINVAL, 99 },
		{ "slurmstepd: 12.0", -EINVAL, 99 },
		{ "slurmstepd: [0.0]", -EINVAL, 99 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t job = 99;

		ck_assert_int_eq(cg_stepd_title_job(cases[i].title, &job),
				 cases[i].rc);
		ck_assert_uint_eq(job, cases[i].job);
	}
}
END_TEST

START_TEST(test_root_path)
{
	char buf[PATH_MAX], want[PATH_MAX];

	ck_assert_int_eq(cg_root_path("/x/slurm_%n/y", NULL, "n3", buf,
				      sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/slurm_n3/y");
	ck_assert_int_eq(cg_root_path("/x/%q", NULL, "n3", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(cg_root_path("/x/%n", NULL, "n3", buf, 4),
			 -ENAMETOOLONG);

	/* v1 mount, nothing made yet: the node's own prepend */
	ck_assert_int_eq(cg_root_path("auto", tmp, "n1", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/cpuacct/slurm_n1", tmp);
	ck_assert_str_eq(buf, want);
	/* an existing single-slurmd tree wins */
	_put("cpuacct/slurm/cpuacct.usage", "0\n");
	ck_assert_int_eq(cg_root_path(NULL, tmp, "n1", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/cpuacct/slurm", tmp);
	ck_assert_str_eq(buf, want);
	/* a unified mount: the stepd scope */
	_put("cgroup.controllers", "cpu cpuset\n");
	ck_assert_int_eq(cg_root_path("auto", tmp, "n1", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/system.slice/n1_slurmstepd.scope",
		 tmp);
	ck_assert_str_eq(buf, want);
}
END_TEST

/* ------------------------------------------------------------ split */

/* A scan built by hand: entries (job, step, cpu_ns, ncpus). */
typedef struct {
	cg_scan_t s;
	cg_entry_t e[512];
} fake_scan_t;

static void _scan_reset(fake_scan_t *f, uint64_t root_ns)
{
	memset(f, 0, sizeof(*f));
	f->s.e = f->e;
	f->s.have_root = true;
	f->s.root_cpu_ns = root_ns;
}

static void _scan_add(fake_scan_t *f, uint32_t job, uint32_t step,
		      uint64_t cpu_ns, uint32_t ncpus)
{
	f->e[f->s.n++] = (cg_entry_t) { job, step, cpu_ns, ncpus };
}

static uint64_t _share(attrib_t *a, uint32_t job, uint32_t step)
{
	uint64_t mj = 0, last;

	ck_assert_int_eq(attrib_share(a, job, step, &mj, &last), 0);
	return mj;
}

/* Every mJ measured is charged, unattributed, or held for a new step's
 * GPUs (attrib.h, 1.). */
static void _conserved(attrib_t *a)
{
	attrib_totals_t t;

	attrib_totals(a, &t);
	PROP_ASSERT_EQ(t.charged_mj + t.unattributed_mj + t.gpu_held_mj,
		       t.measured_mj);
}

static attrib_t *_new(attrib_idle_t idle, bool idle_set, uint64_t idle_mw,
		      uint32_t cpus)
{
	attrib_params_t p = { .idle = idle, .idle_set = idle_set,
			      .idle_mw = idle_mw, .node_cpus = cpus };
	attrib_t *a = attrib_new(&p);

	ck_assert_ptr_nonnull(a);
	return a;
}

START_TEST(test_apportion)
{
	uint64_t w[4] = { 1, 1, 1, 0 }, out[4];

	ck_assert(attrib_apportion(10, w, 4, out));
	/* 3.33 each: the extra mJ to the first on the tie */
	ck_assert_uint_eq(out[0], 4);
	ck_assert_uint_eq(out[1], 3);
	ck_assert_uint_eq(out[2], 3);
	ck_assert_uint_eq(out[3], 0);
	w[0] = 3;
	w[1] = 1;
	w[2] = 0;
	ck_assert(attrib_apportion(7, w, 3, out));
	ck_assert_uint_eq(out[0], 5);	/* 5.25 */
	ck_assert_uint_eq(out[1], 2);	/* 1.75: larger remainder */
	/* huge weights do not overflow */
	w[0] = UINT64_MAX;
	w[1] = UINT64_MAX / 3;
	ck_assert(attrib_apportion(UINT64_MAX / 2, w, 2, out));
	ck_assert_uint_eq(out[0] + out[1], UINT64_MAX / 2);
	w[0] = w[1] = w[2] = 0;
	ck_assert(!attrib_apportion(7, w, 3, out));
	ck_assert_uint_eq(out[0] + out[1] + out[2], 0);
}
END_TEST

/* The first case: two steps using CPU 3:1 share the rest 3:1. */
START_TEST(test_two_steps_3_to_1)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 4);
	fake_scan_t f;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 1, 0, 0, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 2, 0, 0, 0);
	ck_assert_int_eq(attrib_interval(a, 10 * S, 1000, &f.s, NULL, 0), 0);

	_scan_reset(&f, 4 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 3 * S, 2);
	_scan_add(&f, 1, 0, 3 * S, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 1 * S, 2);
	_scan_add(&f, 2, 0, 1 * S, 0);
	ck_assert_int_eq(attrib_interval(a, 12 * S, 9001, &f.s, NULL, 0), 0);
	ck_assert_uint_eq(_share(a, 1, 0), 6001);	/* 6000.75 */
	ck_assert_uint_eq(_share(a, 2, 0), 2000);	/* 2000.25 */
	/* extern: the job's whole share */
	ck_assert_uint_eq(_share(a, 1, CG_STEP_EXTERN), 6001);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* An idle node: nothing charged; its power is learned as the idle one. */
START_TEST(test_idle_interval_and_learning)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, false, 0, 4);
	attrib_totals_t t;
	fake_scan_t f;

	_scan_reset(&f, 0);
	ck_assert_int_eq(attrib_interval(a, 0, 0, &f.s, NULL, 0), 0);
	/* 100 W, 110 W, 90 W, 100 W for 1 s each */
	ck_assert_int_eq(attrib_interval(a, 1 * S, 100000, &f.s, NULL, 0), 0);
	ck_assert_int_eq(attrib_interval(a, 2 * S, 210000, &f.s, NULL, 0), 0);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.idle_mw, 0);	/* 2 intervals: not yet */
	ck_assert_int_eq(attrib_interval(a, 3 * S, 300000, &f.s, NULL, 0), 0);
	ck_assert_int_eq(attrib_interval(a, 4 * S, 400000, &f.s, NULL, 0), 0);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.measured_mj, 400000);
	ck_assert_uint_eq(t.charged_mj, 0);
	ck_assert_uint_eq(t.unattributed_mj, 400000);
	ck_assert(t.idle_learned);
	ck_assert_uint_eq(t.idle_mw, 100000);	/* median of 90..110 */

	/* A 1-CPU job of 4 on the node, using CPU: idle 100 W x 2 s split
	 * 1:3 with the unallocated CPUs, the 40 J above idle all its own. */
	_scan_reset(&f, 1 * S);
	_scan_add(&f, 3, CG_JOB_LEVEL, 1 * S, 1);
	_scan_add(&f, 3, 0, 1 * S, 0);
	attrib_step_begin(a, 3, 0, 4 * S, 1);
	attrib_step_begin(a, 3, CG_STEP_EXTERN, 4 * S, 1);
	ck_assert_int_eq(attrib_interval(a, 6 * S, 640000, &f.s, NULL, 0), 0);
	ck_assert_uint_eq(_share(a, 3, 0), 50000 + 40000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 400000 + 150000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* EnergyIdle=share by allocated CPUs; EnergyIdle=none leaves it. */
START_TEST(test_idle_by_cores)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 1000, 4);
	attrib_t *b = _new(ATTRIB_IDLE_NONE, true, 1000, 4);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 2);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	attrib_interval(b, 0, 0, &f.s, NULL, 0);
	/* 1 s at exactly the idle power: no CPU used */
	attrib_interval(a, S, 1000, &f.s, NULL, 0);
	attrib_interval(b, S, 1000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 1, CG_STEP_EXTERN), 250);
	ck_assert_uint_eq(_share(a, 2, CG_STEP_EXTERN), 500);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 250);
	ck_assert_uint_eq(_share(b, 1, CG_STEP_EXTERN), 0);
	attrib_totals(b, &t);
	ck_assert_uint_eq(t.unattributed_mj, 1000);
	_conserved(a);
	_conserved(b);
	attrib_free(a);
	attrib_free(b);
}
END_TEST

/*
 * A step that starts mid-interval (registered at its start: idle only for
 * its time) and one that starts and ends between two samples, never seen
 * in a scan: its job's CPU time no living step explains is its.
 */
/* A job's cgroup in a scan before its slurmstepd's begin reached us: made
 * just before the scan, so none of the interval's idle is its. */
START_TEST(test_new_cgroup_before_registration)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 2000, 2);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	_scan_reset(&f, S / 4);
	_scan_add(&f, 6, CG_JOB_LEVEL, S / 4, 2);
	_scan_add(&f, 6, CG_STEP_BATCH, S / 4, 0);
	/* 2 W idle for 1 s + 3 J above: the 3 J by its CPU time, no idle */
	attrib_interval(a, S, 5000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 6, CG_STEP_BATCH), 3000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 2000);
	/* its begin arrives, stamped 0.99 s; then the whole next interval */
	attrib_step_begin(a, 6, CG_STEP_BATCH, S - S / 100, 2);
	_scan_reset(&f, S / 2);
	_scan_add(&f, 6, CG_JOB_LEVEL, S / 2, 2);
	_scan_add(&f, 6, CG_STEP_BATCH, S / 2, 0);
	attrib_interval(a, 2 * S, 10000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 6, CG_STEP_BATCH), 3000 + 5000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 2000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

START_TEST(test_mid_interval)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 2000, 2);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	/* job 4 (2 CPUs, the whole node) begins at 0.5 s */
	attrib_step_begin(a, 4, CG_STEP_EXTERN, S / 2, 2);
	attrib_step_begin(a, 4, CG_STEP_BATCH, S / 2, 2);
	_scan_reset(&f, S / 4);
	_scan_add(&f, 4, CG_JOB_LEVEL, S / 4, 2);
	_scan_add(&f, 4, CG_STEP_BATCH, S / 4, 0);
	_scan_add(&f, 4, CG_STEP_EXTERN, 0, 0);
	/* 2 W idle for 1 s + 3 J above: half the idle was before the job */
	attrib_interval(a, S, 5000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 4, CG_STEP_BATCH), 1000 + 3000);
	ck_assert_uint_eq(_share(a, 4, CG_STEP_EXTERN), 4000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 1000);

	/* step 0 runs from 1.2 s to 1.6 s: never in a scan */
	attrib_step_begin(a, 4, 0, S + S / 5, 2);
	attrib_step_end(a, 4, 0, S + 3 * S / 5);
	_scan_reset(&f, S);
	_scan_add(&f, 4, CG_JOB_LEVEL, S, 2);	/* +0.75 s */
	_scan_add(&f, 4, CG_STEP_BATCH, S / 2, 0);	/* +0.25 s */
	_scan_add(&f, 4, CG_STEP_EXTERN, 0, 0);
	/* idle 2 J, 4 J above: split 0.5 : 0.25 by CPU, idle likewise */
	attrib_interval(a, 2 * S, 11000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 4, 0), 4000);
	ck_assert_uint_eq(_share(a, 4, CG_STEP_BATCH), 4000 + 2000);
	ck_assert_uint_eq(_share(a, 4, CG_STEP_EXTERN), 10000);

	/* the next interval: step 0 is over and gets nothing more */
	_scan_reset(&f, 2 * S);
	_scan_add(&f, 4, CG_JOB_LEVEL, 2 * S, 2);
	_scan_add(&f, 4, CG_STEP_BATCH, 3 * S / 2, 0);
	_scan_add(&f, 4, CG_STEP_EXTERN, 0, 0);
	attrib_interval(a, 3 * S, 14000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 4, 0), 4000);
	ck_assert_uint_eq(_share(a, 4, CG_STEP_BATCH), 9000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* A job whose extern step ended gets nothing more, though its cgroup
 * lingers a moment (slurmstepd removes it after the step's end). */
START_TEST(test_job_over_at_extern_end)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 1000, 1);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, 0, 0);
	attrib_step_begin(a, 1, CG_STEP_EXTERN, 0, 1);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	/* the job ends at 0.5 s; 1 W idle + 1 J above idle at the end */
	attrib_step_end(a, 1, CG_STEP_EXTERN, S / 2);
	_scan_reset(&f, S / 10);
	_scan_add(&f, 1, CG_JOB_LEVEL, S / 10, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S / 10, 0);
	attrib_interval(a, S, 2000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 1, CG_STEP_EXTERN), 500 + 1000);
	/* its cgroup is still there a second later, with a little CPU */
	_scan_reset(&f, S / 5);
	_scan_add(&f, 1, CG_JOB_LEVEL, S / 5, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S / 5, 0);
	attrib_interval(a, 2 * S, 3500, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 1, CG_STEP_EXTERN), 1500);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 500 + 1500);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* The steps an exporter lists: running ones, and ended ones until the
 * split passed their end (their share then final); the extern step with
 * its job's share; a step whose cgroup vanished untold is gone. */
START_TEST(test_running_steps)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 2);
	attrib_step_row_t r[4];
	fake_scan_t f;

	attrib_step_begin(a, 1, CG_STEP_EXTERN, 1, 1);	/* 0: unregistered */
	attrib_step_begin(a, 1, 0, 1, 1);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 2); /* registered */
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, 0, 0);
	_scan_add(&f, 1, 0, 0, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 2, 0, 0, 0);		/* never registered */
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	_scan_reset(&f, 2 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, 0, 0);
	_scan_add(&f, 1, 0, S, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, S, 1);
	_scan_add(&f, 2, 0, S, 0);
	attrib_interval(a, S, 2000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert(!r[i].ended);
		ck_assert_uint_eq(r[i].share_mj, 1000); /* extern: job 1's */
	}
	ck_assert_uint_eq(attrib_running_steps(a, r, 1, 0), 3); /* truncated */
	/* job 1's step 0 ends at 1.5 s: listed, ended, not final ... */
	attrib_step_end(a, 1, 0, 3 * S / 2);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 3);
	ck_assert(r[1].job_id == 1 && r[1].step_id == 0 && r[1].ended &&
		  !r[1].final);
	/* ... final after the split passed 1.5 s, listed that interval;
	 * job 2's step vanished untold at 2 s: its last part, final */
	_scan_reset(&f, 3 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 2 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 2 * S, 4000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 3);
	ck_assert(r[1].ended && r[1].final);
	ck_assert_uint_eq(r[1].share_mj, _share(a, 1, 0));
	ck_assert(r[2].job_id == 2 && r[2].ended && r[2].final);
	ck_assert(!r[0].ended);
	/* the interval after: only the extern step is left */
	_scan_reset(&f, 4 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 3 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 3 * S, 5000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 1);
	/* a registered step whose cgroup goes before it tells its end: kept
	 * (ended, not final) until the end comes and the split passes it */
	attrib_step_begin(a, 1, 1, 3 * S, 1);
	_scan_reset(&f, 5 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 4 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	_scan_add(&f, 1, 1, S, 0);
	attrib_interval(a, 4 * S, 6000, &f.s, NULL, 0);
	_scan_reset(&f, 6 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 5 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 5 * S, 7000, &f.s, NULL, 0);
	_scan_reset(&f, 7 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 6 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 6 * S, 8000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 2);
	ck_assert(r[1].step_id == 1 && r[1].ended && !r[1].final);
	attrib_step_end(a, 1, 1, 5 * S);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 2);
	ck_assert(r[1].final);
	/* with a linger of 2 s it stays until a split starts after 7 s */
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 2 * S), 2);
	_scan_reset(&f, 8 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 7 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 7 * S, 9000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 0), 1);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 2 * S), 2);
	_scan_reset(&f, 9 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 8 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 8 * S, 10000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 2 * S), 2); /* t0 7 s */
	_scan_reset(&f, 10 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 9 * S, 1);
	_scan_add(&f, 1, CG_STEP_EXTERN, S, 0);
	attrib_interval(a, 9 * S, 11000, &f.s, NULL, 0);
	ck_assert_uint_eq(attrib_running_steps(a, r, 4, 2 * S), 1); /* t0 8 s */
	ck_assert(r[0].job_id == 1 && r[0].step_id == CG_STEP_EXTERN);
	ck_assert_uint_eq(r[0].share_mj, _share(a, 1, CG_STEP_EXTERN));
	attrib_free(a);
}
END_TEST

/* A job whose cgroup vanished between samples keeps its last interval. */
START_TEST(test_vanished_job)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 2);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, 0, 0, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 2, 0, 0, 0);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	/* job 2 ends; the root still counts its 1 s */
	_scan_reset(&f, 2 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 1);
	_scan_add(&f, 1, 0, S, 0);
	attrib_interval(a, S, 2000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 1, 0), 1000);
	ck_assert_uint_eq(_share(a, 2, 0), 1000);
	ck_assert_uint_eq(_share(a, 2, CG_STEP_EXTERN), 1000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 0);
	/* later intervals: job 2 gets nothing */
	_scan_reset(&f, 3 * S);
	_scan_add(&f, 1, CG_JOB_LEVEL, 2 * S, 1);
	_scan_add(&f, 1, 0, 2 * S, 0);
	attrib_interval(a, 2 * S, 3000, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 2, 0), 1000);
	ck_assert_uint_eq(_share(a, 1, 0), 2000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* GPU energy to the GPU's step; the CPU part by CPU time. */
START_TEST(test_gpu_and_cpu)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 4);
	fake_scan_t f;
	attrib_gpu_t g[3] = {
		{ .energy_mj = 300000, .owned = true, .job_id = 1,
		  .step_id = 0 },
		{ .energy_mj = 200000, .owned = true, .job_id = 2,
		  .step_id = 0 },
		{ .energy_mj = 50000, .owned = false },	/* nobody's */
	};
	attrib_totals_t t;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 1, 0, 0, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 2, 0, 0, 0);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 2);
	_scan_add(&f, 1, 0, S, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, S, 2);
	_scan_add(&f, 2, 0, S, 0);
	/* 1 kJ in all: 550 J of GPUs, 450 J of the rest by CPU 1:1 */
	attrib_interval(a, S, 1000000, &f.s, g, 3);
	ck_assert_uint_eq(_share(a, 1, 0), 300000 + 225000);
	ck_assert_uint_eq(_share(a, 2, 0), 200000 + 225000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.unattributed_mj, 50000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

static attrib_step_share_t _parts(attrib_t *a, uint32_t job, uint32_t step)
{
	attrib_step_share_t sh;

	ck_assert_int_eq(attrib_step_share(a, job, step, &sh), 0);
	return sh;
}

/* A step that began at 1 ns (0 is "not registered") and holds the GPUs
 * of its masks (bit i: GPU i). */
static void _gpu_step(attrib_t *a, uint32_t job, uint32_t step,
		      uint64_t step_mask, uint64_t job_mask)
{
	ck_assert_int_eq(attrib_step_begin(a, job, step, 1, 1), 0);
	ck_assert_int_eq(attrib_step_gpus(a, job, step, step_mask, job_mask,
					  true), 0);
}

/* Valid readings: energy_mj as given, raw_mj half of it (a factor 2). */
static void _readings(attrib_gpu_energy_t *g, const uint64_t *mj, size_t n)
{
	for (size_t i = 0; i < n; i++)
		g[i] = (attrib_gpu_energy_t) { .energy_mj = mj[i],
					       .raw_mj = mj[i] / 2,
					       .valid = true };
}

/*
 * The owner rules of attrib_interval_gpus: GPU 0 to the srun step holding
 * it, GPU 1 (job 1's, no srun step's) to job 1's batch step, GPU 2 to job
 * 2's interactive step, GPU 3 to job 3 only (no batch or interactive
 * step), GPU 4 nobody's (unattributed), GPU 5 not read (in the rest).
 */
START_TEST(test_gpu_owner_rules)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[6] = { 100000, 200000, 300000, 400000, 50000, 0 };
	attrib_gpu_energy_t g[6];
	attrib_totals_t t;
	fake_scan_t f;

	_gpu_step(a, 1, 0, 1 << 0, 0x3);
	_gpu_step(a, 1, CG_STEP_BATCH, 0, 0x3);
	_gpu_step(a, 1, CG_STEP_EXTERN, 0, 0x3);
	_gpu_step(a, 2, CG_STEP_INTERACTIVE, 0, 1 << 2);
	_gpu_step(a, 3, CG_STEP_EXTERN, 0, 1 << 3);
	_readings(g, mj, 6);
	g[5] = (attrib_gpu_energy_t) { .energy_mj = 1000000, .raw_mj = 7,
				       .valid = false };
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 1, 0, 0, 0);
	ck_assert_int_eq(attrib_interval_gpus(a, 0, 0, &f.s, g, 6), 0);
	_scan_reset(&f, S);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 2);
	_scan_add(&f, 1, 0, S, 0);
	/* 10 kJ: 1050 J of GPUs read, the rest (GPU 5's within) by CPU
	 * time, all of which step 1.0 used */
	ck_assert_int_eq(attrib_interval_gpus(a, S, 10000000, &f.s, g, 6), 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 100000);
	ck_assert_uint_eq(_parts(a, 1, 0).share_mj, 100000 + 8950000);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_BATCH).gpu_mj, 200000);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_BATCH).share_mj, 200000);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_EXTERN).gpu_mj, 300000);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_EXTERN).share_mj, 9250000);
	ck_assert_uint_eq(_parts(a, 2, CG_STEP_INTERACTIVE).gpu_mj, 300000);
	ck_assert_uint_eq(_parts(a, 2, CG_STEP_EXTERN).share_mj, 300000);
	ck_assert_uint_eq(_parts(a, 3, CG_STEP_EXTERN).gpu_mj, 400000);
	ck_assert_uint_eq(_parts(a, 3, CG_STEP_EXTERN).share_mj, 400000);
	/* attrib_share() answers as before */
	ck_assert_uint_eq(_share(a, 1, 0), 9050000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_charged_mj, 1000000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 50000);
	ck_assert_uint_eq(t.unattributed_mj, 50000);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 0);
	ck_assert_uint_eq(t.gpu_raw_mj, 525000);	/* GPU 5 not counted */
	ck_assert_uint_eq(t.gpu_out_intervals, 1);
	ck_assert_uint_eq(t.gpu_clipped_intervals, 0);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/*
 * k holders share equally: two overlapping srun steps (the batch step,
 * which also holds GPU 0 by the job mask, gets none of it), and GPU 1
 * held through the job masks of two jobs (shards).
 */
/*
 * A GPU's interval energy by the time each holder held it: job 1's batch
 * step is there all through (its cgroup at both scans), its srun step 1.0
 * begins a quarter in (registered, no cgroup yet) holding GPU 0: 3/4 of
 * GPU 0's energy to 1.0, 1/4 to the batch step.  Job 2 begins half-way
 * (its extern step registered) holding GPU 1 job-wide: half of GPU 1's
 * energy to job 2, half unowned (nobody held it then).
 */
START_TEST(test_gpu_by_time_held)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[2] = { 100000, 60000 };
	attrib_gpu_energy_t g[2];
	attrib_totals_t t;
	fake_scan_t f;

	_gpu_step(a, 1, CG_STEP_BATCH, 0, 0x1);
	_readings(g, mj, 2);
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 2);
	_scan_add(&f, 1, CG_STEP_BATCH, 0, 0);
	ck_assert_int_eq(attrib_interval_gpus(a, 0, 0, &f.s, g, 2), 0);
	ck_assert_int_eq(attrib_step_begin(a, 1, 0, S / 4, 1), 0);
	ck_assert_int_eq(attrib_step_gpus(a, 1, 0, 0x1, 0x1, true), 0);
	ck_assert_int_eq(attrib_step_begin(a, 2, CG_STEP_EXTERN, S / 2, 1),
			 0);
	ck_assert_int_eq(attrib_step_gpus(a, 2, CG_STEP_EXTERN, 0, 0x2, true),
			 0);
	_scan_reset(&f, S);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 2);
	_scan_add(&f, 1, CG_STEP_BATCH, S, 0);
	ck_assert_int_eq(attrib_interval_gpus(a, S, 10000000, &f.s, g, 2), 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 75000);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_BATCH).gpu_mj, 25000);
	ck_assert_uint_eq(_parts(a, 2, CG_STEP_EXTERN).gpu_mj, 30000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_charged_mj, 130000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 30000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

START_TEST(test_gpu_holders_equal)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[2] = { 1001, 3 };
	attrib_gpu_energy_t g[2];
	fake_scan_t f;

	_gpu_step(a, 1, 0, 1 << 0, 0x3);
	_gpu_step(a, 1, 1, 1 << 0, 0x3);
	_gpu_step(a, 1, CG_STEP_BATCH, 0, 0x3);
	_gpu_step(a, 2, CG_STEP_EXTERN, 0, 1 << 1);
	_readings(g, mj, 2);
	_scan_reset(&f, 0);
	ck_assert_int_eq(attrib_interval_gpus(a, 0, 0, &f.s, g, 2), 0);
	/* 1004 mJ: the GPUs' exactly */
	ck_assert_int_eq(attrib_interval_gpus(a, S, 1004, &f.s, g, 2), 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 501);
	ck_assert_uint_eq(_parts(a, 1, 1).gpu_mj, 500);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_BATCH).gpu_mj, 2);
	ck_assert_uint_eq(_parts(a, 2, CG_STEP_EXTERN).gpu_mj, 1);
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_EXTERN).gpu_mj, 1003);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/*
 * A step that could not tell its GPUs: while it is present (up to the
 * interval in which it ended), a GPU nobody holds stays in the rest (by
 * CPU time, here all its job's); once it is over, such a GPU is
 * unattributed again.
 */
START_TEST(test_gpu_unknown_to_rest)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[1] = { 500000 };
	/* samples from 10 s after the step's begin: it is no new step whose
	 * GPUs are waited for (test_gpu_held_for_new_step) */
	const uint64_t T = 10 * S;
	attrib_gpu_energy_t g[1];
	attrib_totals_t t;
	fake_scan_t f;

	attrib_step_begin(a, 1, 0, 1, 1);
	attrib_step_gpus(a, 1, 0, 1 << 0, 1 << 0, false); /* masks ignored */
	_readings(g, mj, 1);
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, 0, 0, 0);
	attrib_interval_gpus(a, T, 0, &f.s, g, 1);
	_scan_reset(&f, S);
	_scan_add(&f, 1, CG_JOB_LEVEL, S, 1);
	_scan_add(&f, 1, 0, S, 0);
	ck_assert_int_eq(attrib_interval_gpus(a, T + S, 800000, &f.s, g, 1), 0);
	ck_assert_uint_eq(_parts(a, 1, 0).share_mj, 800000);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 0);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 500000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 0);
	ck_assert_uint_eq(t.unattributed_mj, 0);

	/* the job ends at 1 s (cgroups gone): the step still counts in the
	 * interval its cgroup vanished in, whose rest, with the job over, is
	 * nobody's; from the next one the GPU is nobody's */
	attrib_step_end(a, 1, CG_STEP_EXTERN, T + S);
	attrib_step_end(a, 1, 0, T + S);
	_scan_reset(&f, S);
	attrib_interval_gpus(a, T + 2 * S, 1600000, &f.s, g, 1);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 1000000);
	ck_assert_uint_eq(t.unattributed_mj, 800000);
	attrib_interval_gpus(a, T + 3 * S, 2400000, &f.s, g, 1);
	ck_assert_uint_eq(_parts(a, 1, 0).share_mj, 800000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 1000000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 500000);
	ck_assert_uint_eq(t.unattributed_mj, 800000 + 500000 + 300000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* The scan of _held_interval: jobs 1 and 2 (step 0 each), steady. */
static void _held_scan(fake_scan_t *f, uint64_t t)
{
	_scan_reset(f, 2 * t);
	_scan_add(f, 1, CG_JOB_LEVEL, t, 1);
	_scan_add(f, 1, 0, t, 0);
	if (t < S)
		return;
	_scan_add(f, 2, CG_JOB_LEVEL, t / 10, 1);
	_scan_add(f, 2, 0, t / 10, 0);
}

/* The interval ending at k s: 500 J, GPU 0 150 J, GPU 1 10 J, GPU 2 5 J. */
static void _held_interval(attrib_t *a, unsigned k)
{
	uint64_t mj[3] = { 150000, 10000, 5000 };
	attrib_gpu_energy_t g[3];
	fake_scan_t f;

	_readings(g, mj, 3);
	_held_scan(&f, k * S);
	ck_assert_int_eq(attrib_interval_gpus(a, k * S, k * 500000ULL, &f.s,
					      g, 3), 0);
	_conserved(a);
}

/*
 * A new step that could not tell its GPUs yet (its slurmstepd asked before
 * Slurm had set up its devices; its next question tells them): the energy
 * of the GPUs nobody holds is held, not split by CPU time (job 1, one core
 * at 100 %, would have taken most of job 2's GPU 0 in its first second),
 * and given once the step has told: job 2's step 0, begun at 0.5 s, gets
 * GPU 0's energy from then on.  A step that never tells is waited for at
 * most 5 s, after which the held energy goes to the CPU split, as before.
 */
START_TEST(test_gpu_held_for_new_step)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	attrib_totals_t t;

	_gpu_step(a, 1, 0, 1 << 1, 1 << 1);
	_held_interval(a, 0);
	ck_assert_int_eq(attrib_step_begin(a, 2, 0, S / 2, 1), 0);
	ck_assert_int_eq(attrib_step_gpus(a, 2, 0, 0, 0, false), 0);
	_held_interval(a, 1);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_held_mj, 150000 + 5000);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 10000);
	ck_assert_uint_eq(_parts(a, 2, 0).gpu_mj, 0);

	/* it tells GPU 0: the held second to it from its begin, half; GPU
	 * 2 was nobody's */
	ck_assert_int_eq(attrib_step_gpus(a, 2, 0, 1 << 0, 1 << 0, true), 0);
	_held_interval(a, 2);
	ck_assert_uint_eq(_parts(a, 2, 0).gpu_mj, 75000 + 150000);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 20000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_held_mj, 0);
	ck_assert_uint_eq(t.gpu_unowned_mj, 75000 + 5000 + 5000);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 0);

	/* job 3's step, begun at 2.5 s, never tells: GPU 2 is held over
	 * [2 s, 6 s] and goes to the CPU split at 7 s (a span of 5 s); the
	 * second held from 6 s at 8 s (5.5 s after the step's begin) */
	ck_assert_int_eq(attrib_step_begin(a, 3, 0, 5 * S / 2, 1), 0);
	ck_assert_int_eq(attrib_step_gpus(a, 3, 0, 0, 0, false), 0);
	for (unsigned k = 3; k <= 6; k++)
		_held_interval(a, k);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_held_mj, 4 * 5000);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 0);
	_held_interval(a, 7);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_held_mj, 5000);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 4 * 5000);
	_held_interval(a, 8);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_held_mj, 0);
	ck_assert_uint_eq(t.gpu_to_rest_mj, 6 * 5000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 85000);
	attrib_free(a);
}
END_TEST

/*
 * GPUs above the node's meter are cut in proportion (900:300 of 1 kJ is
 * 750:250; the index-order clip gave 900:100), said by the return value
 * and counted; an interval within the meter is not cut.
 */
START_TEST(test_gpu_cut_proportional)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[2] = { 900000, 300000 };
	attrib_gpu_energy_t g[2];
	attrib_totals_t t;
	fake_scan_t f;

	_gpu_step(a, 1, 0, 1 << 0, 1 << 0);
	_gpu_step(a, 2, 0, 1 << 1, 1 << 1);
	_readings(g, mj, 2);
	_scan_reset(&f, 0);
	attrib_interval_gpus(a, 0, 0, &f.s, g, 2);
	ck_assert_int_eq(attrib_interval_gpus(a, S, 1000000, &f.s, g, 2),
			 ATTRIB_GPUS_CUT);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 750000);
	ck_assert_uint_eq(_parts(a, 2, 0).gpu_mj, 250000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_clipped_mj, 200000);
	ck_assert_uint_eq(t.gpu_clipped_intervals, 1);
	ck_assert_uint_eq(t.gpu_charged_mj, 1000000);
	ck_assert_uint_eq(t.gpu_raw_mj, 600000);
	/* 1.3 kJ next: room for both */
	ck_assert_int_eq(attrib_interval_gpus(a, 2 * S, 2300000, &f.s, g, 2),
			 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 750000 + 900000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_clipped_mj, 200000);
	ck_assert_uint_eq(t.gpu_clipped_intervals, 1);
	/* no CPU used: the 100 J left by presence, 1:1 */
	ck_assert_uint_eq(_parts(a, 1, CG_STEP_EXTERN).share_mj,
			  750000 + 900000 + 50000);
	ck_assert_uint_eq(t.unattributed_mj, 0);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* The callers' owners (attrib_interval) are cut in proportion too. */
START_TEST(test_gpu_cut_owned)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	attrib_gpu_t g[2] = {
		{ .energy_mj = 900000, .owned = true, .job_id = 1,
		  .step_id = 0 },
		{ .energy_mj = 300000, .owned = true, .job_id = 2,
		  .step_id = 0 },
	};
	attrib_totals_t t;
	fake_scan_t f;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, 0, 0, 0);
	_scan_add(&f, 2, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 2, 0, 0, 0);
	attrib_interval(a, 0, 0, &f.s, NULL, 0);
	ck_assert_int_eq(attrib_interval(a, S, 1000000, &f.s, g, 2), 0);
	ck_assert_uint_eq(_parts(a, 1, 0).gpu_mj, 750000);
	ck_assert_uint_eq(_share(a, 2, 0), 250000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.gpu_clipped_mj, 200000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/*
 * Idle learned from the node less its GPUs read (owned or not) while no
 * job runs: 150 W with a 50 W GPU is 100 W of idle; the cut interval (the
 * GPU above the node) is not learned from.
 */
START_TEST(test_gpu_idle_learned_without)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, false, 0, 8);
	uint64_t mj[1] = { 50000 };
	attrib_gpu_energy_t g[1];
	attrib_totals_t t;
	fake_scan_t f;

	_readings(g, mj, 1);
	_scan_reset(&f, 0);
	attrib_interval_gpus(a, 0, 0, &f.s, g, 1);
	for (int i = 1; i <= 3; i++)
		attrib_interval_gpus(a, i * S, i * 150000, &f.s, g, 1);
	attrib_totals(a, &t);
	ck_assert(t.idle_learned);
	ck_assert_uint_eq(t.idle_mw, 100000);
	ck_assert_uint_eq(t.gpu_unowned_mj, 150000);
	/* a 20 J interval with the 50 J GPU: cut, 0 W not learned */
	for (int i = 4; i <= 6; i++)
		ck_assert_int_eq(attrib_interval_gpus(a, i * S,
						      450000 + (i - 3) * 20000,
						      &f.s, g, 1),
				 ATTRIB_GPUS_CUT);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.idle_mw, 100000);
	ck_assert_uint_eq(t.gpu_clipped_mj, 3 * 30000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* The GPU part adds up over intervals; a GPU index past the masks is
 * refused. */
START_TEST(test_gpu_part_accumulates)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 8);
	uint64_t mj[1] = { 7000 };
	attrib_gpu_energy_t g[ATTRIB_MAX_GPUS + 1];
	fake_scan_t f;

	_gpu_step(a, 5, 3, 1 << 0, 1 << 0);
	_readings(g, mj, 1);
	_scan_reset(&f, 0);
	attrib_interval_gpus(a, 0, 0, &f.s, g, 1);
	for (int i = 1; i <= 4; i++)
		attrib_interval_gpus(a, i * S, i * 10000, &f.s, g, 1);
	ck_assert_uint_eq(_parts(a, 5, 3).gpu_mj, 4 * 7000);
	ck_assert_uint_eq(_parts(a, 5, CG_STEP_EXTERN).gpu_mj, 4 * 7000);
	ck_assert_int_eq(attrib_interval_gpus(a, 5 * S, 50000, &f.s, g,
					      ATTRIB_MAX_GPUS + 1), -EINVAL);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/* A meter outage: one long interval, all of it split, nothing invented. */
START_TEST(test_outage)
{
	attrib_t *a = _new(ATTRIB_IDLE_SHARE, true, 0, 2);
	fake_scan_t f;
	attrib_totals_t t;

	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 0, 1);
	_scan_add(&f, 1, 0, 0, 0);
	attrib_interval(a, 0, 5, &f.s, NULL, 0);
	/* no sample for 30 s, then one with 30 s of energy */
	_scan_reset(&f, 0);
	_scan_add(&f, 1, CG_JOB_LEVEL, 30 * S, 1);
	_scan_add(&f, 1, 0, 30 * S, 0);
	attrib_interval(a, 30 * S, 3000005, &f.s, NULL, 0);
	ck_assert_uint_eq(_share(a, 1, 0), 3000000);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.measured_mj, 3000000);
	/* time going back resets the baselines, splits nothing */
	ck_assert_int_eq(attrib_interval(a, 29 * S, 3000005, &f.s, NULL, 0),
			 -EINVAL);
	attrib_totals(a, &t);
	ck_assert_uint_eq(t.measured_mj, 3000000);
	_conserved(a);
	attrib_free(a);
}
END_TEST

/*
 * Property: random interleavings of jobs and steps starting and ending
 * (seen in scans or not, registered or not), samples at random intervals,
 * meter outages (samples skipped), GPUs: conservation to the mJ, shares
 * never decreasing, each job's steps never above the job.  In half of the
 * runs 1-8 GPUs are read at every sample (attrib_interval_gpus), with
 * random masks told by the steps, random validity and energies that often
 * exceed the node's: each GPU's energy is all accounted (or cut to the
 * node's), goes only to steps and jobs whose masks hold it, and all of it
 * to the one step holding it when no other could.
 */
/* The conservation property's random node: jobs come and go, their steps
 * start and end, each uses CPU time; the split must stay conserved. */
enum { PROP_JOBS = 12, PROP_STEPS = 4, PROP_ROUNDS = 300, PROP_SRUN = 2 };

typedef struct {
	struct {
		bool live[PROP_STEPS];
		uint64_t cpu[PROP_STEPS + 1];	/* last: job level */
		bool on;
	} job[PROP_JOBS];
	uint64_t last_share[PROP_JOBS][PROP_STEPS];
	unsigned seed;
	uint64_t t, e, root;
	fake_scan_t f;
	/* GPU runs: n GPUs, masks fixed for the run (a step tells the same
	 * ones whenever it tells), told: since its job last started */
	bool gpus, based;	/* based: the first sample was taken */
	size_t ng;
	uint64_t job_mask[PROP_JOBS], step_mask[PROP_JOBS][PROP_STEPS];
	bool known[PROP_JOBS][PROP_STEPS], told[PROP_JOBS][PROP_STEPS];
	/* live without a break since the last sample: held its GPUs over
	 * the whole interval (a step that began or ended in it holds them
	 * for its part of it only) */
	bool steady[PROP_JOBS][PROP_STEPS];
} prop_t;

/* The model's steps 0 and 1 are srun steps, 2 interactive, 3 batch. */
static uint32_t _prop_sid(int s)
{
	static const uint32_t id[PROP_STEPS] = {
		0, 1, CG_STEP_INTERACTIVE, CG_STEP_BATCH };

	return id[s];
}

/* Events between samples: a job starts, a step ends or starts, a job
 * ends; half of the boundaries are told to the split. */
static void _prop_events(prop_t *p, attrib_t *a, uint64_t dt)
{
	for (int k = 0; k < 3; k++) {
		int j = rand_r(&p->seed) % PROP_JOBS;
		int s = rand_r(&p->seed) % PROP_STEPS;

		p->steady[j][s] = false;
		if (!p->job[j].on) {
			p->job[j].on = true;
			memset(p->job[j].cpu, 0, sizeof(p->job[j].cpu));
			if (rand_r(&p->seed) % 2)
				attrib_step_begin(a, j, _prop_sid(s),
						  p->t + dt / 2, 1 + j % 3);
			p->job[j].live[s] = true;
		} else if (p->job[j].live[s]) {
			p->job[j].live[s] = false;
			if (rand_r(&p->seed) % 2)
				attrib_step_end(a, j, _prop_sid(s),
						p->t + dt / 3);
		} else if (rand_r(&p->seed) % 4 == 0) {
			p->job[j].on = false;
			memset(p->job[j].live, 0, sizeof(p->job[j].live));
			memset(p->steady[j], 0, sizeof(p->steady[j]));
			memset(p->told[j], 0, sizeof(p->told[j]));
		} else {
			p->job[j].live[s] = true;
		}
	}
}

/* A GPU run's masks: each job some of the GPUs, its srun steps some of
 * the job's; one step in 6 cannot tell. */
static void _prop_gpu_setup(prop_t *p, bool gpus)
{
	uint64_t all;

	p->gpus = gpus;
	p->ng = 1 + rand_r(&p->seed) % 8;
	all = (1ULL << p->ng) - 1;
	for (int j = 0; j < PROP_JOBS; j++) {
		p->job_mask[j] = (uint64_t) rand_r(&p->seed) & all;
		for (int s = 0; s < PROP_STEPS; s++) {
			p->step_mask[j][s] = s < PROP_SRUN ?
				p->job_mask[j] & rand_r(&p->seed) : 0;
			p->known[j][s] = rand_r(&p->seed) % 6 != 0;
			p->told[j][s] = false;
		}
	}
}

/* Living steps tell their GPUs now and then (slurmstepd's queries). */
static void _prop_tell(prop_t *p, attrib_t *a)
{
	for (int j = 0; j < PROP_JOBS; j++)
		for (int s = 0; s < PROP_STEPS; s++) {
			if (!p->job[j].live[s] || p->told[j][s] ||
			    rand_r(&p->seed) % 2)
				continue;
			PROP_ASSERT_EQ(attrib_step_gpus(a, j, _prop_sid(s),
							  p->step_mask[j][s],
							  p->job_mask[j],
							  p->known[j][s]), 0);
			p->told[j][s] = true;
		}
}

/* The cgroup scan after an interval: each live step's CPU time grows. */
static void _prop_scan(prop_t *p)
{
	_scan_reset(&p->f, 0);
	for (int j = 0; j < PROP_JOBS; j++) {
		if (!p->job[j].on)
			continue;
		for (int s = 0; s < PROP_STEPS; s++) {
			uint64_t use = p->job[j].live[s] ?
				rand_r(&p->seed) % S : 0;

			p->job[j].cpu[s] += use;
			p->job[j].cpu[PROP_STEPS] += use;
			p->root += use;
			if (p->job[j].live[s])
				_scan_add(&p->f, j, _prop_sid(s),
					  p->job[j].cpu[s], 0);
		}
		_scan_add(&p->f, j, CG_JOB_LEVEL, p->job[j].cpu[PROP_STEPS],
			  rand_r(&p->seed) % 3);
	}
	p->root += rand_r(&p->seed) % 1000;
	p->f.s.root_cpu_ns = p->root;
}

/* Every job's steps together never get more than the job; the GPU part
 * is within the share. */
static void _prop_check_jobs(prop_t *p, attrib_t *a)
{
	for (int j = 0; j < PROP_JOBS; j++) {
		attrib_step_share_t js, st;
		uint64_t sum = 0, gpu_sum = 0;

		if (attrib_step_share(a, j, CG_STEP_EXTERN, &js))
			continue;
		PROP_ASSERT_LE(js.gpu_mj, js.share_mj);
		for (int s = 0; s < PROP_STEPS; s++) {
			if (attrib_step_share(a, j, _prop_sid(s), &st))
				continue;
			/* a forgotten job starts again */
			if (st.share_mj >= p->last_share[j][s])
				p->last_share[j][s] = st.share_mj;
			PROP_ASSERT_LE(st.gpu_mj, st.share_mj);
			sum += st.share_mj;
			gpu_sum += st.gpu_mj;
		}
		PROP_ASSERT_LE(sum, js.share_mj);
		PROP_ASSERT_LE(gpu_sum, js.gpu_mj);
	}
}

/* Every job's and step's GPU part (-1: not known to the split). */
typedef struct {
	int64_t job[PROP_JOBS], step[PROP_JOBS][PROP_STEPS];
	attrib_totals_t t;
} prop_gpu_snap_t;

static int64_t _prop_gpu_mj(attrib_t *a, int j, uint32_t step_id)
{
	attrib_step_share_t sh;

	return attrib_step_share(a, j, step_id, &sh) ? -1 :
	       (int64_t) sh.gpu_mj;
}

static void _prop_gpu_snap(attrib_t *a, prop_gpu_snap_t *snap)
{
	for (int j = 0; j < PROP_JOBS; j++) {
		snap->job[j] = _prop_gpu_mj(a, j, CG_STEP_EXTERN);
		for (int s = 0; s < PROP_STEPS; s++)
			snap->step[j][s] = _prop_gpu_mj(a, j, _prop_sid(s));
	}
	attrib_totals(a, &snap->t);
}

/* What one interval gave: after - before, 0 when the split did not know
 * it before; -1 when it forgot it. */
static int64_t _prop_delta(int64_t before, int64_t after)
{
	if (after < 0)
		return -1;
	return after - (before < 0 ? 0 : before);
}

/* The valid GPUs' energy among mask. */
static uint64_t _prop_mask_mj(const attrib_gpu_energy_t *g, size_t n,
			      uint64_t mask)
{
	uint64_t mj = 0;

	for (size_t i = 0; i < n; i++)
		if (g[i].valid && (mask & (1ULL << i)))
			mj += g[i].energy_mj;
	return mj;
}

/* The model step holding GPU i for sure: the only srun step whose mask
 * holds it, living since the last sample, having told its masks.  -1:
 * none. */
static int _prop_sure_holder(const prop_t *p, size_t i, int *step)
{
	int holder = -1, n = 0;

	for (int j = 0; j < PROP_JOBS; j++)
		for (int s = 0; s < PROP_SRUN; s++)
			if (p->step_mask[j][s] & (1ULL << i)) {
				n++;
				holder = j;
				*step = s;
			}
	if (n != 1 || !p->job[holder].on || !p->steady[holder][*step] ||
	    !p->told[holder][*step] || !p->known[holder][*step])
		return -1;
	return holder;
}

/* One GPU interval's checks against the snapshot taken before it. */
static void _prop_gpu_check(const prop_t *p, attrib_t *a,
			    const attrib_gpu_energy_t *g, bool cut,
			    const prop_gpu_snap_t *b)
{
	prop_gpu_snap_t n;
	uint64_t sure[PROP_JOBS][PROP_SRUN] = { { 0 } };
	uint64_t valid = _prop_mask_mj(g, p->ng, UINT64_MAX), e, given;
	uint64_t released;
	int64_t jobs_sum = 0;
	bool forgot = false;

	_prop_gpu_snap(a, &n);
	e = n.t.measured_mj - b->t.measured_mj;
	/* energy held before (valid GPU energy of an earlier interval) may
	 * be given in this one */
	released = b->t.gpu_held_mj;
	given = (n.t.gpu_charged_mj - b->t.gpu_charged_mj) +
		(n.t.gpu_unowned_mj - b->t.gpu_unowned_mj) +
		(n.t.gpu_to_rest_mj - b->t.gpu_to_rest_mj) +
		n.t.gpu_held_mj - b->t.gpu_held_mj;
	/* all the GPUs' energy accounted, or cut to the node's */
	PROP_ASSERT_EQ(cut, valid > e);
	PROP_ASSERT_EQ(given, (cut ? e : valid));
	PROP_ASSERT_EQ(n.t.gpu_clipped_mj - b->t.gpu_clipped_mj,
			  cut ? valid - e : 0);
	for (size_t i = 0; !cut && i < p->ng; i++) {
		int s, j = g[i].valid ? _prop_sure_holder(p, i, &s) : -1;

		if (j >= 0)
			sure[j][s] += g[i].energy_mj;
	}
	for (int j = 0; j < PROP_JOBS; j++) {
		int64_t dj = _prop_delta(b->job[j], n.job[j]);

		forgot |= dj < 0;
		if (dj < 0)
			continue;
		jobs_sum += dj;
		/* only where the job's GPUs are (or held before) */
		PROP_ASSERT_LE(dj, _prop_mask_mj(g, p->ng, p->job_mask[j]) +
				   released);
		for (int s = 0; s < PROP_STEPS; s++) {
			int64_t ds = _prop_delta(b->step[j][s], n.step[j][s]);
			uint64_t mask = s < PROP_SRUN ? p->step_mask[j][s] :
				p->job_mask[j];

			if (ds < 0)
				continue;
			PROP_ASSERT_LE(ds, _prop_mask_mj(g, p->ng, mask) +
					   released);
			if (s < PROP_SRUN)
				PROP_ASSERT_GE(ds, sure[j][s]);
		}
	}
	if (!forgot)
		PROP_ASSERT_EQ(jobs_sum, n.t.gpu_charged_mj -
					    b->t.gpu_charged_mj);
}

/* A GPU run's readings: often above the node's, one in 5 not read. */
static void _prop_readings(prop_t *p, attrib_gpu_energy_t *g)
{
	for (size_t i = 0; i < p->ng; i++) {
		uint64_t top = rand_r(&p->seed) % 4 ? 100000 : 600000;

		g[i].energy_mj = rand_r(&p->seed) % top;
		g[i].raw_mj = g[i].energy_mj;
		g[i].valid = rand_r(&p->seed) % 5 != 0;
	}
}

/* A GPU run's interval: the snapshot, the split, the checks. */
static void _prop_gpu_interval(prop_t *p, attrib_t *a)
{
	attrib_gpu_energy_t g[8];
	prop_gpu_snap_t before;
	int rc;

	_prop_tell(p, a);
	_prop_readings(p, g);
	_prop_gpu_snap(a, &before);
	rc = attrib_interval_gpus(a, p->t, p->e, &p->f.s, g, p->ng);
	if (rc != 0 && rc != ATTRIB_GPUS_CUT)
		ck_abort_msg("attrib_interval_gpus: %d", rc);
	if (p->based)
		_prop_gpu_check(p, a, g, rc == ATTRIB_GPUS_CUT, &before);
	p->based = true;
	for (int j = 0; j < PROP_JOBS; j++)
		for (int s = 0; s < PROP_STEPS; s++)
			p->steady[j][s] = p->job[j].live[s];
}

/* One round: events, an interval of energy and CPU time, sometimes a
 * GPU's energy (GPU runs: every GPU's), sometimes an outage (no sample);
 * then the checks. */
static void _prop_round(prop_t *p, attrib_t *a)
{
	attrib_gpu_t g[2];
	size_t ng = 0;
	uint64_t dt = 1 + rand_r(&p->seed) % (3 * S);

	_prop_events(p, a, dt);
	p->t += dt;
	p->e += rand_r(&p->seed) % 500000;
	_prop_scan(p);
	if (!p->gpus && rand_r(&p->seed) % 3 == 0) {
		g[ng++] = (attrib_gpu_t) {
			.energy_mj = rand_r(&p->seed) % 300000,
			.owned = rand_r(&p->seed) % 2,
			.job_id = rand_r(&p->seed) % PROP_JOBS,
			.step_id = _prop_sid(rand_r(&p->seed) % PROP_STEPS) };
	}
	if (rand_r(&p->seed) % 7 == 0)
		return;		/* an outage: this sample never comes */
	if (p->gpus)
		_prop_gpu_interval(p, a);
	else
		PROP_ASSERT_EQ(attrib_interval(a, p->t, p->e, &p->f.s, g,
						 ng), 0);
	_conserved(a);
	_prop_check_jobs(p, a);
}

START_TEST(test_property_conservation)
{
	prop_t p = { .seed = 12345 };
	unsigned long cut = 0, gpu_charged = 0;
	for (int run = 0; run < 40; run++) {
		attrib_params_t params = {
			.idle = (run & 1) ? ATTRIB_IDLE_NONE : ATTRIB_IDLE_SHARE,
			.idle_set = run % 3 == 0, .idle_mw = 50000,
			.node_cpus = (run % 4) ? 8 : 0,
			.retain_ns = (run % 5) ? 0 : 3 * S,
		};
		attrib_t *a = attrib_new(&params);
		attrib_totals_t tt;

		memset(p.job, 0, sizeof(p.job));
		memset(p.last_share, 0, sizeof(p.last_share));
		p.t = p.e = p.root = 0;
		p.based = false;
		memset(p.steady, 0, sizeof(p.steady));
		_prop_gpu_setup(&p, (run / 2) % 2);
		for (int r = 0; r < PROP_ROUNDS; r++)
			_prop_round(&p, a);
		attrib_totals(a, &tt);
		ck_assert_uint_gt(tt.charged_mj, 0);
		ck_assert_uint_le(tt.measured_mj, p.e);
		cut += tt.gpu_clipped_intervals;
		gpu_charged += p.gpus ? tt.gpu_charged_mj != 0 : 0;
		attrib_free(a);
	}
	/* the GPU runs did cut, and did charge GPUs */
	ck_assert_uint_gt(cut, 100);
	ck_assert_uint_ge(gpu_charged, 18);
}
END_TEST

/* ------------------------------------------------------------ keys */

START_TEST(test_conf_keys)
{
	attrib_conf_t c;
	char err[256] = "", buf[64] = "";

	attrib_conf_desc.init(&c);
	ck_assert_int_eq(c.mode, ATTRIB_MODE_NODE);
	ck_assert_str_eq(se_conf_value(&attrib_conf_desc, &c,
				       "EnergyAttribution", buf, sizeof(buf)),
			 "node");
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "energyattribution", "share", err,
				     sizeof(err)), 0);
	ck_assert_int_eq(c.mode, ATTRIB_MODE_SHARE);
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, "/etc/a.conf",
				     "EnergyAttribution", "shared", err,
				     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "/etc/a.conf"));
	ck_assert_ptr_nonnull(strstr(err, "EnergyAttribution=shared"));
	ck_assert_ptr_nonnull(strstr(err, "node, share"));

	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL, "EnergyIdle",
				     "none", err, sizeof(err)), 0);
	ck_assert_int_eq(c.idle, ATTRIB_IDLE_NONE);
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "EnergyIdleWatts", "87.5", err,
				     sizeof(err)), 0);
	ck_assert(c.idle_set);
	ck_assert_uint_eq(c.idle_mw, 87500);
	buf[0] = '\0';
	ck_assert_str_eq(se_conf_value(&attrib_conf_desc, &c,
				       "EnergyIdleWatts", buf, sizeof(buf)),
			 "87.5");
	err[0] = '\0';
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "EnergyIdleWatts", "-3", err,
				     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "acct_gather.conf: EnergyIdleWatts=-3"));
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "EnergyIdleWatts", "learn", err,
				     sizeof(err)), 0);
	ck_assert(!c.idle_set);
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "EnergyCgroupRoot", "cg", err,
				     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyCgroupRoot=cg"));
	ck_assert_int_eq(se_conf_set(&attrib_conf_desc, &c, NULL,
				     "EnergyCgroupRoot",
				     "/sys/fs/cgroup/cpuacct/slurm_%n", err,
				     sizeof(err)), 0);
	ck_assert_str_eq(c.cgroup_root, "/sys/fs/cgroup/cpuacct/slurm_%n");
	attrib_conf_desc.free(&c);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("attrib");
	TCase *tc = tcase_create("reader");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, test_step_names);
	tcase_add_test(tc, test_count_cpus);
	tcase_add_test(tc, test_scan_v1);
	tcase_add_test(tc, test_scan_v2);
	tcase_add_test(tc, test_is_sluid);
	tcase_add_test(tc, test_scan_v2_sluid);
	tcase_add_test(tc, test_stepd_title_job);
	tcase_add_test(tc, test_root_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("split");
	tcase_add_test(tc, test_apportion);
	tcase_add_test(tc, test_two_steps_3_to_1);
	tcase_add_test(tc, test_idle_interval_and_learning);
	tcase_add_test(tc, test_idle_by_cores);
	tcase_add_test(tc, test_mid_interval);
	tcase_add_test(tc, test_new_cgroup_before_registration);
	tcase_add_test(tc, test_vanished_job);
	tcase_add_test(tc, test_running_steps);
	tcase_add_test(tc, test_job_over_at_extern_end);
	tcase_add_test(tc, test_gpu_and_cpu);
	tcase_add_test(tc, test_gpu_owner_rules);
	tcase_add_test(tc, test_gpu_by_time_held);
	tcase_add_test(tc, test_gpu_holders_equal);
	tcase_add_test(tc, test_gpu_unknown_to_rest);
	tcase_add_test(tc, test_gpu_held_for_new_step);
	tcase_add_test(tc, test_gpu_cut_proportional);
	tcase_add_test(tc, test_gpu_cut_owned);
	tcase_add_test(tc, test_gpu_idle_learned_without);
	tcase_add_test(tc, test_gpu_part_accumulates);
	tcase_add_test(tc, test_outage);
	tcase_add_test(tc, test_property_conservation);
	/* 40 runs of 300 rounds, half with up to 8 GPUs: 0.1 s here, 7 s
	 * under valgrind; room for AddressSanitizer on a loaded 2-core
	 * machine (Check's default is 4 s a test) */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conf_keys);
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
