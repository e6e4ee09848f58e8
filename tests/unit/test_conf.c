/*
 * test_conf.c - configuration checkers: accepted values and exact errors.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_desc.h"
#include "conf_map.h"
#include "tmp_file.h"

#define NS	1000000000ULL

static const conf_where_t freq = { "acct_gather.conf",
				   "EnergyModbusFrequency", 0 };
static char err[512];

static uint64_t _sec_ok(const char *v)
{
	uint64_t ns = 0;

	ck_assert_msg(!conf_seconds_ns(&freq, v, 1, 3600 * NS, &ns, err,
				       sizeof(err)), "%s: %s", v, err);
	return ns;
}

static const char *_sec_err(const char *v)
{
	uint64_t ns = 7;

	ck_assert_int_eq(conf_seconds_ns(&freq, v, NS / 10, 3600 * NS, &ns,
					 err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(ns, 7);	/* untouched on error */
	return err;
}

START_TEST(test_seconds)
{
	ck_assert_uint_eq(_sec_ok("2"), 2 * NS);
	ck_assert_uint_eq(_sec_ok("0.5"), NS / 2);
	ck_assert_uint_eq(_sec_ok("0.1"), 100000000);	/* exact, no binary */
	ck_assert_uint_eq(_sec_ok(".25"), 250000000);
	ck_assert_uint_eq(_sec_ok("1.000000001"), NS + 1);
	ck_assert_uint_eq(_sec_ok("3600"), 3600 * NS);

	ck_assert_str_eq(_sec_err("abc"),
		"acct_gather.conf: EnergyModbusFrequency=abc: not a number of seconds");
	ck_assert_str_eq(_sec_err(""),
		"acct_gather.conf: EnergyModbusFrequency=: not a number of seconds");
	ck_assert_str_eq(_sec_err("-1"),
		"acct_gather.conf: EnergyModbusFrequency=-1: not a number of seconds");
	ck_assert_str_eq(_sec_err("1."),
		"acct_gather.conf: EnergyModbusFrequency=1.: not a number of seconds");
	ck_assert_str_eq(_sec_err("2s"),
		"acct_gather.conf: EnergyModbusFrequency=2s: not a number of seconds");
	ck_assert_str_eq(_sec_err("0.0000000001"),
		"acct_gather.conf: EnergyModbusFrequency=0.0000000001: not a number of seconds");
	ck_assert_str_eq(_sec_err("0.05"),
		"acct_gather.conf: EnergyModbusFrequency=0.05: must be between 0.1 and 3600 seconds");
	ck_assert_str_eq(_sec_err("3600.5"),
		"acct_gather.conf: EnergyModbusFrequency=3600.5: must be between 0.1 and 3600 seconds");
	ck_assert_str_eq(_sec_err("99999999999999999999999"),
		"acct_gather.conf: EnergyModbusFrequency=99999999999999999999999: must be between 0.1 and 3600 seconds");
}
END_TEST

START_TEST(test_with_line)
{
	conf_where_t w = { "/etc/slurm/meters.map", "Unit", 12 };
	uint64_t v;

	ck_assert_int_eq(conf_uint(&w, "300", 1, 247, &v, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err,
		"/etc/slurm/meters.map:12: Unit=300: must be between 1 and 247");
}
END_TEST

START_TEST(test_millis)
{
	conf_where_t w = { "acct_gather.conf", "EnergyModbusTimeout", 0 };
	uint64_t ns = 0;

	ck_assert_int_eq(conf_millis_ns(&w, "500", 1, 60000, &ns, err,
					sizeof(err)), 0);
	ck_assert_uint_eq(ns, 500000000);
	ck_assert_int_eq(conf_millis_ns(&w, "0.5", 1, 60000, &ns, err,
					sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusTimeout=0.5: not a whole number of milliseconds");
	ck_assert_int_eq(conf_millis_ns(&w, "0", 1, 60000, &ns, err,
					sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusTimeout=0: must be between 1 and 60000 milliseconds");
}
END_TEST

START_TEST(test_uint)
{
	conf_where_t w = { "acct_gather.conf", "EnergyModbusRegister", 0 };
	uint64_t v = 0;

	ck_assert_int_eq(conf_uint(&w, "0x10", 0, 65535, &v, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(v, 16);
	ck_assert_int_eq(conf_uint(&w, "010", 0, 65535, &v, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(v, 10);	/* decimal, not octal */
	ck_assert_int_eq(conf_uint(&w, "0XfFfF", 0, 65535, &v, err,
				   sizeof(err)), 0);
	ck_assert_uint_eq(v, 65535);
	ck_assert_int_eq(conf_uint(&w, "18446744073709551615", 0, UINT64_MAX,
				   &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, UINT64_MAX);

	ck_assert_int_eq(conf_uint(&w, "-1", 0, 65535, &v, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusRegister=-1: not an unsigned integer (decimal, or hex with 0x)");
	ck_assert_int_eq(conf_uint(&w, "0x", 0, 65535, &v, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(conf_uint(&w, " 5", 0, 65535, &v, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(conf_uint(&w, "65536", 0, 65535, &v, err,
				   sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusRegister=65536: must be between 0 and 65535");
	ck_assert_int_eq(conf_uint(&w, "18446744073709551616", 0, UINT64_MAX,
				   &v, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(conf_uint(&w, "0x10000000000000000", 0, UINT64_MAX,
				   &v, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_double)
{
	conf_where_t w = { "acct_gather.conf", "EnergyModbusScale", 0 };
	double d = 0;

	ck_assert_int_eq(conf_double(&w, "0.001", 1e-9, 1e9, &d, err,
				     sizeof(err)), 0);
	ck_assert_double_eq(d, 0.001);
	ck_assert_int_eq(conf_double(&w, "1e3", 1e-9, 1e9, &d, err,
				     sizeof(err)), 0);
	ck_assert_double_eq(d, 1000);
	ck_assert_int_eq(conf_double(&w, "nan", 1e-9, 1e9, &d, err,
				     sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusScale=nan: not a finite number");
	ck_assert_int_eq(conf_double(&w, "1.5W", 1e-9, 1e9, &d, err,
				     sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusScale=1.5W: not a number");
	ck_assert_int_eq(conf_double(&w, "0", 1e-9, 1e9, &d, err,
				     sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusScale=0: must be between 1e-09 and 1e+09");
}
END_TEST

START_TEST(test_bool)
{
	conf_where_t w = { "acct_gather.conf", "EnergyModbusUseCounter", 0 };
	bool b = false;

	ck_assert_int_eq(conf_bool(&w, "YES", &b, err, sizeof(err)), 0);
	ck_assert(b);
	ck_assert_int_eq(conf_bool(&w, "0", &b, err, sizeof(err)), 0);
	ck_assert(!b);
	ck_assert_int_eq(conf_bool(&w, "True", &b, err, sizeof(err)), 0);
	ck_assert(b);
	ck_assert_int_eq(conf_bool(&w, "on", &b, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusUseCounter=on: not a boolean (yes/no, true/false, 1/0)");
}
END_TEST

START_TEST(test_enum)
{
	static const char *const names[] = { "tcp", "rtu", NULL };
	conf_where_t w = { "acct_gather.conf", "EnergyModbusTransport", 0 };
	int i = -1;

	ck_assert_int_eq(conf_enum(&w, "RTU", names, &i, err, sizeof(err)), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(conf_enum(&w, "udp", names, &i, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyModbusTransport=udp: must be one of: tcp, rtu");
}
END_TEST

START_TEST(test_expand)
{
	conf_where_t w = { "acct_gather.conf", "EnergyRRDFile", 0 };
	char out[32];

	ck_assert_int_eq(conf_expand(&w, "/rrd/%n/power.rrd", "n12", out,
				     sizeof(out), err, sizeof(err)), 0);
	ck_assert_str_eq(out, "/rrd/n12/power.rrd");
	ck_assert_int_eq(conf_expand(&w, "100%%-%n%n", "a", out, sizeof(out),
				     err, sizeof(err)), 0);
	ck_assert_str_eq(out, "100%-aa");

	ck_assert_int_eq(conf_expand(&w, "/rrd/%h.rrd", "n1", out,
				     sizeof(out), err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyRRDFile=/rrd/%h.rrd: unknown escape '%h' (known: %n for the node name, %% for a percent sign)");
	ck_assert_int_eq(conf_expand(&w, "50%", "n1", out, sizeof(out), err,
				     sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyRRDFile=50%: '%' at the end (write %% for a percent sign)");
	ck_assert_int_eq(conf_expand(&w, "%n", NULL, out, sizeof(out), err,
				     sizeof(err)), -EINVAL);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyRRDFile=%n: %n used but no node name is known");

	/* 8 bytes hold 7 characters */
	ck_assert_int_eq(conf_expand(&w, "x%n", "abcdef", out, 8, err,
				     sizeof(err)), 0);
	ck_assert_str_eq(out, "xabcdef");
	ck_assert_int_eq(conf_expand(&w, "xy%n", "abcdef", out, 8, err,
				     sizeof(err)), -ENAMETOOLONG);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyRRDFile=xy%n: expands to more than 7 characters");
}
END_TEST

/* ---------------------------------------------------------- pair files */

static char dir[64], path[128];

static void _setup(void)
{
	strcpy(dir, "/tmp/se-conf-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/map", dir);
}

static void _teardown(void)
{
	unlink(path);
	rmdir(dir);
}

typedef struct {
	int calls;
	char seen[1024];
} seen_t;

static int _collect(void *arg, const char *p, unsigned line,
		    const conf_pair_t *pairs, size_t n, char *e, size_t elen)
{
	seen_t *s = arg;
	size_t len = strlen(s->seen), i;

	s->calls++;
	len += snprintf(s->seen + len, sizeof(s->seen) - len, "%u:", line);
	for (i = 0; i < n; i++)
		len += snprintf(s->seen + len, sizeof(s->seen) - len,
				"[%s|%s]", pairs[i].key, pairs[i].value);
	snprintf(s->seen + len, sizeof(s->seen) - len, ";");
	if (!strcmp(pairs[0].key, "Stop")) {
		snprintf(e, elen, "%s:%u: stop here", p, line);
		return -42;
	}
	return 0;
}

START_TEST(test_pairs_file)
{
	seen_t s = { 0 };

	tmp_file_write_mode(path, "# nodes and their meters\n"
			    "\n"
			    "NodeName=n1 Host=10.0.0.5 Unit=1\n"
			    "  NodeName=n2\tLabel=\"rack 3, \\\"left\\\" PDU\" Empty= # note\n"
			    "Color=#fff Path=\"a\\\\b\"\n", 0644);
	ck_assert_int_eq(conf_read_pairs_file(path, _collect, &s, err,
					      sizeof(err)), 0);
	ck_assert_int_eq(s.calls, 3);
	ck_assert_str_eq(s.seen,
		"3:[NodeName|n1][Host|10.0.0.5][Unit|1];"
		"4:[NodeName|n2][Label|rack 3, \"left\" PDU][Empty|];"
		"5:[Color|#fff][Path|a\\b];");
}
END_TEST

static const char *_pairs_err(const char *text, int want)
{
	seen_t s = { 0 };

	tmp_file_write_mode(path, text, 0644);
	ck_assert_int_eq(conf_read_pairs_file(path, _collect, &s, err,
					      sizeof(err)), want);
	ck_assert_msg(!strncmp(err, path, strlen(path)), "'%s'", err);
	return err + strlen(path);
}

START_TEST(test_pairs_errors)
{
	ck_assert_str_eq(_pairs_err("A=1\nB=2 junk C=3\n", -EINVAL),
			 ":2: 'junk': expected key=value");
	ck_assert_str_eq(_pairs_err("=1\n", -EINVAL), ":1: '=1': empty key");
	ck_assert_str_eq(_pairs_err("A=\"open\n", -EINVAL),
			 ":1: A: unterminated quote");
	ck_assert_str_eq(_pairs_err("A=\"x\"y\n", -EINVAL),
			 ":1: A: text right after the closing quote");
	ck_assert_str_eq(_pairs_err("A=1\nStop=1\nB=2\n", -42),
			 ":2: stop here");
}
END_TEST

START_TEST(test_pairs_unreadable)
{
	seen_t s = { 0 };

	ck_assert_int_eq(conf_read_pairs_file("/nonexistent/map", _collect,
					      &s, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/map: No such file or directory");
	ck_assert_int_eq(s.calls, 0);
}
END_TEST

START_TEST(test_secret_file)
{
	conf_where_t w = { "acct_gather.conf", "EnergyBMCPasswordFile", 0 };
	char want[512];

	tmp_file_write_mode(path, "secret\n", 0600);
	ck_assert_int_eq(conf_check_secret_file(&w, path, err, sizeof(err)),
			 0);
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(conf_check_secret_file(&w, path, err, sizeof(err)),
			 -EPERM);
	snprintf(want, sizeof(want),
		 "acct_gather.conf: EnergyBMCPasswordFile=%s: mode 0640 lets group or others access it; chmod 600 it",
		 path);
	ck_assert_str_eq(err, want);

	ck_assert_int_eq(chmod(path, 0600), 0);
	if (!geteuid() && !chown(path, 4242, -1)) {
		ck_assert_int_eq(conf_check_secret_file(&w, path, err,
							sizeof(err)), -EPERM);
		snprintf(want, sizeof(want),
			 "acct_gather.conf: EnergyBMCPasswordFile=%s: owned by uid 4242, must be owned by uid 0 (the daemon's user)",
			 path);
		ck_assert_str_eq(err, want);
	}

	ck_assert_int_eq(conf_check_secret_file(&w, dir, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(conf_check_secret_file(&w, "/nonexistent/pw", err,
						sizeof(err)), -ENOENT);
	ck_assert_str_eq(err,
		"acct_gather.conf: EnergyBMCPasswordFile=/nonexistent/pw: No such file or directory");
}
END_TEST

/* ------------------------------------------------------- key table rows */

typedef struct {
	unsigned u;
	double r;
	uint64_t s_ns, m_ns;
	int e;
	char *str, *path;
} rows_t;

static const char *const colours[] = { "red", "green", NULL };

/* refuses 13 after the row's bounds took it */
static int _not_13(const conf_where_t *w, const char *v, char *e,
		   size_t len)
{
	return strcmp(v, "13") ? 0 :
		conf_fail(w, v, e, len, -EINVAL, "unlucky");
}

static const se_conf_key_t rows[] = {
	{ .name = "U", .type = SE_CONF_UINT,
	  .offset = SE_CONF_FIELD(rows_t, u, unsigned), .min = 1, .max = 20,
	  .check = _not_13 },
	SE_KEY_REAL("R", rows_t, r, 0.5, 2),
	SE_KEY_SECONDS("S", rows_t, s_ns, NS / 10, 60 * NS),
	SE_KEY_MILLIS("M", rows_t, m_ns, 10, 1000),
	SE_KEY_ENUM("E", rows_t, e, colours),
	SE_KEY_STR("Str", rows_t, str, conf_nonempty, "(none)"),
	SE_KEY_PATH("Path", rows_t, path, conf_template, ""),
};

static int _set(rows_t *x, size_t i, const char *v)
{
	conf_where_t w = { "t.conf", rows[i].name, 0 };

	err[0] = '\0';
	return se_conf_key_parse(&rows[i], x, &w, v, err, sizeof(err));
}

static const char *_show(const rows_t *x, size_t i)
{
	static char buf[64];

	buf[0] = '\0';
	se_conf_key_show(&rows[i], x, buf, sizeof(buf));
	return buf;
}

START_TEST(test_rows)
{
	rows_t x = { .u = 7, .r = 1 };

	ck_assert_int_eq(_set(&x, 0, "12"), 0);
	ck_assert_str_eq(_show(&x, 0), "12");
	ck_assert_int_eq(_set(&x, 0, "21"), -EINVAL);
	ck_assert_str_eq(err, "t.conf: U=21: must be between 1 and 20");
	/* the check refuses after the bounds took it: the field is put back */
	ck_assert_int_eq(_set(&x, 0, "13"), -EINVAL);
	ck_assert_str_eq(err, "t.conf: U=13: unlucky");
	ck_assert_uint_eq(x.u, 12);
	ck_assert_int_eq(_set(&x, 1, "3"), -EINVAL);
	ck_assert_str_eq(err, "t.conf: R=3: must be between 0.5 and 2");
	ck_assert_str_eq(_show(&x, 1), "1");
	ck_assert_int_eq(_set(&x, 2, "0.25"), 0);
	ck_assert_str_eq(_show(&x, 2), "0.25");
	ck_assert_int_eq(_set(&x, 3, "250"), 0);
	ck_assert_uint_eq(x.m_ns, 250000000ULL);
	ck_assert_str_eq(_show(&x, 3), "250");
	ck_assert_int_eq(_set(&x, 4, "GREEN"), 0);
	ck_assert_str_eq(_show(&x, 4), "green");
	ck_assert_str_eq(_show(&x, 5), "(none)");
	ck_assert_int_eq(_set(&x, 5, ""), -EINVAL);
	ck_assert_str_eq(err, "t.conf: Str=: empty");
	ck_assert_int_eq(_set(&x, 5, "a b"), 0);
	ck_assert_int_eq(_set(&x, 5, "c"), 0);	/* the old copy freed */
	ck_assert_str_eq(_show(&x, 5), "c");
	ck_assert_int_eq(_set(&x, 6, "rel/%n"), -EINVAL);
	ck_assert_str_eq(err, "t.conf: Path=rel/%n: must be an absolute path");
	ck_assert_int_eq(_set(&x, 6, "/a/%x"), -EINVAL);
	ck_assert_ptr_null(x.path);
	ck_assert_int_eq(_set(&x, 6, "/a/%n"), 0);
	ck_assert_str_eq(_show(&x, 6), "/a/%n");
	se_conf_keys_free(rows, sizeof(rows) / sizeof(rows[0]), &x);
	ck_assert_ptr_null(x.str);
	ck_assert_ptr_null(x.path);
}
END_TEST

/* ------------------------------------------------------------ map files */

typedef struct {
	char *name;
	unsigned u;
} entry_t;

static const se_conf_key_t entry_rows[] = {
	SE_KEY_STR("Name", entry_t, name, conf_nonempty, NULL),
	SE_KEY_LIKE("Count", entry_t, u, &rows[0]),	/* bounded as U */
};

typedef struct {
	char seen[256];
	bool keep;
	char *kept;
} map_seen_t;

static int _entry(void *arg, void *entry, const char *p, unsigned line,
		  char *e, size_t len)
{
	map_seen_t *m = arg;
	entry_t *en = entry;
	size_t n = strlen(m->seen);

	(void) p;
	(void) e;
	(void) len;
	snprintf(m->seen + n, sizeof(m->seen) - n, "%u:%s/%u;", line,
		 en->name ? en->name : "-", en->u);
	if (m->keep && !m->kept) {
		m->kept = en->name;	/* moved out: not freed by the reader */
		en->name = NULL;
	}
	return 0;
}

static const se_conf_map_t test_map = {
	.conf_file = "t.conf",
	.conf_key = "TestMap",
	.keys = entry_rows,
	.n_keys = 2,
	.entry_size = sizeof(entry_t),
	.once = true,
	.line = _entry,
};

static const char *_map_err(const char *text, int want)
{
	map_seen_t m = { .keep = false };

	tmp_file_write_mode(path, text, 0644);
	ck_assert_int_eq(se_conf_map_read(&test_map, path, &m, err,
					  sizeof(err)), want);
	ck_assert_msg(!strncmp(err, path, strlen(path)), "'%s'", err);
	return err + strlen(path);
}

START_TEST(test_map_file)
{
	map_seen_t m = { .keep = true };
	entry_t e = { NULL, 5 };
	char shown[16] = "";

	/* a row like another: that row's printer, over its own field */
	se_conf_key_show(&entry_rows[1], &e, shown, sizeof(shown));
	ck_assert_str_eq(shown, "5");
	tmp_file_write_mode(path, "# a map\nName=a Count=3\n\nname=b\n", 0644);
	ck_assert_int_eq(se_conf_map_read(&test_map, path, &m, err,
					  sizeof(err)), 0);
	ck_assert_str_eq(m.seen, "2:a/3;4:b/0;");
	ck_assert_str_eq(m.kept, "a");
	free(m.kept);
	ck_assert_str_eq(_map_err("Name=a Colour=red\n", -EINVAL),
			 ":1: Colour=red: unknown key (known: Name, Count)");
	ck_assert_str_eq(_map_err("Name=a Name=b\n", -EINVAL),
			 ":1: Name=b: given twice");
	ck_assert_str_eq(_map_err("Name=a\nName=b Count=21\n", -EINVAL),
			 ":2: Count=21: must be between 1 and 20");
	ck_assert_str_eq(_map_err("Name=\n", -EINVAL), ":1: Name=: empty");
	ck_assert_str_eq(_map_err("# nothing\n", -EINVAL), ": no entries");
	ck_assert_int_eq(se_conf_map_read(&test_map, "/nonexistent/map", &m,
					  err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err,
		"t.conf: TestMap=/nonexistent/map: No such file or directory");
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *v = tcase_create("values");
	TCase *f = tcase_create("files");

	tcase_add_test(v, test_seconds);
	tcase_add_test(v, test_with_line);
	tcase_add_test(v, test_millis);
	tcase_add_test(v, test_uint);
	tcase_add_test(v, test_double);
	tcase_add_test(v, test_bool);
	tcase_add_test(v, test_enum);
	tcase_add_test(v, test_expand);
	tcase_add_test(v, test_rows);
	suite_add_tcase(s, v);

	tcase_add_checked_fixture(f, _setup, _teardown);
	tcase_add_test(f, test_pairs_file);
	tcase_add_test(f, test_pairs_errors);
	tcase_add_test(f, test_pairs_unreadable);
	tcase_add_test(f, test_secret_file);
	tcase_add_test(f, test_map_file);
	suite_add_tcase(s, f);
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
