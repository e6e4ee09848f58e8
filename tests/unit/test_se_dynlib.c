/*
 * test_se_dynlib.c - a library opened on first use: its entry points, and
 * the errors an admin sees when it is missing or not the one built with.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "se_dynlib.h"

/* libm stands for a meter's library: every machine has it. */
static double (*cos_fn)(double);
static double (*sqrt_fn)(double);

static const se_dynlib_sym_t libm_syms[] = {
	{ "cos", &cos_fn },
	{ "sqrt", &sqrt_fn },
};

START_TEST(test_entry_points_are_filled)
{
	se_dynlib_t lib = SE_DYNLIB_INIT("libm.so.6", libm_syms);

	cos_fn = NULL;
	sqrt_fn = NULL;
	ck_assert_str_eq(se_dynlib_error(&lib), "");
	ck_assert_int_eq(se_dynlib_load(&lib), 0);
	ck_assert_ptr_nonnull(cos_fn);
	ck_assert_double_eq(cos_fn(0.0), 1.0);
	ck_assert_double_eq(sqrt_fn(2.25), 1.5);
	ck_assert_str_eq(se_dynlib_error(&lib), "");
	/* loaded once: a second call keeps the same entry points */
	ck_assert_int_eq(se_dynlib_load(&lib), 0);
	ck_assert_double_eq(sqrt_fn(16.0), 4.0);
}
END_TEST

static void *no_fn;
static const se_dynlib_sym_t missing_syms[] = {
	{ "se_no_such_function", &no_fn },
};

START_TEST(test_missing_library_says_which)
{
	se_dynlib_t lib = SE_DYNLIB_INIT("libse-not-installed.so.7",
					 missing_syms);

	ck_assert_int_eq(se_dynlib_load(&lib), -1);
	ck_assert_msg(strstr(se_dynlib_error(&lib),
			     "cannot load libse-not-installed.so.7"),
		      "error: %s", se_dynlib_error(&lib));
	/* dlerror's own words follow (the loader's reason) */
	ck_assert_msg(strstr(se_dynlib_error(&lib), "No such file"),
		      "error: %s", se_dynlib_error(&lib));
	/* the answer stands: a sampler retrying never dlopens again */
	ck_assert_int_eq(se_dynlib_load(&lib), -1);
	ck_assert_msg(strstr(se_dynlib_error(&lib), "libse-not-installed"),
		      "error: %s", se_dynlib_error(&lib));
}
END_TEST

START_TEST(test_require_copies_the_reason)
{
	se_dynlib_t lib = SE_DYNLIB_INIT("libse-not-installed.so.7",
					 missing_syms);
	se_dynlib_t libm = SE_DYNLIB_INIT("libm.so.6", libm_syms);
	char err[512] = "untouched";

	ck_assert_int_eq(se_dynlib_require(&libm, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "untouched");
	ck_assert_int_eq(se_dynlib_require(&lib, err, sizeof(err)), -1);
	ck_assert_str_eq(err, se_dynlib_error(&lib));
	ck_assert_msg(!strncmp(err, "cannot load libse-not-installed.so.7 "
			       "(the library this plugin was built with): ",
			       79), "error: %s", err);
}
END_TEST

static const se_dynlib_sym_t libm_and_missing[] = {
	{ "cos", &cos_fn },
	{ "se_no_such_function", &no_fn },
};

START_TEST(test_missing_entry_point_says_which)
{
	se_dynlib_t lib = SE_DYNLIB_INIT("libm.so.6", libm_and_missing);

	ck_assert_int_eq(se_dynlib_load(&lib), -1);
	ck_assert_str_eq(se_dynlib_error(&lib),
			 "libm.so.6 has no se_no_such_function: not the library this plugin was built with");
	ck_assert_ptr_null(no_fn);
}
END_TEST

#define THREADS 8

static se_dynlib_t shared_lib = SE_DYNLIB_INIT("libm.so.6", libm_syms);

static void *_load_and_call(void *arg)
{
	double *out = arg;

	if (se_dynlib_load(&shared_lib))
		*out = -1.0;
	else
		*out = sqrt_fn(81.0);
	return NULL;
}

START_TEST(test_concurrent_first_use)
{
	pthread_t t[THREADS];
	double got[THREADS];

	sqrt_fn = NULL;
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, _load_and_call,
						&got[i]), 0);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_double_eq(got[i], 9.0);
	}
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("se_dynlib");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_entry_points_are_filled);
	tcase_add_test(tc, test_missing_library_says_which);
	tcase_add_test(tc, test_require_copies_the_reason);
	tcase_add_test(tc, test_missing_entry_point_says_which);
	tcase_add_test(tc, test_concurrent_first_use);
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
