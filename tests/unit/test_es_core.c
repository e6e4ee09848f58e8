/*
 * test_es_core.c - ext_sensors/meters without Slurm: configuration keys,
 * parallel reads off the caller's thread, node/switch/door values, step
 * energy, and a hung file that must not stall a round.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rrd.h>

#include "es_conf.h"
#include "es_core.h"
#include "se_log.h"
#include "se_time.h"

#define F "ext_sensors.conf"
#define S(x)	((uint64_t) (x) * SE_NS_PER_SEC)

static char dir[] = "/tmp/test_es_core.XXXXXX";

static void _quiet(void *arg, se_log_level_t level, const char *msg)
{
}

/* 10 s rows of `value` (DS "v") from now-600 up to last_s. */
static void _make_rrd(const char *name, time_t last_s, double value)
{
	const char *args[] = { "DS:v:GAUGE:30:U:U", "RRA:AVERAGE:0.5:1:1000" };
	time_t first = time(NULL) / 10 * 10 - 600;
	char path[256], upd[64];
	const char *uargv[1] = { upd };

	snprintf(path, sizeof(path), "%s/%s.rrd", dir, name);
	ck_assert(!rrd_create_r(path, 10, first - 10, 2, args));
	for (time_t t = first; t <= last_s; t += 10) {
		snprintf(upd, sizeof(upd), "%ld:%g", (long) t, value);
		ck_assert(!rrd_update_r(path, NULL, 1, uargv));
	}
}

static void _conf(es_conf_t *c, const char *node_data)
{
	char tmpl[256], err[256];

	es_conf_init(c);
	snprintf(tmpl, sizeof(tmpl), "%s/%%n.rrd", dir);
	ck_assert(!es_conf_set(c, F, "NodeData", node_data, err, 256));
	ck_assert(!es_conf_set(c, F, "JobData", "energy", err, 256));
	ck_assert(!es_conf_set(c, F, "EnergyPathRRD", tmpl, err, 256));
	ck_assert(!es_conf_set(c, F, "RRDDaemon", "none", err, 256));
	ck_assert(!es_conf_set(c, F, "MaxWatt", "1000", err, 256));
	ck_assert(!es_conf_set(c, F, "ReadThreads", "4", err, 256));
}

/* Rounds until every component's first read is folded in (bounded:
 * the test fails, never hangs). */
static void _settle(es_core_t *core, es_round_stats_t *sum)
{
	es_round_stats_t st;
	unsigned n;

	memset(sum, 0, sizeof(*sum));
	es_core_round(core, se_wall_ns(), S(10), &st);
	n = st.queued;
	for (int i = 0; i < 500; i++) {
		usleep(10000);
		es_core_round(core, se_wall_ns(), S(10), &st);
		sum->ok += st.ok;
		sum->failed += st.failed;
		if (sum->ok + sum->failed >= n)
			return;
	}
	ck_abort_msg("reads did not finish");
}

START_TEST(test_conf_keys)
{
	es_conf_t c;
	char err[256], buf[64];

	es_conf_init(&c);
	ck_assert_double_eq(c.min_w, 10);	/* upstream's defaults */
	ck_assert_double_eq(c.max_w, 500);
	ck_assert(!es_conf_set(&c, F, "NodeData", "energy,temp", err, 256));
	ck_assert_uint_eq(c.data, ES_NODE_ENERGY | ES_NODE_TEMP);
	ck_assert_str_eq(es_conf_value(&c, "NodeData", buf, sizeof(buf)),
			 "energy,temp");
	ck_assert_int_eq(es_conf_set(&c, F, "NodeData", "energy,power", err,
				     256), -EINVAL);
	ck_assert_msg(strstr(err, F) && strstr(err, "NodeData") &&
		      strstr(err, "power"), "%s", err);
	ck_assert_int_eq(es_conf_set(&c, F, "Frobnicate", "1", err, 256),
			 -ENOENT);
	ck_assert_int_eq(es_conf_set(&c, F, "ReadThreads", "0", err, 256),
			 -EINVAL);
	ck_assert_int_eq(es_conf_check(&c, F, err, 256), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyPathRRD"));
	ck_assert(!es_conf_set(&c, F, "ColdDoorData", "temp", err, 256));
	ck_assert(!es_conf_set(&c, F, "EnergyPathRRD", "/r/%n", err, 256));
	ck_assert(!es_conf_set(&c, F, "TempPathRRD", "/t/%n", err, 256));
	ck_assert_int_eq(es_conf_check(&c, F, err, 256), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ColdDoors"));
	ck_assert(!es_conf_set(&c, F, "ColdDoors", "door[1-2]", err, 256));
	ck_assert_int_eq(es_conf_check(&c, F, err, 256), 0);
	es_conf_free(&c);
}
END_TEST

START_TEST(test_nodes_values_and_step_energy)
{
	const char *names[] = { "n1", "n2", "n3", "gone" };
	time_t now = time(NULL) / 10 * 10;
	es_round_stats_t sum;
	es_values_t v;
	es_conf_t c;
	es_core_t *core;
	size_t idx[2] = { 0, 1 };
	uint64_t mj;
	char err[256];

	_make_rrd("n1", now, 100);
	_make_rrd("n2", now, 200);
	_make_rrd("n3", now - 300, 300);		/* stale */
	_conf(&c, "energy");
	core = es_core_create(&c, err, sizeof(err));
	ck_assert_msg(core != NULL, "%s", err);
	ck_assert(!es_core_set_components(core, ES_KIND_NODE, names, 4, err,
					  sizeof(err)));
	_settle(core, &sum);
	ck_assert_uint_eq(sum.ok, 2);
	ck_assert_uint_eq(sum.failed, 2);	/* stale n3, missing "gone" */

	ck_assert(!es_core_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert(v.has_energy && v.has_power);
	ck_assert_double_eq_tol(v.watts, 100, 1e-9);
	ck_assert(!es_core_values(core, ES_KIND_NODE, 2, se_wall_ns(), &v));
	ck_assert(v.has_energy && !v.has_power);	/* stale: no watts */
	ck_assert(!es_core_values(core, ES_KIND_NODE, 3, se_wall_ns(), &v));
	ck_assert(!v.has_energy);

	/* a 90 s step on n1 + n2: (100 + 200) W x 90 s */
	ck_assert_msg(!es_core_energy_between(core, idx, 2, S(now - 120),
					      S(now - 30), &mj, err,
					      sizeof(err)), "%s", err);
	ck_assert_uint_eq(mj, 300 * 90 * 1000);
	idx[1] = 3;
	ck_assert_int_eq(es_core_energy_between(core, idx, 2, S(now - 120),
						S(now - 30), &mj, err,
						sizeof(err)), -ENODATA);
	ck_assert_ptr_nonnull(strstr(err, "gone"));

	/* a new node set keeps the state of names it still has */
	ck_assert(!es_core_set_components(core, ES_KIND_NODE, names + 1, 1,
					  err, sizeof(err)));
	ck_assert(!es_core_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert_double_eq_tol(v.watts, 200, 1e-9);
	es_core_destroy(core, S(2));
	es_conf_free(&c);
}
END_TEST

START_TEST(test_switch_and_door)
{
	const char *sw[] = { "sw1" }, *doors[] = { "door1" };
	time_t now = time(NULL) / 10 * 10;
	char tmpl[256], err[256];
	es_round_stats_t sum;
	es_values_t v;
	es_conf_t c;
	es_core_t *core;

	_make_rrd("sw1", now, 80);
	_make_rrd("door1-temp", now, 18.5);
	es_conf_init(&c);
	snprintf(tmpl, sizeof(tmpl), "%s/%%n.rrd", dir);
	ck_assert(!es_conf_set(&c, F, "SwitchData", "energy", err, 256));
	ck_assert(!es_conf_set(&c, F, "ColdDoorData", "temp", err, 256));
	ck_assert(!es_conf_set(&c, F, "ColdDoors", "door1", err, 256));
	ck_assert(!es_conf_set(&c, F, "EnergyPathRRD", tmpl, err, 256));
	snprintf(tmpl, sizeof(tmpl), "%s/%%n-temp.rrd", dir);
	ck_assert(!es_conf_set(&c, F, "TempPathRRD", tmpl, err, 256));
	ck_assert(!es_conf_set(&c, F, "RRDDaemon", "none", err, 256));
	ck_assert(!es_conf_check(&c, F, err, 256));
	core = es_core_create(&c, err, sizeof(err));
	ck_assert(core);
	ck_assert(!es_core_set_components(core, ES_KIND_SWITCH, sw, 1, err,
					  256));
	ck_assert(!es_core_set_components(core, ES_KIND_DOOR, doors, 1, err,
					  256));
	_settle(core, &sum);
	ck_assert_uint_eq(sum.ok, 2);
	ck_assert(!es_core_values(core, ES_KIND_SWITCH, 0, se_wall_ns(), &v));
	ck_assert(v.has_power && !v.has_temp);
	ck_assert_double_eq_tol(v.watts, 80, 1e-9);
	ck_assert(!es_core_values(core, ES_KIND_DOOR, 0, se_wall_ns(), &v));
	ck_assert(v.has_temp && !v.has_energy);
	ck_assert_double_eq_tol(v.temp_c, 18.5, 1e-9);
	ck_assert_str_eq(es_core_name(core, ES_KIND_DOOR, 0), "door1");
	es_core_destroy(core, S(2));
	es_conf_free(&c);
}
END_TEST

/*
 * A file that blocks its reader (a FIFO nobody writes: open() waits, as on
 * a hung NFS mount) costs one reader thread, never the round.
 */
START_TEST(test_hung_file_does_not_stall)
{
	const char *names[] = { "hang", "n1" };
	time_t now = time(NULL) / 10 * 10;
	char path[256], err[256];
	es_round_stats_t st, sum;
	es_values_t v;
	es_conf_t c;
	es_core_t *core;
	int fd;

	_make_rrd("n1", now, 100);
	snprintf(path, sizeof(path), "%s/hang.rrd", dir);
	ck_assert(!mkfifo(path, 0600));
	_conf(&c, "energy");
	core = es_core_create(&c, err, sizeof(err));
	ck_assert(core);
	ck_assert(!es_core_set_components(core, ES_KIND_NODE, names, 2, err,
					  256));
	es_core_round(core, se_wall_ns(), S(10), &st);
	ck_assert_uint_eq(st.queued, 2);
	/* n1 arrives while "hang" stays in flight, round after round */
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < 500 && !sum.ok; i++) {
		usleep(10000);
		es_core_round(core, se_wall_ns(), S(10), &st);
		sum.ok += st.ok;
	}
	ck_assert_uint_eq(sum.ok, 1);
	ck_assert_uint_eq(st.in_flight, 1);
	ck_assert(!es_core_values(core, ES_KIND_NODE, 1, se_wall_ns(), &v));
	ck_assert(v.has_power);

	/* shutdown leaves the stuck reader behind instead of hanging */
	es_core_destroy(core, 100 * SE_NS_PER_MS);
	/* release it: it finds the core stopped and exits */
	fd = open(path, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	es_conf_free(&c);
	unlink(path);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("es_core");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_conf_keys);
	tcase_add_test(tc, test_nodes_values_and_step_energy);
	tcase_add_test(tc, test_switch_and_door);
	tcase_add_test(tc, test_hung_file_does_not_stall);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;
	char cmd[300];

	if (!mkdtemp(dir))
		return EXIT_FAILURE;
	se_log_set_sink(_quiet, NULL);
	sr = srunner_create(_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
