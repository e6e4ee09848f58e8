/*
 * test_gpu_topo.c - GPU PCI locality and closest-GPU choice on the hwloc
 * XML topologies of tests/gpu (2 and 4 NUMA nodes, GPUs on different ones).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "gpu_logic.h"
#include "gpu_topo.h"

#ifndef TOPO_DIR
#error "TOPO_DIR must name tests/gpu"
#endif

/* Device index i = /dev/nvidia<i> (see tests/gpu/README.md). */
static const char *const bus2[2] = { "0000:3b:00.0", "0000:86:00.0" };
static const char *const bus4[4] = {
	"0000:86:00.0", "0000:1a:00.0", "0000:af:00.0", "0000:3b:00.0",
};

START_TEST(test_locality_2numa)
{
	bool cpus[2 * 4];
	int numa[2];

	ck_assert_int_eq(gpu_topo_locality(TOPO_DIR "/topo-2numa-2gpu.xml",
					   bus2, 2, cpus, 4, numa), 0);
	ck_assert_int_eq(numa[0], 1);
	ck_assert_int_eq(numa[1], 0);
	ck_assert(!cpus[0] && !cpus[1] && cpus[2] && cpus[3]);
	ck_assert(cpus[4] && cpus[5] && !cpus[6] && !cpus[7]);
}
END_TEST

START_TEST(test_locality_unknown_bus)
{
	const char *ids[2] = { "0000:99:00.0", "" };
	bool cpus[2 * 4];
	int numa[2];

	ck_assert_int_eq(gpu_topo_locality(TOPO_DIR "/topo-2numa-2gpu.xml",
					   ids, 2, cpus, 4, numa), 0);
	ck_assert_int_eq(numa[0], -1);
	ck_assert_int_eq(numa[1], -1);
	for (int c = 0; c < 8; c++)
		ck_assert(cpus[c]);
	ck_assert_int_eq(gpu_topo_locality("/nonexistent.xml", ids, 2, cpus, 4,
					   numa), -ENOENT);
}
END_TEST

/* Every task of a 4-task step, one per NUMA node, gets its local GPU. */
START_TEST(test_closest_4numa)
{
	bool cpus[4 * 8], alloc[4] = { true, true, true, true }, out[4];
	const int expect_dev[4] = { 1, 3, 0, 2 };	/* NUMA n -> nvidiaX */
	int numa[4];
	gpu_bind_t b;

	ck_assert_int_eq(gpu_topo_locality(TOPO_DIR "/topo-4numa-4gpu.xml",
					   bus4, 4, cpus, 8, numa), 0);
	ck_assert_int_eq(numa[0], 2);
	ck_assert_int_eq(numa[1], 0);
	ck_assert_int_eq(numa[2], 3);
	ck_assert_int_eq(numa[3], 1);
	ck_assert_int_eq(gpu_bind_parse("closest", 0, &b), 0);
	for (int t = 0; t < 4; t++) {
		bool task[8] = { false };
		bool local;

		task[2 * t] = task[2 * t + 1] = true;
		ck_assert_int_eq(gpu_task_choose(&b, t, 4, alloc, 4, task,
						 cpus, 8, out, &local), 1);
		ck_assert(local);
		ck_assert_msg(out[expect_dev[t]], "task %d", t);
	}
	/* only GPUs of NUMA 0 and 3 allocated; a task on NUMA 1 is remote */
	{
		bool task[8] = { false }, local = true;
		bool two[4] = { false, true, true, false };

		task[2] = task[3] = true;
		ck_assert_int_eq(gpu_task_choose(&b, 0, 1, two, 4, task, cpus,
						 8, out, &local), 2);
		ck_assert(!local);
	}
}
END_TEST

START_TEST(test_osdev_busids)
{
	const char *names[5] = { "nvidia0", "nvidia1", "nvidia2", "nvidia3",
				 "nvidia9" };
	char ids[5][32];

	ck_assert_int_eq(gpu_topo_osdev_busids(TOPO_DIR "/topo-4numa-4gpu.xml",
					       names, 5, ids), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(ids[i], bus4[i]);
	ck_assert_str_eq(ids[4], "");
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("gpu_topo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_locality_2numa);
	tcase_add_test(tc, test_locality_unknown_bus);
	tcase_add_test(tc, test_closest_4numa);
	tcase_add_test(tc, test_osdev_busids);
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
