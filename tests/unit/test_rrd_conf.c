/*
 * test_rrd_conf.c - acct_gather.conf keys of acct_gather_energy/rrd.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rrd_conf.h"
#include "se_time.h"

#define F "acct_gather.conf"

START_TEST(test_defaults)
{
	rrd_conf_t c;
	char buf[64], err[256];

	rrd_conf_init(&c);
	ck_assert_int_eq(c.cf, RRD_CF_AVERAGE);
	ck_assert_uint_eq(c.period_ns, 10 * SE_NS_PER_SEC);
	ck_assert_uint_eq(c.max_age_ns, 60 * SE_NS_PER_SEC);
	ck_assert_ptr_null(c.ds);
	/* EnergyRRDFile is required */
	ck_assert_int_eq(rrd_conf_check(&c, F, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyRRDFile"));
	ck_assert_str_eq(se_conf_value(&rrd_conf_desc, &c,
				       "EnergyRRDConsolidation", buf,
					sizeof(buf)), "AVERAGE");
	rrd_conf_free(&c);
}
END_TEST

START_TEST(test_all_keys)
{
	static const char *const kv[][2] = {
		{ "EnergyRRDFile", "/var/lib/rrd/%n/power.rrd" },
		{ "energyrrddatasource", "watts" },
		{ "EnergyRRDConsolidation", "max" },
		{ "EnergyRRDFrequency", "2.5" },
		{ "EnergyRRDMaxAge", "30" },
		{ "EnergyRRDDaemon", "unix:/run/rrdcached.sock" },
		{ "EnergyRRDMinWatt", "5" },
		{ "EnergyRRDMaxWatt", "2000" },
	};
	rrd_conf_t c;
	char err[256], buf[128];
	size_t n = 0;

	rrd_conf_init(&c);
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		ck_assert_msg(!se_conf_set(&rrd_conf_desc, &c, F, kv[i][0], kv[i][1], err,
					    sizeof(err)), "%s", err);
	ck_assert_int_eq(rrd_conf_check(&c, F, err, sizeof(err)), 0);
	ck_assert_str_eq(c.file_tmpl, "/var/lib/rrd/%n/power.rrd");
	ck_assert_str_eq(c.ds, "watts");
	ck_assert_int_eq(c.cf, RRD_CF_MAX);
	ck_assert_uint_eq(c.period_ns, 2500 * SE_NS_PER_MS);
	ck_assert_uint_eq(c.max_age_ns, 30 * SE_NS_PER_SEC);
	ck_assert_str_eq(c.daemon, "unix:/run/rrdcached.sock");
	ck_assert_str_eq(se_conf_value(&rrd_conf_desc, &c,
				       "EnergyRRDFrequency", buf,
					sizeof(buf)), "2.5");
	while (se_conf_key(&rrd_conf_desc, n))
		n++;
	ck_assert_uint_eq(n, sizeof(kv) / sizeof(kv[0]));
	rrd_conf_free(&c);
}
END_TEST

/* Every error names the file, the key and the value. */
START_TEST(test_bad_values)
{
	static const char *const kv[][2] = {
		{ "EnergyRRDFile", "/x/%q.rrd" },
		{ "EnergyRRDDataSource", "bad-name" },
		{ "EnergyRRDDataSource", "a_name_that_is_far_too_long" },
		{ "EnergyRRDConsolidation", "median" },
		{ "EnergyRRDFrequency", "abc" },
		{ "EnergyRRDFrequency", "0" },
		{ "EnergyRRDMaxAge", "-1" },
		{ "EnergyRRDMinWatt", "nan" },
	};
	rrd_conf_t c;
	char err[256];

	rrd_conf_init(&c);
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, kv[i][0], kv[i][1], err,
					      sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, F) && strstr(err, kv[i][0]) &&
			      strstr(err, kv[i][1]), "%s", err);
	}
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDColour", "red", err,
				      sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "EnergyRRDColour"));
	rrd_conf_free(&c);
}
END_TEST

START_TEST(test_cross_checks)
{
	rrd_conf_t c;
	char err[256];

	rrd_conf_init(&c);
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDFile", "/r/%n.rrd", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDMinWatt", "500", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDMaxWatt", "100", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(rrd_conf_check(&c, F, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyRRDMinWatt=500"));
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDMaxWatt", "1000", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(se_conf_set(&rrd_conf_desc, &c, F, "EnergyRRDMaxAge", "5", err,
				      sizeof(err)), 0);
	ck_assert_int_eq(rrd_conf_check(&c, F, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyRRDMaxAge=5"));
	rrd_conf_free(&c);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("rrd_conf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_all_keys);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_cross_checks);
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
