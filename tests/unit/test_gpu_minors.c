/*
 * test_gpu_minors.c - the GPUs a step holds, from a device list as Slurm's
 * gres_g_get_devices() gives it (gpu_minors.h): which files are GPUs, the
 * minors of the allocated ones, and when the set says nothing.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "gpu_minors.h"

/* One device as Slurm's list holds it. */
typedef struct {
	const char *path;
	int dev_num;
	bool alloc;
} device_row_t;

static gpu_minors_t _of(const device_row_t *d, unsigned n)
{
	gpu_minors_t m = { 0 };

	for (unsigned i = 0; i < n; i++)
		gpu_minors_add_device(&m, d[i].path, d[i].dev_num, d[i].alloc);
	return m;
}

START_TEST(test_gpu_paths)
{
	ck_assert(gpu_minors_is_gpu_path("/dev/nvidia0"));
	ck_assert(gpu_minors_is_gpu_path("/dev/nvidia17"));
	ck_assert(gpu_minors_is_gpu_path("nvidia3"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidiactl"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidia-uvm"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidia"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidia-caps/nvidia-cap1"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidia1a"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/dri/renderD128"));
	ck_assert(!gpu_minors_is_gpu_path("/dev/nvidia0/"));
	ck_assert(!gpu_minors_is_gpu_path(""));
	ck_assert(!gpu_minors_is_gpu_path(NULL));
}
END_TEST

/* A 4-GPU node with MIG capabilities: the step holds GPUs 1 and 3 (and a
 * MIG capability, which is no GPU of its own). */
START_TEST(test_allocated_minors)
{
	const device_row_t d[] = {
		{ "/dev/nvidia0", 0, false },
		{ "/dev/nvidia1", 1, true },
		{ "/dev/nvidia2", 2, false },
		{ "/dev/nvidia3", 3, true },
		{ "/dev/nvidia-caps/nvidia-cap21", 21, true },
		{ "/dev/nvidiactl", -1, true },
	};
	gpu_minors_t m = _of(d, 6);

	ck_assert_uint_eq(m.gpus, 4);
	ck_assert_uint_eq(m.unusable, 0);
	ck_assert(gpu_minors_known(&m));
	ck_assert_uint_eq(m.set[0], (UINT64_C(1) << 1) | (UINT64_C(1) << 3));
	ck_assert_uint_eq(m.set[1] | m.set[2] | m.set[3], 0);
	ck_assert(!energy_query_minors_has(m.set, 21));
}
END_TEST

/* dev_num is the minor, whatever the list's order; high minors land in
 * their word. */
START_TEST(test_high_minors)
{
	const device_row_t d[] = {
		{ "/dev/nvidia200", 200, true },
		{ "/dev/nvidia64", 64, true },
		{ "/dev/nvidia255", 255, true },
	};
	gpu_minors_t m = _of(d, 3);

	ck_assert(gpu_minors_known(&m));
	ck_assert_uint_eq(m.set[0], 0);
	ck_assert_uint_eq(m.set[1], 1);
	ck_assert_uint_eq(m.set[3], (UINT64_C(1) << (200 - 192)) |
				    (UINT64_C(1) << 63));
}
END_TEST

/* Slurm knows the node's GPUs, the step holds none: known, empty (its
 * cgroup denies it every GPU). */
START_TEST(test_none_held)
{
	const device_row_t d[] = {
		{ "/dev/nvidia0", 0, false },
		{ "/dev/nvidia1", 1, false },
	};
	gpu_minors_t m = _of(d, 2);

	ck_assert(gpu_minors_known(&m));
	ck_assert_uint_eq(m.set[0] | m.set[1] | m.set[2] | m.set[3], 0);
}
END_TEST

/* Unknown: no GPU in Slurm's list (its cgroup constrains none), or a held
 * GPU whose minor no set can carry. */
START_TEST(test_unknown)
{
	const device_row_t others[] = {
		{ "/dev/nvidia-caps/nvidia-cap1", 1, true },
		{ "/dev/fpga0", 0, true },
	};
	const device_row_t wide[] = {
		{ "/dev/nvidia0", 0, true },
		{ "/dev/nvidia256", 256, true },
	};
	const device_row_t negative[] = {
		{ "/dev/nvidia0", -1, true },
	};
	const device_row_t wide_free[] = {
		{ "/dev/nvidia0", 0, true },
		{ "/dev/nvidia300", 300, false },
	};
	gpu_minors_t none = { 0 };
	gpu_minors_t m;

	ck_assert(!gpu_minors_known(&none));
	m = _of(others, 2);
	ck_assert_uint_eq(m.gpus, 0);
	ck_assert(!gpu_minors_known(&m));
	m = _of(wide, 2);
	ck_assert_uint_eq(m.unusable, 1);
	ck_assert(!gpu_minors_known(&m));
	m = _of(negative, 1);
	ck_assert(!gpu_minors_known(&m));
	/* a GPU beyond the sets that the step does not hold changes nothing */
	m = _of(wide_free, 2);
	ck_assert(gpu_minors_known(&m));
	ck_assert_uint_eq(m.set[0], 1);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("gpu_minors");
	TCase *t = tcase_create("devices");

	tcase_add_test(t, test_gpu_paths);
	tcase_add_test(t, test_allocated_minors);
	tcase_add_test(t, test_high_minors);
	tcase_add_test(t, test_none_held);
	tcase_add_test(t, test_unknown);
	suite_add_tcase(s, t);
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
