/*
 * test_redfish.c - the Redfish meter's discovery, source choice, units,
 * restarts and bounded parsing, on the DMTF's public-rackmount1 documents
 * (tests/unit/redfish/, copied: make check needs neither ../shared nor a
 * network).  The fetcher reads "/redfish/v1/X" from X/index.json there;
 * a test hides resources or edits documents to make the other chassis
 * kinds (energy sensors gone, legacy only, EnvironmentMetrics with
 * EnergyJoules).  HTTP itself is tested against live peers in
 * tests/integration/test_redfish_meter.py.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_acc.h"
#include "rf_json.h"
#include "rf_source.h"

#ifndef RF_FIXTURES
#define RF_FIXTURES "tests/unit/redfish"
#endif

/* What the test's service hides or changes. */
typedef struct {
	const char *root;		/* the mockup folder */
	const char *hide[8];		/* URI prefixes answered 404 */
	const char *joules;		/* add EnvironmentMetrics EnergyJoules */
	unsigned fetches;
} fake_t;

static bool _hidden(const fake_t *f, const char *uri)
{
	size_t i;

	for (i = 0; i < 8 && f->hide[i]; i++)
		if (!strncmp(uri, f->hide[i], strlen(f->hide[i])))
			return true;
	return false;
}

static int _read_file(const char *path, char **buf, size_t *len)
{
	FILE *fp = fopen(path, "r");
	long n;

	if (!fp)
		return -ENOENT;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	*buf = malloc(n + 1);
	*len = fread(*buf, 1, n, fp);
	(*buf)[*len] = '\0';
	fclose(fp);
	return 0;
}

/* rf_fetch_fn over the mockup folder; a query ($expand) is not answered
 * (as sushy-static: the plain collection). */
static int _fetch(void *arg, const char *uri, json_object **doc, char *msg,
		  size_t msg_len)
{
	fake_t *f = arg;
	char path[1024], clean[RF_URI_MAX], *buf;
	size_t len;
	int rc;

	f->fetches++;
	snprintf(clean, sizeof(clean), "%s", uri);
	clean[strcspn(clean, "?#")] = '\0';
	if (_hidden(f, clean) || strncmp(clean, "/redfish/v1", 11)) {
		snprintf(msg, msg_len, "GET %s: HTTP 404", uri);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/%s%s%s/index.json", RF_FIXTURES,
		 f->root, clean + 11, "");
	if (_read_file(path, &buf, &len)) {
		snprintf(msg, msg_len, "GET %s: HTTP 404", uri);
		return -ENOENT;
	}
	rc = rf_json_parse(buf, len, uri, 0, doc, msg, msg_len);
	free(buf);
	if (!rc && f->joules && strstr(clean, "EnvironmentMetrics")) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "Reading",
				       json_object_new_double_s(0, f->joules));
		json_object_object_add(*doc, "EnergyJoules", e);
	}
	return rc;
}

static int _discover(fake_t *f, const char *chassis, rf_pick_t pick,
		     const char *uri, rf_source_t *src, char *msg)
{
	rf_fetcher_t fetcher = { _fetch, f };

	return rf_discover(&fetcher, chassis, pick, uri, src, msg, 512);
}

/* ---------------------------------------------------------- discovery */

START_TEST(test_rackmount1_energy_sensor)
{
	fake_t f = { .root = "public-rackmount1" };
	rf_source_t s;
	char msg[512], d[512];

	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_AUTO, NULL, &s, msg), 0);
	ck_assert_str_eq(s.chassis, "/redfish/v1/Chassis/1U");
	/* EnvironmentMetrics has PowerWatts but no energy: the chassis'
	 * TotalEnergy sensor (EnergykWh), not the supplies' PS1/PS2Energy */
	ck_assert(s.has_energy);
	ck_assert_str_eq(s.energy.what, "Sensor EnergykWh");
	ck_assert_int_eq(s.energy.q, RF_Q_KWH);
	ck_assert_str_eq(s.energy.probes[0].uri,
			 "/redfish/v1/Chassis/1U/Sensors/TotalEnergy");
	/* power shapes it: EnvironmentMetrics PowerWatts */
	ck_assert(s.has_power);
	ck_assert_str_eq(s.power.what, "EnvironmentMetrics PowerWatts");
	ck_assert_str_eq(s.power.probes[0].uri,
			 "/redfish/v1/Chassis/1U/EnvironmentMetrics");
	rf_source_describe(&s, d, sizeof(d));
	ck_assert_str_eq(d, "Sensor EnergykWh (counter) + EnvironmentMetrics PowerWatts at /redfish/v1/Chassis/1U");
}
END_TEST

START_TEST(test_joules_first)
{
	fake_t f = { .root = "public-rackmount1", .joules = "1172430000" };
	rf_source_t s;
	char msg[512];
	const char *uris[4];

	ck_assert_int_eq(_discover(&f, "1U", RF_PICK_AUTO, NULL, &s, msg), 0);
	ck_assert_str_eq(s.energy.what, "EnvironmentMetrics EnergyJoules");
	ck_assert_int_eq(s.energy.q, RF_Q_JOULES);
	ck_assert_str_eq(s.power.what, "EnvironmentMetrics PowerWatts");
	/* one document for both: one GET a reading */
	ck_assert_uint_eq(rf_source_uris(&s, uris, 4), 1);
}
END_TEST

START_TEST(test_no_energy_sensors_power)
{
	fake_t f = { .root = "public-rackmount1",
		     .hide = { "/redfish/v1/Chassis/1U/Sensors/TotalEnergy",
			       "/redfish/v1/Chassis/1U/Sensors/PS1Energy",
			       "/redfish/v1/Chassis/1U/Sensors/PS2Energy" } };
	rf_source_t s;
	char msg[512];

	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_AUTO, NULL, &s, msg), 0);
	/* Bay1's Metrics has EnergykWh but Bay2 has no Metrics: no sum */
	ck_assert(!s.has_energy);
	ck_assert(s.has_power);
	ck_assert_str_eq(s.power.what, "EnvironmentMetrics PowerWatts");
	/* and without EnvironmentMetrics: the chassis' Power sensor */
	f.hide[3] = "/redfish/v1/Chassis/1U/EnvironmentMetrics";
	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_AUTO, NULL, &s, msg), 0);
	ck_assert_str_eq(s.power.what, "Sensor Power");
	ck_assert_str_eq(s.power.probes[0].uri,
			 "/redfish/v1/Chassis/1U/Sensors/TotalPower");
	/* energy asked for: a clear error naming the chassis */
	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_ENERGY, NULL, &s, msg),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "/redfish/v1/Chassis/1U has no energy counter"));
}
END_TEST

START_TEST(test_legacy_only)
{
	fake_t f = { .root = "public-rackmount1",
		     .hide = { "/redfish/v1/Chassis/1U/EnvironmentMetrics",
			       "/redfish/v1/Chassis/1U/Sensors",
			       "/redfish/v1/Chassis/1U/PowerSubsystem" } };
	rf_source_t s;
	char msg[512];
	const char *uris[4];
	json_object *docs[4];
	rf_value_t v;
	size_t n, i;

	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_AUTO, NULL, &s, msg), 0);
	ck_assert(!s.has_energy);
	ck_assert_str_eq(s.power.what, "legacy Power PowerConsumedWatts");
	n = rf_source_uris(&s, uris, 4);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(_fetch(&f, uris[0], &docs[0], msg, sizeof(msg)), 0);
	ck_assert_int_eq(rf_series_read(&s.power, uris, docs, n, &v, msg,
					sizeof(msg)), 0);
	ck_assert_double_eq(v.value, 344);
	for (i = 0; i < n; i++)
		json_object_put(docs[i]);
	/* nothing at all: the error names the chassis */
	f.hide[3] = "/redfish/v1/Chassis/1U/Power";
	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_AUTO, NULL, &s, msg),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "the chassis /redfish/v1/Chassis/1U has none of the sources"));
}
END_TEST

START_TEST(test_power_pick_and_uri)
{
	fake_t f = { .root = "public-rackmount1" };
	rf_source_t s;
	char msg[512];

	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_POWER, NULL, &s, msg), 0);
	ck_assert(!s.has_energy);
	ck_assert_str_eq(s.power.what, "EnvironmentMetrics PowerWatts");
	/* a named resource: a supply's Metrics has both */
	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_URI,
		"/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/Bay1/Metrics",
		&s, msg), 0);
	ck_assert(s.has_energy && s.has_power);
	ck_assert_int_eq(s.energy.q, RF_Q_KWH);
	ck_assert_str_eq(s.power.probes[0].path, "InputPowerWatts");
	/* a resource with neither */
	ck_assert_int_eq(_discover(&f, NULL, RF_PICK_URI,
		"/redfish/v1/Chassis/1U", &s, msg), -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "/redfish/v1/Chassis/1U: no energy or power"));
}
END_TEST

START_TEST(test_chassis_missing)
{
	fake_t f = { .root = "public-rackmount1" };
	rf_source_t s;
	char msg[512];

	ck_assert_int_eq(_discover(&f, "2U", RF_PICK_AUTO, NULL, &s, msg),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "/redfish/v1/Chassis/2U"));
}
END_TEST

/* ---------------------------------------------------------- units */

START_TEST(test_units)
{
	counter_spec_t spec;
	uint64_t raw;

	/* kWh read to 3 decimals: 1 Wh units, 3.6 kJ each */
	ck_assert_int_eq(rf_counter_raw(RF_Q_KWH, 325.675, 3, &raw, &spec), 0);
	ck_assert_uint_eq(raw, 325675);
	ck_assert_double_eq_tol(spec.mj_per_unit, 3.6e6, 1e-3);
	ck_assert_uint_eq(spec.width_bits, 64);
	/* a whole-kWh counter (the mockup's 325675): 1 kWh units */
	ck_assert_int_eq(rf_counter_raw(RF_Q_KWH, 325675, 0, &raw, &spec), 0);
	ck_assert_uint_eq(raw, 325675);
	ck_assert_double_eq_tol(spec.mj_per_unit, 3.6e9, 1);
	/* Wh: 3.6 kJ a unit; J: 1 J, finer digits not a step (the cap) */
	ck_assert_int_eq(rf_counter_raw(RF_Q_WH, 12, 0, &raw, &spec), 0);
	ck_assert_uint_eq(raw, 12);
	ck_assert_double_eq_tol(spec.mj_per_unit, 3.6e6, 1e-3);
	ck_assert_int_eq(rf_counter_raw(RF_Q_JOULES, 1234.56789, 5, &raw,
					&spec), 0);
	ck_assert_uint_eq(raw, 1235);
	ck_assert_double_eq_tol(spec.mj_per_unit, 1000.0, 1e-9);
	/* a kWh counter printed as a binary float: still 1 Wh steps */
	ck_assert_int_eq(rf_counter_raw(RF_Q_KWH, 8765.432000000001,
					rf_json_decimals("8765.432000000001"),
					&raw, &spec), 0);
	ck_assert_uint_eq(raw, 8765432);
	ck_assert_double_eq_tol(spec.mj_per_unit, 3.6e6, 1e-3);
	ck_assert_int_eq(rf_counter_raw(RF_Q_JOULES, -1, 0, &raw, &spec),
			 -ERANGE);
}
END_TEST

/* A reading of the mockup's sensor: its value, decimals and unit. */
START_TEST(test_sensor_reading_energy)
{
	fake_t f = { .root = "public-rackmount1" };
	const char *uri = "/redfish/v1/Chassis/1U/Sensors/TotalEnergy";
	json_object *doc;
	rf_series_t s = { .what = "Sensor EnergykWh", .q = RF_Q_KWH, .n = 1 };
	rf_value_t v;
	counter_spec_t spec;
	uint64_t raw;
	char msg[256];
	double joules;

	snprintf(s.probes[0].uri, RF_URI_MAX, "%s", uri);
	ck_assert_int_eq(_fetch(&f, uri, &doc, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rf_series_read(&s, &uri, &doc, 1, &v, msg,
					sizeof(msg)), 0);
	ck_assert_double_eq(v.value, 325675);
	ck_assert_uint_eq(v.decimals, 0);
	ck_assert_int_eq(rf_counter_raw(s.q, v.value, v.decimals, &raw,
					&spec), 0);
	/* 325675 kWh is 1.17243e12 J: read as Wh it would be 1000x less */
	joules = raw * spec.mj_per_unit / 1000.0;
	ck_assert_double_eq_tol(joules, 325675 * 3.6e6, 1);
	json_object_put(doc);
}
END_TEST

START_TEST(test_decimals)
{
	ck_assert_uint_eq(rf_json_decimals("325.675"), 3);
	ck_assert_uint_eq(rf_json_decimals("12"), 0);
	ck_assert_uint_eq(rf_json_decimals("1.5e-2"), 3);
	ck_assert_uint_eq(rf_json_decimals("2e3"), 0);
	ck_assert_uint_eq(rf_json_decimals("8765.4321"), 4);
}
END_TEST

/* ---------------------------------------------------------- restarts */

START_TEST(test_restart_detection)
{
	const char *t0 = "2024-01-01T00:00:00+00:00";
	const char *t1 = "2026-11-29T08:00:05+00:00";

	ck_assert(!rf_counter_restarted(10.0, t0, 10.5, t0));
	ck_assert(!rf_counter_restarted(10.0, "", 10.0, ""));
	/* ResetMetrics: back to 0, a new SensorResetTime */
	ck_assert(rf_counter_restarted(10.0, t0, 0.0, t1));
	/* the reset time changed, the value already past the old one */
	ck_assert(rf_counter_restarted(10.0, t0, 11.0, t1));
	/* a BMC that lost its counter at a reboot, no reset time */
	ck_assert(rf_counter_restarted(10.0, "", 0.2, ""));
}
END_TEST

/*
 * A kWh counter at 1 Wh through the accumulator as the meter hands it:
 * counter + power, then a restart as a power-only reading, then counter
 * again: the energy is the truth within one step, the restart counted
 * once (not the counter's fall, not lost).
 */
START_TEST(test_restart_through_accumulator)
{
	energy_acc_config_t cfg = { .history = 64, .max_power_mw = 2000000 };
	energy_acc_t *acc = energy_acc_create(&cfg);
	const uint64_t s_ns = 1000000000ULL;
	const double watts = 360.0;	/* 0.1 Wh a second */
	double kwh = 1000.0, truth_j = 0;
	counter_spec_t spec;
	uint64_t raw, e_mj, t;
	int i;

	ck_assert_ptr_nonnull(acc);
	for (i = 0, t = s_ns; i <= 120; i++, t += 5 * s_ns) {
		if (i)
			truth_j += watts * 5;
		if (i == 60) {	/* ResetMetrics: the meter gives power only */
			kwh = 0;
			ck_assert_int_eq(energy_acc_add_power(acc, t,
							      watts * 1000), 0);
			continue;
		}
		if (i)
			kwh += watts * 5 / 3.6e6;
		/* the BMC's reading: floored to 0.001 kWh */
		ck_assert_int_eq(rf_counter_raw(RF_Q_KWH,
						(double) (long long) (kwh * 1000) / 1000,
						3, &raw, &spec), 0);
		ck_assert_int_eq(energy_acc_add_counter(acc, t, raw, &spec,
							 watts * 1000), 0);
	}
	ck_assert_int_eq(energy_acc_energy_at(acc, t - 5 * s_ns, &e_mj), 0);
	ck_assert_double_eq_tol(e_mj / 1000.0, truth_j, 3600);
	energy_acc_destroy(acc);
}
END_TEST

/* ---------------------------------------------------------- bounds */

START_TEST(test_bad_json_names_uri)
{
	const char *html = "<html><body>Service Unavailable</body></html>";
	const char *cut = "{\"Reading\": 374, \"Rea";
	json_object *doc;
	char msg[256];

	ck_assert_int_eq(rf_json_parse(html, strlen(html), "/redfish/v1/x", 0,
				       &doc, msg, sizeof(msg)), -EBADMSG);
	ck_assert_ptr_null(doc);
	ck_assert_ptr_nonnull(strstr(msg, "/redfish/v1/x: not JSON"));
	ck_assert_ptr_nonnull(strstr(msg, "<html>"));
	ck_assert_int_eq(rf_json_parse(cut, strlen(cut), "/redfish/v1/y", 0,
				       &doc, msg, sizeof(msg)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(msg, "/redfish/v1/y: not JSON (the document ends early)"));
	ck_assert_int_eq(rf_json_parse("[1]", 3, "/z", 0, &doc, msg,
				       sizeof(msg)), -EBADMSG);
	ck_assert_int_eq(rf_json_parse("{} {}", 5, "/z", 0, &doc, msg,
				       sizeof(msg)), -EBADMSG);
}
END_TEST

START_TEST(test_depth_bound)
{
	char buf[512];
	json_object *doc;
	char msg[256];
	size_t n = 0;
	int i;

	/* 31 levels parse, 40 do not */
	for (i = 0; i < 31; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "{\"a\":");
	n += snprintf(buf + n, sizeof(buf) - n, "1");
	for (i = 0; i < 31; i++)
		buf[n++] = '}';
	ck_assert_int_eq(rf_json_parse(buf, n, "/d", 0, &doc, msg,
				       sizeof(msg)), 0);
	json_object_put(doc);
	n = 0;
	for (i = 0; i < 40; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "{\"a\":");
	ck_assert_int_eq(rf_json_parse(buf, n, "/deep", 0, &doc, msg,
				       sizeof(msg)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(msg, "/deep: not JSON (nesting too deep)"));
}
END_TEST

START_TEST(test_size_bound)
{
	size_t len = RF_JSON_MAX_BYTES + 1;
	char *big = malloc(len);
	json_object *doc;
	char msg[256];

	memset(big, ' ', len);
	big[0] = '{';
	big[len - 1] = '}';
	ck_assert_int_eq(rf_json_parse(big, len, "/big", 0, &doc, msg,
				       sizeof(msg)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(msg, "/big: answer of 1048577 bytes"));
	/* one byte less is parsed */
	ck_assert_int_eq(rf_json_parse(big + 1, len - 1, "/big", 0, &doc, msg,
				       sizeof(msg)), -EBADMSG);
	big[1] = '{';
	ck_assert_int_eq(rf_json_parse(big + 1, len - 1, "/big", 0, &doc, msg,
				       sizeof(msg)), 0);
	json_object_put(doc);
	free(big);
}
END_TEST

/* ------------------------------------------------------ the poller */

static json_object *_parse(const char *text)
{
	json_object *doc = NULL;
	char msg[256];

	ck_assert_int_eq(rf_json_parse(text, strlen(text), "/t", 0, &doc, msg,
				       sizeof(msg)), 0);
	return doc;
}

/* The poller's watch for a PDU's tick compares readings only: a member's
 * power or energy changing is a tick, a status or a timestamp is not. */
START_TEST(test_readings_same)
{
#define PDU_DOC(TIME) "{\"Members\": [{\"Id\": \"A1\", \"PowerWatts\": " \
	"{\"Reading\": 120.5}, \"EnergykWh\": {\"Reading\": 325.675, " \
	"\"SensorResetTime\": \"2024-01-01T00:00:00Z\"}, \"Status\": " \
	"{\"Health\": \"OK\"}}], \"DateTime\": \"" TIME "\"}"
	char a[512], b[512];
	json_object *x, *y;

	snprintf(a, sizeof(a), "%s", PDU_DOC("2026-11-30T03:00:00Z"));
	snprintf(b, sizeof(b), "%s", PDU_DOC("2026-11-30T03:00:01Z"));
	x = _parse(a);
	y = _parse(b);
	ck_assert(rf_readings_same(x, y));	/* a timestamp alone */
	json_object_put(y);
	snprintf(b, sizeof(b), "%s", a);
	memcpy(strstr(b, "120.5"), "120.6", 5);
	y = _parse(b);
	ck_assert(!rf_readings_same(x, y));	/* a member's power */
	json_object_put(y);
	snprintf(b, sizeof(b), "%s", a);
	memcpy(strstr(b, "325.675"), "325.676", 7);
	y = _parse(b);
	ck_assert(!rf_readings_same(x, y));	/* its energy counter */
	json_object_put(y);
	snprintf(b, sizeof(b), "%s", a);
	memcpy(strstr(b, "2024-01-01"), "2025-01-01", 10);
	y = _parse(b);
	ck_assert(!rf_readings_same(x, y));	/* its counter reset */
	json_object_put(y);
	snprintf(b, sizeof(b), "%s", a);
	memcpy(strstr(b, "\"OK\""), "\"KO\"", 4);
	y = _parse(b);
	ck_assert(rf_readings_same(x, y));	/* its status */
	json_object_put(y);
	ck_assert(!rf_readings_same(x, NULL));
	json_object_put(x);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("redfish");
	TCase *tc = tcase_create("discovery");

	tcase_add_test(tc, test_rackmount1_energy_sensor);
	tcase_add_test(tc, test_joules_first);
	tcase_add_test(tc, test_no_energy_sensors_power);
	tcase_add_test(tc, test_legacy_only);
	tcase_add_test(tc, test_power_pick_and_uri);
	tcase_add_test(tc, test_chassis_missing);
	suite_add_tcase(s, tc);
	tc = tcase_create("units");
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_sensor_reading_energy);
	tcase_add_test(tc, test_decimals);
	tcase_add_test(tc, test_restart_detection);
	tcase_add_test(tc, test_restart_through_accumulator);
	suite_add_tcase(s, tc);
	tc = tcase_create("bounds");
	tcase_add_test(tc, test_bad_json_names_uri);
	tcase_add_test(tc, test_depth_bound);
	tcase_add_test(tc, test_size_bound);
	suite_add_tcase(s, tc);
	tc = tcase_create("poller");
	tcase_add_test(tc, test_readings_same);
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
