/*
 * se-bench-attrib.c - slurmd's CPU per meter sample in
 * EnergyAttribution=share: the cgroup scan (cg_cpu.h) plus the split
 * (attrib.h), with 1, 16 and 128 steps on the node, on fixture trees of
 * both Slurm layouts (cgroup v1 cpuacct, v2 cpu.stat) written on tmpfs;
 * then 128 steps with each count of GPUs of GPUS (default 8,64), read at
 * every sample and held by the steps (issue #31).
 *
 * Between samples the bench advances every step's CPU time in the files
 * (not measured); each sample is then what slurmd's sampler thread does:
 * cg_scan() of the tree and attrib_interval_gpus().  CPU time is the
 * thread's own (CLOCK_THREAD_CPUTIME_ID).  The bound of issue #13: the
 * split at most 0.1 ms per step per sample, a GPU counted as a step.
 *
 * GPU i belongs to job i mod jobs; two GPUs in three are its step 0's own
 * (an srun step's, rule 1 of attrib_interval_gpus), the third its job's
 * only (its batch step's, rule 2).  Each GPU reads 1 J or so per sample,
 * under the node's 250 J: no cut.
 *
 * usage: se-bench-attrib [DIR [SAMPLES [GPUS]]]
 *        (default /dev/shm, 2000, 8,64; GPUS a comma list, at most 64)
 * DIR on tmpfs: fixture files, advanced between samples.  DIR in a real
 * cgroup v1 cpuacct hierarchy (e.g. /sys/fs/cgroup/cpuacct, as root): the
 * bench makes real cgroups (the kernel's files, read as slurmd would; no
 * process in them, so their CPU time stays 0) and removes them at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "attrib.h"
#include "cg_cpu.h"

#define STEPS_PER_JOB	4	/* extern, batch, 0, 1 */
#define CGROUP_SUPER_MAGIC_V1	0x27e0eb

/* DIR is a real cgroup hierarchy: the kernel owns the files. */
static int real_cg;

static uint64_t _cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void _mkdir(const char *p)
{
	if (mkdir(p, 0755) && errno != EEXIST) {
		perror(p);
		exit(1);
	}
}

static void _write(const char *dir, const char *name, int v2,
		   uint64_t cpu_ns)
{
	char path[1400];
	FILE *f;

	if (real_cg)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir,
		 v2 ? "cpu.stat" : name);
	if (!(f = fopen(path, "w"))) {
		perror(path);
		exit(1);
	}
	if (v2)
		fprintf(f, "usage_usec %" PRIu64 "\nuser_usec %" PRIu64
			"\nsystem_usec 0\n", cpu_ns / 1000, cpu_ns / 1000);
	else
		fprintf(f, "%" PRIu64 "\n", cpu_ns);
	fclose(f);
}

static const char *const step_names[STEPS_PER_JOB] = {
	"step_extern", "step_batch", "step_0", "step_1" };

/* The tree of `steps` steps; its step dirs into dirs[]. */
static void _make_tree(const char *root, int v2, int steps, char **dirs,
		       char **jobs, int *n_jobs)
{
	char path[1200], parent[1100];
	int made = 0;

	_mkdir(root);
	_write(root, "cpuacct.usage", v2, 0);
	snprintf(parent, sizeof(parent), v2 ? "%s" : "%s/uid_1000", root);
	_mkdir(parent);
	*n_jobs = 0;
	for (int j = 0; made < steps; j++) {
		snprintf(path, sizeof(path), "%s/job_%d", parent, 100 + j);
		_mkdir(path);
		_write(path, "cpuacct.usage", v2, 0);
		jobs[(*n_jobs)++] = strdup(path);
		for (int k = 0; k < STEPS_PER_JOB && made < steps; k++) {
			char sp[1300];

			snprintf(sp, sizeof(sp), "%s/%s", path, step_names[k]);
			_mkdir(sp);
			_write(sp, "cpuacct.usage", v2, 0);
			dirs[made++] = strdup(sp);
		}
	}
}

typedef struct {
	double scan_us, split_us;
} result_t;

/* The steps' GPU masks: job j's steps are dirs j*4 .. j*4+3 (extern,
 * batch, 0, 1); step 0 holds its own GPUs, every step knows its job's. */
static void _tell_gpus(attrib_t *a, int steps, int n_jobs, int gpus)
{
	static const uint32_t ids[STEPS_PER_JOB] = {
		CG_STEP_EXTERN, CG_STEP_BATCH, 0, 1 };

	for (int j = 0; j < n_jobs; j++) {
		uint64_t job_mask = 0, own = 0;

		for (int i = j; i < gpus; i += n_jobs) {
			job_mask |= 1ULL << i;
			if (i % 3 != 2)
				own |= 1ULL << i;
		}
		if (!job_mask)
			continue;
		for (int k = 0; k < STEPS_PER_JOB &&
				j * STEPS_PER_JOB + k < steps; k++)
			attrib_step_gpus(a, 100 + j, ids[k],
					 ids[k] == 0 ? own : 0, job_mask, true);
	}
}

static result_t _run(const char *base, int v2, int steps, int gpus,
		     int samples)
{
	char root[1024], cmd[1100];
	char *dirs[512], *jobs[512];
	uint64_t use[512] = { 0 }, job_use[512] = { 0 }, total = 0;
	uint64_t scan_ns = 0, split_ns = 0, energy = 0;
	attrib_gpu_energy_t g[ATTRIB_MAX_GPUS];
	attrib_params_t p = { .idle = ATTRIB_IDLE_SHARE, .idle_set = true,
			      .idle_mw = 100000, .node_cpus = 128 };
	attrib_t *a = attrib_new(&p);
	cg_scan_t scan = { 0 };
	int n_jobs;
	result_t r;

	snprintf(root, sizeof(root), "%.900s/se-bench-attrib-%d-v%d-%d-%d",
		 base, (int) getpid(), v2 ? 2 : 1, steps, gpus);
	_make_tree(root, v2, steps, dirs, jobs, &n_jobs);
	_tell_gpus(a, steps, n_jobs, gpus);
	for (int s = 0; s < samples; s++) {
		uint64_t t0, t1, t2;

		/* the steps' CPU use since the last sample (not measured) */
		total = 0;
		for (int i = 0; i < steps; i++) {
			use[i] += 1000000 + (uint64_t) (i * 7919 + s) % 9000000;
			_write(dirs[i], "cpuacct.usage", v2, use[i]);
		}
		for (int j = 0; j < n_jobs; j++) {
			job_use[j] = 0;
			for (int i = j * STEPS_PER_JOB;
			     i < steps && i < (j + 1) * STEPS_PER_JOB; i++)
				job_use[j] += use[i];
			total += job_use[j];
			_write(jobs[j], "cpuacct.usage", v2, job_use[j]);
		}
		_write(root, "cpuacct.usage", v2, total);
		energy += 250000 + (uint64_t) (s % 13) * 1000;
		for (int i = 0; i < gpus; i++)
			g[i] = (attrib_gpu_energy_t) {
				.energy_mj = 900 + (uint64_t) (i * 31 + s) % 200,
				.raw_mj = 900, .valid = true };

		t0 = _cpu_ns();
		if (cg_scan(root, &scan)) {
			fprintf(stderr, "scan of %s failed\n", root);
			exit(1);
		}
		t1 = _cpu_ns();
		attrib_interval_gpus(a, (uint64_t) (s + 1) * 1000000000ULL,
				     energy, &scan, g, gpus);
		t2 = _cpu_ns();
		if (scan.n != (size_t) (steps + n_jobs)) {
			fprintf(stderr, "scan found %zu entries, not %d\n",
				scan.n, steps + n_jobs);
			exit(1);
		}
		if (s) {	/* the first sample is the baseline */
			scan_ns += t1 - t0;
			split_ns += t2 - t1;
		}
	}
	{
		attrib_totals_t t;

		attrib_totals(a, &t);
		if (t.charged_mj + t.unattributed_mj + t.gpu_held_mj !=
		    t.measured_mj) {
			fprintf(stderr, "not conserved\n");
			exit(1);
		}
		/* every GPU held, none cut: the bench measures the owners */
		if (gpus && (t.gpu_unowned_mj || t.gpu_clipped_mj ||
			     !t.gpu_charged_mj)) {
			fprintf(stderr, "GPUs not all charged\n");
			exit(1);
		}
	}
	r.scan_us = scan_ns / 1e3 / (samples - 1);
	r.split_us = split_ns / 1e3 / (samples - 1);
	cg_scan_free(&scan);
	attrib_free(a);
	if (real_cg)	/* cgroups go with rmdir, deepest first */
		snprintf(cmd, sizeof(cmd), "find '%s' -depth -type d -exec rmdir {} +",
			 root);
	else
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", root);
	for (int i = 0; i < steps; i++)
		free(dirs[i]);
	for (int j = 0; j < n_jobs; j++)
		free(jobs[j]);
	return r;
}

/* GPUS: a comma list of counts, each 1..ATTRIB_MAX_GPUS. */
static int _parse_gpus(const char *arg, int *counts, int max)
{
	int n = 0;

	for (const char *p = arg; *p && n < max;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > ATTRIB_MAX_GPUS ||
		    (*end && *end != ','))
			return -1;
		counts[n++] = (int) v;
		p = *end ? end + 1 : end;
	}
	return n;
}

static int _row(const char *base, int v2, int steps, int gpus, int samples)
{
	result_t r = _run(base, v2, steps, gpus, samples);
	int jobs = (steps + STEPS_PER_JOB - 1) / STEPS_PER_JOB;
	double per = r.split_us / (steps + gpus);

	printf("| cgroup v%d | %d | %d | %d | %.1f | %.2f | %.1f | %.3f | %s |\n",
	       v2 ? 2 : 1, steps, gpus, jobs, r.scan_us, r.split_us,
	       r.scan_us + r.split_us, per, per <= 100 ? "ok" : "EXCEEDED");
	return per > 100;
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	int samples = argc > 2 ? atoi(argv[2]) : 2000;
	const int steps[] = { 1, 16, 128 };
	int gpus[8], n_gpus = _parse_gpus(argc > 3 ? argv[3] : "8,64", gpus, 8);
	int fail = 0;
	struct statfs sf;

	real_cg = !statfs(base, &sf) && sf.f_type == CGROUP_SUPER_MAGIC_V1;

	if (samples < 2 || n_gpus < 0) {
		fprintf(stderr, "usage: %s [DIR [SAMPLES >= 2 [GPUS: counts 1-%d, comma-separated]]]\n",
			argv[0], ATTRIB_MAX_GPUS);
		return 2;
	}
	printf("slurmd CPU per meter sample, EnergyAttribution=share (%d samples, trees in %s%s)\n\n",
	       samples, base, real_cg ? ", real cgroups: v1 rows only" : "");
	printf("| layout | steps | GPUs | jobs | scan us/sample | split us/sample | total us/sample | split us/(step+GPU) | bound 100 us/(step+GPU) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int v2 = 0; v2 <= !real_cg; v2++) {
		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
			fail |= _row(base, v2, steps[i], 0, samples);
		for (int i = 0; i < n_gpus; i++)
			fail |= _row(base, v2, 128, gpus[i], samples);
	}
	return fail;
}
