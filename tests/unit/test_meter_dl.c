/*
 * test_meter_dl.c - the plugins' wrappers of the meters' libraries
 * (modbus_dl.c, bmc_dl.c, rrd_dl.c in src/meters/), linked as the
 * plugins link them: without the libraries.  Each library must be absent until its first
 * call, then present, and the call must reach the real library (an answer
 * only it gives).  Built with the wrappers this build has.
 */
#define _GNU_SOURCE
#include <check.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int _find(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *prefix = arg;
	const char *base = strrchr(info->dlpi_name, '/');

	(void) size;
	base = base ? base + 1 : info->dlpi_name;
	return !strncmp(base, prefix, strlen(prefix));
}

/* Is a library whose file name starts with prefix in this process? */
static bool _loaded(const char *prefix)
{
	return dl_iterate_phdr(_find, (void *) prefix) != 0;
}

#ifdef SE_TEST_DL_MODBUS
#include <modbus.h>
#include "modbus_dl.h"

START_TEST(test_modbus_on_first_call)
{
	char err[512];
	modbus_t *ctx;

	ck_assert(!_loaded("libmodbus"));
	/* libmodbus's own text for its own error number */
	ck_assert_str_eq(modbus_strerror(EMBXILFUN), "Illegal function");
	ck_assert(_loaded("libmodbus"));
	ck_assert_int_eq(modbus_dl_load(err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(ctx = modbus_new_tcp_pi("127.0.0.1", "502"));
	ck_assert_int_eq(modbus_set_slave(ctx, 7), 0);
	modbus_free(ctx);
}
END_TEST
#endif

#ifdef SE_TEST_DL_BMC
#include <freeipmi/freeipmi.h>
#include <ipmi_monitoring.h>
#include "bmc_dl.h"

START_TEST(test_freeipmi_on_first_call)
{
	ipmi_monitoring_ctx_t mon;
	ipmi_ctx_t ctx;
	char err[512];

	ck_assert(!_loaded("libfreeipmi"));
	ck_assert(!_loaded("libipmimonitoring"));
	ck_assert_ptr_nonnull(ctx = ipmi_ctx_create());
	ck_assert(_loaded("libfreeipmi"));
	/* a fresh context: FreeIPMI's own "success" */
	ck_assert_int_eq(ipmi_ctx_errnum(ctx), IPMI_ERR_SUCCESS);
	ipmi_ctx_destroy(ctx);
	ck_assert_ptr_nonnull(mon = ipmi_monitoring_ctx_create());
	ck_assert(_loaded("libipmimonitoring"));
	ck_assert_int_eq(ipmi_monitoring_ctx_errnum(mon),
			 IPMI_MONITORING_ERR_SUCCESS);
	ipmi_monitoring_ctx_destroy(mon);
	ck_assert_int_eq(bmc_dl_load(err, sizeof(err)), 0);
}
END_TEST
#endif

#ifdef SE_TEST_DL_RRD
#include <rrd.h>
#include "rrd_dl.h"

START_TEST(test_librrd_on_first_call)
{
	time_t start = 1000, end = 2000;
	unsigned long step = 0, ds_cnt = 0;
	rrd_value_t *data = NULL;
	char **names = NULL;
	char err[512];

	ck_assert(!_loaded("librrd"));
	rrd_clear_error();
	ck_assert(_loaded("librrd"));
	ck_assert(!rrd_test_error());
	ck_assert_int_eq(rrd_fetch_r("/nonexistent/se-test.rrd", "AVERAGE",
				     &start, &end, &step, &ds_cnt, &names,
				     &data), -1);
	/* librrd's own message names the file */
	ck_assert(rrd_test_error());
	ck_assert_msg(strstr(rrd_get_error(), "se-test.rrd"), "%s",
		      rrd_get_error());
	rrd_clear_error();
	ck_assert_int_eq(rrd_dl_load(err, sizeof(err)), 0);
}
END_TEST
#endif

static Suite *_suite(void)
{
	Suite *s = suite_create("meter_dl");
	TCase *tc = tcase_create("core");

#ifdef SE_TEST_DL_MODBUS
	tcase_add_test(tc, test_modbus_on_first_call);
#endif
#ifdef SE_TEST_DL_BMC
	tcase_add_test(tc, test_freeipmi_on_first_call);
#endif
#ifdef SE_TEST_DL_RRD
	tcase_add_test(tc, test_librrd_on_first_call);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	/* each test in its own process: each starts with nothing loaded */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
