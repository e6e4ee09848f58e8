/*
 * test_gpu_meter.c - slurmd's GPU arithmetic with EnergyGPU=nvml
 * (gpu_meter.h, gpu_meter_conf.h): the factor's rounding, a step's minor
 * numbers to GPU sampler masks, which GPUs a node-mode step is shown, and
 * which NVML library is opened.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cg_cpu.h"
#include "gpu_meter.h"
#include "gpu_meter_conf.h"

/* A node whose samplers hold minors 0, 2, 3 and 7 (GPU i: the i-th
 * smallest), as gpu_energy_index_of_minor answers. */
static int _index_of(void *arg, int minor)
{
	static const int minors[] = { 0, 2, 3, 7 };

	(void) arg;
	for (int i = 0; i < 4; i++)
		if (minors[i] == minor)
			return i;
	return -1;
}

/* Every minor names its own GPU: minor m is sampler m. */
static int _identity(void *arg, int minor)
{
	(void) arg;
	return minor;
}

START_TEST(test_factor_rounding)
{
	/* F = 1: NVML's total as is, even past a double's 53 bits */
	ck_assert_uint_eq(gpu_meter_charged_mj(1.0, 1234567), 1234567);
	ck_assert_uint_eq(gpu_meter_charged_mj(1.0, UINT64_C(9007199254740993)),
			  UINT64_C(9007199254740993));
	/* 1.06 x 1000 = 1060; x 1234 = 1308.04 -> 1308; x 1250 = 1325 */
	ck_assert_uint_eq(gpu_meter_charged_mj(1.06, 1000), 1060);
	ck_assert_uint_eq(gpu_meter_charged_mj(1.06, 1234), 1308);
	/* halves round away from zero: 1.5 x 3 = 4.5 -> 5, x 1 = 1.5 -> 2 */
	ck_assert_uint_eq(gpu_meter_charged_mj(1.5, 3), 5);
	ck_assert_uint_eq(gpu_meter_charged_mj(1.5, 1), 2);
	ck_assert_uint_eq(gpu_meter_charged_mj(2.0, 0), 0);
	ck_assert_uint_eq(gpu_meter_charged_mj(2.0, 250000), 500000);
}
END_TEST

START_TEST(test_mask_from_minors)
{
	uint64_t set[ENERGY_QUERY_MINOR_WORDS] = { 0 };

	ck_assert_uint_eq(gpu_meter_mask(set, _index_of, NULL), 0);
	/* minors 2 and 7: samplers 1 and 3 */
	ck_assert_int_eq(energy_query_minors_add(set, 2), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 7), 0);
	ck_assert_uint_eq(gpu_meter_mask(set, _index_of, NULL), 0xa);
	/* minor 5 has no sampler, nor 200 (another word): dropped */
	ck_assert_int_eq(energy_query_minors_add(set, 5), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 200), 0);
	ck_assert_uint_eq(gpu_meter_mask(set, _index_of, NULL), 0xa);
	/* minor 0: sampler 0 */
	ck_assert_int_eq(energy_query_minors_add(set, 0), 0);
	ck_assert_uint_eq(gpu_meter_mask(set, _index_of, NULL), 0xb);
}
END_TEST

/* A sampler index past a mask's 64 bits is dropped, 63 is kept. */
START_TEST(test_mask_bounds)
{
	uint64_t set[ENERGY_QUERY_MINOR_WORDS] = { 0 };

	ck_assert_int_eq(energy_query_minors_add(set, 63), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 64), 0);
	ck_assert_int_eq(energy_query_minors_add(set, 255), 0);
	ck_assert_uint_eq(gpu_meter_mask(set, _identity, NULL),
			  UINT64_C(1) << 63);
}
END_TEST

START_TEST(test_step_minors)
{
	energy_query_step_t st;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(energy_query_minors_add(st.step_minors, 1), 0);
	ck_assert_int_eq(energy_query_minors_add(st.job_minors, 3), 0);
	st.step_id = 0;		/* an srun step: its own */
	ck_assert_ptr_eq(gpu_meter_step_minors(&st), st.step_minors);
	st.step_id = CG_STEP_BATCH;
	ck_assert_ptr_eq(gpu_meter_step_minors(&st), st.job_minors);
	st.step_id = CG_STEP_EXTERN;
	ck_assert_ptr_eq(gpu_meter_step_minors(&st), st.job_minors);
	st.step_id = CG_STEP_INTERACTIVE;
	ck_assert_ptr_eq(gpu_meter_step_minors(&st), st.job_minors);
}
END_TEST

START_TEST(test_library)
{
	gpu_meter_conf_t c;

	gpu_meter_conf_init(&c);
	ck_assert_int_eq(c.kind, GPU_METER_NONE);
	ck_assert(c.factor == 1.0);
	ck_assert_str_eq(gpu_meter_library(&c, NULL), "libnvidia-ml.so.1");
	ck_assert_str_eq(gpu_meter_library(&c, ""), "libnvidia-ml.so.1");
	ck_assert_str_eq(gpu_meter_library(&c, "/tmp/fake/libnvidia-ml.so.1"),
			 "/tmp/fake/libnvidia-ml.so.1");
	c.library = strdup("/opt/nvml/libnvidia-ml.so.1");
	ck_assert_str_eq(gpu_meter_library(&c, "/tmp/fake/libnvidia-ml.so.1"),
			 "/opt/nvml/libnvidia-ml.so.1");
	gpu_meter_conf_free(&c);
	ck_assert_ptr_null(c.library);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gpu_meter");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_factor_rounding);
	tcase_add_test(tc, test_mask_from_minors);
	tcase_add_test(tc, test_mask_bounds);
	tcase_add_test(tc, test_step_minors);
	tcase_add_test(tc, test_library);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
