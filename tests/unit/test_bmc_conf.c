/*
 * test_bmc_conf.c - acct_gather.conf keys of acct_gather_energy/bmc.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bmc_conf.h"
#include "se_time.h"
#include "tmp_file.h"

#define FILE_NAME	"acct_gather.conf"

static bmc_conf_t _c;
static char _err[512];
static char _dir[] = "/tmp/test_bmc_conf.XXXXXX";

static void _setup(void)
{
	bmc_conf_init(&_c);
	_err[0] = '\0';
	ck_assert_ptr_nonnull(mkdtemp(_dir));
}

static void _teardown(void)
{
	char cmd[128];

	bmc_conf_free(&_c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", _dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(_dir, "/tmp/test_bmc_conf.XXXXXX");
}

static int _set(const char *key, const char *value)
{
	return se_conf_set(&bmc_conf_desc, &_c, FILE_NAME, key, value, _err,
			   sizeof(_err));
}

/* Write a password file of the given mode; returns its path (static). */
static const char *_pwfile(const char *content, mode_t mode)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/bmc.pw", _dir);
	tmp_file_write_mode(path, content, mode);
	return path;
}

START_TEST(defaults)
{
	ck_assert_int_eq(_c.method, BMC_METHOD_AUTO);
	ck_assert_int_eq(_c.privilege, BMC_PRIV_USER);
	ck_assert_uint_eq(_c.cipher_suite, 3);
	ck_assert_uint_eq(_c.period_ns, SE_NS_PER_SEC);
	ck_assert_uint_eq(_c.n_sensors, 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert_ptr_null(_c.host);	/* in-band */
	ck_assert(!_c.have_password);
	/* Redfish: the BMC's tick watched unless told not to */
	ck_assert_int_eq(_c.rf_tick_watch, BMC_TICK_WATCH_YES);
	ck_assert_int_eq(_set("EnergyBMCRedfishTickWatch", "no"), 0);
	ck_assert_int_eq(_c.rf_tick_watch, BMC_TICK_WATCH_NO);
}
END_TEST

START_TEST(every_key_in_the_table)
{
	size_t i;

	for (i = 0; se_conf_key(&bmc_conf_desc, i); i++)
		ck_assert_int_ne(_set(se_conf_key(&bmc_conf_desc, i), ""), -ENOENT);
	ck_assert_uint_eq(i, 21);
	ck_assert_int_eq(_set("EnergyBMCColour", "blue"), -ENOENT);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCColour=blue: unknown key");
}
END_TEST

START_TEST(method_and_privilege)
{
	ck_assert_int_eq(_set("EnergyBMCMethod", "DCMI"), 0);
	ck_assert_int_eq(_c.method, BMC_METHOD_DCMI);
	ck_assert_int_eq(_set("energybmcmethod", "sensors"), 0);
	ck_assert_int_eq(_c.method, BMC_METHOD_SENSORS);
	ck_assert_int_eq(_set("EnergyBMCMethod", "rapl"), -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCMethod=rapl: must be one of: auto, dcmi, sensors, redfish");

	ck_assert_int_eq(_set("EnergyBMCPrivilege", "admin"), 0);
	ck_assert_int_eq(_c.privilege, BMC_PRIV_ADMIN);
	ck_assert_int_eq(_set("EnergyBMCPrivilege", "root"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCPrivilege=root"));
}
END_TEST

START_TEST(sensors_list)
{
	ck_assert_int_eq(_set("EnergyBMCSensors", "12, PSU1 Power ,7"), 0);
	ck_assert_uint_eq(_c.n_sensors, 3);
	ck_assert(_c.sensors[0].by_id);
	ck_assert_uint_eq(_c.sensors[0].record_id, 12);
	ck_assert(!_c.sensors[1].by_id);
	ck_assert_str_eq(_c.sensors[1].name, "PSU1 Power");
	ck_assert_uint_eq(_c.sensors[2].record_id, 7);

	/* a second setting replaces the first */
	ck_assert_int_eq(_set("EnergyBMCSensors", "3"), 0);
	ck_assert_uint_eq(_c.n_sensors, 1);

	/* a refused list leaves the last good one */
	ck_assert_int_eq(_set("EnergyBMCSensors", "1,,2"), -EINVAL);
	ck_assert_uint_eq(_c.n_sensors, 1);
	ck_assert_uint_eq(_c.sensors[0].record_id, 3);
	ck_assert_int_eq(_set("EnergyBMCSensors", "1,"), -EINVAL);
	ck_assert_int_eq(_set("EnergyBMCSensors", "70000"), -ERANGE);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCSensors=70000: record id 70000 is not 16-bit");
}
END_TEST

START_TEST(workaround_flags)
{
	ck_assert_int_eq(_set("EnergyBMCWorkaroundFlags", "opensesspriv"), 0);
	ck_assert_uint_eq(_c.workarounds_2_0, 0x10);
	ck_assert_int_eq(_set("EnergyBMCWorkaroundFlags",
			      "authcap,intel20 sun20,integritycheckvalue"), 0);
	ck_assert_uint_eq(_c.workarounds_2_0, 0x01 | 0x02 | 0x08 | 0x20);
	ck_assert_uint_eq(_c.workarounds_1_5, 0x01);
	ck_assert_int_eq(_set("EnergyBMCWorkaroundFlags",
			      "idzero,forcepermsg,endianseq,unexpectedauth,noauthcodecheck"),
			 0);
	ck_assert_uint_eq(_c.workarounds_1_5, 0x3e);
	ck_assert_uint_eq(_c.workarounds_2_0, 0);

	/* only 1.5 flags with a 2.0 session: said at finish */
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "only IPMI 1.5 workarounds"));
	ck_assert_int_eq(_set("EnergyBMCProtocol", "1.5"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);

	ck_assert_int_eq(_set("EnergyBMCWorkaroundFlags", "opensesspriv,nope"),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "unknown workaround 'nope'"));
	ck_assert_uint_eq(_c.workarounds_1_5, 0x3e);	/* unchanged */
}
END_TEST

START_TEST(cipher_suite)
{
	ck_assert_int_eq(_set("EnergyBMCCipherSuite", "17"), 0);
	ck_assert_uint_eq(_c.cipher_suite, 17);
	ck_assert_int_eq(_set("EnergyBMCCipherSuite", "4"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCCipherSuite=4: not a cipher suite"));
	ck_assert_int_ne(_set("EnergyBMCCipherSuite", "18"), 0);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCCipherSuite=18"));
	ck_assert_int_eq(_set("EnergyBMCCipherSuite", "x"), -EINVAL);
}
END_TEST

START_TEST(frequency_timeout_watts)
{
	ck_assert_int_eq(_set("EnergyBMCFrequency", "0.5"), 0);
	ck_assert_uint_eq(_c.period_ns, SE_NS_PER_SEC / 2);
	ck_assert_int_ne(_set("EnergyBMCFrequency", "0.01"), 0);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCFrequency=0.01"));
	ck_assert_int_ne(_set("EnergyBMCFrequency", "abc"), 0);

	ck_assert_int_eq(_set("EnergyBMCTimeout", "250"), 0);
	ck_assert_uint_eq(_c.timeout_ns, 250 * SE_NS_PER_MS);
	ck_assert_int_ne(_set("EnergyBMCTimeout", "0.5"), 0);
	ck_assert_int_ne(_set("EnergyBMCTimeout", "600000"), 0);

	ck_assert_int_eq(_set("EnergyBMCMaxWatts", "3000"), 0);
	ck_assert_uint_eq(_c.max_power_mw, 3000000);
	ck_assert_int_ne(_set("EnergyBMCMaxWatts", "70000"), 0);
}
END_TEST

START_TEST(host_expansion)
{
	char long_user[129];

	ck_assert_int_eq(_set("EnergyBMCHost", "%n-bmc.mgmt:623"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "node17", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.host, "node17-bmc.mgmt:623");
	ck_assert_int_eq(_set("EnergyBMCHost", "%x"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCHost=%x"));
	ck_assert_int_eq(_set("EnergyBMCHost", ""), -EINVAL);
	/* 16 bytes for IPMI, checked with the method; 127 for Redfish */
	ck_assert_int_eq(_set("EnergyBMCUser", "a-user-name-longer-than-16"),
			 0);
	ck_assert_int_eq(bmc_conf_check(&_c, FILE_NAME, _err, sizeof(_err)),
			 -ERANGE);
	ck_assert_ptr_nonnull(strstr(_err,
		"EnergyBMCUser=a-user-name-longer-than-16: longer than 16"));
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(bmc_conf_check(&_c, FILE_NAME, _err, sizeof(_err)),
			 0);
	memset(long_user, 'u', sizeof(long_user) - 1);
	long_user[sizeof(long_user) - 1] = '\0';	/* 128 */
	ck_assert_int_eq(_set("EnergyBMCUser", long_user), -ERANGE);
}
END_TEST

/* ------------------------------------------------ EnergyBMCMap */

/* Hostlist stand-in: "a,b,c" lists, or "bad" for a broken expression. */
static int _contains(void *arg, const char *expr, const char *node)
{
	char *list, *item, *save = NULL;
	int found = 0;

	(void) arg;
	if (!strcmp(expr, "bad"))
		return -EINVAL;
	list = strdup(expr);
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save))
		found |= !strcmp(item, node);
	free(list);
	return found;
}

static const bmc_hostlist_ops_t _hl = { .contains = _contains };

/* Write the map; set EnergyBMCMap to it. */
static const char *_map(const char *content)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/bmc.map", _dir);
	tmp_file_write(path, content);
	ck_assert_int_eq(_set("EnergyBMCMap", path), 0);
	return path;
}

static int _resolve(const char *node)
{
	int rc = bmc_conf_resolve_map(&_c, node, &_hl, _err, sizeof(_err));

	return rc ? rc : bmc_conf_finish(&_c, FILE_NAME, node, _err,
					 sizeof(_err));
}

START_TEST(map_per_node_host)
{
	bmc_conf_t copy;
	char buf[256];

	_map("# node -> BMC\n"
	     "Nodes=n1 Host=10.0.0.1:6001\n"
	     "\n"
	     "Nodes=n2,n3   Host=%n-bmc:623   # named after the node\n");
	ck_assert_int_eq(_resolve("n1"), 0);
	ck_assert_str_eq(_c.host, "10.0.0.1:6001");
	ck_assert_uint_eq(_c.map_line, 2);
	ck_assert_int_eq(_resolve("n3"), 0);
	ck_assert_str_eq(_c.host, "n3-bmc:623");
	ck_assert_uint_eq(_c.map_line, 4);

	/* the copy the meter keeps has the node's host */
	ck_assert_int_eq(bmc_conf_copy(&copy, &_c), 0);
	ck_assert_str_eq(copy.host, "n3-bmc:623");
	ck_assert_str_eq(copy.map_host, "%n-bmc:623");
	bmc_conf_free(&copy);

	/* scontrol show config: the map's path */
	se_conf_show(&bmc_conf_desc, &_c, 3, buf, sizeof(buf));
	ck_assert_str_eq(se_conf_key(&bmc_conf_desc, 3), "EnergyBMCMap");
	ck_assert_ptr_nonnull(strstr(buf, "/bmc.map"));
}
END_TEST

START_TEST(map_falls_back_to_host)
{
	_map("Nodes=n1 Host=10.0.0.1:6001\n");
	/* a node on no line without EnergyBMCHost: an error, never in-band */
	ck_assert_int_eq(_resolve("n9"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "node n9 is on no line"));
	ck_assert_ptr_nonnull(strstr(_err, "/bmc.map"));
	ck_assert_int_eq(_set("EnergyBMCHost", "%n.bmc"), 0);
	ck_assert_int_eq(_resolve("n9"), 0);
	ck_assert_str_eq(_c.host, "n9.bmc");
	ck_assert_uint_eq(_c.map_line, 0);
	ck_assert_int_eq(_resolve("n1"), 0);	/* the map wins */
	ck_assert_str_eq(_c.host, "10.0.0.1:6001");
}
END_TEST

START_TEST(map_errors)
{
	_map("Nodes=n1 Host=a\nNodes=n2,n1 Host=b\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "node n1 is on line 1 and on line 2"));
	ck_assert_int_eq(_resolve("n2"), 0);

	_map("Nodes=n1 Host=a Port=7\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "bmc.map:1: Port=7: unknown key"));
	_map("Nodes=n1\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, ":1: no Host="));
	_map("Host=a\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, ":1: no Nodes="));
	_map("Nodes=n1 Host=\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "Host=: empty"));
	_map("Nodes=n1 Host=a Host=b\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "given twice"));
	_map("Nodes=bad Host=a\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "bmc.map:1: Nodes=bad: not a hostlist expression"));
	_map("# nothing\n\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "no entries"));
	_map("Nodes=n1 Host=%x\n");
	ck_assert_int_eq(_resolve("n1"), -EINVAL);	/* bad % in Host= */
	ck_assert_ptr_nonnull(strstr(_err, "bmc.map:1: Host=%x"));

	ck_assert_int_eq(_set("EnergyBMCMap", "relative.map"), -EINVAL);
	ck_assert_int_eq(_set("EnergyBMCMap", "/nonexistent/bmc.map"), 0);
	ck_assert_int_eq(_resolve("n1"), -ENOENT);
	ck_assert_ptr_nonnull(strstr(_err, "/nonexistent/bmc.map"));
}
END_TEST

START_TEST(sdr_cache_dir_per_node)
{
	ck_assert_int_eq(_set("EnergyBMCSdrCacheDir", "/var/cache/bmc-%n"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n7", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.sdr_cache_dir, "/var/cache/bmc-n7");
	ck_assert_int_eq(_set("EnergyBMCSdrCacheDir", "/var/cache/%q"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n7", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCSdrCacheDir=/var/cache/%q"));
}
END_TEST

START_TEST(password_file_read)
{
	ck_assert_int_eq(_set("EnergyBMCPasswordFile",
			      _pwfile("s3cret-pw\nsecond line\n", 0600)), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert(_c.have_password);
	ck_assert_str_eq(_c.password, "s3cret-pw");
	bmc_conf_free(&_c);
	ck_assert_str_eq(_c.password, "");	/* wiped */
	ck_assert_int_eq(_set("EnergyBMCPasswordFile", "relative/pw"), -EINVAL);
}
END_TEST

START_TEST(password_file_world_readable_refused)
{
	const char *path = _pwfile("s3cret-pw\n", 0644);

	ck_assert_int_eq(_set("EnergyBMCPasswordFile", path), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCPasswordFile="));
	ck_assert_ptr_nonnull(strstr(_err, "mode 0644"));
	ck_assert_ptr_null(strstr(_err, "s3cret"));	/* never the secret */
	ck_assert(!_c.have_password);

	_pwfile("s3cret-pw\n", 0640);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EPERM);
}
END_TEST

START_TEST(password_too_long)
{
	ck_assert_int_eq(_set("EnergyBMCPasswordFile",
			      _pwfile("123456789012345678901\n", 0600)), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -ERANGE);
	ck_assert_ptr_null(strstr(_err, "123456789"));
	ck_assert_ptr_nonnull(strstr(_err, "longer than 20 bytes"));
}
END_TEST

/* Redfish's defaults, whatever the order of the keys; given keys win. */
START_TEST(redfish_defaults)
{
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_uint_eq(_c.period_ns, 5 * SE_NS_PER_SEC);
	ck_assert_uint_eq(_c.timeout_ns, 4000 * SE_NS_PER_MS);
	ck_assert_int_eq(_c.auth, BMC_AUTH_SESSION);
	ck_assert_int_eq(_c.tls_verify, BMC_TLS_YES);
	ck_assert_int_eq(_c.rf_source, BMC_RF_SOURCE_AUTO);
	ck_assert_int_eq(_set("EnergyBMCMethod", "dcmi"), 0);
	ck_assert_uint_eq(_c.period_ns, SE_NS_PER_SEC);
	/* given before the method: kept */
	ck_assert_int_eq(_set("EnergyBMCFrequency", "2"), 0);
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_uint_eq(_c.period_ns, 2 * SE_NS_PER_SEC);
	ck_assert_uint_eq(_c.timeout_ns, 4000 * SE_NS_PER_MS);
}
END_TEST

START_TEST(redfish_host_and_keys)
{
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	/* no in-band Redfish */
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCMethod=redfish needs the BMC's address"));
	ck_assert_int_eq(_set("EnergyBMCHost", "ftp://%n-bmc"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCHost=ftp://%n-bmc"));
	ck_assert_int_eq(_set("EnergyBMCHost", "https://%n-bmc/redfish/v1"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "no path"));
	ck_assert_int_eq(_set("EnergyBMCHost", "%n-bmc:8443"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.host, "n1-bmc:8443");

	ck_assert_int_eq(_set("EnergyBMCRedfishSource", "Energy"), 0);
	ck_assert_int_eq(_c.rf_source, BMC_RF_SOURCE_ENERGY);
	ck_assert_int_eq(_set("EnergyBMCRedfishSource",
			      "/redfish/v1/Chassis/1U/Sensors/TotalEnergy"), 0);
	ck_assert_int_eq(_c.rf_source, BMC_RF_SOURCE_URI);
	ck_assert_str_eq(_c.rf_source_uri,
			 "/redfish/v1/Chassis/1U/Sensors/TotalEnergy");
	ck_assert_int_eq(_set("EnergyBMCTLSVerify", "no"), 0);
	ck_assert_int_eq(_c.tls_verify, BMC_TLS_NO);
	ck_assert_int_eq(_set("EnergyBMCAuth", "basic"), 0);
	ck_assert_int_eq(_c.auth, BMC_AUTH_BASIC);
}
END_TEST

static int _contains_exact(void *arg, const char *expr, const char *node)
{
	(void) arg;
	return !strcmp(expr, node);
}

/* A map line's Source= and Chassis= are the node's (a PDU outlet each). */
START_TEST(redfish_map_source)
{
	static const bmc_hostlist_ops_t hl = { .contains = _contains_exact };
	char map[256];
	const char *outlet = "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/";

	snprintf(map, sizeof(map), "%s/bmc.map", _dir);
	tmp_file_write_mode(map,
		"Nodes=n1 Host=https://pdu1 Source=/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1\n"
		"Nodes=n2 Host=https://pdu1 Source=/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A2\n"
		"Nodes=n3 Host=bmc3 Chassis=Blade3\n", 0644);
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(_set("EnergyBMCMap", map), 0);
	ck_assert_int_eq(_set("EnergyBMCRedfishSource", "power"), 0);
	ck_assert_int_eq(bmc_conf_resolve_map(&_c, "n2", &hl, _err,
					      sizeof(_err)), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n2", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.host, "https://pdu1");
	ck_assert_int_eq(_c.rf_source, BMC_RF_SOURCE_URI);
	ck_assert_ptr_nonnull(strstr(_c.rf_source_uri, outlet));
	ck_assert_str_eq(_c.rf_source_uri + strlen(outlet), "A2");
	/* n3: its chassis, the global source */
	bmc_conf_free(&_c);
	bmc_conf_init(&_c);
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(_set("EnergyBMCMap", map), 0);
	ck_assert_int_eq(bmc_conf_resolve_map(&_c, "n3", &hl, _err,
					      sizeof(_err)), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n3", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.rf_chassis, "Blade3");
	ck_assert_int_eq(_c.rf_source, BMC_RF_SOURCE_AUTO);
}
END_TEST

/* A Redfish account's password may be longer than IPMI's 20 bytes. */
START_TEST(redfish_password)
{
	char pw[140];

	memset(pw, 'p', 127);
	strcpy(pw + 127, "\n");
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(_set("EnergyBMCHost", "bmc"), 0);
	ck_assert_int_eq(_set("EnergyBMCPasswordFile", _pwfile(pw, 0600)), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert_uint_eq(strlen(_c.password), 127);
	strcpy(pw + 127, "pp\n");
	_pwfile(pw, 0600);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -ERANGE);
	ck_assert_ptr_nonnull(strstr(_err, "longer than 127 bytes (Redfish)"));
	ck_assert_ptr_null(strstr(_err, "ppppp"));
}
END_TEST

/* EnergyBMCPoller: HOST:PORT or [V6ADDR]:PORT, PORT 1-65535; a refused
 * value names the key and the value, and leaves the last good one. */
START_TEST(poller_address)
{
	ck_assert_ptr_null(_c.poller);
	ck_assert_int_eq(_set("EnergyBMCPoller", "[fd00::2]:6820"), 0);
	ck_assert_str_eq(_c.poller, "[fd00::2]:6820");
	ck_assert_int_eq(_set("EnergyBMCPoller", "10.0.0.2:6820"), 0);
	ck_assert_str_eq(_c.poller, "10.0.0.2:6820");

	ck_assert_int_eq(_set("EnergyBMCPoller", "pollerhost"), -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=pollerhost: not HOST:PORT (the PDU poller's address)");
	ck_assert_int_eq(_set("EnergyBMCPoller", "pollerhost:"), -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=pollerhost:: bad port (1-65535)");
	ck_assert_int_eq(_set("EnergyBMCPoller", "pollerhost:0"), -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=pollerhost:0: bad port (1-65535)");
	ck_assert_int_eq(_set("EnergyBMCPoller", "pollerhost:70000"), -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=pollerhost:70000: bad port (1-65535)");
	ck_assert_str_eq(_c.poller, "10.0.0.2:6820");	/* the last good */
}
END_TEST

/* The poller reads Redfish PDU outlets: any other method refuses it,
 * naming the file, the key and the value. */
START_TEST(poller_needs_redfish)
{
	ck_assert_int_eq(_set("EnergyBMCMethod", "dcmi"), 0);
	ck_assert_int_eq(_set("EnergyBMCHost", "bmc1"), 0);
	ck_assert_int_eq(_set("EnergyBMCPoller", "10.0.0.2:6820"), 0);
	ck_assert_int_eq(bmc_conf_check(&_c, FILE_NAME, _err, sizeof(_err)),
			 -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=10.0.0.2:6820: only with EnergyBMCMethod=redfish (the PDU poller reads Redfish PDU outlets), not dcmi");
	_err[0] = '\0';
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCPoller=10.0.0.2:6820"));
	/* the default method (auto) is IPMI too */
	ck_assert_int_eq(_set("EnergyBMCMethod", "auto"), 0);
	ck_assert_int_eq(bmc_conf_check(&_c, FILE_NAME, _err, sizeof(_err)),
			 -EINVAL);
	ck_assert_str_eq(_err, FILE_NAME ": EnergyBMCPoller=10.0.0.2:6820: only with EnergyBMCMethod=redfish (the PDU poller reads Redfish PDU outlets), not auto");
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(bmc_conf_check(&_c, FILE_NAME, _err, sizeof(_err)),
			 0);
}
END_TEST

/*
 * Redfish through the poller: the node needs no password file, and reads
 * none even when the shared acct_gather.conf names one (it is on the
 * poller's host only); without the poller the same file is required.
 */
START_TEST(poller_no_password)
{
	char missing[256];
	bmc_conf_t copy;

	snprintf(missing, sizeof(missing), "%s/not-here.pw", _dir);
	ck_assert_int_eq(_set("EnergyBMCMethod", "redfish"), 0);
	ck_assert_int_eq(_set("EnergyBMCHost", "https://pdu1"), 0);
	ck_assert_int_eq(_set("EnergyBMCRedfishSource",
			      "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/A1"),
			 0);
	ck_assert_int_eq(_set("EnergyBMCPoller", "10.0.0.2:6820"), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert_str_eq(_c.host, "https://pdu1");
	ck_assert(!_c.have_password);

	ck_assert_int_eq(_set("EnergyBMCPasswordFile", missing), 0);
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), 0);
	ck_assert(!_c.have_password);
	/* nor does an offline check (se-conf-check) on a node */
	ck_assert_int_eq(bmc_conf_desc.check_files(&_c, _err, sizeof(_err)),
			 0);

	/* copied with the rest */
	ck_assert_int_eq(bmc_conf_copy(&copy, &_c), 0);
	ck_assert_ptr_ne(copy.poller, _c.poller);
	ck_assert_str_eq(copy.poller, "10.0.0.2:6820");
	bmc_conf_free(&copy);

	/* without the poller the file is the node's */
	free(_c.poller);
	_c.poller = NULL;
	ck_assert_int_eq(bmc_conf_finish(&_c, FILE_NAME, "n1", _err,
					 sizeof(_err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(_err, "EnergyBMCPasswordFile="));
	ck_assert_ptr_nonnull(strstr(_err, missing));
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("bmc_conf");
	TCase *tc = tcase_create("keys");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_key_in_the_table);
	tcase_add_test(tc, method_and_privilege);
	tcase_add_test(tc, sensors_list);
	tcase_add_test(tc, workaround_flags);
	tcase_add_test(tc, cipher_suite);
	tcase_add_test(tc, frequency_timeout_watts);
	tcase_add_test(tc, host_expansion);
	tcase_add_test(tc, map_per_node_host);
	tcase_add_test(tc, map_falls_back_to_host);
	tcase_add_test(tc, map_errors);
	tcase_add_test(tc, sdr_cache_dir_per_node);
	tcase_add_test(tc, password_file_read);
	tcase_add_test(tc, password_file_world_readable_refused);
	tcase_add_test(tc, password_too_long);
	tcase_add_test(tc, redfish_defaults);
	tcase_add_test(tc, redfish_host_and_keys);
	tcase_add_test(tc, redfish_password);
	tcase_add_test(tc, redfish_map_source);
	tcase_add_test(tc, poller_address);
	tcase_add_test(tc, poller_needs_redfish);
	tcase_add_test(tc, poller_no_password);
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
