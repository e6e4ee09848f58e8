/*
 * test_powercap_conf.c - powercap.conf's keys (src/powercap/pcap_conf.c):
 * defaults, every key's bad value named with file, key and value, the keys
 * checked together (required keys, floor under max, headroom over at-cap,
 * the gate under the period, leases of 3 periods, a cap under the floor),
 * and the round's parameters from a good file.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap_conf.h"

static int _set(pcap_conf_t *c, const char *key, const char *value,
		char *err, size_t len)
{
	return se_conf_set(&pcap_conf_desc, c, NULL, key, value, err, len);
}

static void _good(pcap_conf_t *c)
{
	char err[512];

	pcap_conf_init(c);
	ck_assert_int_eq(_set(c, "PowerCapWatts", "40000", err, sizeof(err)),
			 0);
	ck_assert_int_eq(_set(c, "PowerCapFloorWatts", "120", err,
			      sizeof(err)), 0);
	ck_assert_int_eq(_set(c, "PowerCapMaxWatts", "450", err, sizeof(err)),
			 0);
	ck_assert_msg(_set(c, "PowerCapKnobs", "rapl:dram=yes,cpufreq:min_w="
			   "100:max_w=300", err, sizeof(err)) == 0, "%s", err);
}

START_TEST(test_good_and_defaults)
{
	pcap_conf_t c;
	pcap_params_t p;
	char err[512] = "";

	_good(&c);
	ck_assert_msg(pcap_conf_check(&c, "powercap.conf", err,
				      sizeof(err)) == 0, "%s", err);
	pcap_conf_params(&c, &p);
	ck_assert_uint_eq(p.cap_mw, 40000000);
	ck_assert_uint_eq(p.headroom_mw, PCAP_DEFAULT_HEADROOM_MW);
	ck_assert_uint_eq(p.at_cap_mw, PCAP_DEFAULT_AT_CAP_MW);
	ck_assert_uint_eq(p.hysteresis_mw, PCAP_DEFAULT_HYSTERESIS_MW);
	ck_assert_uint_eq(c.period_ns, 1000000000ull);
	ck_assert_uint_eq(c.raise_gate_ns, 500000000ull);
	ck_assert_uint_eq(c.hold_ns, 30000000000ull);
	/* the state file and the job records: off unless set */
	ck_assert_ptr_null(c.state_file);
	ck_assert_int_eq(c.job_records, 0);
	ck_assert_int_eq(_set(&c, "PowerCapStateFile", "/shared/pcap.state",
			      err, sizeof(err)), 0);
	ck_assert_str_eq(c.state_file, "/shared/pcap.state");
	ck_assert_int_eq(_set(&c, "PowerCapJobRecords", "yes", err,
			      sizeof(err)), 0);
	ck_assert_int_eq(c.job_records, 1);
	/* idle nodes released unless kept capped */
	pcap_conf_params(&c, &p);
	ck_assert(!p.keep_idle_capped);
	ck_assert_int_eq(_set(&c, "PowerCapIdleNodes", "cap", err,
			      sizeof(err)), 0);
	pcap_conf_params(&c, &p);
	ck_assert(p.keep_idle_capped);
	pcap_conf_free(&c);
}
END_TEST

START_TEST(test_bad_values_named)
{
	static const struct {
		const char *key, *value, *says;
	} bad[] = {
		{ "PowerCapWatts", "abc", "powercap.conf: PowerCapWatts=abc" },
		{ "PowerCapWatts", "0", "powercap.conf: PowerCapWatts=0" },
		{ "PowerCapPeriod", "0.01", "PowerCapPeriod=0.01" },
		{ "PowerCapHoldSeconds", "-3", "PowerCapHoldSeconds=-3" },
		{ "PowerCapRaiseGate", "1m", "PowerCapRaiseGate=1m" },
		{ "PowerCapMaxWatts", "", "PowerCapMaxWatts=" },
		{ "PowerCapKnobs", "rapel", "PowerCapKnobs=rapel: unknown "
		  "knob 'rapel'" },
		{ "PowerCapKnobs", "rapl:dram",
		  "PowerCapKnobs=rapl:dram: knob 'rapl:dram': option 'dram' "
		  "is not key=value" },
		{ "PowerCapKnobs", ",", "PowerCapKnobs=,: no knob" },
		{ "PowerCapKnob", "rapl", "PowerCapKnob=rapl: unknown key" },
		{ "PowerCapStateFile", "pcap.state",
		  "PowerCapStateFile=pcap.state" },
		{ "PowerCapJobRecords", "maybe", "PowerCapJobRecords=maybe" },
		{ "PowerCapIdleNodes", "uncap", "PowerCapIdleNodes=uncap" },
	};
	pcap_conf_t c;
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pcap_conf_init(&c);
		err[0] = '\0';
		ck_assert_int_ne(_set(&c, bad[i].key, bad[i].value, err,
				      sizeof(err)), 0);
		ck_assert_msg(strstr(err, bad[i].says), "%s=%s: '%s'",
			      bad[i].key, bad[i].value, err);
		pcap_conf_free(&c);
	}
}
END_TEST

static void _file(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/test_pcap_conf.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
}

/* pcap_conf_read: a file's keys (comments, blanks), its errors naming the
 * file and line, and the keys together checked; c empty after an error. */
START_TEST(test_read_file)
{
	char path[64], err[512];
	pcap_conf_t c;

	_file(path, "# the cluster\nPowerCapWatts=900\n\n"
		    "PowerCapFloorWatts=100 PowerCapMaxWatts=400\n"
		    "PowerCapKnobs=rapl PowerCapNodes=a,b[1-2],c\n"
		    "PowerCapController=head:6830\n");
	ck_assert_int_eq(pcap_conf_read(&c, path, err, sizeof(err)), 0);
	ck_assert(c.cap_w == 900 && c.floor_w == 100 && c.max_w == 400);
	ck_assert_str_eq(c.nodes, "a,b1,b2,c");	/* a hostlist, expanded */
	ck_assert_str_eq(c.controller, "head:6830");
	pcap_conf_free(&c);
	unlink(path);

	_file(path, "PowerCapWatts=900\nPowerCapNodes=a,,b\n");
	ck_assert_int_eq(pcap_conf_read(&c, path, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":2: PowerCapNodes=a,,b: an empty name"),
		      "%s", err);
	ck_assert_ptr_null(c.nodes);
	unlink(path);

	_file(path, "PowerCapWatts=900\nPowerCapMaxWatts=400\n"
		    "PowerCapKnobs=rapl\n");
	ck_assert_int_eq(pcap_conf_read(&c, path, err, sizeof(err)), 0);
	pcap_conf_free(&c);
	unlink(path);

	_file(path, "PowerCapWatts=50\nPowerCapFloorWatts=100\n"
		    "PowerCapMaxWatts=400\nPowerCapKnobs=rapl\n"
		    "PowerCapController=head\n");
	ck_assert_int_eq(pcap_conf_read(&c, path, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":5: PowerCapController=head: expected "
			     "HOST:PORT"), "%s", err);
	unlink(path);

	ck_assert_int_lt(pcap_conf_read(&c, "/nonexistent/powercap.conf",
					err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "/nonexistent/powercap.conf"), "%s", err);
}
END_TEST

START_TEST(test_keys_together)
{
	static const struct {
		const char *key, *value, *says;
	} bad[] = {
		{ "PowerCapFloorWatts", "450", "PowerCapFloorWatts=450 is not "
		  "below PowerCapMaxWatts=450" },
		{ "PowerCapHeadroomWatts", "5", "PowerCapHeadroomWatts=5 must "
		  "exceed PowerCapAtCapWatts=5" },
		{ "PowerCapRaiseGate", "1000", "PowerCapRaiseGate=1000 must be "
		  "shorter than PowerCapPeriod (1 s)" },
		{ "PowerCapHoldSeconds", "2", "PowerCapHoldSeconds=2 is under 3 "
		  "PowerCapPeriod (1 s)" },
		{ "PowerCapWatts", "100", "PowerCapWatts=100 is below "
		  "PowerCapFloorWatts=120: the cap cannot be held" },
	};
	pcap_conf_t c;
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_good(&c);
		ck_assert_int_eq(_set(&c, bad[i].key, bad[i].value, err,
				      sizeof(err)), 0);
		ck_assert_int_eq(pcap_conf_check(&c, "powercap.conf", err,
						 sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].says) == err +
			      strlen("powercap.conf: "), "'%s'", err);
		pcap_conf_free(&c);
	}
	/* the required keys */
	pcap_conf_init(&c);
	ck_assert_int_eq(pcap_conf_check(&c, "powercap.conf", err,
					 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "powercap.conf: PowerCapWatts is required");
	_set(&c, "PowerCapWatts", "1000", err, sizeof(err));
	_set(&c, "PowerCapMaxWatts", "400", err, sizeof(err));
	ck_assert_int_eq(pcap_conf_check(&c, "powercap.conf", err,
					 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "powercap.conf: PowerCapKnobs is required");
	pcap_conf_free(&c);
}
END_TEST

#define CLASS_BASE "PowerCapWatts=2000\nPowerCapFloorWatts=100 " \
	"PowerCapMaxWatts=400 PowerCapKnobs=rapl\nPowerCapNodes=a,b,g1,g2\n"

/* The error a file of CLASS_BASE plus lines gives (it must fail). */
static void _class_fails(const char *lines, const char *says)
{
	char path[64], text[1024], err[512] = "";
	pcap_conf_t c;

	snprintf(text, sizeof(text), "%s%s", CLASS_BASE, lines);
	_file(path, text);
	ck_assert_int_eq(pcap_conf_read(&c, path, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, says) && !strncmp(err, path, strlen(path)),
		      "%s: '%s'", lines, err);
	unlink(path);
}

/* NodeClass lines: a GPU class with its own floor, maximum and knobs, the
 * other nodes the file's; every mistake named with file, line and key. */
START_TEST(test_node_classes)
{
	char path[64], err[512] = "";
	pcap_node_conf_t nc;
	pcap_conf_t c;

	_file(path, CLASS_BASE "NodeClass=gpu Nodes=g[1-2] FloorWatts=250 "
		    "MaxWatts=1400 Knobs=rapl,nvml\n"
		    "NodeClass=fat Nodes=b MaxWatts=600\n");
	ck_assert_msg(pcap_conf_read(&c, path, err, sizeof(err)) == 0, "%s",
		      err);
	pcap_conf_node(&c, "g2", &nc);
	ck_assert_str_eq(nc.class_name, "gpu");
	ck_assert(nc.floor_w == 250 && nc.max_w == 1400);
	ck_assert_str_eq(nc.knobs, "rapl,nvml");
	pcap_conf_node(&c, "b", &nc);	/* the file's floor and knobs */
	ck_assert_str_eq(nc.class_name, "fat");
	ck_assert(nc.floor_w == 0 && nc.max_w == 600);
	ck_assert_str_eq(nc.knobs, "rapl");
	pcap_conf_node(&c, "a", &nc);
	ck_assert_ptr_null(nc.class_name);
	ck_assert(nc.floor_w == 100 && nc.max_w == 400);
	pcap_conf_node(&c, "g", &nc);	/* a prefix is not a member */
	ck_assert_ptr_null(nc.class_name);
	pcap_conf_free(&c);
	unlink(path);

	_class_fails("NodeClass=gpu Nodes=g1,g3 MaxWatts=900\n",
		     ":4: NodeClass=gpu: node g3 is not in PowerCapNodes");
	_class_fails("NodeClass=gpu Nodes=g1 MaxWatts=900\n"
		     "NodeClass=big Nodes=g2,g1 MaxWatts=900\n",
		     ":5: NodeClass=big: node g1 is in NodeClass=gpu too");
	_class_fails("NodeClass=gpu Nodes=g1 FloorWatts=900 MaxWatts=900\n",
		     ":4: NodeClass=gpu: FloorWatts=900 is not below "
		     "MaxWatts=900");
	_class_fails("NodeClass=gpu Nodes=g1\n",
		     ":4: NodeClass=gpu: MaxWatts is required");
	_class_fails("NodeClass=gpu MaxWatts=900\n",
		     ":4: NodeClass=gpu: Nodes is required");
	_class_fails("NodeClass=gpu Nodes=g1 MaxWatts=900 PowerCapWatts=9\n",
		     ":4: PowerCapWatts=9: not a NodeClass key");
	_class_fails("NodeClass=gpu Nodes=g1 MaxWatts=900 Knobs=nvm\n",
		     ":4: Knobs=nvm: unknown knob 'nvm'");
	_class_fails("NodeClass=gpu Nodes=g1 MaxWatts=lots\n",
		     ":4: MaxWatts=lots");
	_class_fails("PowerCapPeriod=1 NodeClass=gpu\n",
		     ":4: NodeClass=gpu: must come first on its line");
	_class_fails("NodeClass=gpu Nodes=g1 MaxWatts=900\n"
		     "NodeClass=gpu Nodes=g2 MaxWatts=900\n",
		     ":5: NodeClass=gpu: class named twice");
	_class_fails("NodeClass= Nodes=g1 MaxWatts=900\n",
		     ":4: NodeClass=: a class is named by a word");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_conf");
	TCase *tc = tcase_create("conf");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_good_and_defaults);
	tcase_add_test(tc, test_bad_values_named);
	tcase_add_test(tc, test_keys_together);
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_node_classes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
