/*
 * test_bad_conf.c - every key of every configuration of the suite, given a
 * wrong value, is refused with a message naming the file, the key and the
 * value; a refused value leaves the key as it was (the last good value);
 * unknown keys and missing or unreadable files are named too.
 *
 * The keys come from the code's own tables: the descriptors (conf_desc.h)
 * of acct_gather_energy/modbus, bmc, rrd, ext_sensors/meters, the settle
 * plugin's plugstack.conf arguments and the SPANK options of
 * energy_policy; the map files' keys (modbus_map, bmc_map: conf_map.h) and
 * energy_policy.conf's (freq_policy_key).  A key without a row here fails
 * the test ("add a row"), and so does a row whose key no longer exists.
 *
 * The GPU plugins read no configuration keys of their own (gres.conf is
 * Slurm's; their hardware roots are environment variables, see
 * src/gres_gpu/README.md), and cli_filter/energy_policy none at all;
 * job_submit/energy_policy reads energy_policy.conf and the SPANK options
 * (whose --energy-policy it checks again, freq_decide.c), both below.
 *
 * What the daemons do with these errors (refuse to start, or keep the last
 * good configuration) is in each man page's BAD CONFIGURATION section and
 * is proven on real daemons by tests/integration/test_bad_config.py.
 *
 * One test program, though over 800 lines: one table-driven check of every
 * key of every configuration, and the rows are the bulk.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bmc_conf.h"
#include "pcap_conf.h"
#include "conf.h"
#include "conf_desc.h"
#include "es_conf.h"
#include "freq_options.h"
#include "freq_policy.h"
#include "gpu_meter_conf.h"
#include "modbus_conf.h"
#include "rrd_conf.h"
#include "settle_conf.h"
#ifdef SE_TEST_SNMP
#include "snmp_conf.h"
#endif
#include "tmp_file.h"

#define FILE_NAME	"/etc/slurm/test.conf"

/*
 * One key: a good value, and two bad ones with a word of each message.
 * bad_type is of the wrong kind (not a number, not a name of the list, not
 * an absolute path ...); bad_range is of the right kind but outside what
 * the key allows (NULL for keys that have no range: enums, names).
 */
typedef struct {
	const char *key;
	const char *good;
	const char *bad_type, *type_why;
	const char *bad_range, *range_why;
} row_t;

typedef struct {
	const se_conf_desc_t *desc;
	const row_t *rows;
} family_t;

/* ------------------------------------------------------------- the rows */

static const row_t modbus_rows[] = {
	{ "EnergyModbusDevice", "tcp://127.0.0.1:502",
	  "ftp://meter", "a device is tcp://HOST[:PORT] or rtu:/dev/ttyX",
	  "tcp://meter:70000", "bad port (1-65535)" },
	{ "EnergyModbusBaud", "19200",
	  "fast", "not an unsigned integer",
	  "100", "must be between 300 and 4000000" },
	{ "EnergyModbusParity", "E",
	  "X", "must be one of: N, E, O", NULL, NULL },
	{ "EnergyModbusDataBits", "7",
	  "eight", "not an unsigned integer",
	  "9", "must be between 5 and 8" },
	{ "EnergyModbusStopBits", "2",
	  "one", "not an unsigned integer",
	  "3", "must be between 1 and 2" },
	{ "EnergyModbusUnit", "3",
	  "-1", "not an unsigned integer",
	  "256", "must be between 0 and 255" },
	{ "EnergyModbusRegisterKind", "input",
	  "coil", "must be one of: input, holding", NULL, NULL },
	{ "EnergyModbusPowerRegister", "100",
	  "0x", "not an unsigned integer",
	  "65536", "must be between 0 and 65535" },
	{ "EnergyModbusPowerType", "float32",
	  "int128", "must be one of: int16, uint16", NULL, NULL },
	{ "EnergyModbusWordOrder", "cdab",
	  "big", "must be one of: abcd, cdab, badc, dcba", NULL, NULL },
	{ "EnergyModbusPowerScale", "0.1",
	  "tenth", "not a number",
	  "0", "must be between 1e-09 and 1e+12" },
	{ "EnergyModbusEnergyRegister", "200",
	  "ten", "not an unsigned integer",
	  "70000", "must be between 0 and 65535" },
	{ "EnergyModbusEnergyType", "uint32",
	  "long", "must be one of: int16, uint16", NULL, NULL },
	{ "EnergyModbusEnergyScale", "3600",
	  "1 kWh", "not a number",
	  "-1", "must be between 1e-09 and 1e+12" },
	{ "EnergyModbusModel", "sdm630",
	  "sdm999", "unknown model (known: custom, sdm630", NULL, NULL },
	{ "EnergyModbusFrequency", "2",
	  "2s", "not a number of seconds",
	  "0.01", "must be between 0.1 and 3600 seconds" },
	{ "EnergyModbusTimeout", "500",
	  "0.5", "not a whole number of milliseconds",
	  "5", "must be between 10 and 60000 milliseconds" },
	{ "EnergyModbusMaxPower", "3000",
	  "lots", "not a number",
	  "0.5", "must be between 1 and 1e+08" },
	{ "EnergyModbusMap", "/etc/slurm/modbus.map",
	  "modbus.map", "must be an absolute path", NULL, NULL },
	{ NULL }
};

static const row_t bmc_rows[] = {
	{ "EnergyBMCMethod", "dcmi",
	  "ipmi", "must be one of: auto, dcmi, sensors", NULL, NULL },
	/* a list of record ids or names */
	{ "EnergyBMCSensors", "PSU1 Input Power,12",
	  "PSU1,,PSU2", "empty item in the list",
	  "70000", "record id 70000 is not 16-bit" },
	{ "EnergyBMCHost", "%n-bmc.mgmt",
	  "", "empty (leave the key out for in-band)", NULL, NULL },
	{ "EnergyBMCMap", "/etc/slurm/bmc.map",
	  "bmc.map", "must be an absolute path", NULL, NULL },
	/* 16 for IPMI is checked with the method (test_bmc_conf) */
	{ "EnergyBMCUser", "administrator-of-everything",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "longer than 127 characters",
	  NULL, NULL },
	{ "EnergyBMCPasswordFile", "/etc/slurm/bmc.password",
	  "bmc.password", "must be an absolute path", NULL, NULL },
	{ "EnergyBMCPrivilege", "operator",
	  "root", "must be one of: user, operator, admin", NULL, NULL },
	{ "EnergyBMCProtocol", "1.5",
	  "3.0", "must be one of: 2.0, 1.5", NULL, NULL },
	{ "EnergyBMCCipherSuite", "17",
	  "aes", "not an unsigned integer",
	  "4", "not a cipher suite FreeIPMI supports" },
	{ "EnergyBMCWorkaroundFlags", "opensesspriv,authcap",
	  "opensesspriv,fast", "unknown workaround 'fast'", NULL, NULL },
	{ "EnergyBMCFrequency", "0.5",
	  "1m", "not a number of seconds",
	  "7200", "must be between 0.1 and 3600 seconds" },
	{ "EnergyBMCTimeout", "500",
	  "2s", "not a whole number of milliseconds",
	  "0", "must be between 10 and 60000 milliseconds" },
	{ "EnergyBMCMaxWatts", "3000",
	  "3kW", "not an unsigned integer",
	  "65536", "must be between 1 and 65535" },
	{ "EnergyBMCSdrCacheDir", "/var/cache/se-sdr-%n",
	  "sdr-cache", "must be an absolute path", NULL, NULL },
	{ "EnergyBMCAuth", "basic",
	  "digest", "must be one of: session, basic", NULL, NULL },
	{ "EnergyBMCCAFile", "/etc/slurm/bmc-ca.pem",
	  "bmc-ca.pem", "must be an absolute path", NULL, NULL },
	{ "EnergyBMCTLSVerify", "no",
	  "off", "must be one of: yes, no", NULL, NULL },
	{ "EnergyBMCRedfishChassis", "1U",
	  "/Chassis/1U", "a URI starts with /redfish/v1/",
	  "1 U", "a chassis Id (1U) or URI" },
	{ "EnergyBMCRedfishTickWatch", "no",
	  "off", "must be one of: yes, no", NULL, NULL },
	{ "EnergyBMCRedfishSource", "/redfish/v1/Chassis/1U/Sensors/TotalEnergy",
	  "counter", "must be auto, energy, power or a resource URI",
	  "/redfish/v1/Chassis?$expand=.", "must be auto, energy, power" },
	{ "EnergyBMCPoller", "10.0.0.2:6820",
	  "pollerhost", "not HOST:PORT",
	  "pollerhost:70000", "bad port (1-65535)" },
	{ NULL }
};

static const row_t rrd_rows[] = {
	{ "EnergyRRDFile", "/var/lib/collectd/rrd/%n/power.rrd",
	  "power.rrd", "must be an absolute path",
	  "/var/lib/rrd/%h.rrd", "unknown escape '%h'" },
	{ "EnergyRRDDataSource", "watts",
	  "watts-in", "not an RRD data source name",
	  "a_name_of_twenty_chr", "not an RRD data source name" },
	{ "EnergyRRDConsolidation", "MAX",
	  "MEDIAN", "must be one of: AVERAGE, MIN, MAX, LAST", NULL, NULL },
	{ "EnergyRRDFrequency", "10",
	  "10s", "not a number of seconds",
	  "0", "must be between 0.1 and 3600 seconds" },
	{ "EnergyRRDMaxAge", "120",
	  "two minutes", "not a number of seconds",
	  "0.5", "must be between 1 and 86400 seconds" },
	{ "EnergyRRDDaemon", "unix:/run/rrdcached.sock",
	  "unix:/run/rrd cached.sock",
	  "contains a blank or a control character",
	  "", "empty" },
	{ "EnergyRRDMinWatt", "5",
	  "five", "not a number",
	  "-1", "must be between 0 and 1e+09" },
	{ "EnergyRRDMaxWatt", "5000",
	  "inf", "not a finite number",
	  "2e9", "must be between 0 and 1e+09" },
	{ NULL }
};

static const row_t es_rows[] = {
	{ "JobData", "energy",
	  "power", "unknown item \"power\" (allowed: energy)", NULL, NULL },
	{ "NodeData", "energy,temp",
	  "energy,humidity", "unknown item \"humidity\"", NULL, NULL },
	{ "SwitchData", "energy",
	  "bandwidth", "unknown item \"bandwidth\"", NULL, NULL },
	{ "ColdDoorData", "temp",
	  "energy", "unknown item \"energy\" (allowed: temp)", NULL, NULL },
	{ "EnergyRRA", "watts",
	  "watts in", "not an RRD data source name",
	  "a_name_of_twenty_chr", "not an RRD data source name" },
	{ "TempRRA", "celsius",
	  "deg.C", "not an RRD data source name", NULL, NULL },
	{ "EnergyPathRRD", "/var/lib/rrd/%n.rrd",
	  "rrd/%n.rrd", "must be an absolute path",
	  "/var/lib/rrd/%x.rrd", "unknown escape '%x'" },
	{ "TempPathRRD", "/var/lib/rrd/%n-temp.rrd",
	  "temp.rrd", "must be an absolute path",
	  "/var/lib/rrd/%", "'%' at the end" },
	{ "MinWatt", "5",
	  "low", "not a number", "-5", "must be between 0 and" },
	{ "MaxWatt", "900",
	  "high", "not a number", "-900", "must be between 0 and" },
	{ "MinTemp", "2",
	  "cold", "not a number", "-2", "must be between 0 and" },
	{ "MaxTemp", "90",
	  "hot", "not a number", "-90", "must be between 0 and" },
	{ "ColdDoors", "door[1-4]",
	  "door1, door2", "contains a blank", "", "empty" },
	{ "Switches", "sw[1-2]",
	  "sw1 sw2", "contains a blank", "", "empty" },
	{ "RRDDaemon", "unix:/run/rrdcached.sock",
	  "unix:/run/rrd cached.sock", "contains a blank", "", "empty" },
	{ "ReadThreads", "4",
	  "many", "not an unsigned integer",
	  "0", "must be between 1 and" },
	{ "MaxAge", "120",
	  "2m", "not a number of seconds",
	  "0", "must be between 1 and" },
	{ "EnergyHistory", "600",
	  "1h", "not a number of seconds",
	  "0", "must be between" },
	{ NULL }
};

static const row_t settle_rows[] = {
	{ "max_wait", "10",
	  "10s", "not an unsigned integer",
	  "601", "must be between 0 and 600" },
	{ NULL }
};

static const row_t settle_energy_rows[] = {
	{ "EnergySettle", "no",
	  "maybe", "must be one of: yes, no", NULL, NULL },
	{ "EnergySettleMaxWait", "5",
	  "5s", "not an unsigned integer",
	  "601", "must be between 0 and 600" },
	{ NULL }
};

#ifdef SE_TEST_SNMP
static const row_t snmp_rows[] = {
	{ "EnergySNMPMap", "/etc/slurm/snmp.map",
	  "snmp.map", "must be an absolute path", NULL, NULL },
	{ "EnergySNMPSecrets", "/etc/slurm/snmp.secrets",
	  "snmp.secrets", "must be an absolute path", NULL, NULL },
	{ "EnergySNMPFrequency", "2",
	  "2s", "not a number of seconds",
	  "0.01", "must be between 0.1 and 3600 seconds" },
	{ "EnergySNMPTimeout", "500",
	  "0.5", "not a whole number of milliseconds",
	  "5", "must be between 10 and 60000 milliseconds" },
	{ "EnergySNMPMaxPower", "3680",
	  "lots", "not a number",
	  "0.5", "must be between 1 and 1e+06" },
	{ "EnergySNMPPoller", "10.0.0.2:6820",
	  "pollerhost", "not HOST:PORT",
	  "pollerhost:70000", "bad port (1-65535)" },
	{ NULL }
};
#endif

static const row_t gpu_meter_rows[] = {
	{ "EnergyGPU", "nvml",
	  "cuda", "must be one of: none, nvml", NULL, NULL },
	{ "EnergyGPUFactor", "1.06",
	  "high", "not a number",
	  "0.94", "must be between 1 and 2" },
	{ "EnergyGPULibrary", "/opt/nvml/libnvidia-ml.so.1",
	  "libnvidia-ml.so.1", "must be an absolute path", NULL, NULL },
	{ NULL }
};

/* powercap.conf (slurm-energy-powercapd, slurm-energy-powercap-agent) */
static const row_t pcap_rows[] = {
	{ "PowerCapWatts", "5000",
	  "5kW", "not a number", "0", "must be between 1 and" },
	{ "PowerCapPeriod", "1",
	  "1s", "not a number of seconds", "0.05", "must be between" },
	{ "PowerCapHeadroomWatts", "20",
	  "lots", "not a number", "-1", "must be between 0 and" },
	{ "PowerCapAtCapWatts", "5",
	  "near", "not a number", "-1", "must be between 0 and" },
	{ "PowerCapHysteresisWatts", "5",
	  "some", "not a number", "-1", "must be between 0 and" },
	{ "PowerCapRaiseGate", "300",
	  "0.3s", "not", "60001", "must be between" },
	{ "PowerCapHoldSeconds", "30",
	  "30s", "not a number of seconds", "0", "must be between" },
	{ "PowerCapFloorWatts", "120",
	  "low", "not a number", "-1", "must be between 0 and" },
	{ "PowerCapMaxWatts", "400",
	  "high", "not a number", "0", "must be between 1 and" },
	{ "PowerCapKnobs", "rapl:dram=yes,cpufreq:min_w=100:max_w=300",
	  "rapel", "unknown knob 'rapel'", "", "no knob" },
	{ "PowerCapNodes", "n[1-3],gpu1",
	  "n[1-3", "n[1-3: unbalanced bracket", "", "no node" },
	{ "PowerCapController", "head:6830",
	  "head", "expected HOST:PORT", "head:70000", "bad port (1-65535)" },
	{ "PowerCapStateFile", "/run/slurm-energy/powercap.state",
	  "powercap.state", "must be an absolute path", NULL, NULL },
	{ "PowerCapJobRecords", "yes",
	  "maybe", "must be one of: no, yes", NULL, NULL },
	{ "PowerCapIdleNodes", "cap",
	  "uncap", "must be one of: release, cap", NULL, NULL },
	{ NULL }
};

static const row_t option_rows[] = {
	{ "energy-policy", "min_energy",
	  "greenest", "must be one of: none, performance, min_energy, min_time",
	  NULL, NULL },
	{ "energy-tag", "lammps-big",
	  "my app", "give 1 to 127 characters, no blanks",
	  "", "give 1 to 127 characters" },
	{ NULL }
};

static const family_t families[] = {
	{ &modbus_conf_desc, modbus_rows },
	{ &bmc_conf_desc, bmc_rows },
	{ &rrd_conf_desc, rrd_rows },
#ifdef SE_TEST_SNMP
	{ &snmp_conf_desc, snmp_rows },
#endif
	{ &es_conf_desc, es_rows },
	{ &settle_conf_desc, settle_rows },
	{ &settle_energy_conf_desc, settle_energy_rows },
	{ &gpu_meter_conf_desc, gpu_meter_rows },
	{ &freq_options_desc, option_rows },
	{ &pcap_conf_desc, pcap_rows },
};

#define N_FAMILIES	(sizeof(families) / sizeof(families[0]))

/* energy_policy.conf: every key (freq_policy_key), on a global line or a
 * Rule= line as the key allows. */
static const row_t policy_rows[] = {
	{ "DefaultPolicy", "min_energy",
	  "greenest", "must be one of: none, performance", NULL, NULL },
	{ "Policy", "min_time",
	  "fastest", "must be one of: none, performance", NULL, NULL },
	{ "MaxSlowdown", "10%",
	  "ten", "not a percentage between 0 and 1000",
	  "2000%", "not a percentage between 0 and 1000" },
	{ "EnergyTolerance", "2",
	  "two", "not a percentage between 0 and 1000",
	  "-1", "not a percentage between 0 and 1000" },
	{ "MinHistoryFrequencies", "3",
	  "three", "not an unsigned integer",
	  "0", "must be between 1 and 64" },
	{ "HistoryFile", "/var/lib/se/history",
	  "history", "must be an absolute path", NULL, NULL },
	{ "PowerBudget", "50000",
	  "50kW", "not a number",
	  "-1", "must be between 0 and 1e+12" },
	{ "BudgetCeiling", "2.0GHz",
	  "fast", "not a frequency",
	  "5000GHz", "not a frequency" },
	{ "Frequencies", "1.2GHz,2.4GHz",
	  "1.2GHz,turbo", "'turbo' is not a frequency",
	  "1.2GHz,-1", "'-1' is not a frequency" },
	{ "Partition", "batch,debug",
	  "batch,,debug", "expected a comma list of names, or *",
	  "", "expected a comma list" },
	{ "QOS", "normal",
	  ",normal", "expected a comma list of names, or *", NULL, NULL },
	{ "Account", "physics",
	  "physics,", "expected a comma list of names, or *", NULL, NULL },
	{ "User", "alice,bob",
	  "", "expected a comma list of names, or *", NULL, NULL },
	{ "DefaultFreq", "2.0GHz",
	  "fastest", "not a frequency (kHz, a number with kHz/MHz/GHz, or low", "0", "not a frequency" },
	{ "DefaultGovernor", "performance",
	  "turbo", "must be one of: conservative, ondemand", NULL, NULL },
	{ "AllowedMin", "1.2GHz",
	  "slow", "not a frequency", "0", "not a frequency" },
	{ "AllowedMax", "2.4GHz",
	  "fast", "not a frequency", "-2GHz", "not a frequency" },
	{ "AllowedGovernors", "ondemand,performance",
	  "ondemand,turbo", "'turbo' is not a governor (known: conservative", NULL, NULL },
	{ "OutOfRange", "clamp",
	  "ignore", "must be one of: reject, clamp", NULL, NULL },
	{ "EnergyCap", "36000",
	  "10kJ", "not a number", "-1", "must be between 0 and" },
	{ "PowerCap", "300",
	  "300W", "not a number", "-1", "must be between 0 and" },
	{ NULL }
};

/* A Modbus map line's keys (modbus_map), on a line with Nodes=. */
static const row_t modbus_map_rows[] = {
	{ "Nodes", "n[1-4]", "", "empty", NULL, NULL },
	{ "Device", "tcp://pdu1:502",
	  "pdu1:502", "a device is tcp://HOST[:PORT] or rtu:/dev/ttyX",
	  "rtu:ttyS1", "an RTU device is rtu:/dev/ttyX" },
	{ "Unit", "2", "two", "not an unsigned integer",
	  "300", "must be between 0 and 255" },
	{ "Offset", "100", "+100", "not an unsigned integer",
	  "65536", "must be between 0 and 65535" },
	{ "Share", "0.5", "half", "not a number",
	  "1.5", "must be between 1e-06 and 1" },
	{ "Model", "em24", "em99", "unknown model", NULL, NULL },
	{ "MaxPower", "3000", "3kW", "not a number",
	  "0", "must be between 1 and 1e+08" },
	{ NULL }
};

/* An EnergyBMCMap line's keys (bmc_map). */
static const row_t bmc_map_rows[] = {
	{ "Nodes", "n1", "", "empty", NULL, NULL },
	{ "Host", "10.0.0.1:623", "", "empty", NULL, NULL },
	{ "Source", "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1",
	  "counter", "must be auto, energy, power or a resource URI",
	  NULL, NULL },
	/* a node's two outlets, the second on another PDU: summed */
	{ "Source", "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1,"
		    "https://pdu2:8443/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/B1",
	  "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1,",
	  "or up to 8 of them separated by commas",
	  "https:///redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1",
	  "must be auto, energy, power or a resource URI" },
	{ "Chassis", "1U", "/Chassis/1U", "a URI starts with /redfish/v1/",
	  NULL, NULL },
	{ NULL }
};

/* ------------------------------------------------------------- helpers */

static char tmpdir[64];

static void _setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_bad_conf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void _teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const row_t *_row(const row_t *rows, const char *key)
{
	for (const row_t *r = rows; r->key; r++)
		if (!strcasecmp(r->key, key))
			return r;
	return NULL;
}

static const char *_write(const char *name, const char *text, mode_t mode)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	tmp_file_write_mode(path, text, mode);
	return path;
}

/* msg names file, "key=value" and says why. */
static void _assert_names(const char *msg, const char *file, const char *key,
			  const char *value, const char *why)
{
	char kv[512];

	snprintf(kv, sizeof(kv), "%s=%s", key, value);
	ck_assert_msg(strstr(msg, file), "'%s' does not name the file %s",
		      msg, file);
	ck_assert_msg(strstr(msg, kv), "'%s' does not name %s", msg, kv);
	ck_assert_msg(strstr(msg, why), "'%s' does not say '%s'", msg, why);
}

/* ------------------------------------------------------- descriptors */

/* Every key of every table has a row, and every row a key. */
START_TEST(test_every_key_has_a_row)
{
	const family_t *f = &families[_i];
	const char *key;

	for (size_t i = 0; (key = se_conf_key(f->desc, i)); i++)
		ck_assert_msg(_row(f->rows, key),
			      "%s: key %s has no row in tests/unit/test_bad_conf.c: add its bad values",
			      f->desc->name, key);
	for (const row_t *r = f->rows; r->key; r++)
		ck_assert_msg(se_conf_key_index(f->desc, r->key) >= 0,
			      "%s: row %s names no key of the table",
			      f->desc->name, r->key);
}
END_TEST

/* Set key to bad on a configuration holding good: refused, named, and the
 * key still shows the good value. */
static void _check_bad(const se_conf_desc_t *d, const row_t *r,
		       const char *bad, const char *why)
{
	void *conf = calloc(1, d->size);
	char err[1024] = "", before[1024], after[1024];
	int rc;

	ck_assert_ptr_nonnull(conf);
	d->init(conf);
	rc = se_conf_set(d, conf, FILE_NAME, r->key, r->good, err,
			 sizeof(err));
	ck_assert_msg(rc == 0, "%s: good %s=%s refused: %s", d->name, r->key,
		      r->good, err);
	se_conf_value(d, conf, r->key, before, sizeof(before));
	err[0] = '\0';
	rc = se_conf_set(d, conf, FILE_NAME, r->key, bad, err, sizeof(err));
	ck_assert_msg(rc < 0, "%s: %s=%s was accepted", d->name, r->key, bad);
	_assert_names(err, FILE_NAME, r->key, bad, why);
	se_conf_value(d, conf, r->key, after, sizeof(after));
	ck_assert_msg(!strcmp(before, after),
		      "%s: the refused %s=%s changed the key from '%s' to '%s'",
		      d->name, r->key, bad, before, after);
	d->free(conf);
	free(conf);
}

START_TEST(test_bad_values_are_named)
{
	const family_t *f = &families[_i];

	for (const row_t *r = f->rows; r->key; r++) {
		ck_assert_ptr_nonnull(r->bad_type);
		_check_bad(f->desc, r, r->bad_type, r->type_why);
		if (r->bad_range)
			_check_bad(f->desc, r, r->bad_range, r->range_why);
	}
}
END_TEST

START_TEST(test_unknown_key_is_named)
{
	const family_t *f = &families[_i];
	void *conf = calloc(1, f->desc->size);
	char key[128], err[512] = "";

	ck_assert_ptr_nonnull(conf);
	f->desc->init(conf);
	/* a typo of the first key: one letter dropped */
	snprintf(key, sizeof(key), "%s", se_conf_key(f->desc, 0));
	memmove(key + 1, key + 2, strlen(key + 1));
	ck_assert_int_eq(se_conf_set(f->desc, conf, FILE_NAME, key, "1", err,
				     sizeof(err)), -ENOENT);
	_assert_names(err, FILE_NAME, key, "1", "unknown key");
	f->desc->free(conf);
	free(conf);
}
END_TEST

/* --------------------------------------------------- energy_policy.conf */

START_TEST(test_policy_every_key_has_a_row)
{
	const char *key;
	bool in_rule, global;

	for (size_t i = 0; (key = freq_policy_key(i, &in_rule, &global));
	     i++) {
		ck_assert_msg(_row(policy_rows, key),
			      "energy_policy.conf: key %s has no row in tests/unit/test_bad_conf.c",
			      key);
		ck_assert(in_rule || global);
	}
	for (const row_t *r = policy_rows; r->key; r++) {
		for (size_t i = 0; (key = freq_policy_key(i, NULL, NULL)); i++)
			if (!strcmp(key, r->key))
				break;
		ck_assert_msg(key, "row %s is no key of energy_policy.conf",
			      r->key);
	}
}
END_TEST

/* The key's line: global keys alone, rule keys after Rule=r. */
static void _policy_line(const char *key, const char *value, char *buf,
			 size_t len)
{
	bool in_rule = false, global = false;
	const char *k;

	for (size_t i = 0; (k = freq_policy_key(i, &in_rule, &global)); i++)
		if (!strcmp(k, key))
			break;
	snprintf(buf, len, "# a site policy\n%s%s=\"%s\"\n",
		 global ? "" : "Rule=r ", key, value);
}

static void _policy_bad(const row_t *r, const char *bad, const char *why)
{
	freq_policy_t p;
	char text[512], err[1024] = "";
	const char *path;
	int rc;

	_policy_line(r->key, r->good, text, sizeof(text));
	path = _write("energy_policy.conf", text, 0644);
	freq_policy_init(&p);
	rc = freq_policy_load(&p, path, err, sizeof(err));
	ck_assert_msg(!rc, "good %s=%s refused: %s", r->key, r->good, err);
	freq_policy_free(&p);

	_policy_line(r->key, bad, text, sizeof(text));
	path = _write("energy_policy.conf", text, 0644);
	freq_policy_init(&p);
	rc = freq_policy_load(&p, path, err, sizeof(err));
	ck_assert_msg(rc == -EINVAL, "%s=%s accepted", r->key, bad);
	/* file and line */
	{
		char where[600];

		snprintf(where, sizeof(where), "%s:2: ", path);
		ck_assert_msg(strstr(err, where), "'%s' lacks '%s'", err,
			      where);
	}
	_assert_names(err, path, r->key, bad, why);
	freq_policy_free(&p);
}

START_TEST(test_policy_bad_values_are_named)
{
	for (const row_t *r = policy_rows; r->key; r++) {
		_policy_bad(r, r->bad_type, r->type_why);
		if (r->bad_range)
			_policy_bad(r, r->bad_range, r->range_why);
	}
}
END_TEST

START_TEST(test_policy_unknown_key)
{
	freq_policy_t p;
	char err[512];
	const char *path = _write("energy_policy.conf",
				  "DefaultPolicy=none\nMaxSlowDwn=5\n", 0644);

	freq_policy_init(&p);
	ck_assert_int_eq(freq_policy_load(&p, path, err, sizeof(err)),
			 -EINVAL);
	_assert_names(err, path, "MaxSlowDwn", "5", "unknown key");
	freq_policy_free(&p);
}
END_TEST

/* --------------------------------------------------------- map files */

/* hostlists of the tests: a plain name or comma list; '[' unbalanced is
 * bad */
static int _contains(void *arg, const char *expr, const char *node)
{
	(void) arg;
	if (strchr(expr, '[') && !strchr(expr, ']'))
		return -EINVAL;
	return strstr(expr, node) != NULL;
}

static bool _is_key_in(const char *key)
{
	for (size_t i = 0; i < modbus_map.n_keys; i++)
		if (!strcmp(modbus_map.keys[i].name, key))
			return true;
	return false;
}

static int _modbus_map(const char *line, char *err, size_t len)
{
	modbus_conf_t c;
	const char *path = _write("modbus.map", line, 0644);
	int rc;

	modbus_conf_init(&c);
	ck_assert_int_eq(se_conf_set(&modbus_conf_desc, &c, NULL,
				     "EnergyModbusMap", path, err, len), 0);
	ck_assert_int_eq(se_conf_set(&modbus_conf_desc, &c, NULL,
				     "EnergyModbusModel", "sdm630", err, len),
			 0);
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, len), 0);
	rc = modbus_conf_read_map(&c, err, len);
	modbus_conf_free(&c);
	return rc;
}

START_TEST(test_modbus_map_keys)
{
	char line[512], err[1024];
	const char *path;

	for (size_t i = 0; i < modbus_map.n_keys; i++)
		ck_assert_msg(_row(modbus_map_rows, modbus_map.keys[i].name),
			      "map key %s has no row", modbus_map.keys[i].name);
	for (const row_t *r = modbus_map_rows; r->key; r++) {
		const char *bads[2] = { r->bad_type, r->bad_range };
		const char *whys[2] = { r->type_why, r->range_why };
		bool is_nodes = !strcmp(r->key, "Nodes");

		ck_assert_msg(_is_key_in(r->key), "row %s is no map key",
			      r->key);
		snprintf(line, sizeof(line), "Nodes=n1 Device=tcp://x %s=%s\n",
			 r->key, r->good);
		ck_assert_msg(!_modbus_map(line, err, sizeof(err)),
			      "good %s=%s: %s", r->key, r->good, err);
		for (int k = 0; k < 2 && bads[k]; k++) {
			snprintf(line, sizeof(line), "%s%s=%s\n",
				 is_nodes ? "Device=tcp://x " :
					    "Nodes=n1 Device=tcp://x ",
				 r->key, bads[k]);
			ck_assert_msg(_modbus_map(line, err, sizeof(err)) < 0,
				      "%s=%s accepted", r->key, bads[k]);
			path = _write("modbus.map", line, 0644);
			_assert_names(err, path, r->key, bads[k], whys[k]);
		}
	}
	ck_assert_int_eq(_modbus_map("Nodes=n1 Colour=red\n", err,
				     sizeof(err)), -EINVAL);
	_assert_names(err, "modbus.map:1", "Colour", "red",
		      "unknown key (known: Nodes, Device");
}
END_TEST

START_TEST(test_bmc_map_keys)
{
	static const bmc_hostlist_ops_t hl = { .contains = _contains };
	char line[256], err[1024];

	for (size_t i = 0; i < bmc_map.n_keys; i++)
		ck_assert_msg(_row(bmc_map_rows, bmc_map.keys[i].name),
			      "map key %s has no row", bmc_map.keys[i].name);
	for (const row_t *r = bmc_map_rows; r->key; r++) {
		bmc_conf_t c;
		const char *path;

		snprintf(line, sizeof(line), "%s%s=%s\n",
			 strcmp(r->key, "Nodes") ? "Nodes=n1 " : "Host=h ",
			 r->key, r->bad_type);
		path = _write("bmc.map", line, 0644);
		bmc_conf_init(&c);
		ck_assert_int_eq(se_conf_set(&bmc_conf_desc, &c, NULL,
					     "EnergyBMCMap", path, err,
					     sizeof(err)), 0);
		ck_assert_int_eq(bmc_conf_resolve_map(&c, "n1", &hl, err,
						      sizeof(err)), -EINVAL);
		_assert_names(err, path, r->key, r->bad_type, r->type_why);
		bmc_conf_free(&c);
	}
	{
		bmc_conf_t c;
		const char *path = _write("bmc.map", "Nodes=n[1 Host=h\n",
					  0644);

		bmc_conf_init(&c);
		ck_assert_int_eq(se_conf_set(&bmc_conf_desc, &c, NULL,
					     "EnergyBMCMap", path, err,
					     sizeof(err)), 0);
		ck_assert_int_eq(bmc_conf_resolve_map(&c, "n1", &hl, err,
						      sizeof(err)), -EINVAL);
		_assert_names(err, path, "Nodes", "n[1",
			      "not a hostlist expression");
		bmc_conf_free(&c);
	}
}
END_TEST

/* ------------------------------------------- missing, unreadable files */

/*
 * Each file the suite reads, as slurmd (or slurmctld) reads it: missing,
 * a directory, and (as root) readable only by root while we run as
 * nobody.  The message names the key that names the file (or the file),
 * the path, and the system's reason.
 */
typedef int (*reader_fn)(const char *path, char *err, size_t len);

static int _read_modbus_map(const char *path, char *err, size_t len)
{
	modbus_conf_t c;
	int rc;

	modbus_conf_init(&c);
	ck_assert_int_eq(se_conf_set(&modbus_conf_desc, &c, NULL,
				     "EnergyModbusMap", path, err, len), 0);
	rc = modbus_conf_read_map(&c, err, len);
	modbus_conf_free(&c);
	return rc;
}

static int _read_bmc_map(const char *path, char *err, size_t len)
{
	static const bmc_hostlist_ops_t hl = { .contains = _contains };
	bmc_conf_t c;
	int rc;

	bmc_conf_init(&c);
	ck_assert_int_eq(se_conf_set(&bmc_conf_desc, &c, NULL,
				     "EnergyBMCMap", path, err, len), 0);
	rc = bmc_conf_resolve_map(&c, "n1", &hl, err, len);
	bmc_conf_free(&c);
	return rc;
}

static int _read_bmc_password(const char *path, char *err, size_t len)
{
	bmc_conf_t c;
	int rc;

	bmc_conf_init(&c);
	ck_assert_int_eq(se_conf_set(&bmc_conf_desc, &c, NULL,
				     "EnergyBMCPasswordFile", path, err, len),
			 0);
	rc = bmc_conf_finish(&c, "acct_gather.conf", "n1", err, len);
	bmc_conf_free(&c);
	return rc;
}

typedef struct {
	const char *what;
	const char *key;	/* named in the message; NULL: the file is */
	reader_fn read;
	const char *good;	/* a good content */
} file_row_t;

static const file_row_t files[] = {
	{ "modbus.map", "EnergyModbusMap", _read_modbus_map,
	  "Nodes=n1 Device=tcp://x\n" },
	{ "bmc.map", "EnergyBMCMap", _read_bmc_map, "Nodes=n1 Host=h\n" },
	{ "bmc.password", "EnergyBMCPasswordFile", _read_bmc_password,
	  "secret\n" },
	{ "energy_policy.conf", NULL, freq_policy_check_file,
	  "DefaultPolicy=none\n" },
};

static void _check_unreadable(const file_row_t *f, const char *path,
			      const char *reason)
{
	char err[1024] = "", kv[600];

	ck_assert_msg(f->read(path, err, sizeof(err)) < 0,
		      "%s at %s (%s) was read", f->what, path, reason);
	if (f->key) {
		snprintf(kv, sizeof(kv), "%s=%s", f->key, path);
		ck_assert_msg(strstr(err, kv), "'%s' does not name %s", err,
			      kv);
	} else {
		ck_assert_msg(strstr(err, path), "'%s' lacks %s", err, path);
	}
	ck_assert_msg(strstr(err, reason), "'%s' does not say '%s'", err,
		      reason);
}

START_TEST(test_missing_or_unreadable_files)
{
	const file_row_t *f = &files[_i];
	char path[512], err[1024] = "";

	/* the good file is read */
	snprintf(path, sizeof(path), "%s", _write(f->what, f->good, 0600));
	ck_assert_msg(f->read(path, err, sizeof(err)) == 0, "%s: %s", f->what,
		      err);
	/* missing */
	snprintf(path, sizeof(path), "%s/missing-%s", tmpdir, f->what);
	_check_unreadable(f, path, "No such file or directory");
	/* a directory */
	snprintf(path, sizeof(path), "%s/dir-%s", tmpdir, f->what);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	_check_unreadable(f, path, f->read == _read_bmc_password ?
			  "not a regular file" : "Is a directory");
	/* root's, read by nobody (the test runs as root in CI) */
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s", _write(f->what, f->good,
							  0600));
		ck_assert_int_eq(chmod(tmpdir, 0711), 0);
		ck_assert_int_eq(seteuid(65534), 0);
		_check_unreadable(f, path, f->read == _read_bmc_password ?
				  "owned by uid 0, must be owned by uid 65534" :
				  "Permission denied");
		ck_assert_int_eq(seteuid(0), 0);
	}
}
END_TEST

/* ---------------------------------------------------------- the suite */

static Suite *_suite(void)
{
	Suite *s = suite_create("bad_conf");
	TCase *tc = tcase_create("keys");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_loop_test(tc, test_every_key_has_a_row, 0, N_FAMILIES);
	tcase_add_loop_test(tc, test_bad_values_are_named, 0, N_FAMILIES);
	tcase_add_loop_test(tc, test_unknown_key_is_named, 0, N_FAMILIES);
	tcase_add_test(tc, test_policy_every_key_has_a_row);
	tcase_add_test(tc, test_policy_bad_values_are_named);
	tcase_add_test(tc, test_policy_unknown_key);
	tcase_add_test(tc, test_modbus_map_keys);
	tcase_add_test(tc, test_bmc_map_keys);
	tcase_add_loop_test(tc, test_missing_or_unreadable_files, 0,
			    sizeof(files) / sizeof(files[0]));
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
