/*
 * test_modbus_conf.c - acct_gather_energy/modbus configuration: keys, model
 * defaults, cross-key rules, the map file, share split and resolution.
 *
 * One test program, though just over 800 lines: each case is short.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modbus_conf.h"
#include "tmp_file.h"

static modbus_conf_t c;
static char err[1024];
static char map_path[64];

/* ------------------------------------------------ test hostlist: "a,b,c" */

static int _has(const char *list, const char *node)
{
	size_t n = strlen(node);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, node, n) && (p[n] == ',' || !p[n]))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static int _contains(void *arg, const char *expr, const char *node)
{
	return strchr(expr, '[') ? -EINVAL : _has(expr, node);
}

/* Distinct names over several lists (tests use few, short names). */
static long _count(void *arg, const char *const *exprs, size_t n)
{
	char seen[1024] = "";
	long count = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char buf[256], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", exprs[i]);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (_has(seen, tok))
				continue;
			if (*seen)
				strcat(seen, ",");
			strcat(seen, tok);
			count++;
		}
	}
	return count;
}

static const modbus_hostlist_ops_t hl = { _contains, _count, NULL };

/* ------------------------------------------------------------- helpers */

static size_t _key(const char *name)
{
	size_t i;

	for (i = 0; i < modbus_conf_desc.n_keys; i++) {
		if (!strcmp(se_conf_key(&modbus_conf_desc, i), name))
			return i;
	}
	ck_abort_msg("no key %s", name);
	return 0;
}

static int _set(const char *key, const char *value)
{
	err[0] = '\0';
	return se_conf_set_index(&modbus_conf_desc, &c,
				 "/etc/slurm/acct_gather.conf", _key(key), value,
				 err, sizeof(err));
}

static void _set_ok(const char *key, const char *value)
{
	ck_assert_msg(_set(key, value) == 0, "%s=%s: %s", key, value, err);
}

/* The error names the file, the key and the value. */
static void _set_bad(const char *key, const char *value)
{
	char want[256];

	ck_assert_int_eq(_set(key, value), -EINVAL);
	snprintf(want, sizeof(want), "acct_gather.conf: %s=%s: ", key, value);
	ck_assert_msg(strstr(err, want), "'%s' not in '%s'", want, err);
}

static const char *_show(const char *key)
{
	static char buf[256];

	se_conf_show(&modbus_conf_desc, &c, _key(key), buf, sizeof(buf));
	return buf;
}

static void _write_map(const char *text)
{
	tmp_file_write(map_path, text);
	_set_ok("EnergyModbusMap", map_path);
}

static void _setup(void)
{
	int fd;

	modbus_conf_init(&c);
	snprintf(map_path, sizeof(map_path), "/tmp/test_modbus_map.XXXXXX");
	fd = mkstemp(map_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void _teardown(void)
{
	modbus_conf_free(&c);
	unlink(map_path);
}

/* A checked configuration with a power register on a TCP meter. */
static void _basic(void)
{
	_set_ok("EnergyModbusDevice", "tcp://meter.example:1502");
	_set_ok("EnergyModbusPowerRegister", "10");
	ck_assert_msg(modbus_conf_check(&c, NULL, err, sizeof(err)) == 0,
		      "%s", err);
}

/* --------------------------------------------------------------- tests */

START_TEST(test_defaults)
{
	ck_assert_int_eq(c.serial.baud, 9600);
	ck_assert_int_eq(c.serial.parity, 'N');
	ck_assert_int_eq(c.serial.data_bits, 8);
	ck_assert_int_eq(c.serial.stop_bits, 1);
	ck_assert_int_eq(c.unit, 1);
	ck_assert_int_eq(c.kind, MB_KIND_HOLDING);
	ck_assert_uint_eq(c.period_ns, 1000000000ULL);
	ck_assert_uint_eq(c.timeout_ns, 1000000000ULL);
	ck_assert_str_eq(_show("EnergyModbusModel"), "custom");
	ck_assert_str_eq(_show("EnergyModbusDevice"), "(null)");
	ck_assert_str_eq(_show("EnergyModbusFrequency"), "1");
	ck_assert_str_eq(_show("EnergyModbusTimeout"), "1000");
	ck_assert_uint_eq(modbus_conf_desc.n_keys, 19);
}
END_TEST

START_TEST(test_good_values)
{
	_set_ok("EnergyModbusDevice", "rtu:/dev/ttyUSB%n");
	_set_ok("EnergyModbusBaud", "19200");
	_set_ok("EnergyModbusParity", "e");
	_set_ok("EnergyModbusDataBits", "7");
	_set_ok("EnergyModbusStopBits", "2");
	_set_ok("EnergyModbusUnit", "0x10");
	_set_ok("EnergyModbusRegisterKind", "Input");
	_set_ok("EnergyModbusPowerRegister", "0x34");
	_set_ok("EnergyModbusPowerType", "float32");
	_set_ok("EnergyModbusWordOrder", "cdab");
	_set_ok("EnergyModbusPowerScale", "0.1");
	_set_ok("EnergyModbusEnergyRegister", "72");
	_set_ok("EnergyModbusEnergyType", "uint64");
	_set_ok("EnergyModbusEnergyScale", "3600");
	_set_ok("EnergyModbusFrequency", "0.5");
	_set_ok("EnergyModbusTimeout", "250");
	_set_ok("EnergyModbusMaxPower", "5000");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);

	ck_assert_int_eq(c.serial.baud, 19200);
	ck_assert_int_eq(c.serial.parity, 'E');
	ck_assert_int_eq(c.unit, 16);
	ck_assert_int_eq(c.kind, MB_KIND_INPUT);
	ck_assert(c.power.present);
	ck_assert_int_eq(c.power.address, 52);
	ck_assert_int_eq(c.power.type, MB_FLOAT32);
	ck_assert_int_eq(c.power.order, MB_ORDER_CDAB);
	ck_assert_int_eq(c.energy.order, MB_ORDER_CDAB);
	ck_assert_int_eq(c.energy.type, MB_UINT64);
	ck_assert_uint_eq(c.period_ns, 500000000ULL);
	ck_assert_uint_eq(c.timeout_ns, 250000000ULL);
	ck_assert_str_eq(_show("EnergyModbusFrequency"), "0.5");
	ck_assert_str_eq(_show("EnergyModbusParity"), "E");
	ck_assert_str_eq(_show("EnergyModbusWordOrder"), "cdab");
}
END_TEST

START_TEST(test_bad_values)
{
	_set_bad("EnergyModbusDevice", "udp://meter:502");
	_set_bad("EnergyModbusDevice", "tcp://meter:99999");
	_set_bad("EnergyModbusDevice", "tcp://");
	_set_bad("EnergyModbusDevice", "rtu:ttyS0");
	_set_bad("EnergyModbusDevice", "rtu:/dev/ttyS%q");
	_set_bad("EnergyModbusBaud", "fast");
	_set_bad("EnergyModbusBaud", "100");
	_set_bad("EnergyModbusParity", "X");
	ck_assert_ptr_nonnull(strstr(err, "N, E, O"));
	_set_bad("EnergyModbusDataBits", "9");
	_set_bad("EnergyModbusStopBits", "3");
	_set_bad("EnergyModbusUnit", "256");
	_set_bad("EnergyModbusUnit", "-1");
	_set_bad("EnergyModbusRegisterKind", "coil");
	_set_bad("EnergyModbusPowerRegister", "65536");
	_set_bad("EnergyModbusPowerType", "double");
	_set_bad("EnergyModbusEnergyType", "int8");
	_set_bad("EnergyModbusWordOrder", "abdc");
	_set_bad("EnergyModbusPowerScale", "0");
	_set_bad("EnergyModbusEnergyScale", "nan");
	_set_bad("EnergyModbusEnergyScale", "-3600");
	_set_bad("EnergyModbusFrequency", "0.01");
	_set_bad("EnergyModbusFrequency", "abc");
	_set_bad("EnergyModbusTimeout", "5");
	_set_bad("EnergyModbusTimeout", "1.5");
	_set_bad("EnergyModbusMaxPower", "0");
	_set_bad("EnergyModbusMap", "relative/path.map");
	_set_bad("EnergyModbusModel", "acme9000");
	ck_assert_ptr_nonnull(strstr(err, "custom, sdm630"));
	/* nothing bad was kept */
	ck_assert_ptr_null(c.device);
	ck_assert_int_eq(c.serial.baud, 9600);
	ck_assert_uint_eq(c.given, 0);
}
END_TEST

START_TEST(test_check_rules)
{
	ck_assert_int_eq(modbus_conf_check(&c, "x.conf", err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no register"));

	_set_ok("EnergyModbusEnergyRegister", "100");
	ck_assert_int_eq(modbus_conf_check(&c, "x.conf", err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyModbusDevice or EnergyModbusMap"));

	_set_ok("EnergyModbusDevice", "tcp://[::1]:1502");
	_set_ok("EnergyModbusEnergyRegister", "65534");	/* uint32: fits */
	ck_assert_int_eq(modbus_conf_check(&c, "x.conf", err, sizeof(err)), 0);
	_set_ok("EnergyModbusEnergyRegister", "65535");	/* does not */
	ck_assert_int_eq(modbus_conf_check(&c, "x.conf", err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "x.conf: energy register 65535"));
}
END_TEST

START_TEST(test_model_defaults_and_overrides)
{
	const mb_model_t *m = mb_model_find("sdm630");

	ck_assert_ptr_nonnull(m);
	_set_ok("EnergyModbusDevice", "tcp://10.0.0.5");
	_set_ok("EnergyModbusModel", "SDM630");
	_set_ok("EnergyModbusEnergyScale", "3600");	/* meter set to Wh */
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(c.kind, m->kind);
	ck_assert(c.power.present && c.energy.present);
	ck_assert_int_eq(c.power.address, m->power.address);
	ck_assert_int_eq(c.power.type, m->power.type);
	ck_assert(c.energy.scale == 3600.0);
	ck_assert(c.power.scale == m->power.scale);
	ck_assert_int_eq(c.energy.order, m->energy.order);
	ck_assert_uint_eq(c.max_regs_per_read, m->max_regs_per_read);
	ck_assert_str_eq(_show("EnergyModbusModel"), "SDM630");
}
END_TEST

START_TEST(test_model_register_override)
{
	_set_ok("EnergyModbusDevice", "tcp://10.0.0.5");
	_set_ok("EnergyModbusModel", "em24");
	_set_ok("EnergyModbusPowerRegister", "200");	/* own power point */
	_set_ok("EnergyModbusWordOrder", "abcd");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(c.power.address, 200);
	ck_assert_int_eq(c.power.type, MB_UINT16);	/* custom default */
	ck_assert_int_eq(c.energy.address, 0x3E);	/* the model's */
	ck_assert_int_eq(c.energy.order, MB_ORDER_ABCD);	/* explicit */
	ck_assert_uint_eq(c.max_regs_per_read, 11);
}
END_TEST

START_TEST(test_resolve_without_map)
{
	modbus_target_t t;
	modbus_meter_config_t mc;

	_set_ok("EnergyModbusDevice", "tcp://%n-pdu:502");
	_set_ok("EnergyModbusUnit", "7");
	_set_ok("EnergyModbusPowerRegister", "10");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "n1", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://n1-pdu:502");
	ck_assert_int_eq(t.unit, 7);
	ck_assert(t.share == 1.0);
	ck_assert(!t.none);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(mc.power.address, 10);
	ck_assert_int_eq(mc.unit, 7);
}
END_TEST

START_TEST(test_map_equal_and_fixed_shares)
{
	modbus_target_t t;
	modbus_meter_config_t mc;

	_set_ok("EnergyModbusPowerRegister", "10");
	_set_ok("EnergyModbusEnergyRegister", "20");
	_write_map("# rack 1: one channel for four nodes\n"
		   "Nodes=a,b,c,d Device=rtu:/dev/ttyS1 Unit=3\n"
		   "\n"
		   "Nodes=g1 Device=tcp://pdu:502 Offset=100 Share=0.5\n"
		   "Nodes=g2,g3 Device=tcp://pdu:502 Offset=100 Share=equal\n"
		   "Nodes=login Device=none\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_msg(modbus_conf_read_map(&c, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(c.map_len, 4);

	ck_assert_int_eq(modbus_conf_resolve(&c, "c", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "rtu:/dev/ttyS1");
	ck_assert_int_eq(t.unit, 3);
	ck_assert(t.share == 0.25);
	ck_assert_int_eq(t.line, 2);

	ck_assert_int_eq(modbus_conf_resolve(&c, "g1", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.share == 0.5);
	ck_assert_int_eq(modbus_conf_resolve(&c, "g3", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.share == 0.25);	/* (1 - 0.5) / 2 */
	ck_assert_int_eq(t.unit, 1);	/* EnergyModbusUnit default */
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(mc.power.address, 110);
	ck_assert_int_eq(mc.energy.address, 120);
	ck_assert(mc.share == 0.25);

	ck_assert_int_eq(modbus_conf_resolve(&c, "login", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.none);

	/* not mapped, no EnergyModbusDevice to fall back on */
	ck_assert_int_eq(modbus_conf_resolve(&c, "zz", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "node zz is not mapped"));
}
END_TEST

/*
 * "%%" is a literal '%': a device spelled with "%%n" is one device for
 * all its nodes, who split it (found by tests/fuzz,
 * corpus/fuzz_modbus_map/crash-09d6e644...: both got the whole channel).
 */
START_TEST(test_map_literal_percent_is_one_channel)
{
	modbus_target_t t;

	_set_ok("EnergyModbusPowerRegister", "10");
	_write_map("Nodes=a,b Device=tcp://p%%none:502\n"
		   "Nodes=c Device=tcp://p%n:502\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_msg(modbus_conf_read_map(&c, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(modbus_conf_resolve(&c, "b", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://p%none:502");
	ck_assert(t.share == 0.5);
	ck_assert_int_eq(modbus_conf_resolve(&c, "c", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://pc:502");
	ck_assert(t.share == 1.0);
}
END_TEST

/*
 * A meter reached two ways would be billed twice: by the nodes of a map
 * line that splits it, and by a node whose %n expands to it, or that the
 * map does not list and the default device puts on it (found by
 * fuzz_modbus_map: "Nodes=n2,n21 Device=tcp://meter-n5:502" with
 * EnergyModbusDevice=tcp://meter-%n:502 billed n5's meter 1.5 times).  The
 * node reaching it the other way is refused, naming both lines.
 */
START_TEST(test_map_meter_reached_twice_refused)
{
	modbus_target_t t;
	char want[256];

	_set_ok("EnergyModbusDevice", "tcp://meter-%n:502");
	_set_ok("EnergyModbusPowerRegister", "10");
	_write_map("Nodes=n2,n21 Device=tcp://meter-n5:502\n"
		   "Nodes=a1,b2 Device=tcp://%n%n:502\n"
		   "Nodes=x Device=tcp://a1a1:502\n"
		   "Nodes=y Device=tcp://a1a1:502 Unit=2\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);

	/* unmapped, by the default device, onto line 1's meter */
	ck_assert_int_eq(modbus_conf_resolve(&c, "n5", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: node n5 reads meter tcp://meter-n5:502 unit 1 offset 0, which line 1 (Nodes=n2,n21 Device=tcp://meter-n5:502) bills too",
		 map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	/* the nodes of line 1 split it as before; unmapped n6 is alone */
	ck_assert_int_eq(modbus_conf_resolve(&c, "n2", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.share == 0.5);
	ck_assert_int_eq(modbus_conf_resolve(&c, "n6", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://meter-n6:502");

	/* a1's %n%n is x's meter, both ways round; another unit is not */
	ck_assert_int_eq(modbus_conf_resolve(&c, "a1", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: node a1 reads meter tcp://a1a1:502",
		 map_path);
	ck_assert_msg(strstr(err, want) && strstr(err, "which line 3 "), "%s",
		      err);
	ck_assert_int_eq(modbus_conf_resolve(&c, "x", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "which line 2 (Nodes=a1,b2 Device=tcp://%n%n:502)"),
		      "%s", err);
	ck_assert_int_eq(modbus_conf_resolve(&c, "b2", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://b2b2:502");
	ck_assert_int_eq(modbus_conf_resolve(&c, "y", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.share == 1.0);
}
END_TEST

/*
 * A map line refused for any reason keeps its own message, naming the map
 * file and line: a Device= expanding past 511 characters (-ENAMETOOLONG)
 * was reported as "acct_gather.conf: EnergyModbusMap=MAP: File name too
 * long", as if the map's own name were too long (found by
 * fuzz_modbus_map, tests/fuzz/corpus/fuzz_modbus_map/crash-be7a15e8...).
 * A map that cannot be read is still said as acct_gather.conf's key.
 */
START_TEST(test_map_line_error_names_the_line)
{
	char line[700], want[PATH_MAX + 64];
	const char *missing = "/nonexistent/modbus.map";

	_set_ok("EnergyModbusPowerRegister", "10");
	snprintf(line, sizeof(line),
		 "Nodes=a Device=tcp://x\nNodes=b Device=tcp://%0600d:502\n", 0);
	_write_map(line);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)),
			 -ENAMETOOLONG);
	snprintf(want, sizeof(want), "%s:2: Device=tcp://000", map_path);
	ck_assert_msg(strstr(err, want) == err, "%s", err);
	ck_assert_msg(strstr(err, ": expands to more than 511 characters"),
		      "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_set_ok("EnergyModbusPowerRegister", "10");
	_set_ok("EnergyModbusMap", missing);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want),
		 "acct_gather.conf: EnergyModbusMap=%s: No such file or directory",
		 missing);
	ck_assert_str_eq(err, want);
}
END_TEST

/*
 * An RTU bus addresses units 1 to 247 (the man page says so): unit 0 (the
 * broadcast) or 248-255 on an RTU device is refused when the configuration
 * is read, naming the key or the map line, not only when slurmd builds
 * the meter ("bad share, unit (RTU: 1-247) or read size", the node then
 * without energy).  TCP keeps 0-255.  Found by fuzz_modbus_map
 * (tests/fuzz/corpus/fuzz_modbus_map/crash-891f1ca4...).
 */
START_TEST(test_rtu_unit_range)
{
	char want[PATH_MAX + 128];

	_set_ok("EnergyModbusDevice", "rtu:/dev/ttyS1");
	_set_ok("EnergyModbusPowerRegister", "10");
	_set_ok("EnergyModbusUnit", "0");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "acct_gather.conf: EnergyModbusUnit=0: the RTU device EnergyModbusDevice=rtu:/dev/ttyS1 addresses units 1 to 247");
	_set_ok("EnergyModbusUnit", "248");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)),
			 -EINVAL);
	_set_ok("EnergyModbusUnit", "247");
	ck_assert_msg(modbus_conf_check(&c, NULL, err, sizeof(err)) == 0,
		      "%s", err);
	_set_ok("EnergyModbusDevice", "tcp://meter-%n:502");
	_set_ok("EnergyModbusUnit", "0");
	ck_assert_msg(modbus_conf_check(&c, NULL, err, sizeof(err)) == 0,
		      "%s", err);

	/* a map line's own Unit=, and the one it inherits */
	_write_map("Nodes=a\nNodes=b Device=rtu:/dev/ttyS1 Unit=0\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2: Unit=0: the RTU device rtu:/dev/ttyS1 addresses units 1 to 247",
		 map_path);
	ck_assert_str_eq(err, want);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_set_ok("EnergyModbusDevice", "tcp://meter-%n:502");
	_set_ok("EnergyModbusPowerRegister", "10");
	_set_ok("EnergyModbusUnit", "0");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	_write_map("Nodes=b Device=rtu:/dev/ttyS1\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:1: EnergyModbusUnit=0: the RTU device rtu:/dev/ttyS1 addresses units 1 to 247",
		 map_path);
	ck_assert_str_eq(err, want);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_set_ok("EnergyModbusDevice", "tcp://meter-%n:502");
	_set_ok("EnergyModbusPowerRegister", "10");
	_write_map("Nodes=b Device=rtu:/dev/ttyS1 Unit=247\n");
	ck_assert_msg(modbus_conf_read_map(&c, err, sizeof(err)) == 0, "%s",
		      err);
}
END_TEST

/*
 * Racks of different meters: a map line's Model= is its nodes' whole
 * register map, its MaxPower= their channel's bound.
 */
START_TEST(test_map_model_and_max_power)
{
	modbus_target_t t;
	modbus_meter_config_t mc;

	_set_ok("EnergyModbusDevice", "tcp://meter-%n:502");
	_set_ok("EnergyModbusModel", "sdm630");
	_set_ok("EnergyModbusMaxPower", "5000");
	_write_map("Nodes=r1n1,r1n2\n"
		   "Nodes=r2n1 Model=em24 MaxPower=3000\n"
		   "Nodes=r3n1 Model=PM5300\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_msg(modbus_conf_read_map(&c, err, sizeof(err)) == 0, "%s",
		      err);

	ck_assert_int_eq(modbus_conf_resolve(&c, "r1n2", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_ptr_null(t.model);
	ck_assert(t.max_power_w == 5000);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(mc.energy.address, 72);	/* sdm630 */
	ck_assert_int_eq(mc.energy.type, MB_FLOAT32);

	ck_assert_int_eq(modbus_conf_resolve(&c, "r2n1", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.max_power_w == 3000);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(mc.kind, MB_KIND_INPUT);
	ck_assert_int_eq(mc.energy.address, 0x3E);	/* em24 */
	ck_assert_int_eq(mc.energy.type, MB_INT32);
	ck_assert_int_eq(mc.energy.order, MB_ORDER_CDAB);
	ck_assert_uint_eq(mc.max_regs_per_read, 11);

	ck_assert_int_eq(modbus_conf_resolve(&c, "r3n1", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert(t.max_power_w == 5000);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(mc.kind, MB_KIND_HOLDING);
	ck_assert_int_eq(mc.energy.address, 3203);	/* pm5300 */
	ck_assert_int_eq(mc.energy.type, MB_INT64);
}
END_TEST

/* A map line's MaxPower= is checked against the register it reads. */
START_TEST(test_map_line_wrap_refused)
{
	_set_ok("EnergyModbusDevice", "tcp://meter:502");
	_set_ok("EnergyModbusPowerRegister", "10");
	_set_ok("EnergyModbusEnergyRegister", "20");
	_set_ok("EnergyModbusEnergyType", "uint16");
	_set_ok("EnergyModbusEnergyScale", "1");
	_set_ok("EnergyModbusMaxPower", "3000");
	_write_map("Nodes=a\nNodes=b MaxPower=100000\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, ":2: EnergyModbusEnergyType=uint16") &&
		      strstr(err, "EnergyModbusMaxPower=100000"), "%s", err);

	_write_map("Nodes=a Model=sdm999\n");
	modbus_conf_free(&c);
	modbus_conf_init(&c);
	_set_ok("EnergyModbusDevice", "tcp://meter:502");
	_set_ok("EnergyModbusModel", "sdm630");
	_set_ok("EnergyModbusMap", map_path);
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, ":1: Model=sdm999: unknown model"), "%s",
		      err);
}
END_TEST

START_TEST(test_map_fallback_device)
{
	modbus_target_t t;

	_set_ok("EnergyModbusDevice", "tcp://default:502");
	_set_ok("EnergyModbusPowerRegister", "10");
	_write_map("Nodes=a Unit=9\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "a", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://default:502");
	ck_assert_int_eq(t.unit, 9);
	ck_assert_int_eq(modbus_conf_resolve(&c, "other", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_str_eq(t.device, "tcp://default:502");
	ck_assert_int_eq(t.unit, 1);
	ck_assert_int_eq(t.line, 0);
}
END_TEST

START_TEST(test_map_errors)
{
	modbus_target_t t;
	char want[128];

	_set_ok("EnergyModbusPowerRegister", "10");

	_write_map("Nodes=a Device=tcp://x Colour=red\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: Colour=red: unknown key",
		 map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_write_map("\n# comment\nDevice=tcp://x\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: no Nodes=", map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_write_map("Nodes=a Device=tcp://x Share=1.5\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: Share=1.5: ", map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	_write_map("Nodes=a Device=serial:/dev/x\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: Device=serial:/dev/x: ", map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	/* a node on two lines; fixed shares over 1 */
	_write_map("Nodes=a,b Device=tcp://x Share=0.6\n"
		   "Nodes=b,c Device=tcp://x Share=0.6\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "b", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "line 1 and on line 2"));
	ck_assert_int_eq(modbus_conf_resolve(&c, "a", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "more than 1"));
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	/* fixed shares leave nothing for Share=equal */
	_write_map("Nodes=a Device=tcp://x Share=1\n"
		   "Nodes=b Device=tcp://x\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "b", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "nothing left"));
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	/* a bad hostlist expression is named with its line */
	_write_map("Nodes=n[1-4 Device=tcp://x\n");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "n1", &hl, &t, err,
					     sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:1: Nodes=n[1-4: not a hostlist expression", map_path);
	ck_assert_msg(strstr(err, want), "%s", err);
	modbus_conf_free(&c);
	modbus_conf_init(&c);

	/* unreadable map */
	_set_ok("EnergyModbusMap", "/nonexistent/modbus.map");
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/modbus.map"));
}
END_TEST

START_TEST(test_offset_past_end)
{
	modbus_target_t t;
	modbus_meter_config_t mc;

	_set_ok("EnergyModbusPowerRegister", "65000");
	_set_ok("EnergyModbusPowerType", "uint32");
	_write_map("Nodes=a Device=tcp://x Offset=600\n");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_read_map(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "a", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "Offset=600"));
}
END_TEST

START_TEST(test_meter_create)
{
	modbus_target_t t;
	modbus_meter_config_t mc;
	modbus_meter_t *m, *m2;
	counter_spec_t spec;
	char desc[512];

	_basic();
	_set_ok("EnergyModbusEnergyRegister", "20");
	_set_ok("EnergyModbusEnergyScale", "3600");
	ck_assert_int_eq(modbus_conf_check(&c, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_resolve(&c, "a", &hl, &t, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(modbus_conf_meter_config(&c, &t, &mc, err,
						  sizeof(err)), 0);
	ck_assert_int_eq(modbus_meter_create(&mc, &m, err, sizeof(err)), 0);
	ck_assert_str_eq(modbus_meter_label(m),
			 "tcp://meter.example:1502 unit 1");
	ck_assert(modbus_meter_counter_spec(m, &spec));
	ck_assert_uint_eq(spec.width_bits, 32);
	ck_assert(spec.mj_per_unit == 3600.0 * 1000.0);
	modbus_meter_describe(m, desc, sizeof(desc));
	ck_assert_ptr_nonnull(strstr(desc, "1 request/read"));

	/* a second meter on the same device shares the bus */
	mc.unit = 2;
	ck_assert_int_eq(modbus_meter_create(&mc, &m2, err, sizeof(err)), 0);
	modbus_meter_destroy(m2);
	modbus_meter_destroy(m);

	/* RTU unit ids are 1..247 */
	mc.device = "rtu:/dev/ttyS0";
	mc.unit = 0;
	ck_assert_int_eq(modbus_meter_create(&mc, &m, err, sizeof(err)),
			 -EINVAL);
}
END_TEST

/*
 * A counter that may wrap more than once between two reads at MaxPower is
 * refused with the file, the keys and the figures; the same register is
 * fine once MaxPower is the node's real peak.
 */
START_TEST(test_counter_wrapping_twice_refused)
{
	_basic();
	_set_ok("EnergyModbusEnergyRegister", "20");
	_set_ok("EnergyModbusEnergyType", "uint16");
	_set_ok("EnergyModbusEnergyScale", "1");	/* 65,536 J range */
	ck_assert_int_eq(modbus_conf_check(&c, "/etc/slurm/acct_gather.conf",
					   err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "/etc/slurm/acct_gather.conf: "));
	ck_assert_ptr_nonnull(strstr(err, "EnergyModbusEnergyType=uint16"));
	ck_assert_ptr_nonnull(strstr(err, "EnergyModbusEnergyScale=1 "));
	ck_assert_ptr_nonnull(strstr(err, "EnergyModbusMaxPower=100000"));
	ck_assert_ptr_nonnull(strstr(err, "wraps every 65536 J"));
	/* 100 kW x (1 s + 1 s default timeout) */
	ck_assert_msg(strstr(err, "may count 200000 J") ||
		      strstr(err, "(2.000 s)"), "%s", err);

	_set_ok("EnergyModbusMaxPower", "3000");	/* 6 kJ in 2 s */
	ck_assert_msg(modbus_conf_check(&c, NULL, err, sizeof(err)) == 0,
		      "%s", err);

	/* the same 16 bits in Wh are far from wrapping twice */
	_set_ok("EnergyModbusMaxPower", "100000");
	_set_ok("EnergyModbusEnergyScale", "3600");
	ck_assert_msg(modbus_conf_check(&c, NULL, err, sizeof(err)) == 0,
		      "%s", err);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("modbus_conf");
	TCase *tc = tcase_create("conf");

	tcase_add_checked_fixture(tc, _setup, _teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_good_values);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_check_rules);
	tcase_add_test(tc, test_model_defaults_and_overrides);
	tcase_add_test(tc, test_model_register_override);
	tcase_add_test(tc, test_resolve_without_map);
	tcase_add_test(tc, test_map_equal_and_fixed_shares);
	tcase_add_test(tc, test_map_literal_percent_is_one_channel);
	tcase_add_test(tc, test_map_meter_reached_twice_refused);
	tcase_add_test(tc, test_map_line_error_names_the_line);
	tcase_add_test(tc, test_rtu_unit_range);
	tcase_add_test(tc, test_map_model_and_max_power);
	tcase_add_test(tc, test_map_line_wrap_refused);
	tcase_add_test(tc, test_map_fallback_device);
	tcase_add_test(tc, test_map_errors);
	tcase_add_test(tc, test_offset_past_end);
	tcase_add_test(tc, test_meter_create);
	tcase_add_test(tc, test_counter_wrapping_twice_refused);
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
