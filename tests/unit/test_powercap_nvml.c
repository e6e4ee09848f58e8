/*
 * test_powercap_nvml.c - the power cap's "nvml" knob (src/powercap/
 * pcap_knob_nvml.c) against the fake libnvidia-ml.so.1 of tests/gpu: two
 * GPUs of unlike limits, apply / read back / restore through NVML's power
 * management limit, what the fake logs and keeps across processes, and the
 * errors named (a library that is not there, a driver refusing the set).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap_knob.h"
#include "tmp_file.h"

#ifndef FAKE_NVML_LIB
#error "FAKE_NVML_LIB must name the fake libnvidia-ml.so.1"
#endif

static char _dir[64], _state[128], _log[128];

/* GPU 0: 100..300 W, default 300; GPU 1: 150..400 W, default 350. */
static void _setup(const char *extra)
{
	char text[1024];

	snprintf(_dir, sizeof(_dir), "/tmp/test_pcap_nvml.XXXXXX");
	ck_assert(mkdtemp(_dir) != NULL);
	snprintf(_state, sizeof(_state), "%s/nvml.state", _dir);
	snprintf(_log, sizeof(_log), "%s/nvml.log", _dir);
	snprintf(text, sizeof(text),
		 "log %s\n"
		 "gpu bus=0000:3b:00.0 uuid=GPU-0 name=T minor=0 cpus=0 "
		 "power=200\n"
		 "gpu bus=0000:86:00.0 uuid=GPU-1 name=T minor=1 cpus=1 "
		 "power=200 plimit=350 plimit_min=150 plimit_max=400\n%s",
		 _log, extra);
	tmp_file_write(_state, text);
	setenv("FAKE_NVML_STATE", _state, 1);
}

static void _teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", _dir);
	ck_assert_int_eq(system(cmd), 0);
	unsetenv("FAKE_NVML_STATE");
}

static bool _logged(const char *line)
{
	char buf[256];
	bool found = false;
	FILE *f = fopen(_log, "r");

	if (!f)
		return false;
	while (!found && fgets(buf, sizeof(buf), f))
		found = strstr(buf, line) != NULL;
	fclose(f);
	return found;
}

START_TEST(test_nvml_apply_read_restore)
{
	char err[512] = "";
	pcap_knob_t *k, *again;
	uint32_t cap;

	_setup("");
	k = pcap_knob_open("nvml:lib=" FAKE_NVML_LIB, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->n_zones, 2);
	ck_assert_uint_eq(k->min_mw, 250000);
	ck_assert_uint_eq(k->max_mw, 650000);
	/* half-way: GPU 0 at 200 W, GPU 1 at 250 W */
	ck_assert_int_eq(pcap_knob_apply(k, 450000, err, sizeof(err)), 0);
	ck_assert(_logged("PLIMIT index=0 bus=0000:3b:00.0 mw=200000"));
	ck_assert(_logged("PLIMIT index=1 bus=0000:86:00.0 mw=250000"));
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 450000);
	/* kept across processes, as the driver keeps it */
	again = pcap_knob_open("nvml:lib=" FAKE_NVML_LIB, err, sizeof(err));
	ck_assert_msg(again != NULL, "%s", err);
	ck_assert_int_eq(pcap_knob_read(again, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 450000);
	pcap_knob_close(again);
	/* restore: each GPU's default limit, not its constraint's max */
	ck_assert_int_eq(pcap_knob_restore(k, err, sizeof(err)), 0);
	ck_assert(_logged("PLIMIT index=1 bus=0000:86:00.0 mw=350000"));
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 650000);
	pcap_knob_close(k);

	/* min_w raises the GPUs' floor */
	k = pcap_knob_open("nvml:lib=" FAKE_NVML_LIB ":min_w=200", err,
			   sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->min_mw, 400000);
	pcap_knob_close(k);
	_teardown();
}
END_TEST

START_TEST(test_nvml_errors_named)
{
	char err[512] = "";
	pcap_knob_t *k;

	ck_assert(pcap_knob_open("nvml:lib=/nonexistent/libnvidia-ml.so.1",
				 err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "nvml: cannot load /nonexistent/"
			     "libnvidia-ml.so.1: "), "%s", err);

	_setup("fail nvmlDeviceSetPowerManagementLimit\n");
	k = pcap_knob_open("nvml:lib=" FAKE_NVML_LIB, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_int_eq(pcap_knob_apply(k, 450000, err, sizeof(err)), -EIO);
	ck_assert_msg(strstr(err, "nvml: GPU 0: "
			     "nvmlDeviceSetPowerManagementLimit(200000 mW): "),
		      "%s", err);
	ck_assert(_logged("PLIMIT-REFUSED index=0"));
	pcap_knob_close(k);
	_teardown();

	/* a floor above a GPU's default limit */
	_setup("");
	ck_assert(pcap_knob_open("nvml:lib=" FAKE_NVML_LIB ":min_w=320", err,
				 sizeof(err)) == NULL);
	ck_assert_str_eq(err, "nvml: GPU 0: lowest limit 320000 mW above its "
			 "default 300000 mW");
	_teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_nvml");
	TCase *tc = tcase_create("nvml");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_nvml_apply_read_restore);
	tcase_add_test(tc, test_nvml_errors_named);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
