/*
 * test_gpu_logic.c - Slurm-free GPU logic: affinity strings, PCI order,
 * visible-device values per task for --gres=gpu:N, --gpus-per-task,
 * --gpu-bind=closest|map_gpu:|mask_gpu:, Links=, average watts.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gpu_logic.h"

/* The 4-GPU test node (tests/gpu/nvml-4gpu.state): device index i is
 * /dev/nvidia<i>; bus ids not in minor order. */
static const char *const bus4[4] = {
	"0000:86:00.0", "0000:1a:00.0", "0000:af:00.0", "0000:3b:00.0",
};

static const char *_vis(const bool *visible, const bool *sel)
{
	static char buf[64];

	ck_assert_int_eq(gpu_visible_devices(bus4, 4, visible, sel, buf,
					     sizeof(buf)), 0);
	return buf;
}

START_TEST(test_cpumask)
{
	unsigned long set[2] = { 0 };
	char buf[64];

	ck_assert_int_eq(gpu_cpumask_to_range(set, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	set[0] = 0xfUL | (1UL << 8) | (3UL << 10);
	set[1] = 1UL | (1UL << 63);
	ck_assert_int_eq(gpu_cpumask_to_range(set, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "0-3,8,10-11,64,127");
	set[0] = ~0UL;
	set[1] = 1UL;
	ck_assert_int_eq(gpu_cpumask_to_range(set, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "0-64");
	ck_assert_int_eq(gpu_cpumask_to_range(set, 2, buf, 3), -ENOSPC);
}
END_TEST

START_TEST(test_busid_order)
{
	int rank[4];

	ck_assert_int_lt(gpu_pci_busid_cmp("0000:1a:00.0", "0000:3b:00.0"), 0);
	ck_assert_int_gt(gpu_pci_busid_cmp("0001:00:00.0", "0000:ff:1f.7"), 0);
	ck_assert_int_eq(gpu_pci_busid_cmp("0000:3B:00.0", "0000:3b:00.0"), 0);
	ck_assert_int_lt(gpu_pci_busid_cmp("00000000:3b:00.0",
					   "00000000:3b:00.1"), 0);
	/* malformed sorts last */
	ck_assert_int_gt(gpu_pci_busid_cmp("", "0000:3b:00.0"), 0);
	ck_assert_int_gt(gpu_pci_busid_cmp("3b:00", "0000:ff:00.0"), 0);
	ck_assert_int_eq(gpu_pci_rank(bus4, 4, rank), 0);
	ck_assert_int_eq(rank[0], 2);	/* 86 */
	ck_assert_int_eq(rank[1], 0);	/* 1a */
	ck_assert_int_eq(rank[2], 3);	/* af */
	ck_assert_int_eq(rank[3], 1);	/* 3b */
}
END_TEST

/* --gres=gpu:1 / gpu:2: numbers are PCI ranks, ascending. */
START_TEST(test_visible_gres)
{
	bool one[4] = { true, false, false, false };	/* nvidia0 = 86 */
	bool two[4] = { true, false, false, true };	/* 86 and 3b */
	bool none[4] = { false };
	bool all[4] = { true, true, true, true };

	ck_assert_str_eq(_vis(NULL, one), "2");
	ck_assert_str_eq(_vis(NULL, two), "1,2");
	ck_assert_str_eq(_vis(NULL, none), "");
	ck_assert_str_eq(_vis(NULL, all), "0,1,2,3");
	/* cgroup-constrained: only the job's devices exist for CUDA */
	ck_assert_str_eq(_vis(two, two), "0,1");
	ck_assert_str_eq(_vis(two, one), "1");
	ck_assert_int_eq(gpu_visible_devices(bus4, 4, one, two, (char[8]){0},
					     8), -EINVAL);
}
END_TEST

/* -n2 --gpus-per-task=1 on a 2-GPU allocation: one each, no sharing. */
START_TEST(test_per_task)
{
	bool alloc[4] = { true, false, false, true }, t0[4], t1[4];
	gpu_bind_t b;

	ck_assert_int_eq(gpu_bind_parse(NULL, 1, &b), 0);
	ck_assert_int_eq(b.type, GPU_BIND_PER_TASK);
	ck_assert_int_eq(gpu_task_choose(&b, 0, 2, alloc, 4, NULL, NULL, 0,
					 t0, NULL), 1);
	ck_assert_int_eq(gpu_task_choose(&b, 1, 2, alloc, 4, NULL, NULL, 0,
					 t1, NULL), 1);
	ck_assert(t0[0] && !t0[3]);
	ck_assert(t1[3] && !t1[0]);
	ck_assert_str_eq(_vis(NULL, t0), "2");
	ck_assert_str_eq(_vis(NULL, t1), "1");
	ck_assert_int_eq(gpu_bind_parse(NULL, 0, &b), 0);
	ck_assert_int_eq(b.type, GPU_BIND_NONE);
	ck_assert_int_eq(gpu_task_choose(&b, 1, 2, alloc, 4, NULL, NULL, 0,
					 t1, NULL), 2);
}
END_TEST

START_TEST(test_map_mask)
{
	bool alloc[4] = { true, true, true, true }, out[4];
	gpu_bind_t b;

	ck_assert_int_eq(gpu_bind_parse("map_gpu:3,1", 0, &b), 0);
	ck_assert_int_eq(b.type, GPU_BIND_MAP);
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, NULL, NULL, 0,
					 out, NULL), 1);
	ck_assert(out[3] && !out[0] && !out[1] && !out[2]);
	ck_assert_int_eq(gpu_task_choose(&b, 3, 4, alloc, 4, NULL, NULL, 0,
					 out, NULL), 1);
	ck_assert(out[1]);
	ck_assert_str_eq(_vis(NULL, out), "0");	/* nvidia1 = 1a */

	ck_assert_int_eq(gpu_bind_parse("verbose,mask_gpu:0x3,0xc", 0, &b), 0);
	ck_assert_int_eq(b.type, GPU_BIND_MASK);
	ck_assert_int_eq(gpu_task_choose(&b, 1, 2, alloc, 4, NULL, NULL, 0,
					 out, NULL), 2);
	ck_assert(!out[0] && !out[1] && out[2] && out[3]);
	ck_assert_str_eq(_vis(NULL, out), "1,3");

	ck_assert_int_eq(gpu_bind_parse("map_gpu:0*2,2*2", 0, &b), 0);
	ck_assert_int_eq(b.n_values, 4);
	ck_assert_int_eq(b.values[2], 2);
	/* a device outside the allocation is dropped */
	alloc[2] = false;
	ck_assert_int_eq(gpu_task_choose(&b, 2, 4, alloc, 4, NULL, NULL, 0,
					 out, NULL), 0);

	ck_assert_int_eq(gpu_bind_parse("map_gpu:", 0, &b), -EINVAL);
	ck_assert_int_eq(gpu_bind_parse("map_gpu:1,x", 0, &b), -EINVAL);
	ck_assert_int_eq(gpu_bind_parse("nearest", 0, &b), -EINVAL);
	ck_assert_int_eq(gpu_bind_parse("map_gpu:1*0", 0, &b), -EINVAL);
}
END_TEST

/* closest on 8 CPUs: GPU i is local to CPUs 2i..2i+1 (4-NUMA node, by
 * PCI rank: device 1 -> 0-1, 3 -> 2-3, 0 -> 4-5, 2 -> 6-7). */
START_TEST(test_closest)
{
	bool gpu_cpus[4 * 8] = { false };
	bool alloc[4] = { true, true, true, true }, out[4], task[8] = { false };
	const int first_cpu[4] = { 4, 0, 6, 2 };
	bool local;
	gpu_bind_t b;

	for (int g = 0; g < 4; g++) {
		gpu_cpus[g * 8 + first_cpu[g]] = true;
		gpu_cpus[g * 8 + first_cpu[g] + 1] = true;
	}
	ck_assert_int_eq(gpu_bind_parse("closest", 0, &b), 0);
	task[2] = task[3] = true;
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, task, gpu_cpus, 8,
					 out, &local), 1);
	ck_assert(out[3] && local);
	/* a task spanning two domains gets both GPUs */
	task[4] = true;
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, task, gpu_cpus, 8,
					 out, &local), 1);
	task[5] = true;
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, task, gpu_cpus, 8,
					 out, &local), 2);
	ck_assert(out[0] && out[3]);
	/* no local GPU allocated: all allocated ones, flagged not local */
	memset(task, 0, sizeof(task));
	task[6] = true;
	alloc[2] = false;
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, task, gpu_cpus, 8,
					 out, &local), 3);
	ck_assert(!local);
	ck_assert_int_eq(gpu_task_choose(&b, 0, 4, alloc, 4, NULL, gpu_cpus, 8,
					 out, &local), -EINVAL);
}
END_TEST

START_TEST(test_device_path)
{
	char buf[64];

	ck_assert_int_eq(gpu_device_path(NULL, "n1", 3, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/dev/nvidia3");
	ck_assert_int_eq(gpu_device_path("/st/nodes/%h/dev/nvidia%u", "node2",
					 12, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/st/nodes/node2/dev/nvidia12");
	ck_assert_int_eq(gpu_device_path("/a%%b%u", NULL, 1, buf, sizeof(buf)),
			 0);
	ck_assert_str_eq(buf, "/a%b1");
	ck_assert_int_eq(gpu_device_path("/dev/%s", "h", 1, buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(gpu_device_path("/dev/nvidia%u", "h", 1, buf, 8),
			 -ENOSPC);
}
END_TEST

START_TEST(test_links)
{
	int counts[3 * 3] = { 0, 2, 0, 2, 0, 1, 0, 1, 0 };
	char buf[32];

	ck_assert_int_eq(gpu_links_string(counts, 3, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "-1,2,0");
	ck_assert_int_eq(gpu_links_string(counts, 3, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "0,1,-1");
	ck_assert_int_eq(gpu_links_string(counts, 3, 3, buf, sizeof(buf)),
			 -EINVAL);
}
END_TEST

/* Whole W x s handed out never drift from the true energy by >= 1 J. */
START_TEST(test_avg_watts)
{
	uint64_t carry = 0, true_mj = 0, given_mj = 0;

	ck_assert_uint_eq(gpu_avg_watts(250500, 1, &carry), 250);
	ck_assert_uint_eq(carry, 500);
	ck_assert_uint_eq(gpu_avg_watts(250500, 1, &carry), 251);
	ck_assert_uint_eq(carry, 0);
	ck_assert_uint_eq(gpu_avg_watts(7000, 0, &carry), 0);
	ck_assert_uint_eq(carry, 7000);
	carry = 0;
	for (unsigned i = 1; i < 500; i++) {
		uint64_t mj = 100000 + (i * 7919) % 3333, s = 1 + i % 30;

		true_mj += mj * s;
		given_mj += (uint64_t) gpu_avg_watts(mj * s, s, &carry) * s *
			    1000;
		ck_assert_uint_lt(true_mj - given_mj, 1000 * s);
		ck_assert_uint_eq(true_mj - given_mj, carry);
	}
}
END_TEST

/* Two jobs on one node: each gets only its GPUs' energy. */
static int _const_power(void *arg, unsigned gpu, uint64_t t0, uint64_t t1,
			uint64_t *mj)
{
	const uint64_t *w = arg;

	*mj = w[gpu] * (t1 - t0);	/* t in s, power in W -> mJ x 1000 */
	*mj *= 1000;
	return 0;
}

static int _failing(void *arg, unsigned gpu, uint64_t t0, uint64_t t1,
		    uint64_t *mj)
{
	return gpu == 1 ? -EIO : _const_power(arg, gpu, t0, t1, mj);
}

START_TEST(test_attribution)
{
	uint64_t watts[4] = { 250, 200, 150, 100 }, a = 0, b = 0, all = 0;
	bool job_a[4] = { true, false, true, false };
	bool job_b[4] = { false, true, false, false };
	bool every[4] = { true, true, true, true };

	ck_assert_int_eq(gpu_job_energy(_const_power, watts, job_a, 4, 10, 70,
					&a), 0);
	ck_assert_int_eq(gpu_job_energy(_const_power, watts, job_b, 4, 40, 70,
					&b), 0);
	ck_assert_uint_eq(a, 400ULL * 60 * 1000);
	ck_assert_uint_eq(b, 200ULL * 30 * 1000);
	/* node total over job A's time = A + B's part + idle GPU 3 */
	ck_assert_int_eq(gpu_job_energy(_const_power, watts, every, 4, 10, 70,
					&all), 0);
	ck_assert_uint_eq(all, a + 200ULL * 60 * 1000 + 100ULL * 60 * 1000);
	ck_assert_int_eq(gpu_job_energy(_failing, watts, job_b, 4, 0, 1, &b),
			 -EIO);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("gpu_logic");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_cpumask);
	tcase_add_test(tc, test_busid_order);
	tcase_add_test(tc, test_visible_gres);
	tcase_add_test(tc, test_per_task);
	tcase_add_test(tc, test_map_mask);
	tcase_add_test(tc, test_closest);
	tcase_add_test(tc, test_device_path);
	tcase_add_test(tc, test_links);
	tcase_add_test(tc, test_avg_watts);
	tcase_add_test(tc, test_attribution);
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
