/*
 * test_es_pool.c - ext_sensors/meters without Slurm: configuration keys,
 * parallel reads off the caller's thread, node/switch/door values, step
 * energy, a hung file that must not stall a round, and the pacer: reads on
 * the core's own clock, adoption without rounds, step start instants, and
 * the once-only starvation notice.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rrd.h>

#include "es_conf.h"
#include "es_pool.h"
#include "se_log.h"
#include "se_time.h"

#define F "ext_sensors.conf"
#define S(x)	((uint64_t) (x) * SE_NS_PER_SEC)

static char dir[] = "/tmp/test_es_pool.XXXXXX";

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
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "NodeData", node_data, err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "JobData", "energy", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "EnergyPathRRD", tmpl, err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "RRDDaemon", "none", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "MaxWatt", "1000", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, c, F, "ReadThreads", "4", err, 256));
}

/* Rounds until every component's first read is folded in (bounded:
 * the test fails, never hangs). */
static void _settle(es_pool_t *core, es_round_stats_t *sum)
{
	es_round_stats_t st;
	unsigned n;

	memset(sum, 0, sizeof(*sum));
	es_pool_round(core, se_wall_ns(), S(10), &st);
	n = st.queued;
	for (int i = 0; i < 500; i++) {
		usleep(10000);
		es_pool_round(core, se_wall_ns(), S(10), &st);
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
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "NodeData", "energy,temp", err, 256));
	ck_assert_uint_eq(c.data, ES_NODE_ENERGY | ES_NODE_TEMP);
	ck_assert_str_eq(se_conf_value(&es_conf_desc, &c, "NodeData", buf,
				       sizeof(buf)),
			 "energy,temp");
	ck_assert_int_eq(se_conf_set(&es_conf_desc, &c, F, "NodeData", "energy,power", err,
				     256), -EINVAL);
	ck_assert_msg(strstr(err, F) && strstr(err, "NodeData") &&
		      strstr(err, "power"), "%s", err);
	ck_assert_int_eq(se_conf_set(&es_conf_desc, &c, F, "Frobnicate", "1", err, 256),
			 -ENOENT);
	ck_assert_int_eq(se_conf_set(&es_conf_desc, &c, F, "ReadThreads", "0", err, 256),
			 -EINVAL);
	ck_assert_int_eq(es_conf_check(&c, F, err, 256), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "EnergyPathRRD"));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "ColdDoorData", "temp", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "EnergyPathRRD", "/r/%n", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "TempPathRRD", "/t/%n", err, 256));
	ck_assert_int_eq(es_conf_check(&c, F, err, 256), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ColdDoors"));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "ColdDoors", "door[1-2]", err, 256));
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
	es_pool_t *core;
	size_t idx[2] = { 0, 1 };
	uint64_t mj;
	char err[256];

	_make_rrd("n1", now, 100);
	_make_rrd("n2", now, 200);
	_make_rrd("n3", now - 300, 300);		/* stale */
	_conf(&c, "energy");
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert_msg(core != NULL, "%s", err);
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names, 4, err,
					  sizeof(err)));
	_settle(core, &sum);
	ck_assert_uint_eq(sum.ok, 2);
	ck_assert_uint_eq(sum.failed, 2);	/* stale n3, missing "gone" */

	ck_assert(!es_pool_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert(v.has_energy && v.has_power);
	ck_assert_double_eq_tol(v.watts, 100, 1e-9);
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 2, se_wall_ns(), &v));
	ck_assert(v.has_energy && !v.has_power);	/* stale: no watts */
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 3, se_wall_ns(), &v));
	ck_assert(!v.has_energy);

	/* a 90 s step on n1 + n2: (100 + 200) W x 90 s */
	ck_assert_msg(!es_pool_energy_between(core, idx, 2, S(now - 120),
					      S(now - 30), &mj, err,
					      sizeof(err)), "%s", err);
	ck_assert_uint_eq(mj, 300 * 90 * 1000);
	idx[1] = 3;
	ck_assert_int_eq(es_pool_energy_between(core, idx, 2, S(now - 120),
						S(now - 30), &mj, err,
						sizeof(err)), -ENODATA);
	ck_assert_ptr_nonnull(strstr(err, "gone"));

	/* a new node set keeps the state of names it still has */
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names + 1, 1,
					  err, sizeof(err)));
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert_double_eq_tol(v.watts, 200, 1e-9);
	es_pool_destroy(core, S(2));
	es_conf_free(&c);
}
END_TEST

/* A hole in Slurm's node table (NULL name) is a component never read. */
START_TEST(test_node_table_hole)
{
	const char *names[] = { "n1", NULL, "n2" };
	time_t now = time(NULL) / 10 * 10;
	es_round_stats_t sum;
	es_values_t v;
	es_conf_t c;
	es_pool_t *core;
	size_t idx[1] = { 1 };
	uint64_t mj;
	char err[256];

	_make_rrd("n1", now, 100);
	_make_rrd("n2", now, 200);
	_conf(&c, "energy");
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert_msg(core != NULL, "%s", err);
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names, 3, err,
					  sizeof(err)));
	_settle(core, &sum);
	ck_assert_uint_eq(sum.ok, 2);
	ck_assert_uint_eq(sum.failed, 0);	/* the hole is never read */
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 2, se_wall_ns(), &v));
	ck_assert_double_eq_tol(v.watts, 200, 1e-9);
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 1, se_wall_ns(), &v));
	ck_assert(!v.has_energy);
	ck_assert_ptr_null(es_pool_name(core, ES_KIND_NODE, 1));
	ck_assert_int_eq(es_pool_energy_between(core, idx, 1, S(now - 60),
						S(now - 30), &mj, err,
						sizeof(err)), -ENODATA);
	/* a new set with the hole filled keeps n1's and n2's state */
	names[1] = "n9";
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names, 3, err,
					  sizeof(err)));
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert_double_eq_tol(v.watts, 100, 1e-9);
	es_pool_destroy(core, S(2));
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
	es_pool_t *core;

	_make_rrd("sw1", now, 80);
	_make_rrd("door1-temp", now, 18.5);
	es_conf_init(&c);
	snprintf(tmpl, sizeof(tmpl), "%s/%%n.rrd", dir);
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "SwitchData", "energy", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "ColdDoorData", "temp", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "ColdDoors", "door1", err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "EnergyPathRRD", tmpl, err, 256));
	snprintf(tmpl, sizeof(tmpl), "%s/%%n-temp.rrd", dir);
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "TempPathRRD", tmpl, err, 256));
	ck_assert(!se_conf_set(&es_conf_desc, &c, F, "RRDDaemon", "none", err, 256));
	ck_assert(!es_conf_check(&c, F, err, 256));
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert(core);
	ck_assert(!es_pool_set_components(core, ES_KIND_SWITCH, sw, 1, err,
					  256));
	ck_assert(!es_pool_set_components(core, ES_KIND_DOOR, doors, 1, err,
					  256));
	_settle(core, &sum);
	ck_assert_uint_eq(sum.ok, 2);
	ck_assert(!es_pool_values(core, ES_KIND_SWITCH, 0, se_wall_ns(), &v));
	ck_assert(v.has_power && !v.has_temp);
	ck_assert_double_eq_tol(v.watts, 80, 1e-9);
	ck_assert(!es_pool_values(core, ES_KIND_DOOR, 0, se_wall_ns(), &v));
	ck_assert(v.has_temp && !v.has_energy);
	ck_assert_double_eq_tol(v.temp_c, 18.5, 1e-9);
	ck_assert_str_eq(es_pool_name(core, ES_KIND_DOOR, 0), "door1");
	es_pool_destroy(core, S(2));
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
	es_pool_t *core;
	int fd;

	_make_rrd("n1", now, 100);
	snprintf(path, sizeof(path), "%s/hang.rrd", dir);
	ck_assert(!mkfifo(path, 0600));
	_conf(&c, "energy");
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert(core);
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names, 2, err,
					  256));
	es_pool_round(core, se_wall_ns(), S(10), &st);
	ck_assert_uint_eq(st.queued, 2);
	/* n1 arrives while "hang" stays in flight, round after round */
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < 500 && !sum.ok; i++) {
		usleep(10000);
		es_pool_round(core, se_wall_ns(), S(10), &st);
		sum.ok += st.ok;
	}
	ck_assert_uint_eq(sum.ok, 1);
	ck_assert_uint_eq(st.in_flight, 1);
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 1, se_wall_ns(), &v));
	ck_assert(v.has_power);

	/* shutdown leaves the stuck reader behind instead of hanging */
	es_pool_destroy(core, 100 * SE_NS_PER_MS);
	/* release it: it finds the core stopped and exits */
	fd = open(path, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	es_conf_free(&c);
	unlink(path);
}
END_TEST


/* ------------------------------------------------------------ pacer */

/* What the glue's hook sees: values of node 0 at each call. */
typedef struct {
	es_pool_t *core;
	pthread_mutex_t lock;
	unsigned calls;
	unsigned calls_with_power;
	double watts;
	uint64_t first_power_mono_ns;
} hook_seen_t;

static uint64_t _hook(void *arg)
{
	hook_seen_t *h = arg;
	es_values_t v;
	bool got = !es_pool_values(h->core, ES_KIND_NODE, 0, se_wall_ns(), &v)
		   && v.has_power;

	pthread_mutex_lock(&h->lock);
	h->calls++;
	if (got) {
		if (!h->calls_with_power++)
			h->first_power_mono_ns = se_mono_ns();
		h->watts = v.watts;
	}
	pthread_mutex_unlock(&h->lock);
	return 0;
}

static unsigned _hook_power_calls(hook_seen_t *h)
{
	unsigned n;

	pthread_mutex_lock(&h->lock);
	n = h->calls_with_power;
	pthread_mutex_unlock(&h->lock);
	return n;
}

/*
 * Nobody calls es_pool_round() or es_pool_adopt(): the pacer alone reads
 * and adopts, and its hook already sees the values of the round's reads
 * (the round waits for them), so the glue can publish them at once.
 */
START_TEST(test_pacer_reads_on_its_own)
{
	const char *names[] = { "p1" };
	time_t now = time(NULL) / 10 * 10;
	hook_seen_t h = { .lock = PTHREAD_MUTEX_INITIALIZER };
	es_round_stats_t last;
	uint64_t rounds, mj, t0;
	size_t idx = 0;
	es_conf_t c;
	char err[256];

	_make_rrd("p1", now, 250);
	_conf(&c, "energy");
	h.core = es_pool_create(&c, err, sizeof(err));
	ck_assert_msg(h.core != NULL, "%s", err);
	ck_assert(!es_pool_set_components(h.core, ES_KIND_NODE, names, 1, err,
					  sizeof(err)));
	t0 = se_mono_ns();
	ck_assert_int_eq(es_pool_start_pacer(h.core, S(1), _hook, &h), 0);
	ck_assert_int_eq(es_pool_start_pacer(h.core, S(1), _hook, &h),
			 -EALREADY);
	for (int i = 0; i < 300 && !_hook_power_calls(&h); i++)
		usleep(10000);
	ck_assert_msg(_hook_power_calls(&h) >= 1, "hook never saw power");
	/* the first round runs at once and its read is adopted before the
	 * hook: well under one period, not after it */
	ck_assert_msg(h.first_power_mono_ns - t0 < S(1) / 2,
		      "first values after %.3f s",
		      (double) (h.first_power_mono_ns - t0) / 1e9);
	ck_assert_double_eq_tol(h.watts, 250, 1e-9);
	/* a step on the series, with no round called by anyone */
	ck_assert_msg(!es_pool_energy_between(h.core, &idx, 1, S(now - 100),
					      S(now - 40), &mj, err,
					      sizeof(err)), "%s", err);
	ck_assert_uint_eq(mj, 250 * 60 * 1000);
	/* rounds go on at the period: about 2 more in 2.2 s */
	usleep(2200000);
	es_pool_pacer_stats(h.core, &last, &rounds);
	ck_assert_msg(rounds >= 3 && rounds <= 4, "%llu rounds",
		      (unsigned long long) rounds);
	ck_assert_uint_eq(last.queued, 1);
	ck_assert_uint_eq(last.ok, 1);
	ck_assert_uint_ge(_hook_power_calls(&h), 3);
	es_pool_destroy(h.core, S(2));
	es_conf_free(&c);
}
END_TEST

/*
 * A round queued the reads, then no round came (slurmctld's call starved):
 * a step's end still finds the series, because es_pool_energy_between()
 * adopts what the readers finished; es_pool_adopt() folds without queueing.
 */
START_TEST(test_adopt_without_rounds)
{
	const char *names[] = { "a1", "a2" };
	time_t now = time(NULL) / 10 * 10;
	es_round_stats_t st;
	es_values_t v;
	size_t idx[2] = { 0, 1 };
	uint64_t mj;
	es_conf_t c;
	es_pool_t *core;
	char err[256];

	_make_rrd("a1", now, 100);
	_make_rrd("a2", now, 300);
	_conf(&c, "energy");
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert(core);
	ck_assert(!es_pool_set_components(core, ES_KIND_NODE, names, 2, err,
					  256));
	es_pool_round(core, se_wall_ns(), S(10), &st);
	ck_assert_uint_eq(st.queued, 2);
	/* nothing adopted yet: the values are not there */
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 0, se_wall_ns(), &v));
	ck_assert(!v.has_energy);
	usleep(300000);		/* the reads finish (ms on a local file) */
	ck_assert_msg(!es_pool_energy_between(core, idx, 2, S(now - 120),
					      S(now - 30), &mj, err,
					      sizeof(err)), "%s", err);
	ck_assert_uint_eq(mj, 400 * 90 * 1000);
	ck_assert(!es_pool_values(core, ES_KIND_NODE, 1, se_wall_ns(), &v));
	ck_assert_double_eq_tol(v.watts, 300, 1e-9);
	/* all taken; adopting queued nothing new, so nothing comes later */
	ck_assert_uint_eq(es_pool_adopt(core, se_wall_ns(), &st), 0);
	usleep(100000);
	ck_assert_uint_eq(es_pool_adopt(core, se_wall_ns(), &st), 0);
	ck_assert_uint_eq(st.ok + st.failed + st.late, 0);
	/* the next round queues both again, and adopt takes both */
	es_pool_round(core, se_wall_ns(), S(10), &st);
	ck_assert_uint_eq(st.queued, 2);
	usleep(300000);
	ck_assert_uint_eq(es_pool_adopt(core, se_wall_ns(), &st), 2);
	ck_assert_uint_eq(st.ok, 2);
	es_pool_destroy(core, S(2));
	es_conf_free(&c);
}
END_TEST

/*
 * A component set given after the pacer started is read at the kick, not
 * a period later; a hung file among them costs the pacer its bounded wait
 * (min(period/2, 2 s)), never the hook.
 */
START_TEST(test_pacer_kick_and_hung_file)
{
	const char *names[] = { "k1", "khang" };
	time_t now = time(NULL) / 10 * 10;
	hook_seen_t h = { .lock = PTHREAD_MUTEX_INITIALIZER };
	char path[256], err[256];
	es_round_stats_t last;
	uint64_t rounds, t0, took;
	es_conf_t c;
	int fd;

	_make_rrd("k1", now, 120);
	snprintf(path, sizeof(path), "%s/khang.rrd", dir);
	ck_assert(!mkfifo(path, 0600));
	_conf(&c, "energy");
	h.core = es_pool_create(&c, err, sizeof(err));
	ck_assert(h.core);
	ck_assert(!es_pool_start_pacer(h.core, S(60), _hook, &h));
	for (int i = 0; i < 100; i++) {		/* the first, empty round */
		es_pool_pacer_stats(h.core, NULL, &rounds);
		if (rounds)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(rounds, 1);
	ck_assert(!es_pool_set_components(h.core, ES_KIND_NODE, names, 2, err,
					  256));
	t0 = se_mono_ns();
	es_pool_kick(h.core);
	for (int i = 0; i < 500 && !_hook_power_calls(&h); i++)
		usleep(10000);
	took = se_mono_ns() - t0;
	ck_assert_uint_eq(_hook_power_calls(&h), 1);
	ck_assert_double_eq_tol(h.watts, 120, 1e-9);
	/* waited for the hung read up to its bound (2 s), not the period */
	ck_assert_msg(took >= S(2) - 50 * SE_NS_PER_MS && took < S(4),
		      "hook after %.3f s", (double) took / 1e9);
	es_pool_pacer_stats(h.core, &last, &rounds);
	ck_assert_uint_eq(rounds, 2);
	ck_assert_uint_eq(last.queued, 2);
	ck_assert_uint_eq(last.ok, 1);
	es_pool_destroy(h.core, 100 * SE_NS_PER_MS);
	fd = open(path, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	es_conf_free(&c);
	unlink(path);
}
END_TEST

START_TEST(test_step_start_instants)
{
	es_step_key_t a = { 7, 0, 0xfffffffe }, b = { 7, 1, 0xfffffffe };
	uint64_t coarse = S(1700000000), t;
	es_conf_t c;
	es_pool_t *core;
	char err[256];

	_conf(&c, "energy");
	core = es_pool_create(&c, err, sizeof(err));
	ck_assert(core);
	/* nothing remembered: the whole second */
	ck_assert_uint_eq(es_pool_step_start(core, &a, coarse, false),
			  coarse);
	ck_assert(!es_pool_step_begin(core, &a, coarse + 730 * SE_NS_PER_MS));
	ck_assert(!es_pool_step_begin(core, &b, coarse + 10 * SE_NS_PER_MS));
	t = es_pool_step_start(core, &a, coarse, false);
	ck_assert_uint_eq(t, coarse + 730 * SE_NS_PER_MS);
	/* kept for the next partial completion, gone after the last */
	ck_assert_uint_eq(es_pool_step_start(core, &a, coarse, true), t);
	ck_assert_uint_eq(es_pool_step_start(core, &a, coarse, false),
			  coarse);
	ck_assert_uint_eq(es_pool_step_start(core, &b, coarse, false),
			  coarse + 10 * SE_NS_PER_MS);
	/* an entry of another start (a reused id) is not taken */
	ck_assert_uint_eq(es_pool_step_start(core, &b, coarse + S(100), false),
			  coarse + S(100));
	ck_assert_uint_eq(es_pool_step_start(core, &b, coarse - S(5), false),
			  coarse - S(5));
	/* entries older than EnergyHistory (3600 s) go at the next begin */
	ck_assert(!es_pool_step_begin(core, &a, coarse + S(3602)));
	ck_assert_uint_eq(es_pool_step_start(core, &b, coarse, false),
			  coarse);
	es_pool_destroy(core, S(2));
	es_conf_free(&c);
}
END_TEST

START_TEST(test_cadence_starved_once)
{
	es_cadence_t cd;
	uint64_t gap = 0, t = S(1000);

	es_cadence_init(&cd, S(10));
	/* not armed: slurmctld has no node table yet, no call is due */
	ck_assert(!es_cadence_starved(&cd, t + S(500), &gap));
	es_cadence_arm(&cd, t);
	es_cadence_arm(&cd, t + S(20));		/* idempotent */
	ck_assert(!es_cadence_starved(&cd, t + S(30), &gap));
	ck_assert_uint_eq(es_cadence_call(&cd, t + S(10)), S(10));
	ck_assert_uint_eq(es_cadence_call(&cd, t + S(21)), S(11));
	/* 30 s (3 x 10 s) is the limit, not starved yet */
	ck_assert(!es_cadence_starved(&cd, t + S(51), &gap));
	ck_assert(es_cadence_starved(&cd, t + S(52), &gap));
	ck_assert_uint_eq(gap, S(31));
	/* once: not again, even after calls and a longer gap */
	ck_assert(!es_cadence_starved(&cd, t + S(500), &gap));
	ck_assert_uint_eq(es_cadence_call(&cd, t + S(600)), S(579));
	ck_assert(!es_cadence_starved(&cd, t + S(700), &gap));

	/* a long period: 3 x 60 s, above the 30 s floor */
	es_cadence_init(&cd, S(60));
	es_cadence_call(&cd, t);
	ck_assert(!es_cadence_starved(&cd, t + S(180), &gap));
	ck_assert(es_cadence_starved(&cd, t + S(181), &gap));
	/* a short one: the 30 s floor */
	es_cadence_init(&cd, S(2));
	es_cadence_call(&cd, t);
	ck_assert(!es_cadence_starved(&cd, t + S(30), &gap));
	ck_assert(es_cadence_starved(&cd, t + S(31), &gap));
	/* ExtSensorsFreq=0: slurmctld never calls, by configuration */
	es_cadence_init(&cd, 0);
	es_cadence_arm(&cd, t);
	ck_assert(!es_cadence_starved(&cd, t + S(10000), &gap));
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("es_pool");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_conf_keys);
	tcase_add_test(tc, test_nodes_values_and_step_energy);
	tcase_add_test(tc, test_node_table_hole);
	tcase_add_test(tc, test_switch_and_door);
	tcase_add_test(tc, test_hung_file_does_not_stall);
	tcase_add_test(tc, test_pacer_reads_on_its_own);
	tcase_add_test(tc, test_adopt_without_rounds);
	tcase_add_test(tc, test_pacer_kick_and_hung_file);
	tcase_add_test(tc, test_step_start_instants);
	tcase_add_test(tc, test_cadence_starved_once);
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
