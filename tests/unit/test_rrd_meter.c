/*
 * test_rrd_meter.c - the RRD meter: counter over rows, no-new/stale rows,
 * and real files made with librrd (missing, truncated, wrong DS).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rrd.h>

#include "log_record.h"
#include "rrd_meter.h"
#include "rrd_read.h"
#include "se_log.h"
#include "se_time.h"
#include "tmp_file.h"

#define S(x)	((uint64_t) (x) * SE_NS_PER_SEC)

static char dir[] = "/tmp/test_rrd_meter.XXXXXX";

static void _conf(rrd_conf_t *c, const char *tmpl)
{
	rrd_conf_init(c);
	c->file_tmpl = strdup(tmpl);
	c->daemon = strdup("none");
}

static rrd_meter_t *_meter(const char *tmpl, const char *node)
{
	rrd_conf_t c;
	char err[256];
	rrd_meter_t *m;

	_conf(&c, tmpl);
	m = rrd_meter_create(&c, node, err, sizeof(err));
	ck_assert_msg(m != NULL, "%s", err);
	rrd_conf_free(&c);
	return m;
}

/* An RRD of 10 s steps with DS "watts" (GAUGE) fed rows up to last_s. */
static void _make_rrd(const char *path, time_t first_s, time_t last_s,
		      double watts)
{
	const char *args[] = { "DS:watts:GAUGE:30:0:U",
			       "DS:joules:DERIVE:30:0:U",
			       "RRA:AVERAGE:0.5:1:1000" };
	char upd[64];
	const char *uargv[1] = { upd };

	ck_assert_msg(!rrd_create_r(path, 10, first_s - 10, 3, args), "%s",
		      rrd_get_error());
	for (time_t t = first_s; t <= last_s; t += 10) {
		snprintf(upd, sizeof(upd), "%ld:%g:%g", (long) t, watts,
			 watts * (double) (t - first_s));
		ck_assert_msg(!rrd_update_r(path, NULL, 1, uargv), "%s",
			      rrd_get_error());
	}
}

START_TEST(test_absorb_counter)
{
	rrd_meter_t *m = _meter("/x/%n.rrd", "n1");
	double w[4] = { 100, 200, NAN, NAN };
	rrd_series_t s = { 1000, 10, 4, w };
	meter_reading_t r;
	char msg[128];

	ck_assert_int_eq(rrd_meter_absorb(m, &s, S(1030), &r, msg,
					  sizeof(msg)), 0);
	ck_assert_uint_eq(r.t_ns, S(1015));
	ck_assert_uint_eq(r.power_mw, 200000);
	ck_assert(r.has_counter);
	/* trapezoid 1005 -> 1015 of 100 -> 200 W */
	ck_assert_uint_eq(r.counter_raw, 1500000);

	/* Nothing new: -EALREADY (not a failure), the counter is kept. */
	ck_assert_int_eq(rrd_meter_absorb(m, &s, S(1031), &r, msg,
					  sizeof(msg)), -EALREADY);

	/* Two new rows at once: both counted. */
	w[2] = 200;
	w[3] = 400;
	ck_assert_int_eq(rrd_meter_absorb(m, &s, S(1045), &r, msg,
					  sizeof(msg)), 0);
	ck_assert_uint_eq(r.t_ns, S(1035));
	ck_assert_uint_eq(r.counter_raw, 1500000 + 2000000 + 3000000);
	rrd_meter_destroy(m);
}
END_TEST

/*
 * Dropped rows (NaN, negative, absurd) are marked once per run, when a
 * valid row closes it; the same rows fetched again are not marked again,
 * nor trailing unknown rows (not written yet) (issue #14).
 */
START_TEST(test_dropped_rows_marked_once)
{
	rrd_meter_t *m = _meter("/x/%n.rrd", "n1");
	double w1[2] = { 100, 200 };
	double w2[6] = { 100, 200, NAN, -300, 5e7, 300 };
	double w3[8] = { 100, 200, NAN, -300, 5e7, 300, 300, NAN };
	rrd_series_t s1 = { 1000, 10, 2, w1 };
	rrd_series_t s2 = { 1000, 10, 6, w2 };
	rrd_series_t s3 = { 1000, 10, 8, w3 };
	meter_reading_t r;
	char msg[128];

	_setup();		/* log_record.h: the core's lines in log_text */
	ck_assert_int_eq(rrd_meter_absorb(m, &s1, S(1020), &r, msg,
					  sizeof(msg)), 0);
	ck_assert_uint_eq(log_errors, 0);
	ck_assert_int_eq(rrd_meter_absorb(m, &s2, S(1060), &r, msg,
					  sizeof(msg)), 0);
	ck_assert_msg(log_errors == 1 && strstr(log_text,
		      "3 row(s) dropped from 1025 to 1045 s (1 unknown, 1 below EnergyRRDMinWatt, 1 above EnergyRRDMaxWatt)"),
		      "%s", log_text);
	/* 100 -> 200 -> (bridged) -> 300: the counter is the trapezoid of
	 * the valid rows only, none of the dropped values */
	ck_assert_uint_eq(r.counter_raw, 1500000 + 40 * 250 * 1000);
	ck_assert_int_eq(rrd_meter_absorb(m, &s3, S(1070), &r, msg,
					  sizeof(msg)), 0);
	ck_assert_msg(log_errors == 1, "%s", log_text);
	_teardown();
	rrd_meter_destroy(m);
}
END_TEST

START_TEST(test_absorb_stale_and_empty)
{
	rrd_meter_t *m = _meter("/x/%n.rrd", "n1");
	double w[2] = { NAN, NAN };
	rrd_series_t s = { 1000, 10, 2, w };
	meter_reading_t r;
	char msg[128];

	ck_assert_int_eq(rrd_meter_absorb(m, &s, S(1020), &r, msg,
					  sizeof(msg)), -ENODATA);
	w[0] = 150;
	/* newest valid row at 1005; 70 s later it is past the 60 s max age */
	ck_assert_int_eq(rrd_meter_absorb(m, &s, S(1075), &r, msg,
					  sizeof(msg)), -ESTALE);
	ck_assert_ptr_nonnull(strstr(msg, "old"));
	rrd_meter_destroy(m);
}
END_TEST

START_TEST(test_read_real_file)
{
	char tmpl[256], path[256];
	rrd_meter_t *m;
	meter_reading_t r;
	char msg[256];
	time_t now = time(NULL) / 10 * 10;

	snprintf(tmpl, sizeof(tmpl), "%s/%%n.rrd", dir);
	snprintf(path, sizeof(path), "%s/n1.rrd", dir);
	_make_rrd(path, now - 300, now - 10, 250);

	m = _meter(tmpl, "n1");
	ck_assert_str_eq(rrd_meter_path(m), path);
	
	ck_assert_msg(!rrd_meter_ops.read(m, &r, 0, msg, sizeof(msg)), "%s",
		      msg);
	ck_assert(r.has_power);
	ck_assert_uint_eq(r.power_mw, 250000);
	/* the newest complete row ends at now - 10: midpoint now - 15 */
	ck_assert_uint_le(se_mono_to_wall_ns(r.t_ns), S(now - 14));
	ck_assert_uint_ge(se_mono_to_wall_ns(r.t_ns), S(now - 16));
	/* read again: no new row */
	ck_assert_int_eq(rrd_meter_ops.read(m, &r, 0, msg, sizeof(msg)),
			 -EALREADY);
	rrd_meter_destroy(m);
	unlink(path);
}
END_TEST

START_TEST(test_read_derive_ds)
{
	char path[256];
	rrd_what_t what = { path, "joules", "AVERAGE" };
	rrd_fetched_t f;
	rrd_sample_t last;
	rrd_limits_t lim = { 0, 1e6 };
	char err[256];
	time_t now = time(NULL) / 10 * 10;

	snprintf(path, sizeof(path), "%s/derive.rrd", dir);
	_make_rrd(path, now - 300, now - 10, 180);
	ck_assert_msg(!rrd_read_fetch(NULL, &what, now - 100, now, &f, err,
				      sizeof(err)), "%s", err);
	/* a DERIVE of cumulative joules reads back as watts */
	ck_assert_int_eq(rrd_series_last(&f.s, &lim, &last), 0);
	ck_assert_double_eq_tol(last.watts, 180, 1e-9);
	rrd_fetched_free(&f);
	unlink(path);
}
END_TEST

START_TEST(test_read_errors)
{
	char path[256], err[256];
	rrd_what_t what = { path, "watts", "AVERAGE" };
	rrd_fetched_t f;
	time_t now = time(NULL) / 10 * 10;

	snprintf(path, sizeof(path), "%s/missing.rrd", dir);
	ck_assert_int_eq(rrd_read_fetch(NULL, &what, now - 100, now, &f, err,
					sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "missing.rrd"));

	snprintf(path, sizeof(path), "%s/bad.rrd", dir);
	_make_rrd(path, now - 100, now - 10, 100);
	what.ds = "power";
	ck_assert_int_eq(rrd_read_fetch(NULL, &what, now - 100, now, &f, err,
					sizeof(err)), -ENOKEY);
	ck_assert_msg(strstr(err, "watts") && strstr(err, "joules"), "%s",
		      err);

	/* truncated, as a full disk or a copy in progress leaves it */
	ck_assert_int_eq(truncate(path, 200), 0);
	what.ds = "watts";
	ck_assert_int_eq(rrd_read_fetch(NULL, &what, now - 100, now, &f, err,
					sizeof(err)), -EIO);
	ck_assert_ptr_nonnull(strstr(err, "bad.rrd"));

	/* not an RRD at all */
	tmp_file_write(path, "hello\n");
	ck_assert_int_eq(rrd_read_fetch(NULL, &what, now - 100, now, &f, err,
					sizeof(err)), -EIO);
	unlink(path);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("rrd_meter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_absorb_counter);
	tcase_add_test(tc, test_absorb_stale_and_empty);
	tcase_add_test(tc, test_dropped_rows_marked_once);
	tcase_add_test(tc, test_read_real_file);
	tcase_add_test(tc, test_read_derive_ds);
	tcase_add_test(tc, test_read_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!mkdtemp(dir))
		return EXIT_FAILURE;
	sr = srunner_create(_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
