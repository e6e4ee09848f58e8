/*
 * test_gpu_nvml.c - the NVML loader and GPU energy meter against the fake
 * libnvidia-ml.so.1 of tests/gpu: devices, energy counter vs the power
 * trace's truth (through a sampler), clocks, --gpu-freq's locked or
 * application clocks (nvml_lib_set_clocks), errors, two jobs' energy.
 *
 * One test program, though over 800 lines: each case is short, all share
 * the fake library's fixture.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_energy.h"
#include "gpu_logic.h"
#include "nvml_lib.h"
#include "power_trace.h"
#include "sampler.h"
#include "se_log.h"
#include "se_time.h"

#ifndef FAKE_NVML_LIB
#error "FAKE_NVML_LIB must name the fake libnvidia-ml.so.1"
#endif

static char dir[64];
static char state[256], trace_path[256], log_path[256];
static double epoch;

static double _wall(void)
{
	return se_wall_ns() / 1e9;
}

/* The fake's devices: NVML 0 (bus 86) and 1 (bus 3b), with these minors. */
static void _write_state(unsigned minor0, unsigned minor1)
{
	FILE *f = fopen(state, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "epoch %.3f\ntrace %s\nlog %s\n", epoch, trace_path,
		log_path);
	fprintf(f, "mem_clocks 877 405\ngfx_clocks 1530 900 135\n");
	fprintf(f, "gpu bus=0000:86:00.0 uuid=GPU-a name=Tesla_V100 minor=%u "
		   "cpus=4-5,7 col=gpu0 links=-1,2\n", minor0);
	fprintf(f, "gpu bus=0000:3b:00.0 uuid=GPU-b name=Tesla_V100 minor=%u "
		   "cpus=0-3 col=gpu1 links=2,-1\n", minor1);
	fclose(f);
}

/* Two GPUs: a ramp 100 -> 300 W over 4 s, and a 50/150 W square. */
static void _setup(void)
{
	FILE *f;

	/* a fresh template each time: tests may share a process (CK_FORK=no) */
	snprintf(dir, sizeof(dir), "/tmp/se-test-gpu-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(state, sizeof(state), "%s/nvml.state", dir);
	snprintf(trace_path, sizeof(trace_path), "%s/gpu.trace", dir);
	snprintf(log_path, sizeof(log_path), "%s/nvml.log", dir);
	f = fopen(trace_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "@repeat 4\ntime gpu0 gpu1\n0 100 50\n2 200 50\n2 200 150\n"
		   "4 300 150\n");
	fclose(f);
	epoch = floor(_wall()) - 10;
	_write_state(1, 0);
	setenv("FAKE_NVML_STATE", state, 1);
}

static void _teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static const nvml_lib_t *_open(void)
{
	char err[256] = "";
	const nvml_lib_t *lib = nvml_lib_open(FAKE_NVML_LIB, err, sizeof(err));

	ck_assert_msg(lib != NULL, "%s", err);
	return lib;
}

START_TEST(test_devices)
{
	const nvml_lib_t *lib = _open();
	unsigned long cpus[4];
	unsigned int n = 0, minor;
	nvmlPciInfo_t pci;
	nvmlDevice_t d;
	char buf[80];

	ck_assert_int_eq(lib->DeviceGetCount(&n), NVML_SUCCESS);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(1, &d), NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetPciInfo(d, &pci), NVML_SUCCESS);
	ck_assert_str_eq(pci.busId, "0000:3b:00.0");
	ck_assert_uint_eq(pci.bus, 0x3b);
	ck_assert_int_eq(lib->DeviceGetMinorNumber(d, &minor), NVML_SUCCESS);
	ck_assert_uint_eq(minor, 0);
	ck_assert_int_eq(lib->DeviceGetUUID(d, buf, sizeof(buf)), NVML_SUCCESS);
	ck_assert_str_eq(buf, "GPU-b");
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetCpuAffinity(d, 4, cpus), NVML_SUCCESS);
	ck_assert_int_eq(gpu_cpumask_to_range(cpus, 4, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "4-5,7");
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(2, &d),
			 NVML_ERROR_INVALID_ARGUMENT);
	/* minor order: GPU with minor 0 (NVML 1) first */
	{
		unsigned order[4];

		ck_assert_int_eq(nvml_lib_minor_order(lib, order, NULL, 4), 2);
		ck_assert_uint_eq(order[0], 1);
		ck_assert_uint_eq(order[1], 0);
	}
	/* a second user shares the instance */
	ck_assert_ptr_eq(_open(), lib);
	nvml_lib_close();
	nvml_lib_close();
}
END_TEST

/* The counter is the trace's integral from the epoch. */
START_TEST(test_energy_counter)
{
	const nvml_lib_t *lib = _open();
	power_trace_t *tr;
	unsigned long long mj;
	double t0, t1, lo, hi;
	char err[256];
	nvmlDevice_t d;

	ck_assert_int_eq(power_trace_load(trace_path, &tr, err, sizeof(err)),
			 0);
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	t0 = _wall() - epoch;
	ck_assert_int_eq(lib->DeviceGetTotalEnergyConsumption(d, &mj),
			 NVML_SUCCESS);
	t1 = _wall() - epoch;
	lo = power_trace_joules(tr, 0, 0, t0) * 1000 - 1;
	hi = power_trace_joules(tr, 0, 0, t1) * 1000 + 1;
	ck_assert_msg(mj >= lo && mj <= hi, "%llu not in [%f, %f]", mj, lo,
		      hi);
	power_trace_free(tr);
	nvml_lib_close();
}
END_TEST

static int _between(void *arg, unsigned gpu, uint64_t t0, uint64_t t1,
		    uint64_t *mj)
{
	sampler_t **s = arg;

	return sampler_energy_between(s[gpu], t0, t1, mj);
}

/*
 * The trace's power jumps at every multiple of 2 s (gpu1 50 <-> 150 W,
 * gpu0 300 -> 100 W).  An instant within one 100 ms sample interval of a
 * jump is interpolated up to dP x 100 ms / 4 off (2.5 J for gpu1, 4 % of
 * its 1.25 s window): that is the sampling's documented bound, not the
 * 1 % this test checks.  So the windows below start at a trace phase of
 * 0.3 to 0.5 s: t0, t0 + 1.25 s and t0 + 2.5 s all stay 0.3 s or more
 * from a jump, where the interpolation is exact to the ramps.
 */
static void _away_from_steps(void)
{
	double phase = fmod(_wall() - epoch, 2.0);

	if (phase < 0.3 || phase >= 0.5)
		usleep((useconds_t) ((phase < 0.3 ? 0.3 - phase :
				      2.3 - phase) * 1e6));
}

/* A sampler on the fake GPU: energy between two instants within 1 %. */
START_TEST(test_sampler_vs_truth)
{
	const nvml_lib_t *lib = _open();
	nvml_meter_t m[2] = { { .lib = lib, .index = 0 },
			      { .lib = lib, .index = 1 } };
	sampler_t *s[2];
	power_trace_t *tr;
	char err[256];
	sampler_config_t cfg = {
		.period_ns = 100 * SE_NS_PER_MS,
		.deadline_ns = SE_NS_PER_SEC,
		.backoff_max_ns = SE_NS_PER_SEC,
		.use_counter = true,
		.counter = { .width_bits = NVML_ENERGY_COUNTER_BITS,
			     .mj_per_unit = NVML_ENERGY_MJ_PER_UNIT },
		.acc = { .history = 256, .max_power_mw = 5000000 },
		.label = "fake",
	};
	uint64_t t0, t1, mj;

	ck_assert_int_eq(power_trace_load(trace_path, &tr, err, sizeof(err)),
			 0);
	for (int i = 0; i < 2; i++)
		ck_assert_ptr_nonnull(s[i] = sampler_start(&nvml_meter_ops,
							   &m[i], &cfg));
	usleep(300000);
	_away_from_steps();
	t0 = se_mono_ns();
	usleep(2500000);
	t1 = se_mono_ns();
	usleep(300000);
	for (int i = 0; i < 2; i++) {
		double w0 = se_mono_to_wall_ns(t0) / 1e9 - epoch;
		double w1 = se_mono_to_wall_ns(t1) / 1e9 - epoch;
		double truth = power_trace_joules(tr, i, w0, w1) * 1000;

		ck_assert_int_eq(sampler_energy_between(s[i], t0, t1, &mj), 0);
		ck_assert_msg(fabs(mj - truth) <= truth * 0.01,
			      "GPU %d: %llu mJ, truth %.0f mJ", i,
			      (unsigned long long) mj, truth);
	}
	/* two jobs: A has GPU 0 over [t0, t1], B GPU 1 over the second half */
	{
		bool a[2] = { true, false }, b[2] = { false, true };
		uint64_t ea, eb, tm = t0 + (t1 - t0) / 2;
		double wm = se_mono_to_wall_ns(tm) / 1e9 - epoch;
		double w1 = se_mono_to_wall_ns(t1) / 1e9 - epoch;
		double w0 = se_mono_to_wall_ns(t0) / 1e9 - epoch;
		double ta = power_trace_joules(tr, 0, w0, w1) * 1000;
		double tb = power_trace_joules(tr, 1, wm, w1) * 1000;

		ck_assert_int_eq(gpu_job_energy(
			_between, s, a, 2, t0, t1,
			&ea), 0);
		ck_assert_int_eq(gpu_job_energy(
			_between, s, b, 2, tm, t1,
			&eb), 0);
		ck_assert_msg(fabs(ea - ta) <= ta * 0.01, "A %llu vs %.0f",
			      (unsigned long long) ea, ta);
		ck_assert_msg(fabs(eb - tb) <= tb * 0.01, "B %llu vs %.0f",
			      (unsigned long long) eb, tb);
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(sampler_stop(s[i]), 0);
	power_trace_free(tr);
	nvml_lib_close();
}
END_TEST

START_TEST(test_clocks_logged)
{
	const nvml_lib_t *lib = _open();
	unsigned int mem[8], gfx[8], nm = 8, ng = 8, mhz = 0;
	char line[256];
	nvmlDevice_t d;
	FILE *f;
	int sets = 0, resets = 0;

	ck_assert_int_eq(lib->DeviceGetHandleByIndex(1, &d), NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetSupportedMemoryClocks(d, &nm, mem),
			 NVML_SUCCESS);
	ck_assert_uint_eq(nm, 2);
	ck_assert_int_eq(lib->DeviceGetSupportedGraphicsClocks(d, mem[1], &ng,
							       gfx),
			 NVML_SUCCESS);
	ck_assert_uint_eq(ng, 3);
	ck_assert_int_eq(lib->DeviceSetApplicationsClocks(d, 405, 135),
			 NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetApplicationsClock(d, NVML_CLOCK_MEM,
							 &mhz), NVML_SUCCESS);
	ck_assert_uint_eq(mhz, 405);
	ck_assert_int_eq(lib->DeviceSetApplicationsClocks(d, 406, 135),
			 NVML_ERROR_INVALID_ARGUMENT);
	ck_assert_int_eq(lib->DeviceResetApplicationsClocks(d), NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS,
							 &mhz), NVML_SUCCESS);
	ck_assert_uint_eq(mhz, 1530);
	f = fopen(log_path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, " SET index=1 bus=0000:3b:00.0 mem=405 gfx=135"))
			sets++;
		if (strstr(line, " RESET index=1 bus=0000:3b:00.0"))
			resets++;
	}
	fclose(f);
	ck_assert_int_eq(sets, 1);
	ck_assert_int_eq(resets, 1);
	nvml_lib_close();
}
END_TEST

/* ----------------------------------------------------------- --gpu-freq */

/* Lines of the fake's log containing text. */
static int _log_count(const char *text)
{
	char line[256];
	int n = 0;
	FILE *f = fopen(log_path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, text))
			n++;
	fclose(f);
	return n;
}

/* The fake's clocks of GPU idx: "idx mem gfx gpu_min gpu_max mem_min
 * mem_max" (application clocks, then the locks). */
static void _clocks_line(unsigned idx, char *buf, size_t len)
{
	char path[300], line[128];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s.clocks", state);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f)) {
		unsigned i;

		if (sscanf(line, "%u", &i) == 1 && i == idx) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", line);
		}
	}
	fclose(f);
}

static void _assert_clocks(unsigned idx, const char *want)
{
	char got[128];

	_clocks_line(idx, got, sizeof(got));
	ck_assert_str_eq(got, want);
}

static void _app_clocks(const nvml_lib_t *lib, nvmlDevice_t d, unsigned mem,
			unsigned gfx)
{
	unsigned int mhz = 0;

	ck_assert_int_eq(lib->DeviceGetApplicationsClock(d, NVML_CLOCK_MEM,
							 &mhz), NVML_SUCCESS);
	ck_assert_uint_eq(mhz, mem);
	ck_assert_int_eq(lib->DeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS,
							 &mhz), NVML_SUCCESS);
	ck_assert_uint_eq(mhz, gfx);
}

static void _state_add(const char *line)
{
	FILE *f = fopen(state, "a");

	ck_assert_ptr_nonnull(f);
	fputs(line, f);
	fclose(f);
}

/*
 * (a) A library with the locked-clock calls (NVML 11+, as the fake): the
 * asked clocks (memory 405, graphics 900 MHz; the defaults 877 / 1530)
 * are locked with min = max, as Slurm 26.05 does; application clocks are
 * untouched; the step's end unlocks both and nothing else.
 */
START_TEST(test_gpu_freq_locked)
{
	const nvml_lib_t *lib = _open();
	const char *call = NULL;
	unsigned set = 0;
	nvmlDevice_t d;

	ck_assert_ptr_nonnull(lib->DeviceSetGpuLockedClocks);
	ck_assert_ptr_nonnull(lib->DeviceResetGpuLockedClocks);
	ck_assert_ptr_nonnull(lib->DeviceSetMemoryLockedClocks);
	ck_assert_ptr_nonnull(lib->DeviceResetMemoryLockedClocks);
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(1, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(lib, d, 405, 900, &set, &call),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_LOCKED_MEM | NVML_CLOCKS_LOCKED_GPU);
	ck_assert_int_eq(_log_count(
		" LOCK-MEM index=1 bus=0000:3b:00.0 min=405 max=405"), 1);
	ck_assert_int_eq(_log_count(
		" LOCK-GPU index=1 bus=0000:3b:00.0 min=900 max=900"), 1);
	ck_assert_int_eq(_log_count(" SET"), 0);
	_assert_clocks(1, "1 877 1530 900 900 405 405");
	_app_clocks(lib, d, 877, 1530);
	/* the step's end */
	ck_assert_int_eq(nvml_lib_reset_clocks(lib, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" UNLOCK-MEM index=1 bus=0000:3b:00.0"), 1);
	ck_assert_int_eq(_log_count(" UNLOCK-GPU index=1 bus=0000:3b:00.0"), 1);
	ck_assert_int_eq(_log_count(" RESET"), 0);
	_assert_clocks(1, "1 877 1530 0 0 0 0");
	/* GPU 0 was never touched */
	_assert_clocks(0, "0 877 1530 0 0 0 0");
	nvml_lib_close();
}
END_TEST

/* (a) on an H100: no application clocks at all, locked clocks work. */
START_TEST(test_gpu_freq_locked_no_app_clocks)
{
	const nvml_lib_t *lib;
	unsigned set = 0;
	nvmlDevice_t d;

	_state_add("app_clocks no\n");
	lib = _open();
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(lib, d, 877, 135, &set, NULL),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_LOCKED_MEM | NVML_CLOCKS_LOCKED_GPU);
	_assert_clocks(0, "0 877 1530 135 135 877 877");
	ck_assert_int_eq(_log_count("SET"), 0);	/* no SET-REFUSED either */
	ck_assert_int_eq(nvml_lib_reset_clocks(lib, d, set, NULL),
			 NVML_SUCCESS);
	_assert_clocks(0, "0 877 1530 0 0 0 0");
	ck_assert_int_eq(_log_count("RESET"), 0);
	nvml_lib_close();
}
END_TEST

/*
 * (b) A library without the locked-clock calls.  A real one lacks the
 * symbols, so nvml_lib_open() leaves those entries NULL; the fake exports
 * them, so the test clears them in a copy of the table (a second fake
 * library without them would need a Makefile change).  Application
 * clocks are set and reset, as before 26.05.  Then a library with the
 * GPU clock's calls only (NVML 10.1 to 11): the GPU clock is locked and
 * the pair set as application clocks, the memory clock being unlockable.
 */
START_TEST(test_gpu_freq_old_library)
{
	const nvml_lib_t *lib = _open();
	nvml_lib_t old = *lib;
	const char *call = NULL;
	unsigned set = 0;
	nvmlDevice_t d;

	old.DeviceSetGpuLockedClocks = NULL;
	old.DeviceResetGpuLockedClocks = NULL;
	old.DeviceSetMemoryLockedClocks = NULL;
	old.DeviceResetMemoryLockedClocks = NULL;
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(1, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(&old, d, 405, 900, &set, &call),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_APPLICATION);
	ck_assert_int_eq(_log_count(
		" SET index=1 bus=0000:3b:00.0 mem=405 gfx=900"), 1);
	ck_assert_int_eq(_log_count("LOCK"), 0);
	_assert_clocks(1, "1 405 900 0 0 0 0");
	_app_clocks(lib, d, 405, 900);
	ck_assert_int_eq(nvml_lib_reset_clocks(&old, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" RESET index=1 bus=0000:3b:00.0"), 1);
	ck_assert_int_eq(_log_count("LOCK"), 0);
	_app_clocks(lib, d, 877, 1530);

	/* the GPU clock's calls only */
	old.DeviceSetGpuLockedClocks = lib->DeviceSetGpuLockedClocks;
	old.DeviceResetGpuLockedClocks = lib->DeviceResetGpuLockedClocks;
	ck_assert_int_eq(nvml_lib_set_clocks(&old, d, 405, 135, &set, &call),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_LOCKED_GPU |
			  NVML_CLOCKS_APPLICATION);
	ck_assert_int_eq(_log_count(
		" LOCK-GPU index=1 bus=0000:3b:00.0 min=135 max=135"), 1);
	ck_assert_int_eq(_log_count(
		" SET index=1 bus=0000:3b:00.0 mem=405 gfx=135"), 1);
	ck_assert_int_eq(_log_count("LOCK-MEM"), 0);
	_assert_clocks(1, "1 405 135 135 135 0 0");
	ck_assert_int_eq(nvml_lib_reset_clocks(&old, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" UNLOCK-GPU index=1"), 1);
	ck_assert_int_eq(_log_count(" RESET index=1"), 2);
	ck_assert_int_eq(_log_count("UNLOCK-MEM"), 0);
	_assert_clocks(1, "1 877 1530 0 0 0 0");
	nvml_lib_close();
}
END_TEST

/*
 * (c) The library has the calls but the GPU refuses them with
 * NOT_SUPPORTED: application clocks instead.  A GPU older than Volta
 * locks neither clock; a Volta locks the GPU clock only, so its pair is
 * also set as application clocks.  Reset: what was set, no more.
 */
START_TEST(test_gpu_freq_not_supported)
{
	const nvml_lib_t *lib;
	const char *call = NULL;
	unsigned set = 0;
	nvmlDevice_t d;

	_state_add("locked_clocks none\n");
	lib = _open();
	ck_assert_ptr_nonnull(lib->DeviceSetGpuLockedClocks);
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(lib, d, 405, 900, &set, &call),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_APPLICATION);
	ck_assert_int_eq(_log_count(
		" LOCK-MEM-REFUSED index=0 bus=0000:86:00.0 not supported"), 1);
	ck_assert_int_eq(_log_count(
		" LOCK-GPU-REFUSED index=0 bus=0000:86:00.0 not supported"), 1);
	ck_assert_int_eq(_log_count(
		" SET index=0 bus=0000:86:00.0 mem=405 gfx=900"), 1);
	_assert_clocks(0, "0 405 900 0 0 0 0");
	ck_assert_int_eq(nvml_lib_reset_clocks(lib, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" RESET index=0 bus=0000:86:00.0"), 1);
	ck_assert_int_eq(_log_count("UNLOCK"), 0);
	_assert_clocks(0, "0 877 1530 0 0 0 0");
	nvml_lib_close();

	/* a Volta: the GPU clock locks, the memory clock does not */
	_state_add("locked_clocks gpu\n");
	ck_assert_int_eq(truncate(log_path, 0), 0);
	lib = _open();
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(0, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(lib, d, 877, 135, &set, &call),
			 NVML_SUCCESS);
	ck_assert_uint_eq(set, NVML_CLOCKS_LOCKED_GPU |
			  NVML_CLOCKS_APPLICATION);
	ck_assert_int_eq(_log_count(" LOCK-MEM-REFUSED index=0"), 1);
	ck_assert_int_eq(_log_count(" LOCK-GPU index=0 bus=0000:86:00.0 "
				    "min=135 max=135"), 1);
	ck_assert_int_eq(_log_count(" SET index=0 bus=0000:86:00.0 "
				    "mem=877 gfx=135"), 1);
	_assert_clocks(0, "0 877 135 135 135 0 0");
	ck_assert_int_eq(nvml_lib_reset_clocks(lib, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" UNLOCK-GPU index=0"), 1);
	ck_assert_int_eq(_log_count(" RESET index=0"), 1);
	ck_assert_int_eq(_log_count("UNLOCK-MEM"), 0);
	_assert_clocks(0, "0 877 1530 0 0 0 0");
	nvml_lib_close();
}
END_TEST

/*
 * Any other error of a locked-clock call (no permission, ...) is an
 * error, not a reason for application clocks; the clock that was locked
 * is still reset at the step's end.
 */
START_TEST(test_gpu_freq_lock_error)
{
	const nvml_lib_t *lib;
	const char *call = NULL;
	unsigned set = 0;
	nvmlDevice_t d;

	_state_add("fail nvmlDeviceSetGpuLockedClocks\n");
	lib = _open();
	ck_assert_int_eq(lib->DeviceGetHandleByIndex(1, &d), NVML_SUCCESS);
	ck_assert_int_eq(nvml_lib_set_clocks(lib, d, 405, 900, &set, &call),
			 NVML_ERROR_UNKNOWN);
	ck_assert_str_eq(call, "nvmlDeviceSetGpuLockedClocks");
	ck_assert_uint_eq(set, NVML_CLOCKS_LOCKED_MEM);
	ck_assert_int_eq(_log_count(" SET"), 0);
	_assert_clocks(1, "1 877 1530 0 0 405 405");
	ck_assert_int_eq(nvml_lib_reset_clocks(lib, d, set, &call),
			 NVML_SUCCESS);
	ck_assert_int_eq(_log_count(" UNLOCK-MEM index=1"), 1);
	ck_assert_int_eq(_log_count("UNLOCK-GPU"), 0);
	_assert_clocks(1, "1 877 1530 0 0 0 0");
	nvml_lib_close();
}
END_TEST

START_TEST(test_open_errors)
{
	char err[256] = "";

	ck_assert_ptr_null(nvml_lib_open("/nonexistent/libnvidia-ml.so.1", err,
					 sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "cannot load"));
	unsetenv("FAKE_NVML_STATE");
	ck_assert_ptr_null(nvml_lib_open(FAKE_NVML_LIB, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "nvmlInit"));
}
END_TEST

/* A failing energy read is a failed sample, not a 0. */
START_TEST(test_read_failure)
{
	const nvml_lib_t *lib;
	nvml_meter_t m = { 0 };
	meter_reading_t r;
	char msg[128] = "";
	FILE *f = fopen(state, "a");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "fail nvmlDeviceGetTotalEnergyConsumption\n");
	fclose(f);
	lib = _open();
	m.lib = lib;
	ck_assert_int_eq(nvml_meter_ops.open(&m, 0), 0);
	ck_assert_int_eq(nvml_meter_ops.read(&m, &r, 0, msg, sizeof(msg)),
			 -EAGAIN);
	ck_assert_ptr_nonnull(strstr(msg, "nvmlDeviceGetTotalEnergyConsumption"));
	ck_assert(!r.has_counter);
	nvml_lib_close();
}
END_TEST

/* ------------------------------------------ totals and a step's view */

#define MS	(1000ULL * 1000)

/* The fake's faults now (its control file, <state>.control). */
static void _control(const char *text)
{
	char path[300], tmp[310];
	FILE *f;

	snprintf(path, sizeof(path), "%s.control", state);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(rename(tmp, path), 0);
	usleep(150 * 1000);	/* the fake re-reads it every 100 ms */
}

/* The truth of sorted GPU i (minor order: 0 is NVML 1, col gpu1) at a
 * monotonic instant, mJ since the epoch. */
static double _truth_mj(unsigned i, uint64_t mono_ns)
{
	power_trace_t *tr;
	char err[256];
	double mj;

	ck_assert_int_eq(power_trace_load(trace_path, &tr, err, sizeof(err)),
			 0);
	mj = 1000 * power_trace_joules(tr, i == 0 ? 1 : 0, 0,
				       se_mono_to_wall_ns(mono_ns) / 1e9 -
				       epoch);
	power_trace_free(tr);
	return mj;
}

/* Wait (at most 5 s) for GPU i's total from a sample after t_ns. */
static void _total_after(gpu_energy_t *ge, unsigned i, uint64_t t_ns,
			 gpu_energy_total_t *f)
{
	uint64_t until = se_mono_ns() + 5000 * MS;

	while (gpu_energy_total(ge, i, se_mono_ns(), f) ||
	       f->sample_ns <= t_ns) {
		ck_assert_msg(se_mono_ns() < until, "no sample of GPU %u", i);
		usleep(20 * 1000);
	}
}

/*
 * slurmd's totals: none for a GPU failing since the start (not a 0 that
 * a step would take for a counter gone back), the counter's exact total
 * at each good sample, and after a fault the counter's total again, not
 * the estimate made during it.
 */
START_TEST(test_totals_and_faults)
{
	char err[256] = "";
	gpu_energy_total_t f, during;
	gpu_energy_t *ge;
	uint64_t t;

	_control("* error * UNKNOWN\n");
	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	usleep(400 * 1000);
	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(gpu_energy_total(ge, i, se_mono_ns(), &f),
				 -ENODATA);
	_control("");
	t = se_mono_ns();
	for (unsigned i = 0; i < 2; i++) {
		_total_after(ge, i, 0, &f);
		/* on the counter's scale: the truth since the epoch */
		ck_assert_msg(fabs(f.sample_mj - _truth_mj(i, f.sample_ns)) <
			      1000, "GPU %u: %llu mJ, true %.0f", i,
			      (unsigned long long) f.sample_mj,
			      _truth_mj(i, f.sample_ns));
	}
	/* a fault of 1.5 s: an estimate, then the counter again */
	_control("* error * TIMEOUT\n");
	usleep(1500 * 1000);
	ck_assert_int_eq(gpu_energy_total(ge, 1, se_mono_ns(), &during), 0);
	ck_assert_int_eq(during.state, SAMPLER_FAILING);
	ck_assert_uint_gt(during.energy_mj, during.sample_mj);
	t = se_mono_ns();
	_control("");
	for (unsigned i = 0; i < 2; i++) {
		_total_after(ge, i, t, &f);
		ck_assert_int_eq(f.state, SAMPLER_OK);
		ck_assert_msg(fabs(f.sample_mj - _truth_mj(i, f.sample_ns)) <
			      1000, "GPU %u after the fault: %llu mJ, true %.0f",
			      i, (unsigned long long) f.sample_mj,
			      _truth_mj(i, f.sample_ns));
		/* and now: that sample at its power since */
		ck_assert_int_eq(gpu_energy_total(ge, i, f.sample_ns +
						  50 * MS, &f), 0);
		ck_assert_uint_eq(f.energy_mj, f.sample_mj +
				  f.power_mw * 50 / 1000);
	}
	gpu_energy_stop(ge);
}
END_TEST

/* GPU i's counter and power now, with the wall instants around the read. */
static void _read_now(const nvml_lib_t *lib, unsigned i,
		      unsigned long long *mj, unsigned int *mw, double *w0,
		      double *w1)
{
	nvmlDevice_t d;

	ck_assert_int_eq(lib->DeviceGetHandleByIndex(i, &d), NVML_SUCCESS);
	*w0 = _wall() - epoch;
	ck_assert_int_eq(lib->DeviceGetTotalEnergyConsumption(d, mj),
			 NVML_SUCCESS);
	ck_assert_int_eq(lib->DeviceGetPowerUsage(d, mw), NVML_SUCCESS);
	*w1 = _wall() - epoch;
}

/* The true counter (mJ) at trace time t of a GPU playing column c0, then
 * c1 from s1, then c0 again from s2 (s1 < s2). */
static double _switched_mj(const power_trace_t *tr, int c0, int c1,
			   double s1, double s2, double t)
{
	double j = power_trace_joules(tr, c0, 0, fmin(t, s1));

	if (t > s1)
		j += power_trace_joules(tr, c1, s1, fmin(t, s2));
	if (t > s2)
		j += power_trace_joules(tr, c0, s2, t);
	return j * 1000;
}

static void _assert_counter(const char *what, unsigned long long mj,
			    double lo, double hi)
{
	ck_assert_msg(mj >= lo - 1 && mj <= hi + 1,
		      "%s: %llu mJ not in [%.0f, %.0f]", what, mj, lo, hi);
}

/*
 * "col": NVML index 0 plays gpu0, then gpu1 from s1, then gpu0 again from
 * s2 (the lines in the file out of time order), its counter continuous:
 * the integral of each column over its part.  GPU 1, another node's
 * switch and a column the trace lacks change nothing.
 */
START_TEST(test_col_switch)
{
	const nvml_lib_t *lib = _open();
	double s1 = ceil(_wall()) + 1.0 - epoch, s2 = s1 + 0.7, w0, w1;
	unsigned long long mj;
	power_trace_t *tr;
	unsigned int mw;
	char err[256], text[512];

	ck_assert_int_eq(power_trace_load(trace_path, &tr, err, sizeof(err)),
			 0);
	snprintf(text, sizeof(text),
		 "* col 0 gpu0 %.3f\n* col 0 gpu1 %.3f\n"
		 "no-such-node col 1 gpu0 %.3f\n* col 1 nosuchcol %.3f\n",
		 s2 + epoch, s1 + epoch, s1 + epoch, s1 + epoch);
	_control(text);
	/* before the first switch: gpu0 since the epoch */
	_read_now(lib, 0, &mj, &mw, &w0, &w1);
	ck_assert(w1 < s1);
	_assert_counter("before", mj, 1000 * power_trace_joules(tr, 0, 0, w0),
			1000 * power_trace_joules(tr, 0, 0, w1));
	/* between: gpu1's energy since s1 on top of gpu0's up to s1 */
	usleep((useconds_t) ((s1 + 0.3 - (_wall() - epoch)) * 1e6));
	_read_now(lib, 0, &mj, &mw, &w0, &w1);
	ck_assert(w0 > s1 && w1 < s2);
	_assert_counter("between", mj, _switched_mj(tr, 0, 1, s1, s2, w0),
			_switched_mj(tr, 0, 1, s1, s2, w1));
	ck_assert_uint_eq(mw, lround(1000 * power_trace_watts(tr, 1, w1)));
	/* after the switch back */
	usleep((useconds_t) ((s2 + 0.3 - (_wall() - epoch)) * 1e6));
	_read_now(lib, 0, &mj, &mw, &w0, &w1);
	ck_assert(w0 > s2);
	_assert_counter("after", mj, _switched_mj(tr, 0, 1, s1, s2, w0),
			_switched_mj(tr, 0, 1, s1, s2, w1));
	/* not gpu0 throughout: gpu1 draws 50 W or more below it, 0.7 s */
	ck_assert_double_gt(fabs(mj - 1000 * power_trace_joules(tr, 0, 0, w1)),
			    30000);
	/* GPU 1 still plays gpu1 from the epoch */
	_read_now(lib, 1, &mj, &mw, &w0, &w1);
	_assert_counter("GPU 1", mj, 1000 * power_trace_joules(tr, 1, 0, w0),
			1000 * power_trace_joules(tr, 1, 0, w1));
	power_trace_free(tr);
	nvml_lib_close();
}
END_TEST

static void _write_scale(unsigned i, unsigned long long raw,
			 unsigned long long fig)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/slurm-energy-gpu%u.scale", dir, i);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%llu %llu %.3f\n", raw, fig, _wall());
	fclose(f);
}

static void _read_scale(unsigned i, unsigned long long *raw,
			unsigned long long *fig)
{
	char path[300];
	double wall;
	FILE *f;

	snprintf(path, sizeof(path), "%s/slurm-energy-gpu%u.scale", dir, i);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%llu %llu %lf", raw, fig, &wall), 3);
	fclose(f);
}

/*
 * A GPU's scale across runs (a slurmd restart or reconfigure): it goes on
 * from the kept total by the counter's increase; a counter below the
 * kept one (a driver reload) starts a scale of its own.
 */
START_TEST(test_scale_kept)
{
	const unsigned long long big = 5000000000ULL;	/* 5 MJ */
	unsigned long long raw, fig;
	char err[256] = "";
	gpu_energy_total_t f, g;
	gpu_energy_t *ge;
	double truth;

	_write_scale(0, 1000, big);		/* went on since */
	_write_scale(1, 1ULL << 50, big);	/* the counter went back */
	ge = gpu_energy_start_kept(FAKE_NVML_LIB, 100 * MS, dir, err,
				   sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	_total_after(ge, 0, 0, &f);
	truth = _truth_mj(0, f.sample_ns);
	ck_assert_msg(fabs((double) f.sample_mj - (big + truth - 1000)) < 1000,
		      "kept: %llu mJ, want %.0f", (unsigned long long)
		      f.sample_mj, big + truth - 1000);
	_total_after(ge, 1, 0, &g);
	ck_assert_msg(fabs(g.sample_mj - _truth_mj(1, g.sample_ns)) < 1000,
		      "not kept: %llu mJ, true %.0f", (unsigned long long)
		      g.sample_mj, _truth_mj(1, g.sample_ns));
	usleep(300 * 1000);
	gpu_energy_stop(ge);
	/* stop kept the scale where it ended ... */
	_read_scale(0, &raw, &fig);
	ck_assert_uint_ge(fig, f.sample_mj);
	ck_assert_msg(fabs((double) fig - (big + raw - 1000)) < 5,
		      "kept %llu at raw %llu", fig, raw);
	/* ... and the next run goes on from it */
	ge = gpu_energy_start_kept(FAKE_NVML_LIB, 100 * MS, dir, err,
				   sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	_total_after(ge, 0, 0, &g);
	ck_assert_uint_ge(g.sample_mj, fig);
	ck_assert_msg(fabs((double) g.sample_mj -
			   (big + _truth_mj(0, g.sample_ns) - 1000)) < 1000,
		      "second run: %llu mJ", (unsigned long long) g.sample_mj);
	gpu_energy_stop(ge);
}
END_TEST

/*
 * A step's view of a GPU (issue #14): a total corrected downwards after
 * a fault is taken as is (it was once taken for a restart, and the whole
 * total was added: +167 % on the cluster); a total below the base is a
 * new scale, bridged at the last power.
 */
START_TEST(test_step_view)
{
	const uint64_t s = 1000ULL * MS;
	gpu_step_gpu_t g = { 0 };
	uint64_t b;

	/* base at the start, then the counter's increases */
	ck_assert_int_eq(gpu_step_feed(&g, 10000, 200, 1 * s, 1 * s, 2 * s,
				       &b), 0);
	ck_assert_uint_eq(gpu_step_energy(&g), 0);
	gpu_step_feed(&g, 10400, 200, 3 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 400);
	/* an estimate across a fault (14958), then the counter (14812) */
	gpu_step_feed(&g, 14958, 213, 20 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 4958);
	ck_assert_int_eq(gpu_step_feed(&g, 14812, 170, 21 * s, 1 * s, 2 * s,
				       &b), 0);
	ck_assert_uint_eq(b, 0);
	ck_assert_uint_eq(gpu_step_energy(&g), 4812);
	gpu_step_feed(&g, 15000, 170, 22 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 5000);
	/* the counter went back while slurmd was down: 3 s at 170 W */
	ck_assert_int_eq(gpu_step_feed(&g, 300, 150, 25 * s, 1 * s, 2 * s,
				       &b), 1);
	ck_assert_uint_eq(b, 510);
	ck_assert_uint_eq(gpu_step_energy(&g), 5510);
	gpu_step_feed(&g, 450, 150, 26 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 5660);

	/* a first total 5 s late counts its power over those 5 s */
	memset(&g, 0, sizeof(g));
	gpu_step_feed(&g, 7000, 100, 6 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 500);
	gpu_step_feed(&g, 7100, 100, 7 * s, 1 * s, 2 * s, &b);
	ck_assert_uint_eq(gpu_step_energy(&g), 600);
}
END_TEST

/* ------------------------------------- minors, errno, async start */

/* The core's log lines, for the async start's two. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char said_text[8192];

static void _said_sink(void *arg, se_log_level_t level, const char *msg)
{
	size_t len;

	(void) arg;
	if (level > SE_LOG_INFO)
		return;
	pthread_mutex_lock(&said_lock);
	len = strlen(said_text);
	snprintf(said_text + len, sizeof(said_text) - len, "%d|%s\n", level,
		 msg);
	pthread_mutex_unlock(&said_lock);
}

static void _said_start(void)
{
	said_text[0] = '\0';
	se_log_set_sink(_said_sink, NULL);
}

/* How often the core's log holds needle. */
static int _said(const char *needle)
{
	int n = 0;

	pthread_mutex_lock(&said_lock);
	for (const char *p = said_text; (p = strstr(p, needle)); p++)
		n++;
	pthread_mutex_unlock(&said_lock);
	return n;
}

/* Each sampler's minor, and the way back from a minor. */
START_TEST(test_minors)
{
	char err[256] = "";
	gpu_energy_t *ge;
	FILE *f;

	_write_state(7, 2);
	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	/* GPU 0 has the smallest minor: NVML 1's */
	ck_assert_int_eq(gpu_energy_minor(ge, 0), 2);
	ck_assert_int_eq(gpu_energy_minor(ge, 1), 7);
	ck_assert_int_eq(gpu_energy_minor(ge, 2), -1);
	ck_assert_int_eq(gpu_energy_index_of_minor(ge, 7), 1);
	ck_assert_int_eq(gpu_energy_index_of_minor(ge, 2), 0);
	ck_assert_int_eq(gpu_energy_index_of_minor(ge, 0), -1);
	gpu_energy_stop(ge);
	/* NVML cannot read them: -1, which no minor maps to */
	f = fopen(state, "a");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "fail nvmlDeviceGetMinorNumber\n");
	fclose(f);
	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	ck_assert_int_eq(gpu_energy_minor(ge, 0), -1);
	ck_assert_int_eq(gpu_energy_minor(ge, 1), -1);
	ck_assert_int_eq(gpu_energy_index_of_minor(ge, 2), -1);
	ck_assert_int_eq(gpu_energy_index_of_minor(ge, -1), -1);
	gpu_energy_stop(ge);
}
END_TEST

/*
 * errno tells a library that is not there (no driver installed: never
 * retried) from one whose nvmlInit fails (driver not loaded yet).
 */
START_TEST(test_open_errno)
{
	gpu_energy_async_config_t cfg = {
		.lib_path = "/nonexistent/libnvidia-ml.so.1",
		.period_ns = 100 * MS,
		.retry_first_ns = 10 * MS,
	};
	char err[256] = "";

	ck_assert_ptr_null(nvml_lib_open(cfg.lib_path, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(gpu_energy_start(cfg.lib_path, 100 * MS, err,
					    sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	/* a library, but not NVML (or too old a one) */
	ck_assert_ptr_null(nvml_lib_open("libc.so.6", err, sizeof(err)));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_ptr_nonnull(strstr(err, "no symbol nvmlInit_v2"));
	/* the fake without its state: nvmlInit fails */
	unsetenv("FAKE_NVML_STATE");
	ck_assert_ptr_null(nvml_lib_open(FAKE_NVML_LIB, err, sizeof(err)));
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_ptr_null(gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err,
					    sizeof(err)));
	ck_assert_int_eq(errno, EAGAIN);
	setenv("FAKE_NVML_STATE", state, 1);
	/* async: a missing library is the caller's to say, not retried */
	_said_start();
	ck_assert_ptr_null(gpu_energy_start_async(&cfg, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot load"));
	usleep(50 * 1000);
	ck_assert_str_eq(said_text, "");
	se_log_set_sink(NULL, NULL);
}
END_TEST

/* NVML that fails `fail` times, then the fake's. */
typedef struct {
	unsigned fail;
	unsigned calls;
} flaky_t;

static gpu_energy_t *_flaky_open(void *arg, char *err, size_t len)
{
	flaky_t *f = arg;

	if (f->calls++ < f->fail) {
		snprintf(err, len, "nvmlInit: Driver Not Loaded");
		errno = EAGAIN;
		return NULL;
	}
	return gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, len);
}

/* The GPUs of a once NVML answers (at most 5 s). */
static gpu_energy_t *_await(gpu_energy_async_t *a)
{
	uint64_t until = se_mono_ns() + 5000 * MS;
	gpu_energy_t *ge;

	while (!(ge = gpu_energy_async_get(a))) {
		ck_assert_msg(se_mono_ns() < until, "NVML never came");
		usleep(5 * 1000);
	}
	return ge;
}

/*
 * NVML failing 4 times then answering: 5 tries, waits of 10, 20, 40 and
 * 40 ms (doubled up to the maximum) between them, one line when the
 * retries start and one when NVML answers.
 */
START_TEST(test_async_tries_counted)
{
	flaky_t flaky = { .fail = 4 };
	gpu_energy_async_config_t cfg = {
		.period_ns = 100 * MS,
		.retry_first_ns = 10 * MS,
		.retry_max_ns = 40 * MS,
		.meanwhile = "steps count no GPU energy until it works",
		.open = _flaky_open,
		.open_arg = &flaky,
	};
	char err[256] = "";
	gpu_energy_async_t *a;
	gpu_energy_t *ge;
	uint64_t t0;

	_said_start();
	t0 = se_mono_ns();
	a = gpu_energy_start_async(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	ge = _await(a);
	ck_assert_uint_ge(se_mono_ns() - t0, 110 * MS);
	ck_assert_uint_eq(gpu_energy_async_tries(a), 5);
	ck_assert_uint_eq(flaky.calls, 5);
	ck_assert_uint_eq(gpu_energy_count(ge), 2);
	/* one error line in all (the samplers add info lines of theirs) */
	ck_assert_int_eq(_said("0|"), 1);
	ck_assert_int_eq(_said("0|no GPU energy on this node yet: nvmlInit: Driver Not Loaded; trying again in the background"), 1);
	ck_assert_int_eq(_said("; steps count no GPU energy until it works\n"), 1);
	ck_assert_int_eq(_said("1|NVML available after 5 tries over 0 s: sampling the energy counters of 2 GPU(s) every 100 ms"), 1);
	gpu_energy_async_stop(a);
	se_log_set_sink(NULL, NULL);
}
END_TEST

/*
 * The fake's driver not loaded at start, then loaded: the GPUs come by
 * themselves.  And a stop while retrying ends the retries at once.
 */
START_TEST(test_async_driver_late)
{
	gpu_energy_async_config_t cfg = {
		.lib_path = FAKE_NVML_LIB,
		.period_ns = 100 * MS,
		.retry_first_ns = 20 * MS,
		.retry_max_ns = 20 * MS,
	};
	char err[256] = "";
	gpu_energy_async_t *a;
	uint64_t t;

	_control("* init DRIVER_NOT_LOADED\n");
	a = gpu_energy_start_async(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(strstr(err, "Driver Not Loaded"));
	usleep(200 * 1000);
	ck_assert_ptr_null(gpu_energy_async_get(a));
	ck_assert_uint_ge(gpu_energy_async_tries(a), 3);
	_control("");
	ck_assert_uint_eq(gpu_energy_count(_await(a)), 2);
	gpu_energy_async_stop(a);

	_control("* init DRIVER_NOT_LOADED\n");
	cfg.retry_first_ns = cfg.retry_max_ns = 3600 * SE_NS_PER_SEC;
	a = gpu_energy_start_async(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	t = se_mono_ns();
	gpu_energy_async_stop(a);
	ck_assert_uint_lt(se_mono_ns() - t, SE_NS_PER_SEC);
}
END_TEST

/* Intervals of 300 ms on real samplers until GPU gpu is in again. */
static unsigned _intervals_until_in(gpu_energy_t *ge, unsigned gpu,
				    uint64_t *t0, gpu_interval_t *seen,
				    unsigned max)
{
	for (unsigned n = 0; n < max; n++) {
		uint64_t t1;

		usleep(300 * 1000);
		t1 = se_mono_ns();
		ck_assert_int_eq(gpu_energy_interval(ge, gpu, *t0, t1,
						     &seen[n]), 0);
		*t0 = t1;
		if (seen[n].why == GPU_IN)
			return n + 1;
	}
	ck_abort_msg("GPU %u not in again after %u intervals", gpu, max);
	return max;
}

/*
 * gpu_energy_interval on the fake: a GPU lost mid-run is out ("GPU
 * lost", said at its first out interval), the other stays in; once it
 * reads again it is in after the interval its gap falls in, and says
 * how many intervals it was out.
 */
START_TEST(test_interval_lost_gpu)
{
	char err[256] = "";
	gpu_interval_t iv, seen[40];
	gpu_energy_total_t f;
	gpu_energy_t *ge;
	uint64_t t0, t1;
	unsigned n;

	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	for (unsigned i = 0; i < 2; i++)
		_total_after(ge, i, 0, &f);
	ck_assert_int_eq(gpu_energy_interval(ge, 2, 0, 1, &iv), -EINVAL);
	t0 = se_mono_ns();
	usleep(300 * 1000);
	t1 = se_mono_ns();
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(gpu_energy_interval(ge, i, t0, t1, &iv), 0);
		ck_assert_int_eq(iv.why, GPU_IN);
		/* 50 to 300 W over at most 0.3 s */
		ck_assert_uint_gt(iv.energy_mj, 0);
		ck_assert_uint_le(iv.energy_mj, 90000);
	}
	/* NVML 1 is GPU 0 (minor 0) */
	_control("* lost 1\n");
	usleep(600 * 1000);
	t0 = t1;
	t1 = se_mono_ns();
	ck_assert_int_eq(gpu_energy_interval(ge, 0, t0, t1, &iv), 0);
	ck_assert_int_eq(iv.why, GPU_OUT_LOST);
	ck_assert_uint_eq(iv.out_run, 1);
	ck_assert_int_eq(gpu_energy_interval(ge, 1, t0, t1, &iv), 0);
	ck_assert_int_eq(iv.why, GPU_IN);
	_control("");
	/* the sampler backs off: up to 0.8 s before it tries again */
	n = _intervals_until_in(ge, 0, &t1, seen, 20);
	ck_assert_uint_ge(n, 2);	/* its gap's interval is out too */
	ck_assert_int_eq(seen[n - 2].why, GPU_OUT_GAP);
	ck_assert_uint_eq(seen[n - 1].out_run, n);
	gpu_energy_stop(ge);
}
END_TEST

/*
 * gpu_energy_at (slurmd's node-mode GPU part): a GPU's cumulative energy
 * at two instants differs by exactly its energy between them, and grows.
 */
START_TEST(test_energy_at)
{
	char err[256] = "";
	gpu_energy_total_t f;
	uint64_t t0, t1, e0, e1, between;
	gpu_energy_t *ge;

	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	_total_after(ge, 0, 0, &f);
	t0 = se_mono_ns();
	usleep(500 * 1000);
	t1 = se_mono_ns();
	usleep(200 * 1000);	/* a sample after t1: both interpolated */
	ck_assert_int_eq(gpu_energy_at(ge, 0, t0, &e0), 0);
	ck_assert_int_eq(gpu_energy_at(ge, 0, t1, &e1), 0);
	ck_assert_int_eq(gpu_energy_between(ge, 0, t0, t1, &between), 0);
	ck_assert_uint_gt(e1, e0);
	ck_assert_uint_eq(e1 - e0, between);
	/* 50 to 300 W over 0.5 s */
	ck_assert_uint_ge(between, 20000);
	ck_assert_uint_le(between, 160000);
	ck_assert_int_eq(gpu_energy_at(ge, 2, t1, &e1), -EINVAL);
	ck_assert_int_eq(gpu_energy_at(NULL, 0, t1, &e1), -EINVAL);
	gpu_energy_stop(ge);
}
END_TEST

/*
 * The split's round (gpu_energy_await): the GPUs read on their own ticks,
 * so at the meter's instant their newest samples may be older.  Waited
 * for, each is kicked and read, and its interval ends at the instant
 * itself, not at its previous sample (which would give an empty interval
 * here, and a longer one next, cut to the meter's).  A hung read holds the
 * wait no longer than its bound.
 */
START_TEST(test_await_round)
{
	char err[256] = "";
	gpu_energy_total_t f;
	gpu_interval_t iv;
	gpu_energy_t *ge;
	uint64_t t0, t1, start, took;

	/* no tick in the test: only the first reads and the kicks */
	ge = gpu_energy_start(FAKE_NVML_LIB, 1000 * SE_NS_PER_SEC, err,
			      sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	for (unsigned i = 0; i < 2; i++)
		_total_after(ge, i, 0, &f);
	t0 = se_mono_ns();
	for (unsigned i = 0; i < 2; i++)	/* based at the first read */
		ck_assert_int_eq(gpu_energy_interval(ge, i, 0, t0, &iv), 0);
	usleep(300 * 1000);
	t1 = se_mono_ns();
	ck_assert_uint_eq(gpu_energy_await(ge, t1, 0, 500 * MS), 0);
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(gpu_energy_interval(ge, i, t0, t1, &iv), 0);
		ck_assert_int_eq(iv.why, GPU_IN);
		/* the trace's power (50 to 300 W) over at least 0.3 s */
		ck_assert_uint_ge(iv.energy_mj, 15000);
		ck_assert_uint_le(iv.energy_mj, 300000);
	}
	/* without the wait: the interval ends at the GPU's newest sample,
	 * the kicked one just after t1, so 0.2 s are missing from it */
	usleep(200 * 1000);
	t0 = t1;
	t1 = se_mono_ns();
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(gpu_energy_interval(ge, i, t0, t1, &iv), 0);
		ck_assert_int_eq(iv.why, GPU_IN);
		ck_assert_uint_lt(iv.energy_mj, 3000);	/* < 10 ms of it */
	}
	/* NVML 1 is GPU 0: its reads hang 0.6 s; GPU 1 answers */
	_control("* hang 1 0.6\n");
	t1 = se_mono_ns();
	start = se_mono_ns();
	ck_assert_uint_eq(gpu_energy_await(ge, t1, 0, 100 * MS), 1);
	took = se_mono_ns() - start;
	ck_assert_uint_ge(took, 100 * MS);
	ck_assert_uint_lt(took, 400 * MS);
	/* a GPU read within the skew is not waited for */
	ck_assert_uint_eq(gpu_energy_await(ge, se_mono_ns(),
					   1000 * SE_NS_PER_SEC, 100 * MS), 0);
	_control("");
	gpu_energy_stop(ge);

	/* at 100 ms, a GPU whose read hangs past its next tick is not waited
	 * for (the cursor judges it stale), the other one is */
	ge = gpu_energy_start(FAKE_NVML_LIB, 100 * MS, err, sizeof(err));
	ck_assert_msg(ge != NULL, "%s", err);
	for (unsigned i = 0; i < 2; i++)
		_total_after(ge, i, 0, &f);
	_control("* hang 1 0.8\n");	/* its 150 ms: read since, hung */
	usleep(250 * 1000);
	ck_assert_uint_eq(gpu_energy_await(ge, se_mono_ns(), 0, 300 * MS), 0);
	_control("");
	gpu_energy_stop(ge);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("gpu_nvml");
	TCase *tc = tcase_create("fake");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_devices);
	tcase_add_test(tc, test_energy_counter);
	tcase_add_test(tc, test_sampler_vs_truth);
	tcase_add_test(tc, test_clocks_logged);
	tcase_add_test(tc, test_gpu_freq_locked);
	tcase_add_test(tc, test_gpu_freq_locked_no_app_clocks);
	tcase_add_test(tc, test_gpu_freq_old_library);
	tcase_add_test(tc, test_gpu_freq_not_supported);
	tcase_add_test(tc, test_gpu_freq_lock_error);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_read_failure);
	tcase_add_test(tc, test_totals_and_faults);
	tcase_add_test(tc, test_col_switch);
	tcase_add_test(tc, test_energy_at);
	tcase_add_test(tc, test_scale_kept);
	tcase_add_test(tc, test_step_view);
	tcase_add_test(tc, test_minors);
	tcase_add_test(tc, test_open_errno);
	tcase_add_test(tc, test_async_tries_counted);
	tcase_add_test(tc, test_async_driver_late);
	tcase_add_test(tc, test_interval_lost_gpu);
	tcase_add_test(tc, test_await_round);
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
	return failed ? 1 : 0;
}
