/*
 * test_powercap_dcmi.c - the power cap's "dcmi" knob (src/powercap/
 * pcap_knob_dcmi.c) against a live ipmi_sim with the suite's DCMI module
 * (contribs/bmc-sim: Get/Set/Activate Power Limit), over an IPMI 2.0 LAN
 * session on loopback.  What the BMC holds is read from the module's limit
 * file, beside the knob's own read-back.  Skipped (77) without ipmi_sim.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcap_knob.h"
#include "tmp_file.h"

#ifndef BMC_SIM_SCRIPT
#error "BMC_SIM_SCRIPT must name the built contribs/bmc-sim/bmc-sim"
#endif

static struct {
	char dir[64];
	unsigned port;
} _sim;

static int _bmc_sim(const char *verb, const char *extra)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s --state %s %s > %s/%s.out 2>&1",
		 BMC_SIM_SCRIPT, verb, _sim.dir, extra ? extra : "", _sim.dir,
		 verb);
	return system(cmd);
}

static void _sim_up(void)
{
	char trace[128], extra[512];

	strcpy(_sim.dir, "/tmp/test_pcap_dcmi.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(_sim.dir));
	snprintf(trace, sizeof(trace), "%s/flat.trace", _sim.dir);
	tmp_file_write(trace, "time node\n0 300\n1000000 300\n");
	_sim.port = 20000 + (unsigned)(getpid() + 7919) % 20000;
	snprintf(extra, sizeof(extra), "--port %u --trace %s --column node "
		 "--epoch %ld", _sim.port, trace, (long)time(NULL));
	ck_assert_msg(_bmc_sim("start", extra) == 0,
		      "bmc-sim start failed: see %s/start.out", _sim.dir);
}

static void _sim_down(void)
{
	char cmd[128];

	_bmc_sim("stop", NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", _sim.dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", _sim.dir);
}

/* The knob on the simulator, with more options after. */
static pcap_knob_t *_open(const char *more, char *err, size_t err_len)
{
	char spec[512];

	snprintf(spec, sizeof(spec), "dcmi:min_w=200:max_w=400:host=127.0.0.1"
		 ":port=%u:user=admin:password_file=%s/password"
		 ":workaround=opensesspriv:timeout_ms=1500%s", _sim.port,
		 _sim.dir, more);
	return pcap_knob_open(spec, err, err_len);
}

/* The module's limit file: "active A" and "watts W". */
static void _bmc_limit(int *active, unsigned *watts)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/dcmi.limit", _sim.dir);
	*active = -1;
	*watts = 0;
	if (!(f = fopen(path, "r")))
		return;
	if (fscanf(f, "active %d watts %u", active, watts) != 2)
		*active = -2;
	fclose(f);
}

START_TEST(test_dcmi_apply_read_restore)
{
	char err[512] = "";
	pcap_knob_t *k = _open("", err, sizeof(err));
	uint32_t cap;
	unsigned watts;
	int active;

	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->min_mw, 200000);
	ck_assert_uint_eq(k->max_mw, 400000);
	/* nothing active yet: reads as uncapped */
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 400000);
	ck_assert_msg(pcap_knob_apply(k, 300000, err, sizeof(err)) == 0,
		      "%s", err);
	_bmc_limit(&active, &watts);
	ck_assert_int_eq(active, 1);
	ck_assert_uint_eq(watts, 300);
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 300000);
	/* a new limit while one is active; below the range: its min */
	ck_assert_msg(pcap_knob_apply(k, 100000, err, sizeof(err)) == 0,
		      "%s", err);
	_bmc_limit(&active, &watts);
	ck_assert_int_eq(active, 1);
	ck_assert_uint_eq(watts, 200);
	ck_assert_int_eq(pcap_knob_restore(k, err, sizeof(err)), 0);
	_bmc_limit(&active, &watts);
	ck_assert_int_eq(active, 0);
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 400000);
	/* restoring twice is harmless */
	ck_assert_int_eq(pcap_knob_restore(k, err, sizeof(err)), 0);
	pcap_knob_close(k);
}
END_TEST

START_TEST(test_dcmi_errors_named)
{
	char err[512] = "", pwfile[128];
	pcap_knob_t *k;

	ck_assert(_open(":privilege=root", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "privilege=root is not user, operator or "
			     "admin"), "%s", err);
	ck_assert(_open(":min_w=500", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "option 'min_w' given twice"), "%s", err);
	/* a wrong password: refused, and not shown */
	snprintf(pwfile, sizeof(pwfile), "%s/wrong", _sim.dir);
	tmp_file_write(pwfile, "Sekr1tWrong\n");
	{
		char spec[512];

		snprintf(spec, sizeof(spec), "dcmi:min_w=200:max_w=400:host="
			 "127.0.0.1:port=%u:user=admin:password_file=%s"
			 ":workaround=opensesspriv:timeout_ms=1000",
			 _sim.port, pwfile);
		k = pcap_knob_open(spec, err, sizeof(err));
	}
	ck_assert(k == NULL);
	ck_assert_msg(strstr(err, "dcmi: cannot open a session with "
			     "127.0.0.1:"), "%s", err);
	ck_assert(!strstr(err, "Sekr1t"));
	/* no BMC listening */
	{
		char spec[256];

		snprintf(spec, sizeof(spec), "dcmi:min_w=200:max_w=400:host="
			 "127.0.0.1:port=%u:user=admin:timeout_ms=300",
			 _sim.port + 1);
		ck_assert(pcap_knob_open(spec, err, sizeof(err)) == NULL);
		ck_assert_msg(strstr(err, "cannot open a session with"),
			      "%s", err);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_dcmi");
	TCase *tc = tcase_create("dcmi");
	SRunner *sr;
	int failed;

	if (system("command -v ipmi_sim > /dev/null 2>&1")) {
		printf("ipmi_sim not installed (Debian package openipmi): "
		       "skipped\n");
		return 77;
	}
	tcase_add_unchecked_fixture(tc, _sim_up, _sim_down);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_dcmi_apply_read_restore);
	tcase_add_test(tc, test_dcmi_errors_named);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
